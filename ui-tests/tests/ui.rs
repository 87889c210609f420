//! Every macro rule has a failing case with the message a user sees (`cases/<error class>/`),
//! and `cases/pass/` holds programs that must compile.
//!
//! After changing a message on purpose: `TRYBUILD=overwrite cargo test -p udf-ui-tests`,
//! then review the `.stderr` diffs like code.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("cases/pass/*.rs");
    for class in [
        "hint_syntax",
        "unsupported_type",
        "hint_mismatch",
        "optional",
        "named_arguments",
        "attribute_keys",
        "attribute_placement",
        "signature",
        "sql_row",
        "aggregate",
        "table_aggregate",
        "table_function",
        "asynchronous",
        "ptf",
    ] {
        t.compile_fail(format!("cases/{class}/*.rs"));
    }
}
