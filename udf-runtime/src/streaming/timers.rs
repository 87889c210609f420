//! The timers of one processor (rules 26–29 of docs/semantics.md): ordered by time, and timers
//! due at the same time in the order they were registered (a named timer registered again counts
//! from then); a named timer replaces the key's timer of that name; an unnamed one exists once
//! per (key, time). The order depends on nothing a run assigns, so a restored processor fires
//! timers as the original would have.
//! When the watermark reaches `w`, the timers with time ≤ `w` registered before that moment
//! fire in order; a timer registered while they fire waits for the next advance.
//!
//! Timers are kept by key slot (slots are small dense numbers) in short lists — a key's only
//! timer inline, so reaching it costs one memory access — and names are interned:
//! registering and firing hash nothing and allocate nothing per row.
//!
//! The firing order is a queue of two parts: timers registered in order (the common case —
//! an event's time plus a constant) are appended to a sorted run, the others go to a binary
//! heap, and firing takes the smaller front. A timer deleted or replaced stays queued until
//! it comes up (a queued entry counts only while its key still lists it); such entries are
//! dropped from the queue when they outnumber the live ones by far.
//!
//! A watermark's batch is taken from the queue as it fires, so with the disk backend a key's
//! timers can leave with the key (`take_key`) and come back with their ids (`restore_key`)
//! while a batch is open; a bound holds the batch at the last timer brought back from disk.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use datafusion::common::HashMap;
use udf_core::ptf::{FiredTimer, TimerRequest, TimerRequests, Timers};

/// "No name" in an entry's name position.
const UNNAMED: u32 = u32::MAX;

/// Deleted timers the queue may hold beyond twice the live ones before they are dropped.
const STALE_SLACK: usize = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    id: u64,
    time: i64,
    name: u32,
}

/// The timers of one key: most keys have none or one, kept inline.
#[derive(Clone, Debug, Default)]
enum KeyTimers {
    #[default]
    None,
    One(Entry),
    Many(Vec<Entry>),
}

impl KeyTimers {
    fn as_slice(&self) -> &[Entry] {
        match self {
            KeyTimers::None => &[],
            KeyTimers::One(entry) => std::slice::from_ref(entry),
            KeyTimers::Many(entries) => entries,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [Entry] {
        match self {
            KeyTimers::None => &mut [],
            KeyTimers::One(entry) => std::slice::from_mut(entry),
            KeyTimers::Many(entries) => entries,
        }
    }

    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn is_empty(&self) -> bool {
        matches!(self, KeyTimers::None)
    }

    fn push(&mut self, entry: Entry) {
        *self = match std::mem::take(self) {
            KeyTimers::None => KeyTimers::One(entry),
            KeyTimers::One(first) => KeyTimers::Many(vec![first, entry]),
            KeyTimers::Many(mut entries) => {
                entries.push(entry);
                KeyTimers::Many(entries)
            }
        };
    }

    /// Removes the entry at `index` (the last one takes its place).
    fn swap_remove(&mut self, index: usize) -> Entry {
        match self {
            KeyTimers::Many(entries) => {
                let entry = entries.swap_remove(index);
                self.settle();
                entry
            }
            _ => match std::mem::take(self) {
                KeyTimers::One(entry) => entry,
                _ => unreachable!("removing from a key without timers"),
            },
        }
    }

    fn retain(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        match self {
            KeyTimers::None => {}
            KeyTimers::One(entry) => {
                if !keep(entry) {
                    *self = KeyTimers::None;
                }
            }
            KeyTimers::Many(entries) => {
                entries.retain(|e| keep(e));
                self.settle();
            }
        }
    }

    /// A list of one or none goes back inline (so `is_empty` is exact).
    fn settle(&mut self) {
        if let KeyTimers::Many(entries) = self
            && entries.len() <= 1
        {
            *self = entries.pop().map_or(KeyTimers::None, KeyTimers::One);
        }
    }
}

/// A queued timer: (time, id, key), the firing order (ids grow with registration).
type Queued = (i64, u64, u32);

/// Queued timers, earliest first.
#[derive(Debug, Default)]
struct Queue {
    /// Timers queued in order.
    run: VecDeque<Queued>,
    /// The others.
    heap: BinaryHeap<Reverse<Queued>>,
}

impl Queue {
    #[inline]
    fn push(&mut self, entry: Queued) {
        if self.run.back().is_none_or(|last| *last <= entry) {
            self.run.push_back(entry);
        } else {
            self.heap.push(Reverse(entry));
        }
    }

    fn first(&self) -> Option<Queued> {
        match (self.run.front(), self.heap.peek()) {
            (Some(&run), Some(&Reverse(heap))) => Some(run.min(heap)),
            (Some(&run), None) => Some(run),
            (None, Some(&Reverse(heap))) => Some(heap),
            (None, None) => None,
        }
    }

    fn pop(&mut self) -> Option<Queued> {
        let from_run = match (self.run.front(), self.heap.peek()) {
            (Some(run), Some(Reverse(heap))) => run <= heap,
            (run, _) => run.is_some(),
        };
        if from_run {
            self.run.pop_front()
        } else {
            self.heap.pop().map(|Reverse(entry)| entry)
        }
    }

    fn len(&self) -> usize {
        self.run.len() + self.heap.len()
    }
}

#[derive(Debug, Default)]
pub struct TimerService {
    /// Every registered timer (and deleted ones not yet come up).
    queue: Queue,
    /// The timers of each key slot: what is registered.
    by_key: Vec<KeyTimers>,
    /// Registered timers.
    live: usize,
    names: HashMap<String, u32>,
    interned: Vec<Arc<str>>,
    /// The name id used last.
    last_name: u32,
    next_id: u64,
    /// The batch being fired (the latest one made due).
    batch: Batch,
    /// Timers at or before the batch's watermark registered after it was made due: they wait
    /// for the next advance.
    deferred: Vec<Queued>,
    /// The watermark timers last fired at.
    fired_at: Option<i64>,
}

/// The timers a watermark made due: those at or before it registered before that moment.
/// They are taken from the queue as they fire, so a key's timers may leave in the meantime
/// (moved to disk with its key) and come back.
#[derive(Debug, Default, Clone, Copy)]
struct Batch {
    watermark: i64,
    /// Ids from here on were registered after the batch was made due.
    limit: u64,
    /// While some of the batch is elsewhere (on disk): hand out only up to this (time, id).
    bound: Option<(i64, u64)>,
}

/// One of a key's timers as it leaves the service (for the disk) and comes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTimer {
    pub time: i64,
    /// The registration order across all keys.
    pub id: u64,
    pub name: Option<Arc<str>>,
}

impl TimerService {
    /// Whether `key` has timers (its slot must stay).
    pub fn has_timers(&self, key: u32) -> bool {
        self.by_key
            .get(key as usize)
            .is_some_and(|timers| !timers.is_empty())
    }

    /// Registered timers.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Registers a timer for `key` (as a call's request would).
    pub fn register_timer(&mut self, key: u32, name: Option<&str>, time: i64) {
        self.register(key, name, time);
    }

    /// Takes every timer of `key` out (its key moves to disk); its queued entries go when
    /// they come up.
    pub fn take_key(&mut self, key: u32) -> Vec<KeyTimer> {
        let Some(timers) = self.by_key.get_mut(key as usize) else {
            return Vec::new();
        };
        let taken: Vec<KeyTimer> = std::mem::take(timers)
            .as_slice()
            .iter()
            .map(|e| KeyTimer {
                time: e.time,
                id: e.id,
                name: (e.name != UNNAMED).then(|| self.interned[e.name as usize].clone()),
            })
            .collect();
        self.live -= taken.len();
        taken
    }

    /// Gives `key` back timers [`take_key`](Self::take_key) took, with their ids (so they keep
    /// their place in the firing order).
    pub fn restore_key(&mut self, key: u32, timers: Vec<KeyTimer>) {
        for timer in timers {
            let name = timer.name.as_deref().map_or(UNNAMED, |n| self.name_id(n));
            self.timers_of(key).push(Entry {
                id: timer.id,
                time: timer.time,
                name,
            });
            self.live += 1;
            self.next_id = self.next_id.max(timer.id + 1);
            self.queue.push((timer.time, timer.id, key));
        }
        self.compact_if_stale();
    }

    /// The ids below which timers belong to the batch being fired (none before the first).
    pub fn batch_limit(&self) -> u64 {
        self.batch.limit
    }

    /// While timers of the batch are elsewhere: hand out only those up to `(time, id)`.
    pub fn set_batch_bound(&mut self, bound: Option<(i64, u64)>) {
        self.batch.bound = bound;
    }

    /// Every registered timer as `(key, time, id, name)`, in firing order.
    pub fn registered(&self) -> Vec<(u32, i64, u64, Option<Arc<str>>)> {
        let mut timers: Vec<(i64, u64, u32, u32)> = self
            .by_key
            .iter()
            .enumerate()
            .flat_map(|(key, timers)| {
                timers
                    .as_slice()
                    .iter()
                    .map(move |e| (e.time, e.id, key as u32, e.name))
            })
            .collect();
        timers.sort_unstable();
        timers
            .into_iter()
            .map(|(time, id, key, name)| {
                let name = (name != UNNAMED).then(|| self.interned[name as usize].clone());
                (key, time, id, name)
            })
            .collect()
    }

    /// The watermark timers last became due at.
    pub fn fired_at(&self) -> Option<i64> {
        self.fired_at
    }

    /// Timers are due only past `watermark` (a restored service resumes where it was).
    pub fn set_fired_at(&mut self, watermark: Option<i64>) {
        self.fired_at = watermark;
    }

    /// The id of a name seen before: the last one used is compared first, so a function
    /// with one timer name hashes nothing.
    fn known_name(&mut self, name: &str) -> Option<u32> {
        if self
            .interned
            .get(self.last_name as usize)
            .is_some_and(|last| **last == *name)
        {
            return Some(self.last_name);
        }
        let id = *self.names.get(name)?;
        self.last_name = id;
        Some(id)
    }

    fn name_id(&mut self, name: &str) -> u32 {
        if let Some(id) = self.known_name(name) {
            return id;
        }
        let id = self.interned.len() as u32;
        self.interned.push(name.into());
        self.names.insert(name.to_owned(), id);
        self.last_name = id;
        id
    }

    fn timers_of(&mut self, key: u32) -> &mut KeyTimers {
        let key = key as usize;
        if self.by_key.len() <= key {
            self.by_key.resize_with(key + 1, KeyTimers::default);
        }
        &mut self.by_key[key]
    }

    /// Whether the queued entry is still registered.
    fn is_registered(&self, entry: Queued) -> bool {
        registered(&self.by_key, entry)
    }

    fn register(&mut self, key: u32, name: Option<&str>, time: i64) {
        let name = name.map_or(UNNAMED, |n| self.name_id(n));
        let id = self.next_id;
        let timers = self.timers_of(key);
        let same = timers
            .as_slice()
            .iter()
            .position(|e| e.name == name && (name != UNNAMED || e.time == time));
        match same {
            Some(_) if name == UNNAMED => return,
            Some(index) => timers.as_mut_slice()[index] = Entry { id, time, name },
            None => {
                timers.push(Entry { id, time, name });
                self.live += 1;
            }
        }
        self.next_id += 1;
        self.queue.push((time, id, key));
        self.compact_if_stale();
    }

    /// Removes the key's timers that `matches` (their heap entries go when they come up).
    fn remove_where(&mut self, key: u32, mut matches: impl FnMut(&Entry) -> bool) {
        let Some(timers) = self.by_key.get_mut(key as usize) else {
            return;
        };
        let before = timers.len();
        timers.retain(|e| !matches(e));
        self.live -= before - timers.len();
    }

    /// Drops the deleted and replaced timers from the queue once they outnumber the live
    /// ones by far (timers far ahead, replaced on every row, would otherwise pile up). The
    /// slack keeps this rare when deleted timers leave the queue soon on their own (a
    /// timeout cleared by the next event); the order within the queue is kept, so nothing is
    /// sorted.
    fn compact_if_stale(&mut self) {
        if self.queue.len() <= 2 * self.live + STALE_SLACK {
            return;
        }
        let by_key = &self.by_key;
        self.queue.run.retain(|&entry| registered(by_key, entry));
        self.queue
            .heap
            .retain(|&Reverse(entry)| registered(by_key, entry));
    }
}

/// Whether the queued `entry` is still registered in `by_key`.
fn registered(by_key: &[KeyTimers], (_, id, key): Queued) -> bool {
    by_key
        .get(key as usize)
        .is_some_and(|timers| timers.as_slice().iter().any(|e| e.id == id))
}

impl Timers for TimerService {
    fn apply(&mut self, key: u32, requests: &mut TimerRequests) {
        for request in requests.iter() {
            match request {
                TimerRequest::Register { name, time } => self.register(key, name, time),
                TimerRequest::ClearNamed(name) => {
                    if let Some(name) = self.known_name(name) {
                        self.remove_where(key, |e| e.name == name);
                    }
                }
                TimerRequest::ClearAt(time) => {
                    self.remove_where(key, |e| e.name == UNNAMED && e.time == time)
                }
                TimerRequest::ClearAll => self.remove_where(key, |_| true),
            }
        }
        requests.clear();
    }

    fn due(&mut self, watermark: i64) -> bool {
        if self.fired_at.is_some_and(|fired| fired >= watermark) {
            return false;
        }
        self.fired_at = Some(watermark);
        for entry in self.deferred.drain(..) {
            self.queue.push(entry);
        }
        // The batch is fixed now: timers registered from here on wait for the next advance
        // (rule 28 of docs/semantics.md).
        self.batch = Batch {
            watermark,
            limit: self.next_id,
            bound: None,
        };
        self.pending()
    }

    fn next_due(&mut self) -> Option<FiredTimer> {
        if !self.pending() {
            return None;
        }
        let (time, id, key) = self.queue.pop().expect("a pending entry");
        let timers = &mut self.by_key[key as usize];
        let index = timers
            .as_slice()
            .iter()
            .position(|e| e.id == id)
            .expect("a pending entry is registered");
        let entry = timers.swap_remove(index);
        self.live -= 1;
        Some(FiredTimer {
            key,
            time,
            name: (entry.name != UNNAMED).then(|| self.interned[entry.name as usize].clone()),
        })
    }
}

impl TimerService {
    /// Whether the queue's first entry is a registered timer of the batch (within its
    /// bound); deleted and replaced entries in front are dropped, later registrations set
    /// aside for the next advance.
    fn pending(&mut self) -> bool {
        let batch = self.batch;
        while let Some(first @ (time, id, _)) = self.queue.first() {
            if time > batch.watermark || batch.bound.is_some_and(|bound| (time, id) > bound) {
                return false;
            }
            if !self.is_registered(first) {
                self.queue.pop();
            } else if id >= batch.limit {
                self.queue.pop();
                self.deferred.push(first);
            } else {
                return true;
            }
        }
        false
    }

    /// Whether timers of the batch made due last are still to fire here.
    pub fn batch_pending(&mut self) -> bool {
        self.fired_at.is_some() && self.pending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn register(service: &mut TimerService, key: u32, name: Option<&str>, time: i64) {
        let mut requests = TimerRequests::default();
        requests.push(TimerRequest::Register { name, time });
        service.apply(key, &mut requests);
    }

    fn due(service: &mut TimerService, watermark: i64) -> Vec<(u32, i64)> {
        if !service.due(watermark) {
            return Vec::new();
        }
        std::iter::from_fn(|| service.next_due())
            .map(|t| (t.key, t.time))
            .collect()
    }

    #[test]
    fn named_timers_replace_unnamed_ones_dedupe_and_fire_in_registration_order() {
        let mut service = TimerService::default();
        register(&mut service, 1, Some("timeout"), 5000);
        register(&mut service, 1, Some("timeout"), 7000);
        register(&mut service, 2, None, 6000);
        register(&mut service, 2, None, 6000);
        register(&mut service, 0, None, 6000);
        assert_eq!(service.len(), 3);
        // Due at the same time: in the order they were registered, whatever their keys.
        assert_eq!(due(&mut service, 6500), [(2, 6000), (0, 6000)]);
        assert!(service.has_timers(1) && !service.has_timers(2));
        // The same watermark again fires nothing.
        register(&mut service, 4, None, 6000);
        assert_eq!(due(&mut service, 6500), []);
        assert_eq!(due(&mut service, 6501), [(4, 6000)]);
    }

    #[test]
    fn timers_registered_while_firing_wait_and_deleted_ones_do_not_fire() {
        let mut service = TimerService::default();
        register(&mut service, 1, Some("timeout"), 7000);
        register(&mut service, 2, None, 8000);
        assert!(service.due(10_000));
        let first = service.next_due().expect("a timer is due");
        assert_eq!((first.key, first.time), (1, 7000));
        assert_eq!(first.name.as_deref(), Some("timeout"));
        // While the first fires: a timer in the past waits, the next one is deleted.
        register(&mut service, 3, None, 1000);
        let mut clear = TimerRequests::default();
        clear.push(TimerRequest::ClearAll);
        service.apply(2, &mut clear);
        assert_eq!(service.next_due(), None);
        assert_eq!(due(&mut service, 10_001), [(3, 1000)]);
        assert_eq!(service.len(), 0);
    }

    #[test]
    fn dropping_replaced_timers_keeps_the_firing_order_of_the_others() {
        let mut service = TimerService::default();
        // Keys 0..10 keep one timer each, registered out of order (the heap); key 10's timer
        // moves ahead on every row (the sorted run) until the replaced ones are dropped.
        for key in 0..10u32 {
            register(&mut service, key, None, 1_000 - i64::from(key));
        }
        let rows = (STALE_SLACK + 100) as i64;
        for row in 0..rows {
            register(&mut service, 10, Some("later"), 2_000 + row);
        }
        assert!(
            service.queue.len() < rows as usize,
            "replaced timers dropped"
        );
        let mut expected: Vec<(u32, i64)> = (0..10u32)
            .rev()
            .map(|key| (key, 1_000 - i64::from(key)))
            .collect();
        expected.push((10, 2_000 + rows - 1));
        assert_eq!(due(&mut service, i64::MAX), expected);
    }

    #[test]
    fn replaced_timers_do_not_pile_up_in_the_queue() {
        let mut service = TimerService::default();
        // One timer per key, pushed a year ahead on every "row".
        for row in 0..100_000_i64 {
            register(
                &mut service,
                (row % 10) as u32,
                Some("later"),
                row + 31_536_000_000,
            );
        }
        assert_eq!(service.len(), 10);
        assert!(
            service.queue.len() <= 2 * 10 + STALE_SLACK + 1,
            "{}",
            service.queue.len()
        );
        let fired = due(&mut service, i64::MAX);
        let expected: Vec<(u32, i64)> = (99_990..100_000_i64)
            .map(|row| ((row % 10) as u32, row + 31_536_000_000))
            .collect();
        assert_eq!(fired, expected);
        assert_eq!(service.len(), 0);
    }

    #[test]
    fn a_keys_timers_move_between_inline_and_a_list() {
        let mut service = TimerService::default();
        register(&mut service, 3, Some("a"), 10);
        register(&mut service, 3, Some("b"), 20);
        register(&mut service, 3, None, 30);
        assert_eq!(service.len(), 3);
        let mut requests = TimerRequests::default();
        requests.push(TimerRequest::ClearNamed("a"));
        requests.push(TimerRequest::ClearAt(30));
        service.apply(3, &mut requests);
        assert!(
            matches!(service.by_key[3], KeyTimers::One(_)),
            "one left, inline"
        );
        assert_eq!(service.len(), 1);
        assert_eq!(due(&mut service, 100), [(3, 20)]);
        assert!(!service.has_timers(3));
        register(&mut service, 3, Some("a"), 200);
        requests.push(TimerRequest::ClearAll);
        service.apply(3, &mut requests);
        assert!(!service.has_timers(3) && service.len() == 0);
        assert!(due(&mut service, 1000).is_empty());
    }

    #[test]
    fn a_keys_timers_leave_and_come_back_in_their_place_in_the_order() {
        let mut service = TimerService::default();
        register(&mut service, 1, Some("a"), 10);
        register(&mut service, 2, None, 10);
        register(&mut service, 1, None, 20);
        register(&mut service, 3, None, 15);
        let taken = service.take_key(1);
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[0].name.as_deref(), Some("a"));
        assert_eq!(service.len(), 2);
        assert!(!service.has_timers(1));
        // Gone, they do not fire.
        assert_eq!(due(&mut service, 12), [(2, 10)]);
        // Back in another slot, with their ids: 20 after 15, and the earlier one first.
        register(&mut service, 4, None, 5);
        service.restore_key(7, taken);
        assert_eq!(service.len(), 4);
        assert_eq!(due(&mut service, 100), [(4, 5), (7, 10), (3, 15), (7, 20)]);
    }

    #[test]
    fn a_bound_holds_the_batch_back_until_it_is_lifted() {
        let mut service = TimerService::default();
        for (key, time) in [(0, 10), (1, 20), (2, 30)] {
            register(&mut service, key, None, time);
        }
        assert!(service.due(100));
        let limit = service.batch_limit();
        service.set_batch_bound(Some((20, limit)));
        let first: Vec<i64> = std::iter::from_fn(|| service.next_due())
            .map(|t| t.time)
            .collect();
        assert_eq!(first, [10, 20]);
        assert!(!service.batch_pending());
        // A timer registered now, at a time the batch covers, waits for the next advance.
        register(&mut service, 5, None, 25);
        service.set_batch_bound(None);
        assert!(service.batch_pending());
        let rest: Vec<(u32, i64)> = std::iter::from_fn(|| service.next_due())
            .map(|t| (t.key, t.time))
            .collect();
        assert_eq!(rest, [(2, 30)]);
        assert_eq!(due(&mut service, 101), [(5, 25)]);
    }

    #[test]
    fn timers_registered_out_of_order_fire_in_time_order() {
        let mut service = TimerService::default();
        let times = [50, 30, 80, 10, 80, 60, 20, 90, 70, 40];
        for (key, time) in times.iter().enumerate() {
            register(&mut service, key as u32, None, *time);
        }
        assert_eq!(due(&mut service, 45), [(3, 10), (6, 20), (1, 30), (9, 40)]);
        register(&mut service, 10, None, 55);
        assert_eq!(
            due(&mut service, 100),
            [
                (0, 50),
                (10, 55),
                (5, 60),
                (8, 70),
                (2, 80),
                (4, 80),
                (7, 90)
            ]
        );
    }
}
