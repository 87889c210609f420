//! State on local disk: an embedded LSM store (fjall) per PTF run, a keyspace per processor.
//! The keyed-state unit's disk backend keeps every key's state entries and timers here, with a
//! bounded cache of hot deserialized values in front (`docs/architecture.md`, "State on disk").
//!
//! - `dir.rs`: the run's directory — created for it, locked while it runs, removed after it
//!   unless kept.
//! - `layout.rs`: how entries and timers are spelled as store keys and values. Keys are
//!   by their bytes (never by slot numbers), so a view is a prefix and survives a restart.
//! - `ttl.rs`: the compaction filter that drops expired entries in the background.
//! - `store.rs`: the store itself, with what it read and wrote.
//! - `residency.rs`: which keys' state is in memory, and moving keys in and out.

pub mod dir;
pub mod layout;
pub mod residency;
pub mod store;
pub mod ttl;
