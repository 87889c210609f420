//! Timers as calls see them: requests a call makes through its `TimeContext`, applied by
//! the processor's timer service once the call returns, and the timers that fire.

/// What a call asked of the timers of its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerRequest<'a> {
    /// Registers a timer at `time` (epoch ms); a named one replaces the key's timer of that
    /// name, an unnamed one exists at most once per time.
    Register { name: Option<&'a str>, time: i64 },
    /// Deletes the key's timer `name`.
    ClearNamed(&'a str),
    /// Deletes the key's unnamed timer at `time`.
    ClearAt(i64),
    /// Deletes every timer of the key.
    ClearAll,
}

/// A request as kept: a name is a range of [`TimerRequests::names`].
#[derive(Clone, Copy, Debug)]
enum Kept {
    Register { name: Option<(u32, u32)>, time: i64 },
    ClearNamed((u32, u32)),
    ClearAt(i64),
    ClearAll,
}

/// The timer requests of a call, in order. Names are copied into one buffer kept from call
/// to call, so a request allocates nothing once the buffers have grown.
#[derive(Debug, Default)]
pub struct TimerRequests {
    kept: Vec<Kept>,
    names: String,
}

impl TimerRequests {
    fn name(&mut self, name: &str) -> (u32, u32) {
        let start = self.names.len() as u32;
        self.names.push_str(name);
        (start, self.names.len() as u32)
    }

    pub fn push(&mut self, request: TimerRequest<'_>) {
        let kept = match request {
            TimerRequest::Register { name, time } => Kept::Register {
                name: name.map(|name| self.name(name)),
                time,
            },
            TimerRequest::ClearNamed(name) => Kept::ClearNamed(self.name(name)),
            TimerRequest::ClearAt(time) => Kept::ClearAt(time),
            TimerRequest::ClearAll => Kept::ClearAll,
        };
        self.kept.push(kept);
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    #[inline]
    pub fn clear(&mut self) {
        self.kept.clear();
        self.names.clear();
    }

    /// The requests, in order.
    pub fn iter(&self) -> impl Iterator<Item = TimerRequest<'_>> {
        let name = |(start, end): (u32, u32)| &self.names[start as usize..end as usize];
        self.kept.iter().map(move |kept| match *kept {
            Kept::Register { name: named, time } => TimerRequest::Register {
                name: named.map(name),
                time,
            },
            Kept::ClearNamed(range) => TimerRequest::ClearNamed(name(range)),
            Kept::ClearAt(time) => TimerRequest::ClearAt(time),
            Kept::ClearAll => TimerRequest::ClearAll,
        })
    }
}

/// A processor's timer service, as generated code sees it.
pub trait Timers {
    /// Applies, in order, the requests a call for `key` made, and clears them (the call's
    /// buffers are reused).
    fn apply(&mut self, key: u32, requests: &mut TimerRequests);

    /// Whether timers are due now that the watermark is `watermark`: if it passed the one
    /// timers last fired at, the timers at or before it that are registered at this moment
    /// become the batch to fire (one registered while they fire waits for the next advance).
    fn due(&mut self, watermark: i64) -> bool;

    /// The next timer of the batch still registered (an earlier timer of its key may have
    /// deleted it), taken out — its name forgotten — before `on_timer` runs.
    fn next_due(&mut self) -> Option<FiredTimer>;
}

/// A timer that fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiredTimer {
    pub key: u32,
    pub time: i64,
    pub name: Option<std::sync::Arc<str>>,
}

/// A timer service for calls that can have no timers.
pub struct NoTimers;

impl Timers for NoTimers {
    fn apply(&mut self, _key: u32, requests: &mut TimerRequests) {
        requests.clear();
    }

    fn due(&mut self, _watermark: i64) -> bool {
        false
    }

    fn next_due(&mut self) -> Option<FiredTimer> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_keep_their_order_and_names_until_cleared() {
        let requests = [
            TimerRequest::Register {
                name: Some("timeout"),
                time: 5000,
            },
            TimerRequest::Register {
                name: None,
                time: 6000,
            },
            TimerRequest::ClearNamed("other"),
            TimerRequest::ClearAt(6000),
            TimerRequest::ClearAll,
        ];
        let mut kept = TimerRequests::default();
        for request in requests {
            kept.push(request);
        }
        assert_eq!(kept.iter().collect::<Vec<_>>(), requests);
        kept.clear();
        assert!(kept.is_empty());
        kept.push(TimerRequest::ClearNamed("again"));
        assert_eq!(
            kept.iter().collect::<Vec<_>>(),
            [TimerRequest::ClearNamed("again")]
        );
    }
}
