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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

    use super::*;

    /// A message: (sender, its sequence number), or the sender's end.
    type Message = Option<(usize, usize)>;

    /// A small deterministic generator (xorshift), so every run of the test is the same.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Reads processor `queue` until every sender has ended it; checks each sender's messages
    /// come in order; how many there were.
    async fn drain(
        queue: usize,
        receiver: &mut UnboundedReceiver<Message>,
        gate: &Gate,
        senders: usize,
        pause: &mut Random,
    ) -> usize {
        let (mut ended, mut received) = (0, 0);
        let mut last = vec![None; senders];
        while ended < senders {
            let message = receiver.recv().await.expect("senders end their queues");
            gate.leave(queue);
            match message {
                Some((sender, seq)) => {
                    assert!(last[sender] < Some(seq), "a sender's messages in order");
                    last[sender] = Some(seq);
                    received += 1;
                }
                None => ended += 1,
            }
            if pause.below(8) == 0 {
                tokio::time::sleep(Duration::from_micros(pause.below(200))).await;
            }
        }
        received
    }

    /// Senders route messages to random processors through the gate while the processors are
    /// read at random speeds — concurrently, or one after the other to the end (the order that
    /// would deadlock bounded queues). Every message arrives, within a bounded time.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_reading_order_or_speed_deadlocks_the_senders() {
        const PROCESSORS: usize = 8;
        const SENDERS: usize = 4;
        const MESSAGES: usize = 400;
        for round in 0..12u64 {
            let gate = Gate::new(PROCESSORS, 2);
            let (senders, mut receivers): (Vec<_>, Vec<_>) = (0..PROCESSORS)
                .map(|_| unbounded_channel::<Message>())
                .unzip();
            let mut tasks = Vec::new();
            for sender in 0..SENDERS {
                let (gate, senders) = (gate.clone(), senders.clone());
                tasks.push(tokio::spawn(async move {
                    let mut random = Random(0x9e37_79b9 + round * 31 + sender as u64);
                    for seq in 0..MESSAGES {
                        let processor = random.below(PROCESSORS as u64) as usize;
                        gate.enter(processor).await;
                        senders[processor].send(Some((sender, seq))).unwrap();
                    }
                    for (processor, queue) in senders.iter().enumerate() {
                        gate.enter_now(processor);
                        queue.send(None).unwrap();
                    }
                }));
            }
            drop(senders);
            let one_after_the_other = round % 2 == 0;
            let reading = {
                let gate = gate.clone();
                async move {
                    let mut total = 0;
                    if one_after_the_other {
                        let mut pause = Random(round + 7);
                        for (queue, receiver) in receivers.iter_mut().enumerate() {
                            total += drain(queue, receiver, &gate, SENDERS, &mut pause).await;
                        }
                    } else {
                        let readers = receivers.into_iter().enumerate().map(|(queue, mut r)| {
                            let gate = gate.clone();
                            tokio::spawn(async move {
                                let mut pause = Random(round * 13 + queue as u64 + 1);
                                drain(queue, &mut r, &gate, SENDERS, &mut pause).await
                            })
                        });
                        for reader in futures::future::join_all(readers).await {
                            total += reader.unwrap();
                        }
                    }
                    total
                }
            };
            let total = tokio::time::timeout(Duration::from_secs(30), reading)
                .await
                .unwrap_or_else(|_| panic!("round {round}: the readers are stuck"));
            assert_eq!(total, SENDERS * MESSAGES, "round {round}");
            for task in tasks {
                task.await.unwrap();
            }
        }
    }
}
