//! Entries stamped with their last write, and TTL on processing time.

use serde::{Deserialize, Serialize};

use crate::spec::StateSpec;

/// A value and when it was last written (processing time, ms). Snapshots keep the stamp, so
/// a restored entry expires when the original would have.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Stamped<T> {
    pub(crate) written: i64,
    pub(crate) value: T,
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
