//! The timers of one processor (rules 26–29): ordered by (time, key); a named timer
//! replaces the key's timer of that name; an unnamed one exists once per (key, time).
//! When the watermark reaches `w`, the timers with time ≤ `w` registered before that moment
//! fire in order; a timer registered while they fire waits for the next advance.

use std::collections::{BTreeSet, HashMap, HashSet};

use udf_core::ptf::{FiredTimer, TimerRequest, Timers};

#[derive(Debug, Default)]
pub struct TimerService {
    /// (time, key, id) of every registered timer.
    queue: BTreeSet<(i64, u32, u64)>,
    /// id → (key, time, name).
    timers: HashMap<u64, (u32, i64, Option<String>)>,
    named: HashMap<(u32, String), u64>,
    unnamed: HashMap<(u32, i64), u64>,
    by_key: HashMap<u32, HashSet<u64>>,
    next_id: u64,
    /// The ids of the batch being fired.
    firing: Vec<u64>,
}

impl TimerService {
    /// Whether `key` has timers (its slot must stay).
    pub fn has_timers(&self, key: u32) -> bool {
        self.by_key.get(&key).is_some_and(|ids| !ids.is_empty())
    }

    pub fn len(&self) -> usize {
        self.timers.len()
    }

    /// The timers due at `watermark` that were registered before now, in firing order.
    pub fn due(&mut self, watermark: i64) -> Vec<FiredTimer> {
        let limit = self.next_id;
        self.firing.clear();
        let mut fired = Vec::new();
        for &(time, key, id) in self.queue.range(..=(watermark, u32::MAX, u64::MAX)) {
            if id >= limit {
                continue;
            }
            self.firing.push(id);
            fired.push(FiredTimer {
                key,
                time,
                name: self.timers[&id].2.clone(),
            });
        }
        fired
    }

    fn register(&mut self, key: u32, name: Option<String>, time: i64) {
        match &name {
            Some(name) => {
                if let Some(old) = self.named.get(&(key, name.clone())).copied() {
                    self.remove(old);
                }
            }
            None => {
                if self.unnamed.contains_key(&(key, time)) {
                    return;
                }
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        match &name {
            Some(name) => {
                self.named.insert((key, name.clone()), id);
            }
            None => {
                self.unnamed.insert((key, time), id);
            }
        }
        self.queue.insert((time, key, id));
        self.timers.insert(id, (key, time, name));
        self.by_key.entry(key).or_default().insert(id);
    }

    fn remove(&mut self, id: u64) {
        let Some((key, time, name)) = self.timers.remove(&id) else {
            return;
        };
        self.queue.remove(&(time, key, id));
        match name {
            Some(name) => {
                self.named.remove(&(key, name));
            }
            None => {
                self.unnamed.remove(&(key, time));
            }
        }
        if let Some(ids) = self.by_key.get_mut(&key) {
            ids.remove(&id);
            if ids.is_empty() {
                self.by_key.remove(&key);
            }
        }
    }
}

impl Timers for TimerService {
    fn apply(&mut self, key: u32, requests: Vec<TimerRequest>) {
        for request in requests {
            match request {
                TimerRequest::Register { name, time } => self.register(key, name, time),
                TimerRequest::ClearNamed(name) => {
                    if let Some(id) = self.named.get(&(key, name)).copied() {
                        self.remove(id);
                    }
                }
                TimerRequest::ClearAt(time) => {
                    if let Some(id) = self.unnamed.get(&(key, time)).copied() {
                        self.remove(id);
                    }
                }
                TimerRequest::ClearAll => {
                    let ids: Vec<u64> = self
                        .by_key
                        .get(&key)
                        .map(|ids| ids.iter().copied().collect())
                        .unwrap_or_default();
                    for id in ids {
                        self.remove(id);
                    }
                }
            }
        }
    }

    fn take(&mut self, index: usize) -> bool {
        let id = self.firing[index];
        let registered = self.timers.contains_key(&id);
        self.remove(id);
        registered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn register(service: &mut TimerService, key: u32, name: Option<&str>, time: i64) {
        service.apply(
            key,
            vec![TimerRequest::Register {
                name: name.map(str::to_owned),
                time,
            }],
        );
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
        let due: Vec<(u32, i64)> = service.due(6500).iter().map(|t| (t.key, t.time)).collect();
        assert_eq!(due, [(0, 6000), (2, 6000)]);
        assert!(service.take(0) && service.take(1));
        assert!(service.has_timers(1) && !service.has_timers(2));
        // Registered after `due`: waits for the next advance although it is due.
        let due = service.due(10_000);
        register(&mut service, 3, None, 1000);
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].name.as_deref(), Some("timeout"));
        // An earlier timer of the batch may have deleted it.
        service.apply(1, vec![TimerRequest::ClearAll]);
        assert!(!service.take(0));
        assert_eq!(service.due(10_000).len(), 1);
    }
}
