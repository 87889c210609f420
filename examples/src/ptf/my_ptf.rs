//! The `MyPTF` variants of "Data Types": a table argument with an explicit row type, with a
//! structured type, and polymorphic. Each reports the row type `table_semantics_for` gives.

use udf_core::prelude::*;

/// The argument's row type as the function sees it.
fn described(ctx: &Context, name: &str) -> String {
    ctx.table_semantics_for(name)
        .map_or_else(|| "?".to_owned(), |s| s.data_type().to_string())
}

/// Explicit row type `ROW<s STRING>` (columns are matched by name).
#[ptf(name = "MyTypedPTF")]
pub fn my_typed_ptf(
    ctx: &mut Context,
    #[argument(set_semantic_table, type = "ROW<s STRING>")] t: Row,
    out: &mut Collector<String>,
) {
    out.collect(format!("{} {}", described(ctx, "t"), t));
}

/// A structured type: the table's columns `name` and `age` become a `Customer`.
#[derive(Clone, Debug, PartialEq, SqlRow)]
pub struct Customer {
    pub name: String,
    pub age: Option<i32>,
}

#[ptf(name = "MyStructuredPTF")]
pub fn my_structured_ptf(
    ctx: &mut Context,
    #[argument(set_semantic_table)] c: Customer,
    out: &mut Collector<String>,
) {
    let age = c
        .age
        .map_or_else(|| "unknown".to_owned(), |a| a.to_string());
    out.collect(format!("{} {} is {age}", described(ctx, "c"), c.name));
}

/// Any row: the type is the passed table's.
#[ptf(name = "MyPolymorphicPTF")]
pub fn my_polymorphic_ptf(
    ctx: &mut Context,
    #[argument(set_semantic_table)] t: Row,
    out: &mut Collector<String>,
) {
    out.collect(format!("{} {}", described(ctx, "t"), t));
}
