//! A replayable source's rows with barriers among them: between two batches, a barrier
//! triggered by the coordinator goes out after every row read before it, with the count of
//! rows read (the position to resume at). A stop barrier is the last thing a source emits.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::execution::SendableRecordBatchStream;
use futures::StreamExt;
use futures::stream::BoxStream;

use super::barrier::{SourceAt, SourceMessage};
use super::coordinator::Coordinator;
use super::file_source::FileCursor;

pub type Messages = BoxStream<'static, Result<SourceMessage>>;

struct Reading {
    batches: SendableRecordBatchStream,
    coordinator: Arc<Coordinator>,
    trigger: tokio::sync::watch::Receiver<Option<super::barrier::Barrier>>,
    /// Whether the coordinator can still trigger barriers.
    listening: bool,
    table: String,
    partition: usize,
    rows: u64,
    /// Of a file scan: which file its rows so far came from.
    file: Option<FileCursor>,
    /// The id of the latest barrier emitted.
    last: u64,
    done: bool,
}

impl Reading {
    /// Where the source stands: after every row it yielded.
    fn at(&self) -> SourceAt {
        SourceAt {
            table: self.table.clone(),
            partition: self.partition,
            rows: self.rows,
            file: self.file.as_ref().and_then(FileCursor::position),
        }
    }
}

/// `batches`, partition `partition` of table `table`, source `source` of the run of
/// `coordinator`, with barriers; `file` tells a file scan's place in its files.
pub fn checkpointed(
    batches: SendableRecordBatchStream,
    table: String,
    partition: usize,
    source: usize,
    coordinator: Arc<Coordinator>,
    file: Option<FileCursor>,
) -> Messages {
    let rows = coordinator
        .restored()
        .and_then(|r| r.manifest.sources.get(source))
        .map_or(0, |s| s.rows);
    let mut trigger = coordinator.subscribe();
    trigger.mark_unchanged();
    let reading = Reading {
        batches,
        trigger,
        listening: true,
        coordinator,
        table,
        partition,
        rows,
        file,
        last: 0,
        done: false,
    };
    futures::stream::unfold(reading, |mut reading| async move {
        if reading.done {
            return None;
        }
        if let Some(error) = reading.coordinator.failure() {
            reading.done = true;
            return Some((Err(error), reading));
        }
        loop {
            tokio::select! {
                biased;
                changed = reading.trigger.changed(), if reading.listening => {
                    if changed.is_err() {
                        reading.listening = false;
                        continue;
                    }
                    let barrier = reading.trigger.borrow_and_update().clone();
                    let Some(barrier) = barrier else { continue };
                    if barrier.id <= reading.last {
                        continue;
                    }
                    reading.last = barrier.id;
                    reading.done = barrier.stop;
                    let at = reading.at();
                    return Some((Ok(SourceMessage::Barrier(barrier, at)), reading));
                }
                batch = reading.batches.next() => {
                    return match batch {
                        Some(Ok(batch)) => {
                            reading.rows += batch.num_rows() as u64;
                            Some((Ok(SourceMessage::Rows(batch)), reading))
                        }
                        Some(Err(error)) => {
                            reading.done = true;
                            Some((Err(error), reading))
                        }
                        None => {
                            reading.coordinator.source_ended(reading.last);
                            reading.done = true;
                            // Where the source ended, for the final checkpoint.
                            let barrier = reading.coordinator.final_barrier()?;
                            let at = reading.at();
                            Some((Ok(SourceMessage::Barrier(barrier, at)), reading))
                        }
                    };
                }
            }
        }
    })
    .boxed()
}
