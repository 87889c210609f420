//! What generated code uses. Not public API: absolute paths into this module keep the
//! macros' output independent of the user's imports and dependencies.

pub use std::result::Result;

pub use arrow::array::{Array, ArrayRef};

pub use crate::aggregate::{AggregateBatch, AggregateLogic, selected};
pub use crate::asynchronous::{
    AsyncCall, AsyncFailure, AsyncRows, AsyncScalarFunction, AsyncTableFunction, BatchFuture,
    run_in_order,
};
pub use crate::collector::{Collector, Emitted, RetractableCollector};
pub use crate::convert::{
    ArgReader, ArgValue, BytesBuilder, FunctionReturn, Inference, ResultValue, SqlType, StrBuilder,
    ValueBuilder, WriterReturn,
};
pub use crate::kernel::{Validity, binary, null_result, unary};
pub use crate::ptf::{
    BodyProcessor, Context, EntryStore, ListView, MapView, NoState, OnTimerContext, ProcessBody,
    ProcessTableFunction, Processor, ProcessorSetup, StateBackend, StateItem, StateKey,
    StateStores, StateValue, ValueSlot, ViewSlot,
};
pub use crate::scalar::{ArgColumn, CallContext, ScalarCall, ScalarFunction};
pub use crate::settings::{NoSettings, Probe, SerializedSettings};
pub use crate::spec::{
    ArgSpec, ArgType, Capabilities, FunctionKind, FunctionSpec, OutputType, Semantics, Signature,
    StateKind, StateSpec, TableArg,
};
pub use crate::sql_row::{
    FieldReader, HintedRowField, RowFieldValue, SqlRow, SqlRowField, StructParts, field_builder,
    field_nullable, field_roots, row_field, row_field_types, struct_columns,
};
pub use crate::table::{RowSink, TableCall, TableFunction, hand_over};
pub use crate::table_aggregate::{Emits, TableAggregateLogic};
pub use crate::types::{
    DataType, DayTimeInterval, DayTimeResolution, RootSet, RowField, TypeKind, TypeRoot,
    YearMonthInterval, YearMonthResolution,
};
pub use crate::{Error, Function, FunctionContext, UserFunction};

/// The spec of one parameter of Rust type `T`, with an optional hint (parsed at compile time).
pub fn arg_spec<'a, T: ArgValue<'a>>(
    name: &str,
    hint: Option<DataType>,
    optional: bool,
) -> ArgSpec {
    let ty = match (hint, T::INFERENCE) {
        (Some(hint), _) => ArgType::Typed(hint.with_nullable(T::NULLABLE)),
        (None, Inference::Static) => ArgType::Typed(T::data_type()),
        (None, Inference::Any) => ArgType::Any {
            nullable: T::NULLABLE,
        },
        (None, Inference::AnyRow) => ArgType::AnyRow {
            nullable: T::NULLABLE,
        },
    };
    ArgSpec::new(name, ty).optional(optional)
}

/// The output type of a function returning `R`.
pub fn output_spec<R: FunctionReturn>(hint: Option<DataType>) -> OutputType {
    let nullable = <R::Value as SqlType>::NULLABLE;
    OutputType::Fixed(match hint {
        Some(hint) => hint.with_nullable(nullable),
        None => <R::Value as SqlType>::data_type(),
    })
}

/// Appends a NULL result (the builder may accept several value types, so name the one).
#[inline]
pub fn append_null_result<R: FunctionReturn>(builder: &mut <R::Value as ResultValue>::Builder) {
    ValueBuilder::<R::Value>::append_null(builder)
}

/// Finishes the result column.
pub fn finish_result<R: FunctionReturn>(
    builder: &mut <R::Value as ResultValue>::Builder,
) -> Result<ArrayRef, Error> {
    ValueBuilder::<R::Value>::finish(builder)
}

/// Builds the results of a function writing into an `out: &mut String` buffer.
pub fn text_output(output: &DataType, rows: usize) -> Result<StrBuilder, Error> {
    StrBuilder::new::<String>(output, rows)
}

/// Builds the results of a function writing into an `out: &mut Vec<u8>` buffer.
pub fn bytes_output(output: &DataType, rows: usize) -> Result<BytesBuilder, Error> {
    BytesBuilder::new::<Vec<u8>>(output, rows)
}

/// The output type of a function writing into an `out: &mut String` / `&mut Vec<u8>` buffer.
pub fn writer_output_spec<R: WriterReturn>(hint: Option<DataType>, bytes: bool) -> OutputType {
    let default = if bytes {
        DataType::bytes()
    } else {
        DataType::string()
    };
    OutputType::Fixed(hint.unwrap_or(default).with_nullable(R::NULLABLE))
}

/// The compile-time check that a function writing into an output buffer may return `R`.
pub const fn writer_return<R: WriterReturn>() {}

/// The compile-time check that `T` can be an argument: its one error when not.
pub const fn argument_type<T: ArgValue<'static>>() {}

/// SQL roots parameter type `T` can take (for compile-time hint checks).
pub const fn arg_roots<'a, T: ArgValue<'a>>() -> RootSet {
    T::ROOTS
}

/// Whether parameter type `T` receives NULL (`Option<_>`).
pub const fn arg_nullable<'a, T: ArgValue<'a>>() -> bool {
    T::NULLABLE
}

/// SQL roots return type `R` can produce.
pub const fn return_roots<R: FunctionReturn>() -> RootSet {
    <R::Value as SqlType>::ROOTS
}

/// Whether return type `R` may be NULL.
pub const fn return_nullable<R: FunctionReturn>() -> bool {
    <R::Value as SqlType>::NULLABLE
}

/// Whether return type `R` has a SQL type without a hint.
pub const fn return_is_static<R: FunctionReturn>() -> bool {
    matches!(<R::Value as SqlType>::INFERENCE, Inference::Static)
}

/// How generated code reads one argument column.
pub struct ArgInput<R> {
    pub reader: R,
    /// `row & mask` indexes the column (0 for constants).
    pub mask: usize,
    /// NULL skips the call (the parameter is not an `Option`).
    pub strict: bool,
}

/// The reader of argument `name`.
pub fn reader<'a, T: ArgValue<'a>>(
    column: &'a ArgColumn,
    name: &str,
) -> Result<ArgInput<T::Reader>, Error> {
    Ok(ArgInput {
        reader: T::reader(column.values())
            .map_err(|e| Error::msg(format!("argument `{name}`: {e}")))?,
        mask: column.index_mask(),
        strict: !T::NULLABLE,
    })
}

/// The readers of the columns of a varargs parameter.
pub fn readers<'a, T: ArgValue<'a>>(
    columns: &'a [ArgColumn],
    name: &str,
) -> Result<Vec<ArgInput<T::Reader>>, Error> {
    columns
        .iter()
        .map(|column| reader::<T>(column, name))
        .collect()
}

/// A builder for the results of a function returning `R`.
pub fn return_builder<R: FunctionReturn>(
    output: &DataType,
    rows: usize,
) -> Result<<R::Value as ResultValue>::Builder, Error> {
    <R::Value as ResultValue>::builder(output, rows)
}

/// What `open`, `accumulate`, `retract`, `merge` and methods that emit rows may return:
/// `()` or `Result<(), E>`.
#[diagnostic::on_unimplemented(
    message = "this method must return `()` or `Result<()>`, not `{Self}`",
    label = "its result is not seen by SQL"
)]
pub trait UnitResult {
    fn into_result(self) -> Result<(), Error>;
}

impl UnitResult for () {
    fn into_result(self) -> Result<(), Error> {
        Ok(())
    }
}

impl<E: Into<Error>> UnitResult for Result<(), E> {
    fn into_result(self) -> Result<(), Error> {
        self.map_err(Into::into)
    }
}

/// The spec of a table argument read as Rust type `T` (`Row` is polymorphic; a
/// `#[derive(SqlRow)]` struct or a hint fixes the row type).
pub fn table_arg_spec<'a, T: ArgValue<'a>>(
    name: &str,
    hint: Option<DataType>,
    semantics: Semantics,
    [
        optional_partition_by,
        pass_columns_through,
        require_on_time,
        supports_updates,
    ]: [bool; 4],
) -> ArgSpec {
    let row = match (hint, T::INFERENCE) {
        (Some(hint), _) => Some(hint.not_null()),
        (None, Inference::Static) => Some(T::data_type().not_null()),
        (None, Inference::Any | Inference::AnyRow) => None,
    };
    ArgSpec::new(
        name,
        ArgType::Table(TableArg {
            semantics,
            row,
            optional_partition_by,
            pass_columns_through,
            require_on_time,
            supports_updates,
        }),
    )
}

/// The spec of state entry `name`; `ttl` in milliseconds (checked by the macro).
pub fn state_spec(
    name: &str,
    kind: StateKind,
    rust_type: &str,
    data_type: Option<DataType>,
    ttl: Option<u64>,
) -> StateSpec {
    StateSpec {
        name: name.to_owned(),
        kind,
        rust_type: rust_type.to_owned(),
        data_type,
        ttl: ttl.map(std::time::Duration::from_millis),
    }
}

/// Value state of type `T`, entry `index` of the setup (the bound is checked here, once, with
/// the state trait's message).
pub fn value_store<T: StateValue>(
    setup: &ProcessorSetup,
    index: usize,
) -> Result<ValueSlot<T>, Error> {
    Ok(setup.backend.values(setup.state_spec(index)?))
}

/// List state of elements `T`, entry `index` of the setup.
pub fn list_store<T: StateItem>(
    setup: &ProcessorSetup,
    index: usize,
) -> Result<ViewSlot<ListView<T>>, Error> {
    setup.backend.lists(setup.state_spec(index)?, index)
}

/// Map state from `K` to `V`, entry `index` of the setup.
pub fn map_store<K: StateKey, V: StateItem>(
    setup: &ProcessorSetup,
    index: usize,
) -> Result<ViewSlot<MapView<K, V>>, Error> {
    setup.backend.maps(setup.state_spec(index)?, index)
}

/// The processor of a function whose part of the loop is `B`.
pub fn processor_of<B: ProcessBody>(
    function: std::sync::Arc<B::Function>,
    setup: ProcessorSetup,
) -> Result<Box<dyn Processor>, Error> {
    Ok(Box::new(BodyProcessor::<B>::new(function, setup)))
}

/// The table argument's column, which a function with a table argument always gets.
pub fn table_column(table: Option<&ArgColumn>) -> Result<&ArgColumn, Error> {
    table.ok_or_else(|| Error::msg("the table argument is missing"))
}
