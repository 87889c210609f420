//! A panic in a user function fails its query with the panic's message; it is reported once,
//! there. The process's panic hook is wrapped (the first time a user function is called) so
//! that it stays quiet for panics inside user calls — no backtrace per failed row — and still
//! sees every other panic as before. A hook the application sets after that replaces this one
//! (std keeps one hook), and then sees user panics too.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::Once;

use futures::FutureExt;

thread_local! {
    /// User calls running on this thread (nested calls count twice).
    static IN_USER_CALL: Cell<usize> = const { Cell::new(0) };
    /// Where the last quiet panic of this thread happened.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            if IN_USER_CALL.with(Cell::get) > 0 {
                let location = info.location().map(|l| l.to_string());
                LOCATION.with(|cell| *cell.borrow_mut() = location);
            } else {
                previous(info);
            }
        }));
    });
}

/// Marks the thread as inside a user call while alive.
struct UserCall;

impl UserCall {
    fn enter() -> Self {
        IN_USER_CALL.with(|c| c.set(c.get() + 1));
        UserCall
    }
}

impl Drop for UserCall {
    fn drop(&mut self) {
        IN_USER_CALL.with(|c| c.set(c.get() - 1));
    }
}

/// A caught panic: its message and where it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Panic {
    pub message: String,
    pub location: Option<String>,
}

impl std::fmt::Display for Panic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.location {
            Some(location) => write!(f, "{} (at {location})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

fn caught(payload: Box<dyn std::any::Any + Send>) -> Panic {
    Panic {
        message: crate::panic_message(payload.as_ref()),
        location: LOCATION.with(|cell| cell.borrow_mut().take()),
    }
}

/// Runs the user code `f`, catching a panic quietly (see the module's comment).
pub fn catch_user_panic<R>(f: impl FnOnce() -> R) -> Result<R, Panic> {
    install_hook();
    let _call = UserCall::enter();
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(caught)
}

/// [`catch_user_panic`] for a future: every poll of `future` is a user call.
pub async fn catch_user_panic_async<F: Future>(future: F) -> Result<F::Output, Panic> {
    install_hook();
    let mut future = std::pin::pin!(AssertUnwindSafe(future).catch_unwind());
    std::future::poll_fn(|cx| {
        let _call = UserCall::enter();
        future.as_mut().poll(cx)
    })
    .await
    .map_err(caught)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_has_its_message_and_place() {
        let panic = catch_user_panic(|| -> i32 { panic!("bad row {}", 3) }).unwrap_err();
        assert_eq!(panic.message, "bad row 3");
        let location = panic.location.expect("recorded by the hook");
        assert!(location.contains("panics.rs"), "{location}");
        assert_eq!(catch_user_panic(|| 5), Ok(5));
        assert_eq!(IN_USER_CALL.with(Cell::get), 0, "left after the call");
    }

    #[test]
    fn a_panicking_future_is_an_error_of_its_poll() {
        let outcome = futures::executor::block_on(catch_user_panic_async(async {
            panic!("in a future");
        }));
        let panic: Panic = outcome.unwrap_err();
        assert_eq!(panic.message, "in a future");
    }
}
