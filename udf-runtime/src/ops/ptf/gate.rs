//! Back-pressure between the routing tasks and the processors that cannot deadlock.
//!
//! Each processor's queue is unbounded, but a sender waits before adding to a queue that
//! already holds `capacity` messages — unless some queue is empty. A processor waiting for
//! rows therefore never waits on a sender that waits on it, whatever order the processors
//! are read in; memory stays bounded while every processor keeps up. (The same rule as
//! DataFusion's repartitioning.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

#[derive(Debug)]
pub struct Gate {
    capacity: usize,
    queued: Vec<AtomicUsize>,
    /// Woken whenever a processor takes a message.
    taken: Notify,
}

impl Gate {
    pub fn new(processors: usize, capacity: usize) -> Arc<Self> {
        Arc::new(Gate {
            capacity,
            queued: (0..processors).map(|_| AtomicUsize::new(0)).collect(),
            taken: Notify::new(),
        })
    }

    fn must_wait(&self, processor: usize) -> bool {
        self.queued[processor].load(Ordering::Acquire) >= self.capacity
            && self.queued.iter().all(|q| q.load(Ordering::Acquire) > 0)
    }

    /// Waits until a message may be added to `processor`'s queue, and counts it.
    pub async fn enter(&self, processor: usize) {
        loop {
            let taken = self.taken.notified();
            if !self.must_wait(processor) {
                break;
            }
            taken.await;
        }
        self.queued[processor].fetch_add(1, Ordering::AcqRel);
    }

    /// Counts a message added without waiting (the end of a source, an error).
    pub fn enter_now(&self, processor: usize) {
        self.queued[processor].fetch_add(1, Ordering::AcqRel);
    }

    /// `processor` took a message from its queue.
    pub fn leave(&self, processor: usize) {
        self.queued[processor].fetch_sub(1, Ordering::AcqRel);
        self.taken.notify_waiters();
    }
}
