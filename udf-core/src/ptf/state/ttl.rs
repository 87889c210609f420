//! Entries stamped with their last write, and TTL on processing time.

use crate::spec::StateSpec;

/// A value and when it was last written (processing time, ms).
#[derive(Clone, Debug)]
pub(crate) struct Stamped<T> {
    pub(crate) value: T,
    pub(crate) written: i64,
}

/// TTL in milliseconds, or none.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ttl(pub(crate) Option<i64>);

impl Ttl {
    pub(crate) fn of(spec: &StateSpec) -> Self {
        Ttl(spec
            .ttl
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
    }

    #[inline]
    pub(crate) fn expired(self, written: i64, now: i64) -> bool {
        matches!(self.0, Some(ttl) if written.saturating_add(ttl) <= now)
    }
}
