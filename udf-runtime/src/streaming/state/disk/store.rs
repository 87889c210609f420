//! The disk store of one run of a PTF, an updating GROUP BY or a window aggregate: a fjall
//! database in the run's directory, and a keyspace per processor (processors never share
//! keys, so they never contend for one tree).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use datafusion::common::{DataFusionError, Result, internal_err};
use fjall::config::PartitioningPolicy;
use fjall::{Database, Keyspace, KeyspaceCreateOptions, Slice};
use lsm_tree::compaction::Leveled;
use lsm_tree::compaction::filter::Factory;

use super::dead_below::{DeadBelow, DeadBelowFilters, DeadMarks};
use super::dir::StateDir;
use super::ttl::TtlTable;

/// What the store may hold in memory.
#[derive(Debug, Clone, Copy)]
pub struct StoreMemory {
    /// fjall's block cache.
    pub cache: u64,
    /// One keyspace's memtable, before it is sealed for flushing (about what unflushed writes
    /// hold, with the sealed ones being flushed).
    pub memtable: u64,
}

impl StoreMemory {
    /// The store's part of a run's memory `budget`, for `keyspaces` keyspaces over all its
    /// processors: a quarter for fjall's block cache, an eighth for writes waiting to be
    /// flushed (each keyspace's memtable and one being flushed, at least 64 KiB each).
    pub fn of(budget: u64, keyspaces: usize) -> Self {
        StoreMemory {
            cache: budget / 4,
            memtable: (budget / 16 / keyspaces.max(1) as u64).max(64 << 10),
        }
    }

    /// What `budget` leaves each of `processors` once this part (for `keyspaces` keyspaces)
    /// is set aside.
    pub fn left_per_processor(&self, budget: u64, keyspaces: usize, processors: usize) -> u64 {
        let memtables = 2 * self.memtable * keyspaces.max(1) as u64;
        budget.saturating_sub(self.cache + memtables) / processors.max(1) as u64
    }
}

/// Whose store it is and where: what its errors name.
#[derive(Debug)]
struct Owner {
    function: String,
    path: PathBuf,
}

impl Owner {
    fn error(&self, doing: &str, cause: fjall::Error) -> DataFusionError {
        // A write fjall's background worker could not make stops the store, and the worker
        // keeps its cause to itself (it only logs it).
        let cause = match cause {
            fjall::Error::Poisoned => "its background writer failed to write to the disk \
                 (full, or refusing writes) and stopped the store"
                .to_owned(),
            cause => cause.to_string(),
        };
        DataFusionError::Execution(format!(
            "the state of `{}` could not {doing} in its store at `{}`: {cause}",
            self.function,
            self.path.display()
        ))
    }
}

/// A run's store. The database closes before its directory goes (field order).
pub struct DiskStore {
    db: Database,
    owner: Arc<Owner>,
    ttl: TtlTable,
    /// The marks below which the keyspaces of groups hold dead entries.
    dead: DeadMarks,
    memory: StoreMemory,
    /// Held for its removal when the store goes.
    _dir: StateDir,
}

impl DiskStore {
    /// Opens a fresh store in `dir`, within `memory`. A directory another running query
    /// holds is an error; one an earlier run left is emptied first.
    pub fn open(dir: StateDir, ttl: TtlTable, memory: StoreMemory) -> Result<Self> {
        let owner = Arc::new(Owner {
            function: dir.function().to_owned(),
            path: dir.path().to_owned(),
        });
        let dead = DeadMarks::default();
        let db = open_database(&owner, &ttl, &dead, memory)?;
        Ok(DiskStore {
            db,
            owner,
            ttl,
            dead,
            memory,
            _dir: dir,
        })
    }

    /// The TTL table the store's compactions judge expiry by.
    pub fn ttl(&self) -> &TtlTable {
        &self.ttl
    }

    /// The store of processor `processor`'s value entries and timers. Their keys are looked
    /// for only when the filter of keys moved out (`moved_out.rs`) says they may be there: a
    /// read mostly finds what it looks for, so its tables get no bloom filters where they are
    /// written by a move out or lie in the last level — building those filters was a tenth of
    /// the work of keeping ten million keys on disk.
    pub fn processor(&self, processor: usize) -> Result<ProcessorStore> {
        self.keyspace(&format!("p{processor}"), true)
    }

    /// The store of processor `processor`'s view items. A map's new entries are looked for
    /// before they are written, and once the filter of items written back gives up (past its
    /// share of the budget) every one is a read that finds nothing: bloom filters answer
    /// those without reading a block (without them `ptf_mapview_disk` ran at half speed).
    pub fn items(&self, processor: usize) -> Result<ProcessorStore> {
        self.keyspace(&format!("i{processor}"), false)
    }

    /// The store of an updating GROUP BY's or a window aggregate's processor's groups moved
    /// out of memory. A new group is looked for before it is created, and finds nothing:
    /// bloom filters answer.
    pub fn groups(&self, processor: usize) -> Result<ProcessorStore> {
        let name = format!("{GROUPS}{processor}");
        let mut store = self.keyspace(&name, false)?;
        store.dead = Some(self.dead.of(&name));
        Ok(store)
    }

    fn keyspace(&self, name: &str, reads_find: bool) -> Result<ProcessorStore> {
        let keyspace = self
            .db
            .keyspace(name, || {
                // Index and filter blocks in parts at every level: a point read then loads
                // (and checksums) the few kilobytes it needs, not a table's whole filter —
                // that made reads slow down a hundredfold once tables passed the cache.
                // Writes are not flushed to the journal one by one (a system call each): a
                // run's state is never recovered from its journal.
                KeyspaceCreateOptions::default()
                    .manual_journal_persist(true)
                    .max_memtable_size(self.memory.memtable * FJALL_MEMTABLE_FACTOR)
                    .index_block_partitioning_policy(PartitioningPolicy::all(true))
                    .filter_block_partitioning_policy(PartitioningPolicy::all(true))
                    .expect_point_read_hits(reads_find)
                    // Small tables keep each compaction short: closing the store waits for
                    // the one running, and with fjall's 64 MiB tables that wait was seconds.
                    .compaction_strategy(Arc::new(
                        Leveled::default().with_table_target_size(TABLE_TARGET_BYTES),
                    ))
            })
            .map_err(|e| self.owner.error("open a processor's keyspace", e))?;
        Ok(ProcessorStore {
            keyspace,
            dead: None,
            metrics: Arc::default(),
            owner: self.owner.clone(),
            memtable: self.memory.memtable,
            unsealed: Arc::default(),
        })
    }
}

/// How the names of the keyspaces of groups begin (`DiskStore::groups`).
const GROUPS: &str = "g";

fn open_database(
    owner: &Owner,
    ttl: &TtlTable,
    dead: &DeadMarks,
    memory: StoreMemory,
) -> Result<Database> {
    let path = &owner.path;
    let factory: Option<Arc<dyn Factory>> = ttl.any().then(|| Arc::new(ttl.clone()) as _);
    let dead = dead.clone();
    // Keyspaces of groups drop dead entries; the others, expired ones.
    let filters = move |keyspace: &str| -> Option<Arc<dyn Factory>> {
        if keyspace.starts_with(GROUPS) {
            Some(Arc::new(DeadBelowFilters(dead.of(keyspace))))
        } else {
            factory.clone()
        }
    };
    Database::builder(path)
        .cache_size(memory.cache)
        // One worker flushes and compacts. With more, the first hands every compaction it is
        // sent on to the others and, while they are busy, to itself again: it spins a core,
        // which on two cores costs the processor a third of its speed. A single worker must
        // never be asked to seal a memtable itself (it would wait on its own full queue), so
        // the processor seals them, well before fjall's limit (`ProcessorStore::wrote`).
        .worker_threads(1)
        // A run's state is not recovered from its journal (checkpoints are a copy of their
        // own), so writes need not wait for the disk.
        .manual_journal_persist(true)
        .with_compaction_filter_factories(Arc::new(filters))
        .open()
        .map_err(|e| match e {
            fjall::Error::Locked => DataFusionError::Execution(format!(
                "the state directory `{}` is in use by another running query",
                path.display()
            )),
            e => owner.error("open", e),
        })
}

/// What a processor's store read and wrote (EXPLAIN ANALYZE shows it).
#[derive(Debug, Default)]
struct StoreMetrics {
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
}

/// What a store read and wrote so far, and holds now.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StoreTotals {
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Approximate: removed entries count until compaction drops them.
    pub entries: usize,
    pub disk_bytes: u64,
}

impl std::ops::Add for StoreTotals {
    type Output = StoreTotals;

    fn add(self, other: StoreTotals) -> StoreTotals {
        StoreTotals {
            bytes_read: self.bytes_read + other.bytes_read,
            bytes_written: self.bytes_written + other.bytes_written,
            entries: self.entries + other.entries,
            disk_bytes: self.disk_bytes + other.disk_bytes,
        }
    }
}

/// One processor's part of the store: byte keys and values (`layout.rs` spells them).
#[derive(Clone)]
pub struct ProcessorStore {
    keyspace: Keyspace,
    /// A keyspace of groups: the mark below which its entries are dead (`dead_below.rs`).
    dead: Option<Arc<DeadBelow>>,
    metrics: Arc<StoreMetrics>,
    owner: Arc<Owner>,
    /// The memtable's size limit, and about what it holds now.
    memtable: u64,
    unsealed: Arc<AtomicU64>,
}

/// What a memtable entry takes beyond its key and value, as fjall counts it (its key's and
/// value's handles, sequence number and type).
const MEMTABLE_ENTRY_BYTES: u64 = 64;

/// fjall's own memtable limit, in multiples of the one the processor seals at: fjall never
/// reaches it, so its single worker is never asked to seal a memtable (see `open_database`).
const FJALL_MEMTABLE_FACTOR: u64 = 4;

/// The size compactions cut tables at (fjall's default is 64 MiB). With 4 MiB, a processor
/// with ten million keys on disk closed in 0.1 s instead of 5.5 s, and ran faster too.
const TABLE_TARGET_BYTES: u64 = 4 << 20;

impl ProcessorStore {
    pub fn get(&self, key: &[u8]) -> Result<Option<Slice>> {
        let value = self
            .keyspace
            .get(key)
            .map_err(|e| self.owner.error("read an entry", e))?;
        if let Some(value) = &value {
            self.count_read(key.len() + value.len());
        }
        Ok(value)
    }

    pub fn insert(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.metrics
            .bytes_written
            .fetch_add((key.len() + value.len()) as u64, Ordering::Relaxed);
        self.keyspace
            .insert(key, value)
            .map_err(|e| self.owner.error("write an entry", e))?;
        self.wrote(key.len() + value.len())
    }

    pub fn remove(&self, key: &[u8]) -> Result<()> {
        self.metrics
            .bytes_written
            .fetch_add(key.len() as u64, Ordering::Relaxed);
        self.keyspace
            .remove(key)
            .map_err(|e| self.owner.error("remove an entry", e))?;
        self.wrote(key.len())
    }

    /// Entries under keys that sort before `mark` are dead from now on: nothing reads them,
    /// and compactions drop them. Only a keyspace of groups has a mark.
    pub fn dead_below(&self, mark: &[u8]) -> Result<()> {
        match &self.dead {
            Some(dead) => {
                dead.raise(mark);
                Ok(())
            }
            None => internal_err!("only a keyspace of groups has a mark of dead entries"),
        }
    }

    /// Writes `writes` — values and removals, in ascending key order, no key twice — as new
    /// tables of the store, past the memtable and the journal (what is in the memtable is
    /// flushed first, so these writes come after it). Each call writes files and registers
    /// them: worth it for thousands of writes, not for a few (`write_set.rs` chooses).
    pub fn ingest<'w>(
        &self,
        writes: impl Iterator<Item = (&'w [u8], Option<&'w [u8]>)>,
    ) -> Result<()> {
        let failed = |e| self.owner.error("write a run of entries", e);
        let mut ingestion = self.keyspace.start_ingestion().map_err(failed)?;
        let mut bytes = 0;
        for (key, value) in writes {
            bytes += key.len() + value.map_or(0, <[u8]>::len);
            match value {
                Some(value) => ingestion.write(key, value),
                None => ingestion.write_tombstone(key),
            }
            .map_err(failed)?;
        }
        ingestion.finish().map_err(failed)?;
        // Ingesting flushed the memtable.
        self.unsealed.store(0, Ordering::Relaxed);
        self.metrics
            .bytes_written
            .fetch_add(bytes as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Seals the memtable once it is full. fjall leaves that to its background workers, and
    /// while they are busy compacting the memtable grows past its limit — by tens of
    /// megabytes under a steady stream of writes, beyond any budget. Sealed here, the writes
    /// wait instead (fjall holds them while four sealed memtables await their flush).
    fn wrote(&self, bytes: usize) -> Result<()> {
        let held = self
            .unsealed
            .fetch_add(bytes as u64 + MEMTABLE_ENTRY_BYTES, Ordering::Relaxed);
        if held < self.memtable {
            return Ok(());
        }
        self.unsealed.store(0, Ordering::Relaxed);
        // `rotate_memtable` is public but hidden from fjall's documentation: the workspace
        // pins fjall's version for it.
        self.keyspace
            .rotate_memtable()
            .map(drop)
            .map_err(|e| self.owner.error("seal its memtable", e))
    }

    /// The entries under `prefix` in key order, read as the iteration goes (nothing is
    /// collected first).
    pub fn scan<'s>(
        &'s self,
        prefix: &[u8],
    ) -> impl Iterator<Item = Result<(Slice, Slice)>> + use<'s> {
        self.keyspace.prefix(prefix).map(move |guard| {
            let (key, value) = guard
                .into_inner()
                .map_err(|e| self.owner.error("read entries", e))?;
            self.count_read(key.len() + value.len());
            Ok((key, value))
        })
    }

    /// The entries from `first` to `last` (both included) in key order, read as the
    /// iteration goes.
    pub fn range<'s>(
        &'s self,
        first: &[u8],
        last: &[u8],
    ) -> impl Iterator<Item = Result<(Slice, Slice)>> + use<'s> {
        self.keyspace.range(first..=last).map(move |guard| {
            let (key, value) = guard
                .into_inner()
                .map_err(|e| self.owner.error("read entries", e))?;
            self.count_read(key.len() + value.len());
            Ok((key, value))
        })
    }

    /// The entries under `prefix` from `first` on, in key order, read as the iteration goes.
    pub fn from<'s>(
        &'s self,
        first: &[u8],
        prefix: &[u8],
    ) -> impl Iterator<Item = Result<(Slice, Slice)>> + use<'s> {
        let prefix = prefix.to_vec();
        self.keyspace
            .range(first.to_vec()..)
            .map(move |guard| {
                let (key, value) = guard
                    .into_inner()
                    .map_err(|e| self.owner.error("read entries", e))?;
                self.count_read(key.len() + value.len());
                Ok((key, value))
            })
            .take_while(move |entry| {
                entry
                    .as_ref()
                    .map_or(true, |(key, _)| key.starts_with(&prefix))
            })
    }

    /// The greatest key under `prefix`, if there is one (one seek from the end).
    pub fn last_key(&self, prefix: &[u8]) -> Result<Option<Slice>> {
        self.keyspace
            .prefix(prefix)
            .next_back()
            .map(|guard| guard.key().map_err(|e| self.owner.error("read entries", e)))
            .transpose()
    }

    /// Bytes this processor's tree takes on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.keyspace.disk_space()
    }

    /// Whether `other` is a handle of this same keyspace.
    pub fn same_as(&self, other: &ProcessorStore) -> bool {
        Arc::ptr_eq(&self.metrics, &other.metrics)
    }

    /// What this handle (and its clones) read and wrote, and what the keyspace holds.
    pub fn totals(&self) -> StoreTotals {
        StoreTotals {
            bytes_read: self.metrics.bytes_read.load(Ordering::Relaxed),
            bytes_written: self.metrics.bytes_written.load(Ordering::Relaxed),
            entries: self.keyspace.approximate_len(),
            disk_bytes: self.disk_bytes(),
        }
    }

    /// Writes what is in memory out and compacts everything (expired entries leave).
    /// Background compaction does this on its own in time; tests ask for it now.
    #[cfg(test)]
    pub fn compact_now(&self) -> Result<()> {
        self.keyspace
            .rotate_memtable_and_wait()
            .and_then(|()| self.keyspace.major_compact())
            .map_err(|e| self.owner.error("compact", e))
    }

    fn count_read(&self, bytes: usize) {
        self.metrics
            .bytes_read
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

/// A store of its own for a unit test, in a fresh directory that goes with it.
#[cfg(test)]
pub fn test_store(name: &str, ttls: Vec<Option<i64>>) -> DiskStore {
    let root = std::env::temp_dir().join(format!("udf-store-unit-{}", std::process::id()));
    let dir = StateDir::create(&root, "f", Some(name), false).expect("a scratch directory");
    let memory = StoreMemory {
        cache: 8 << 20,
        memtable: 4 << 20,
    };
    DiskStore::open(dir, TtlTable::new(ttls), memory).expect("a scratch store")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::layout::{StoreKey, split_stamp, stamped};
    use super::*;

    const MEMORY: StoreMemory = StoreMemory {
        cache: 8 << 20,
        memtable: 4 << 20,
    };

    fn root(name: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("udf-store-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        path
    }

    fn store(root: &Path, uid: &str, ttls: Vec<Option<i64>>) -> Result<DiskStore> {
        let dir = StateDir::create(root, "f", Some(uid), false)?;
        DiskStore::open(dir, TtlTable::new(ttls), MEMORY)
    }

    #[test]
    fn entries_are_read_one_by_one_and_scanned_by_entry() {
        let root = root("entries");
        let store = store(&root, "entries", vec![None, None]).unwrap();
        let processor = store.processor(0).unwrap();
        let (mut key, mut value) = (StoreKey::default(), Vec::new());
        for (entry, partitions) in [(0u16, &[&b"a"[..], b"ab", b"b"][..]), (1, &[&b"a"[..]][..])] {
            for partition in partitions {
                stamped(7, partition, &mut value);
                processor
                    .insert(key.entry(entry, partition), &value)
                    .unwrap();
            }
        }
        let read = processor.get(key.entry(0, b"ab")).unwrap().unwrap();
        assert_eq!(split_stamp(&read), Some((7, &b"ab"[..])));
        assert!(processor.get(key.entry(1, b"b")).unwrap().is_none());
        let of_entry_0: Vec<_> = processor
            .scan(&StoreKey::entries_prefix(0))
            .collect::<Result<_>>()
            .unwrap();
        // Keys sort by their length first (it comes first): shorter keys, then longer.
        let keys: Vec<&[u8]> = of_entry_0
            .iter()
            .map(|(k, _)| StoreKey::parse_partition_key(k).unwrap())
            .collect();
        assert_eq!(
            keys,
            [&b"a"[..], b"b", b"ab"],
            "entry 0's keys, none of entry 1's"
        );
        processor.remove(key.entry(0, b"a")).unwrap();
        assert!(processor.get(key.entry(0, b"a")).unwrap().is_none());
        assert!(processor.get(key.entry(1, b"a")).unwrap().is_some());
        let totals = processor.totals();
        assert!(
            totals.bytes_read > 0 && totals.bytes_written > 0,
            "{totals:?}"
        );
        drop(processor);
        drop(store);
        assert!(
            !root.join("entries").exists(),
            "the directory goes with its run"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_directory_in_use_is_an_error_and_a_leftover_one_starts_empty() {
        let root = root("locked");
        let running = store(&root, "shared", vec![None]).unwrap();
        let error = store(&root, "shared", vec![None]).err().expect("locked");
        assert!(
            error
                .to_string()
                .contains("is in use by another running query"),
            "{error}"
        );
        // A kept directory with an entry in it, as a finished run leaves it.
        drop(running);
        let kept = StateDir::create(&root, "f", Some("left"), true).unwrap();
        let earlier = DiskStore::open(kept, TtlTable::new(vec![None]), MEMORY).unwrap();
        earlier
            .processor(0)
            .unwrap()
            .insert(b"\x01old", b"value")
            .unwrap();
        drop(earlier);
        let later = store(&root, "left", vec![None]).unwrap();
        assert!(
            later
                .processor(0)
                .unwrap()
                .get(b"\x01old")
                .unwrap()
                .is_none()
        );
        drop(later);
        // What a run killed while it created its store leaves: a directory fjall cannot open.
        let half = root.join("half");
        std::fs::create_dir_all(half.join("keyspaces")).unwrap();
        std::fs::write(half.join("version"), b"\xff\xff").unwrap();
        let fresh = store(&root, "half", vec![None]).unwrap();
        assert!(
            fresh
                .processor(0)
                .unwrap()
                .get(b"\x01old")
                .unwrap()
                .is_none()
        );
        drop(fresh);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn expired_entries_leave_the_store_and_it_shrinks_on_disk() {
        let root = root("ttl");
        let store = store(&root, "ttl", vec![Some(1_000), None]).unwrap();
        let processor = store.processor(0).unwrap();
        let (mut key, mut value) = (StoreKey::default(), Vec::new());
        let payload = vec![7u8; 100];
        for i in 0..20_000u32 {
            // Entry 0 (with TTL) for every key, entry 1 (without) for one key in ten.
            stamped(0, &payload, &mut value);
            processor
                .insert(key.entry(0, &i.to_be_bytes()), &value)
                .unwrap();
            if i % 10 == 0 {
                processor
                    .insert(key.entry(1, &i.to_be_bytes()), &value)
                    .unwrap();
            }
        }
        processor.compact_now().unwrap();
        let before = processor.disk_bytes();
        store.ttl().advance(999);
        processor.compact_now().unwrap();
        let count = |entry| processor.scan(&StoreKey::entries_prefix(entry)).count();
        assert_eq!((count(0), count(1)), (20_000, 2_000), "not yet expired");
        store.ttl().advance(1_000);
        processor.compact_now().unwrap();
        assert_eq!(
            (count(0), count(1)),
            (0, 2_000),
            "only the entries without TTL stay"
        );
        let after = processor.disk_bytes();
        assert!(after * 4 < before, "{before} bytes before, {after} after");
        assert_eq!(processor.totals().entries, 2_000);
        drop(processor);
        drop(store);
        let _ = std::fs::remove_dir_all(&root);
    }
}
