//! Ctrl-C while a query runs, noticed at once. The runtime's own signal listener is driven by
//! its workers between task polls, and one poll of a query can compute for seconds: a Ctrl-C
//! then took seconds to stop it. A thread of its own, with a runtime of its own that has
//! nothing else to do, listens instead and passes each Ctrl-C on through a channel (which
//! wakes the shell without any driver).
//!
//! The handler is in place before [`listen`] returns: the line editor saves the process's
//! SIGINT handler when it reads a line and puts it back after, so a handler installed while it
//! reads would be undone (and Ctrl-C would end the process).

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::mpsc::{Receiver, channel};

/// Each Ctrl-C from now on, as a message; `None` if no listener could be set up (then Ctrl-C
/// ends the process as it would without the shell).
pub fn listen() -> Option<Receiver<()>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let mut interrupts = {
        let _context = runtime.enter();
        signal(SignalKind::interrupt()).ok()?
    };
    // One waiting is enough: Ctrl-Cs pressed before the shell looks are one request.
    let (sender, receiver) = channel(1);
    std::thread::Builder::new()
        .name("udf-sql-ctrl-c".into())
        .spawn(move || {
            runtime.block_on(async move {
                while interrupts.recv().await.is_some() {
                    // Full: one is waiting already, and it stands for this one too.
                    if let Err(TrySendError::Closed(())) = sender.try_send(()) {
                        break;
                    }
                }
            })
        })
        .ok()?;
    Some(receiver)
}
