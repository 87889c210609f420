//! Expired entries leave the store in the background: a compaction filter drops every value,
//! list element and map entry whose TTL has passed, so a store whose entries all expired
//! shrinks on disk. Reads check TTL themselves (a filter runs only when compaction does).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use lsm_tree::compaction::filter::{CompactionFilter, Context, Factory, ItemAccessor, Verdict};

use super::layout::{StoreKey, split_stamp};

/// The TTL of each state entry (by declaration index) and the processing time to judge
/// expiry by, which the processors move on as batches arrive.
#[derive(Debug, Clone)]
pub struct TtlTable {
    ttls: Arc<[Option<i64>]>,
    now: Arc<AtomicI64>,
}

impl TtlTable {
    /// `ttls[i]`: entry `i`'s TTL in milliseconds, or none.
    pub fn new(ttls: Vec<Option<i64>>) -> Self {
        TtlTable {
            ttls: ttls.into(),
            now: Arc::new(AtomicI64::new(i64::MIN)),
        }
    }

    /// Whether any entry has a TTL (otherwise no filter is installed).
    pub fn any(&self) -> bool {
        self.ttls.iter().any(Option::is_some)
    }

    /// The processing time reached (it never goes back).
    pub fn advance(&self, now: i64) {
        self.now.fetch_max(now, Ordering::Relaxed);
    }

    /// Whether the item stored under `key` with `value` has expired by `now`.
    fn expired(&self, key: &[u8], value: &[u8], now: i64) -> bool {
        let Some(entry) = StoreKey::parse_entry(key) else {
            return false;
        };
        let Some(Some(ttl)) = self.ttls.get(usize::from(entry)) else {
            return false;
        };
        split_stamp(value).is_some_and(|(written, _)| written.saturating_add(*ttl) <= now)
    }
}

impl Factory for TtlTable {
    fn name(&self) -> &str {
        "udf-state-ttl"
    }

    fn make_filter(&self, _ctx: &Context) -> Box<dyn CompactionFilter> {
        Box::new(TtlFilter {
            table: self.clone(),
            now: self.now.load(Ordering::Relaxed),
        })
    }
}

/// One compaction's filter: judges by the time the compaction started.
struct TtlFilter {
    table: TtlTable,
    now: i64,
}

impl CompactionFilter for TtlFilter {
    fn filter_item(&mut self, item: ItemAccessor<'_>, _ctx: &Context) -> lsm_tree::Result<Verdict> {
        if StoreKey::parse_entry(item.key()).is_none() {
            return Ok(Verdict::Keep);
        }
        let value = item.value()?;
        Ok(if self.table.expired(item.key(), &value, self.now) {
            Verdict::Remove
        } else {
            Verdict::Keep
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::stamped;
    use super::*;

    #[test]
    fn only_entries_with_a_ttl_expire_and_only_once_it_passed() {
        let table = TtlTable::new(vec![Some(100), None]);
        let mut key = StoreKey::default();
        let mut value = Vec::new();
        stamped(1_000, b"v", &mut value);
        let with_ttl = key.entry(0, b"k").to_vec();
        let without = key.entry(1, b"k").to_vec();
        assert!(!table.expired(&with_ttl, &value, 1_099));
        assert!(table.expired(&with_ttl, &value, 1_100));
        assert!(!table.expired(&without, &value, i64::MAX));
        table.advance(5);
        table.advance(3);
        assert_eq!(table.now.load(Ordering::Relaxed), 5, "time never goes back");
    }
}
