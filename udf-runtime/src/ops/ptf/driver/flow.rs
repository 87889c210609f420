//! The processor's loop: messages in, output batches out — with, for a committing sink, a
//! barrier after the rows of each checkpoint it saved.

use super::*;

impl Driver {
    /// The processor's output stream: messages from the router in, batches out.
    pub(in crate::ops::ptf) fn run(
        self,
        inbox: Inbox,
        schema: SchemaRef,
    ) -> SendableRecordBatchStream {
        Flow::rows_of(self.run_flow(inbox), schema)
    }

    /// The processor's output with a barrier after the rows of each checkpoint it saved —
    /// and, at the end of input with checkpoints on, after saving its final state — for a
    /// committing sink.
    pub(in crate::ops::ptf) fn run_flow(self, inbox: Inbox) -> BoxStream<'static, Result<Flow>> {
        futures::stream::unfold((Some(inbox), self), |(mut inbox, mut driver)| async move {
            loop {
                if let Some(batch) = driver.coalescer.next_completed_batch() {
                    return Some((Ok(Flow::Rows(batch)), (inbox, driver)));
                }
                if let Some(barrier) = driver.saved.take() {
                    return Some((Ok(Flow::Barrier(barrier)), (inbox, driver)));
                }
                // Timers due before the next message fire before it (rule 26).
                if driver.firing.is_some() {
                    if let Err(error) = driver.fire_chunk() {
                        return Some((Err(error), (None, driver)));
                    }
                    continue;
                }
                let messages = inbox.as_mut()?;
                let message = if driver.stopped || driver.state.watermarks().all_ended() {
                    None
                } else if driver.coalescer.get_buffered_rows() == 0 {
                    messages.next().await
                } else {
                    // Output waits for a full batch only while input keeps coming: an
                    // unbounded input that pauses still sees what its rows (and timers)
                    // produced.
                    match messages.next().now_or_never() {
                        Some(message) => message,
                        None => {
                            if let Err(error) = driver.coalescer.finish_buffered_batch() {
                                return Some((Err(error.into()), (None, driver)));
                            }
                            continue;
                        }
                    }
                };
                match message {
                    Some(Ok(message)) => {
                        if let Err(error) = driver.take(message) {
                            return Some((Err(error), (None, driver)));
                        }
                    }
                    Some(Err(error)) => return Some((Err(error), (None, driver))),
                    None => {
                        let coordinator = messages.coordinator.clone();
                        inbox = None;
                        // The last call is over.
                        driver.instance.close();
                        if let Err(error) = driver.coalescer.finish_buffered_batch() {
                            return Some((Err(error.into()), (None, driver)));
                        }
                        // Every row and timer is done: the final checkpoint, which a
                        // committing sink commits the last rows with.
                        if !driver.stopped
                            && let Some(barrier) = coordinator.and_then(|c| c.final_barrier())
                        {
                            driver.save(barrier, std::time::Duration::ZERO);
                        }
                    }
                }
            }
        })
        .boxed()
    }

    /// Saves the keyed state for `barrier`'s checkpoint; the barrier follows the rows before
    /// it in the output.
    pub(super) fn save(&mut self, barrier: Barrier, alignment: std::time::Duration) {
        match self.state.snapshot() {
            Ok(state) => barrier.saved(self.processor, state, alignment),
            Err(error) => barrier.pending.fail(format!(
                "processor {} of `{}` could not save its state: {error}",
                self.processor, self.call.name
            )),
        }
        self.stopped |= barrier.stop;
        if let Err(error) = self.coalescer.finish_buffered_batch() {
            barrier.pending.fail(format!(
                "processor {} of `{}` could not flush its output: {error}",
                self.processor, self.call.name
            ));
        }
        self.saved = Some(barrier);
    }
}
