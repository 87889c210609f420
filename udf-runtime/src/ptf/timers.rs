//! The timers of one processor (rules 26–29): ordered by (time, key); a named timer
//! replaces the key's timer of that name; an unnamed one exists once per (key, time).
//! When the watermark reaches `w`, the timers with time ≤ `w` registered before that moment
//! fire in order; a timer registered while they fire waits for the next advance.
//!
//! Timers are kept by key slot (slots are small dense numbers) in short lists, names are
//! interned: registering and firing hash nothing and allocate nothing per row.

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion::common::HashMap;
use udf_core::ptf::{FiredTimer, TimerRequest, Timers};

/// "No name" in the queue's name position.
const UNNAMED: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    id: u64,
    time: i64,
    name: u32,
}

#[derive(Debug, Default)]
pub struct TimerService {
    /// (time, key, id, name) of every registered timer: the firing order.
    queue: BTreeSet<(i64, u32, u64, u32)>,
    /// The timers of each key slot.
    by_key: Vec<Vec<Entry>>,
    names: HashMap<String, u32>,
    interned: Vec<Arc<str>>,
    next_id: u64,
    /// The queue entries of the batch being fired, and how many of them were handed out.
    firing: Vec<(i64, u32, u64, u32)>,
    handed_out: usize,
    /// The watermark timers last fired at.
    fired_at: Option<i64>,
}

impl TimerService {
    /// Whether `key` has timers (its slot must stay).
    pub fn has_timers(&self, key: u32) -> bool {
        self.by_key
            .get(key as usize)
            .is_some_and(|timers| !timers.is_empty())
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    fn name_id(&mut self, name: &str) -> u32 {
        if let Some(id) = self.names.get(name) {
            return *id;
        }
        let id = self.interned.len() as u32;
        self.interned.push(name.into());
        self.names.insert(name.to_owned(), id);
        id
    }

    fn timers_of(&mut self, key: u32) -> &mut Vec<Entry> {
        let key = key as usize;
        if self.by_key.len() <= key {
            self.by_key.resize_with(key + 1, Vec::new);
        }
        &mut self.by_key[key]
    }

    fn register(&mut self, key: u32, name: Option<&str>, time: i64) {
        let name = name.map_or(UNNAMED, |n| self.name_id(n));
        let id = self.next_id;
        let timers = self.timers_of(key);
        let same = timers
            .iter()
            .position(|e| e.name == name && (name != UNNAMED || e.time == time));
        let replaced = match same {
            Some(_) if name == UNNAMED => return,
            Some(index) => Some(timers.swap_remove(index)),
            None => None,
        };
        timers.push(Entry { id, time, name });
        if let Some(old) = replaced {
            self.queue.remove(&(old.time, key, old.id, old.name));
        }
        self.next_id += 1;
        self.queue.insert((time, key, id, name));
    }

    /// Removes the key's timers that `matches`.
    fn remove_where(&mut self, key: u32, mut matches: impl FnMut(&Entry) -> bool) {
        let Some(timers) = self.by_key.get_mut(key as usize) else {
            return;
        };
        let mut index = 0;
        while index < timers.len() {
            if matches(&timers[index]) {
                let entry = timers.swap_remove(index);
                self.queue.remove(&(entry.time, key, entry.id, entry.name));
            } else {
                index += 1;
            }
        }
    }
}

impl Timers for TimerService {
    fn apply(&mut self, key: u32, requests: &mut Vec<TimerRequest>) {
        for request in requests.drain(..) {
            match request {
                TimerRequest::Register { name, time } => self.register(key, name.as_deref(), time),
                TimerRequest::ClearNamed(name) => {
                    if let Some(&name) = self.names.get(&name) {
                        self.remove_where(key, |e| e.name == name);
                    }
                }
                TimerRequest::ClearAt(time) => {
                    self.remove_where(key, |e| e.name == UNNAMED && e.time == time)
                }
                TimerRequest::ClearAll => self.remove_where(key, |_| true),
            }
        }
    }

    fn due(&mut self, watermark: i64) -> bool {
        if self.fired_at.is_some_and(|fired| fired >= watermark) {
            return false;
        }
        self.fired_at = Some(watermark);
        self.firing.clear();
        self.handed_out = 0;
        if self.queue.first().is_none_or(|first| first.0 > watermark) {
            return false;
        }
        // Timers registered from here on wait for the next advance (rule 28).
        let limit = self.next_id;
        self.firing.extend(
            self.queue
                .range(..=(watermark, u32::MAX, u64::MAX, u32::MAX))
                .filter(|entry| entry.2 < limit),
        );
        !self.firing.is_empty()
    }

    fn next_due(&mut self) -> Option<FiredTimer> {
        while let Some(&(time, key, id, name)) = self.firing.get(self.handed_out) {
            self.handed_out += 1;
            let mut registered = false;
            self.remove_where(key, |e| {
                let hit = e.id == id;
                registered |= hit;
                hit
            });
            if registered {
                return Some(FiredTimer {
                    key,
                    time,
                    name: (name != UNNAMED).then(|| self.interned[name as usize].clone()),
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn register(service: &mut TimerService, key: u32, name: Option<&str>, time: i64) {
        service.apply(
            key,
            &mut vec![TimerRequest::Register {
                name: name.map(str::to_owned),
                time,
            }],
        );
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
    fn named_timers_replace_unnamed_ones_dedupe_and_fire_in_order() {
        let mut service = TimerService::default();
        register(&mut service, 1, Some("timeout"), 5000);
        register(&mut service, 1, Some("timeout"), 7000);
        register(&mut service, 2, None, 6000);
        register(&mut service, 2, None, 6000);
        register(&mut service, 0, None, 6000);
        assert_eq!(service.len(), 3);
        assert_eq!(due(&mut service, 6500), [(0, 6000), (2, 6000)]);
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
        service.apply(2, &mut vec![TimerRequest::ClearAll]);
        assert_eq!(service.next_due(), None);
        assert_eq!(due(&mut service, 10_001), [(3, 1000)]);
        assert_eq!(service.len(), 0);
    }
}
