use udf_core::prelude::*;

#[ptf]
fn join(
    #[argument(set_semantic_table, pass_columns_through)] orders: Option<Row>,
    #[argument(set_semantic_table)] payments: Option<Row>,
    out: &mut Collector<String>,
) {
    let _ = (orders, payments, out);
}

fn main() {}
