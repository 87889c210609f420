//! State on local disk: an embedded LSM store (fjall) per run of a PTF, an updating GROUP BY
//! or a window aggregate, a keyspace per processor.
//! The keyed-state unit's disk backend keeps the state of keys beyond its memory budget here;
//! the in-memory stores are the cache of the keys in use (`docs/architecture.md`, "State on
//! disk").
//!
//! - `dir.rs`: the run's directory — created for it, locked while it runs, removed after it
//!   unless kept.
//! - `layout.rs`: how entries are spelled as store keys and values: by key bytes (never by
//!   slot numbers), so they mean the same in another run.
//! - `ttl.rs`: the compaction filter that drops expired entries in the background.
//! - `dead_below.rs`: the compaction filter that drops groups nothing reads again (those of
//!   windows that fired).
//! - `store.rs`: the store itself, with what it read and wrote.
//! - `items.rs`: list and map views' items, read and written one by one.
//! - `item_cache.rs`: the view items in use, in memory, written back as they leave.
//! - `timers.rs`: the timers of keys on disk, in firing order.
//! - `sorted_reads.rs`: the keys arriving with a batch read back together, in key order.
//! - `write_set.rs`: the writes of a move out, written together.
//! - `shared_run.rs`: one store for the processors of an exec's run.
//! - `moved_out.rs`: a filter of the keys moved out, so a new key is not looked for on disk.
//! - `victims.rs`: which resident keys move out (about the least recently used).
//! - `residency.rs`: which keys are in memory, and moving keys (value state, timers) in and
//!   out.

pub mod dead_below;
pub mod dir;
pub mod item_cache;
pub mod items;
pub mod layout;
pub mod moved_out;
pub mod residency;
pub mod shared_run;
pub mod sorted_reads;
pub mod store;
pub mod timers;
pub mod ttl;
pub mod victims;
pub mod write_set;
