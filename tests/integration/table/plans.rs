//! Plans of lateral joins: the EXPLAIN of a LEFT JOIN LATERAL, and filters on the outer
//! table's columns below the join.

use udf_examples::table::split::split_function;

use super::my_session;
use crate::support::explain;

#[tokio::test]
async fn explain_of_a_left_join_lateral() {
    let session = my_session();
    session.register(split_function).unwrap();
    let plan = explain(
        &session,
        "SELECT id, T.w, T.l FROM MyTable LEFT JOIN LATERAL TABLE(SplitFunction(\"myField\")) AS T(w, l) ON TRUE",
    )
    .await;
    insta::assert_snapshot!(plan);
}

#[tokio::test]
async fn filters_on_the_outer_table_go_below_the_join() {
    let session = my_session();
    session.register(split_function).unwrap();
    let plan = explain(
        &session,
        "SELECT id, word FROM MyTable, LATERAL TABLE(SplitFunction(\"myField\")) WHERE id > 1 AND length > 2",
    )
    .await;
    let lines: Vec<&str> = plan.lines().collect();
    let position = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` in\n{plan}"))
    };
    // The logical plan: the filter on `length` above the call, the one on `id` below.
    let call = position("LateralTableFunction: splitfunction");
    assert!(position("Filter: length > Int32(2)") < call, "{plan}");
    assert!(position("Filter: mytable.id > Int32(1)") > call, "{plan}");
}
