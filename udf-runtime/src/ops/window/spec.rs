//! Which windows a row belongs to (Flink's window table functions), on epoch milliseconds.

use std::fmt;

/// A window table function and its sizes, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd)]
pub enum WindowKind {
    /// `TUMBLE(..., size)`: windows of `size` one after another.
    Tumble { size: i64 },
    /// `HOP(..., slide, size)`: windows of `size` starting every `slide`.
    Hop { slide: i64, size: i64 },
    /// `CUMULATE(..., step, size)`: windows of `size` one after another, each seen growing by
    /// `step` — `[start, start + step)`, `[start, start + 2 step)`, ... `[start, start + size)`.
    Cumulate { step: i64, size: i64 },
    /// `SESSION(..., gap)`: a row opens `[t, t + gap)`, and windows of a key that touch
    /// merge into one.
    Session { gap: i64 },
}

impl WindowKind {
    /// The windows `[start, end)` that hold time `t`, earliest end first.
    pub fn windows(&self, t: i64, out: &mut Vec<(i64, i64)>) {
        out.clear();
        match *self {
            WindowKind::Tumble { size } => {
                let start = t - t.rem_euclid(size);
                out.push((start, start + size));
            }
            WindowKind::Hop { slide, size } => {
                let last = t - t.rem_euclid(slide);
                let mut start = last;
                while start > t - size {
                    out.push((start, start + size));
                    start -= slide;
                }
                out.reverse();
            }
            WindowKind::Cumulate { step, size } => {
                let start = t - t.rem_euclid(size);
                let first_end = t - t.rem_euclid(step) + step;
                let mut end = first_end;
                while end <= start + size {
                    out.push((start, end));
                    end += step;
                }
            }
            WindowKind::Session { gap } => out.push((t, t + gap)),
        }
    }

    /// The end of the slice (Flink's pane) holding `t`: a row whose slice has fired — its
    /// end − 1 at or behind the watermark — is late and dropped, as in Flink's slicing
    /// window operator.
    pub fn slice_end(&self, t: i64) -> i64 {
        let unit = match *self {
            WindowKind::Tumble { size } => size,
            WindowKind::Hop { slide, .. } => slide,
            WindowKind::Cumulate { step, .. } => step,
            // A session's lateness is decided once it has merged (see `sessions.rs`).
            WindowKind::Session { gap } => return t + gap,
        };
        t - t.rem_euclid(unit) + unit
    }
}

impl fmt::Display for WindowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowKind::Tumble { size } => write!(f, "TUMBLE(size={size} ms)"),
            WindowKind::Hop { slide, size } => write!(f, "HOP(slide={slide} ms, size={size} ms)"),
            WindowKind::Cumulate { step, size } => {
                write!(f, "CUMULATE(step={step} ms, size={size} ms)")
            }
            WindowKind::Session { gap } => write!(f, "SESSION(gap={gap} ms)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WindowKind;

    fn windows(kind: WindowKind, t: i64) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        kind.windows(t, &mut out);
        out
    }

    #[test]
    fn tumbling_windows_hold_each_time_once() {
        let tumble = WindowKind::Tumble { size: 10 };
        assert_eq!(windows(tumble, 0), [(0, 10)]);
        assert_eq!(windows(tumble, 9), [(0, 10)]);
        assert_eq!(windows(tumble, 10), [(10, 20)]);
        assert_eq!(windows(tumble, -1), [(-10, 0)]);
        assert_eq!(tumble.slice_end(9), 10);
    }

    #[test]
    fn hopping_windows_overlap_by_size_over_slide() {
        let hop = WindowKind::Hop { slide: 5, size: 10 };
        assert_eq!(windows(hop, 7), [(0, 10), (5, 15)]);
        assert_eq!(windows(hop, 10), [(5, 15), (10, 20)]);
        assert_eq!(hop.slice_end(7), 10);
    }

    #[test]
    fn cumulating_windows_grow_by_step_to_size() {
        let cumulate = WindowKind::Cumulate { step: 2, size: 6 };
        assert_eq!(windows(cumulate, 0), [(0, 2), (0, 4), (0, 6)]);
        assert_eq!(windows(cumulate, 3), [(0, 4), (0, 6)]);
        assert_eq!(windows(cumulate, 5), [(0, 6)]);
        assert_eq!(windows(cumulate, 6), [(6, 8), (6, 10), (6, 12)]);
        assert_eq!(cumulate.slice_end(3), 4);
    }
}
