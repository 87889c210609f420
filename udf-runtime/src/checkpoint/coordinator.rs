//! The coordinator of one checkpointed run: it triggers a checkpoint every interval (and a
//! savepoint when asked), one at a time, hands the barrier to the sources, waits for the
//! checkpoint to complete (or time out), keeps the statistics, and fails the query once more
//! checkpoints failed in a row than it tolerates. It also holds what the run restores from.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use datafusion::common::{DataFusionError, Result, exec_err, plan_err};
use tokio::sync::{mpsc, watch};

use super::barrier::{self, Barrier, OnComplete, Outcome, Pending};
use super::config::CheckpointConfig;
use super::jobs::{CheckpointStats, Jobs, SavepointRequest};
use super::lock;
use super::manifest::{self, Complete, Manifest};

/// The stateful operator a run checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CheckpointTarget {
    pub uid: String,
    pub function: String,
    /// Whether a committing sink takes the function's output (one partition per processor):
    /// checkpoints then wait for its files too.
    pub sink: bool,
}

pub struct Coordinator {
    config: CheckpointConfig,
    target: CheckpointTarget,
    book: Arc<Book>,
    sources: usize,
    processors: usize,
    trigger: watch::Sender<Option<Barrier>>,
    restored: Option<Complete>,
    next_id: AtomicU64,
    /// Sources not yet ended; checked and changed with the trigger, so no barrier is
    /// triggered after the last source ended.
    live_sources: Mutex<usize>,
    /// The checkpoint at the end of input.
    end: std::sync::OnceLock<Option<Barrier>>,
    on_complete: Mutex<Vec<OnComplete>>,
    jobs: Option<(Arc<Jobs>, u64)>,
}

/// How the run's checkpoints went: shared by the coordinator and its loop, which outlives
/// it to answer a savepoint that stopped the query.
struct Book {
    config: CheckpointConfig,
    target: CheckpointTarget,
    stats: Arc<Mutex<CheckpointStats>>,
    /// Why the query must fail, once set.
    failure: Mutex<Option<String>>,
}

impl Coordinator {
    /// The coordinator of a run of `target` with `sources` sources and `processors`
    /// processors, restoring from `execution.state-recovery.path` if set.
    pub fn start(
        config: CheckpointConfig,
        target: CheckpointTarget,
        sources: usize,
        processors: usize,
        jobs: Option<Arc<Jobs>>,
    ) -> Result<Arc<Coordinator>> {
        if config.interval.is_some() && config.dir.is_none() {
            return plan_err!(
                "execution.checkpointing.interval is set but execution.checkpointing.dir is not: checkpoints need a directory"
            );
        }
        let restored = match &config.recovery_path {
            Some(path) => Some(manifest::resolve(path, &target.uid)?),
            None => None,
        };
        if let Some(restored) = &restored {
            check_shape(restored, &target, sources)?;
            // A crash between its manifest and the renames left output uncommitted.
            restored.manifest.commit_output()?;
        }
        // Numbering goes on after the restored checkpoint and any already in the directory.
        let mut last = restored.as_ref().map_or(0, |r| r.manifest.id);
        if let Some(dir) = &config.dir
            && let Some((id, _)) =
                manifest::ids(&manifest::checkpoints_of(dir, &target.uid))?.last()
        {
            last = last.max(*id);
        }
        let stats = Arc::new(Mutex::new(CheckpointStats {
            restored_from: restored.as_ref().map(|r| r.dir.clone()),
            ..CheckpointStats::default()
        }));
        let (requests, receiver) = mpsc::channel(4);
        let jobs = match jobs {
            Some(jobs) => {
                let run = jobs.register(&target.uid, requests, stats.clone())?;
                Some((jobs, run))
            }
            None => None,
        };
        let book = Arc::new(Book {
            config: config.clone(),
            target: target.clone(),
            stats,
            failure: Mutex::new(None),
        });
        let coordinator = Arc::new(Coordinator {
            config,
            target,
            book: book.clone(),
            sources,
            processors,
            trigger: watch::Sender::new(None),
            restored,
            next_id: AtomicU64::new(last + 1),
            live_sources: Mutex::new(sources),
            end: std::sync::OnceLock::new(),
            on_complete: Mutex::new(Vec::new()),
            jobs,
        });
        // Not aborted with the coordinator: a savepoint that stops the query ends the query
        // as it completes, and its answer must still go out. The loop ends at its next wake
        // once the coordinator is gone (its requests close when the run unregisters).
        drop(tokio::spawn(run(
            Arc::downgrade(&coordinator),
            book,
            receiver,
        )));
        Ok(coordinator)
    }

    pub fn target(&self) -> &CheckpointTarget {
        &self.target
    }

    /// Barriers for the sources: the latest triggered.
    pub fn subscribe(&self) -> watch::Receiver<Option<Barrier>> {
        self.trigger.subscribe()
    }

    /// The checkpoint the run restores from.
    pub fn restored(&self) -> Option<&Complete> {
        self.restored.as_ref()
    }

    /// Called with the manifest of every complete checkpoint.
    pub fn on_complete(&self, hook: OnComplete) {
        lock(&self.on_complete).push(hook);
    }

    /// Why the query must fail, once checkpoints failed more often in a row than tolerated.
    pub fn failure(&self) -> Option<DataFusionError> {
        lock(&self.book.failure)
            .as_ref()
            .map(|reason| DataFusionError::Execution(reason.clone()))
    }

    /// A source has no more rows; a checkpoint whose barrier it never emitted cannot complete.
    pub fn source_ended(&self, last_barrier: u64) {
        let mut live = lock(&self.live_sources);
        *live -= 1;
        if let Some(barrier) = self.trigger.borrow().as_ref()
            && barrier.id > last_barrier
        {
            barrier.pending.abandon();
        }
    }

    /// The final checkpoint, taken at the end of input when checkpoints are written (not
    /// when the run only restores).
    pub fn final_barrier(&self) -> Option<Barrier> {
        self.end
            .get_or_init(|| {
                let pending = self.pending(None).ok()?;
                // Noted like a periodic one (kept, counted) as it ends.
                let book = self.book.clone();
                pending.notify(Box::new(move |id, outcome| book.record(id, outcome, true)));
                Some(Barrier {
                    id: pending.id,
                    stop: false,
                    end: true,
                    pending,
                })
            })
            .clone()
    }

    /// Triggers a checkpoint (a savepoint into `savepoint` if given): an error once every
    /// source has ended.
    fn trigger(&self, savepoint: Option<&PathBuf>, stop: bool) -> Result<Option<Arc<Pending>>> {
        let live = lock(&self.live_sources);
        if *live == 0 {
            return Ok(None);
        }
        let pending = self.pending(savepoint)?;
        self.trigger.send_replace(Some(Barrier {
            id: pending.id,
            stop,
            end: false,
            pending: pending.clone(),
        }));
        drop(live);
        Ok(Some(pending))
    }

    /// A new checkpoint (a savepoint into `savepoint`), its directory made.
    fn pending(&self, savepoint: Option<&PathBuf>) -> Result<Arc<Pending>> {
        let id = self.next_id.fetch_add(1, Ordering::AcqRel);
        let uid = &self.target.uid;
        let dir = match (savepoint, &self.config.dir) {
            (Some(root), _) => manifest::savepoint_dir(root, uid, id),
            (None, Some(root)) => manifest::checkpoint_dir(root, uid, id),
            (None, None) => return exec_err!("checkpoints need execution.checkpointing.dir"),
        };
        barrier::prepare(&dir)?;
        let triggered_at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let manifest = Manifest::new(
            id,
            uid,
            &self.target.function,
            savepoint.is_some(),
            triggered_at,
        );
        let sinks = if self.target.sink { self.processors } else { 0 };
        Ok(Pending::new(
            manifest,
            dir,
            self.sources,
            self.processors,
            sinks,
            lock(&self.on_complete).clone(),
        ))
    }
}

impl Book {
    /// Notes how checkpoint `id` ended; a failure past the tolerated count fails the query.
    /// One that ends after a newer one completed is subsumed (as in Flink): its outcome
    /// changes nothing (retention may have removed its directory under it).
    fn record(&self, id: u64, outcome: &Outcome, periodic: bool) {
        let mut stats = lock(&self.stats);
        if stats.last_id.is_some_and(|last| last > id) {
            return;
        }
        match outcome {
            Outcome::Complete {
                dir,
                bytes,
                duration,
                alignment,
            } => {
                stats.completed += 1;
                stats.failed_in_a_row = 0;
                stats.last_id = Some(id);
                stats.last_path = Some(dir.clone());
                stats.last_duration = Some(*duration);
                stats.last_bytes = *bytes;
                stats.last_alignment = *alignment;
                if periodic && let Some(root) = &self.config.dir {
                    let kept = manifest::retain(
                        &manifest::checkpoints_of(root, &self.target.uid),
                        self.config.num_retained,
                    );
                    if let Err(error) = kept {
                        stats.last_failure = Some(error.to_string());
                    }
                }
            }
            Outcome::Failed(reason) => {
                stats.failed += 1;
                stats.failed_in_a_row += 1;
                stats.last_failure = Some(reason.clone());
                if periodic && stats.failed_in_a_row > self.config.tolerable_failed {
                    *lock(&self.failure) = Some(format!(
                        "checkpoint {id} of `{}` (uid `{}`) failed, {} in a row (execution.checkpointing.tolerable-failed-checkpoints is {}): {reason}",
                        self.target.function,
                        self.target.uid,
                        stats.failed_in_a_row,
                        self.config.tolerable_failed
                    ));
                }
            }
            Outcome::Abandoned => {}
        }
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        if let Some((jobs, run)) = &self.jobs {
            jobs.unregister(&self.target.uid, *run);
        }
    }
}

/// The restored checkpoint fits this run: same function's state, same sources (the processor
/// count may differ: each processor takes its keys from every saved state).
fn check_shape(restored: &Complete, target: &CheckpointTarget, sources: usize) -> Result<()> {
    let manifest = &restored.manifest;
    let dir = restored.dir.display();
    if manifest.uid != target.uid {
        return plan_err!(
            "checkpoint {dir} holds the state of uid `{}`, not of `{}`",
            manifest.uid,
            target.uid
        );
    }
    if manifest.sources.len() != sources {
        return plan_err!(
            "checkpoint {dir} was taken with {} source partitions, this query of uid `{}` reads {sources}",
            manifest.sources.len(),
            target.uid
        );
    }
    Ok(())
}

/// The coordinator's loop: a checkpoint every interval, savepoints when asked, one at a time.
async fn run(
    coordinator: Weak<Coordinator>,
    book: Arc<Book>,
    mut requests: mpsc::Receiver<SavepointRequest>,
) {
    let interval = book.config.interval;
    loop {
        let request = match interval {
            Some(interval) => tokio::select! {
                request = requests.recv() => match request {
                    Some(request) => Some(request),
                    None => return,
                },
                () = tokio::time::sleep(interval) => None,
            },
            None => match requests.recv().await {
                Some(request) => Some(request),
                None => return,
            },
        };
        let Some(strong) = coordinator.upgrade() else {
            return;
        };
        let timeout = book.config.timeout;
        let (savepoint, stop) = match &request {
            Some(request) => (Some(&request.dir), request.stop),
            None => (None, false),
        };
        let pending = match strong.trigger(savepoint, stop) {
            Ok(Some(pending)) => pending,
            Ok(None) => {
                if let Some(request) = request {
                    let _ = request.reply.send(exec_err!(
                        "the query's input has ended: there is nothing left to save"
                    ));
                }
                return;
            }
            Err(error) => {
                let outcome = Outcome::Failed(error.to_string());
                book.record(0, &outcome, request.is_none());
                if let Some(request) = request {
                    let _ = request.reply.send(Err(error));
                }
                continue;
            }
        };
        // Wait without holding the coordinator: a query dropped meanwhile ends this loop.
        drop(strong);
        let mut outcome = pending.outcome();
        let waited = tokio::time::timeout(timeout, outcome.wait_for(Option::is_some)).await;
        let outcome = match waited {
            Ok(Ok(outcome)) => outcome.clone().expect("waited for it"),
            Ok(Err(_)) => return,
            Err(_) => {
                pending.fail(format!(
                    "checkpoint {} did not complete within execution.checkpointing.timeout ({} ms)",
                    pending.id,
                    timeout.as_millis()
                ));
                pending.outcome().borrow().clone().expect("just failed")
            }
        };
        book.record(pending.id, &outcome, request.is_none());
        if let Some(request) = request {
            let answer = match &outcome {
                Outcome::Complete { dir, .. } => Ok(dir.clone()),
                Outcome::Failed(reason) => exec_err!("the savepoint failed: {reason}"),
                Outcome::Abandoned => exec_err!(
                    "the query's input ended before the savepoint was taken: there is nothing left to save"
                ),
            };
            let stopped = stop && answer.is_ok();
            let _ = request.reply.send(answer);
            if stopped {
                return;
            }
        }
        if coordinator.strong_count() == 0 {
            return;
        }
    }
}
