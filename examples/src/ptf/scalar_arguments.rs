//! The PTFs of "Data Types" that take only scalar arguments: `AdditionFunction` and the two
//! `DuplicatorFunction`s. Called in FROM without a table, each runs `eval` once.

use udf_core::Decimal;
use udf_core::prelude::*;

/// Emits `a + b` as an implicit one-column row.
#[ptf(name = "AdditionFunction")]
pub fn addition_function(a: i32, b: i32, out: &mut Collector<i32>) {
    out.collect(a.wrapping_add(b));
}

/// Emits the row `(i, s)` twice.
#[ptf(name = "DuplicatorFunction")]
#[data_type("ROW<i INT, s STRING>")]
pub fn duplicator_function(i: Option<i32>, s: Option<&str>, out: &mut Collector<Row>) {
    let row = Row::of([i.into(), s.map(str::to_owned).into()]);
    out.collect(row.clone());
    out.collect(row);
}

/// Emits the decimal `d` twice, as `ROW<d DECIMAL(10, 4)>`.
#[ptf(name = "DecimalDuplicatorFunction")]
#[data_type("ROW<d DECIMAL(10, 4)>")]
pub fn decimal_duplicator_function(
    #[data_type("DECIMAL(10, 4)")] d: Option<Decimal>,
    out: &mut Collector<Row>,
) {
    out.collect(Row::of([d.into()]));
    out.collect(Row::of([d.into()]));
}
