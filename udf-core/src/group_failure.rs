//! A user call on the accumulators of an aggregation that failed: the error it returned or
//! its panic, the group whose accumulator it was working on, and that accumulator when it is
//! short enough to show. The runtime adds the group's key, which only it knows.

use std::fmt;

use serde::Serialize;

use crate::Error;
use crate::describe::describe;
use crate::panics::{Panic, catch_user_panic};

/// Accumulators longer than this (as text) are not shown in errors.
const SHOWN_ACCUMULATOR: usize = 200;

/// Why a call failed.
#[derive(Debug)]
pub enum Cause {
    /// The call returned an error.
    Error(Error),
    /// The call panicked.
    Panic(Panic),
}

/// A failed call on the accumulators of an aggregation.
#[derive(Debug)]
pub struct GroupFailure {
    pub cause: Cause,
    /// The group whose accumulator the call was working on, when it is known.
    pub group: Option<usize>,
    /// That accumulator as text, when it is short enough to show.
    pub accumulator: Option<String>,
}

impl GroupFailure {
    /// A failure of the call on `group`, whose accumulator was `acc`.
    pub fn of<A: Serialize + ?Sized>(cause: Cause, group: usize, acc: &A) -> Self {
        GroupFailure {
            cause,
            group: Some(group),
            accumulator: describe(acc, SHOWN_ACCUMULATOR),
        }
    }

    /// `failed in get_value: no rows (accumulator: {sum: 0})` — what the call `what` did,
    /// without the function's name (the caller's message starts with it).
    pub fn describe(&self, what: &str) -> String {
        let mut text = match &self.cause {
            Cause::Error(error) => format!("failed in {what}: {error}"),
            Cause::Panic(panic) => format!("panicked in {what}: {panic}"),
        };
        if let Some(accumulator) = &self.accumulator {
            text.push_str(&format!(" (accumulator: {accumulator})"));
        }
        text
    }
}

/// A failure that concerns no one group (an encoding error, a wrong state column).
impl From<Error> for GroupFailure {
    fn from(error: Error) -> Self {
        GroupFailure {
            cause: Cause::Error(error),
            group: None,
            accumulator: None,
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Error(error) => write!(f, "{error}"),
            Cause::Panic(panic) => write!(f, "panicked: {panic}"),
        }
    }
}

/// Runs the user's `call`, a returned error or a panic becoming the [`Cause`].
pub(crate) fn user_call<R>(call: impl FnOnce() -> Result<R, Error>) -> Result<R, Cause> {
    match catch_user_panic(call) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(Cause::Error(error)),
        Err(panic) => Err(Cause::Panic(panic)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Tally {
        sum: i64,
    }

    #[test]
    fn a_failure_says_what_failed_how_and_on_which_accumulator() {
        let failure = GroupFailure::of(Cause::Error(Error::msg("no rows")), 3, &Tally { sum: 0 });
        assert_eq!(failure.group, Some(3));
        assert_eq!(
            failure.describe("get_value"),
            "failed in get_value: no rows (accumulator: {sum: 0})"
        );
        let cause = user_call(|| -> Result<(), Error> { panic!("boom") }).unwrap_err();
        let failure = GroupFailure::of(cause, 0, &"x".repeat(SHOWN_ACCUMULATOR + 1));
        let text = failure.describe("merge");
        assert!(text.starts_with("panicked in merge: boom (at "), "{text}");
        assert!(!text.contains("accumulator"), "too long to show: {text}");
    }
}
