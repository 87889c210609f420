//! Return kinds: `T`, `Option<T>`, `Result<T>`, `Result<Option<T>>` — told apart by trait
//! impls, so type aliases work and nothing depends on how the type is spelled.

use super::ResultValue;
use crate::Error;

/// What a function may return: a [`ResultValue`] (possibly `Option`), or a `Result` of one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a UDF",
    label = "unsupported return type",
    note = "return `T`, `Option<T>`, `Result<T>` or `Result<Option<T>>` where `T` has a SQL type"
)]
pub trait FunctionReturn {
    type Value: ResultValue;

    fn into_value(self) -> Result<Self::Value, Error>;
}

impl<T: ResultValue> FunctionReturn for T {
    type Value = T;

    #[inline]
    fn into_value(self) -> Result<T, Error> {
        Ok(self)
    }
}

impl<T: ResultValue, E: Into<Error>> FunctionReturn for Result<T, E> {
    type Value = T;

    #[inline]
    fn into_value(self) -> Result<T, Error> {
        self.map_err(Into::into)
    }
}

/// The return of a function that writes its result into an `out: &mut String` (or
/// `&mut Vec<u8>`) parameter: `()`, `Option<()>` (`None` = NULL), `Result<()>` or
/// `Result<Option<()>>`.
#[diagnostic::on_unimplemented(
    message = "a function writing into an output buffer must return `()`, `Option<()>`, `Result<()>` or `Result<Option<()>>`, not `{Self}`",
    label = "the result goes into the buffer"
)]
pub trait WriterReturn {
    /// `Option<()>` results may be NULL.
    const NULLABLE: bool;

    /// Whether the buffer holds a value (`false` = NULL).
    fn into_present(self) -> Result<bool, Error>;
}

impl WriterReturn for () {
    const NULLABLE: bool = false;

    #[inline]
    fn into_present(self) -> Result<bool, Error> {
        Ok(true)
    }
}

impl WriterReturn for Option<()> {
    const NULLABLE: bool = true;

    #[inline]
    fn into_present(self) -> Result<bool, Error> {
        Ok(self.is_some())
    }
}

impl<E: Into<Error>> WriterReturn for Result<(), E> {
    const NULLABLE: bool = false;

    #[inline]
    fn into_present(self) -> Result<bool, Error> {
        self.map(|()| true).map_err(Into::into)
    }
}

impl<E: Into<Error>> WriterReturn for Result<Option<()>, E> {
    const NULLABLE: bool = true;

    #[inline]
    fn into_present(self) -> Result<bool, Error> {
        self.map(|o| o.is_some()).map_err(Into::into)
    }
}
