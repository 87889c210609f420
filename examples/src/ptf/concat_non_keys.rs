//! `ConcatNonKeysFunction` from "Context": joins the values of the columns that are not
//! PARTITION BY keys.

use udf_core::prelude::*;

#[ptf(name = "ConcatNonKeysFunction")]
pub fn concat_non_keys_function(
    ctx: &mut Context,
    #[argument(set_semantic_table, name = "inputTable")] input_table: Row,
    out: &mut Collector<String>,
) {
    let keys = ctx
        .table_semantics_for("inputTable")
        .map(TableSemantics::partition_by_columns)
        .unwrap_or_default();
    let text: Vec<String> = input_table
        .values()
        .iter()
        .enumerate()
        .filter(|(pos, _)| !keys.contains(pos))
        .map(|(_, value)| value.to_string())
        .collect();
    out.collect(text.join(", "));
}
