//! Planning and execution errors of PTF calls: each names the function, the argument and
//! what to write instead.

use udf_core::prelude::*;
use udf_examples::ptf::conformance::{counter, repeat_rows};
use udf_examples::ptf::history::history_function;
use udf_examples::ptf::my_ptf::my_typed_ptf;
use udf_examples::ptf::threshold::threshold_function;

use super::{events, one_processor};
use crate::support::error;

async fn planning_error(sql: &str) -> String {
    let session = one_processor("events", &events());
    session.register(counter).unwrap();
    session.register(repeat_rows).unwrap();
    session.register(threshold_function).unwrap();
    session.register(my_typed_ptf).unwrap();
    error(&session, sql).await
}

crate::on_both_backends! {
    async fn set_semantics_needs_partition_by() {
        let message = planning_error("SELECT * FROM Counter(input => TABLE events)").await;
        assert!(
            message.contains(
                "table argument `input` of `counter` has set semantics: pass it with PARTITION BY"
            ),
            "{message}"
        );
    }
}

crate::on_both_backends! {
    async fn row_semantics_takes_no_partition_by() {
        let message =
            planning_error("SELECT * FROM RepeatRows(input => TABLE events PARTITION BY \"user\")")
                .await;
        assert!(message.contains("has row semantics"), "{message}");
    }
}

crate::on_both_backends! {
    async fn unknown_argument_names_are_listed() {
        let message = planning_error(
            "SELECT * FROM Counter(input => TABLE events PARTITION BY \"user\", limit => 3)",
        )
        .await;
        assert!(
            message.contains(
                "`counter` has no argument named `limit`; its arguments are: input, uid, on_time"
            ),
            "{message}"
        );
    }
}

crate::on_both_backends! {
    async fn scalar_arguments_must_be_constant() {
        let message = planning_error(
            "SELECT * FROM ThresholdFunction(input_table => TABLE events PARTITION BY \"user\", threshold => event)",
        )
        .await;
        assert!(
            message.contains("argument `threshold` of `thresholdfunction` must be a constant"),
            "{message}"
        );
        let message = planning_error(
            "SELECT * FROM ThresholdFunction(input_table => TABLE events PARTITION BY \"user\", threshold => random())",
        )
        .await;
        assert!(message.contains("must be a constant"), "{message}");
    }
}

crate::on_both_backends! {
    async fn missing_and_null_scalar_arguments() {
        let message = planning_error(
            "SELECT * FROM ThresholdFunction(input_table => TABLE events PARTITION BY \"user\")",
        )
        .await;
        assert!(
            message.contains("`thresholdfunction` needs argument `threshold`"),
            "{message}"
        );
        let message = planning_error(
            "SELECT * FROM ThresholdFunction(input_table => TABLE events PARTITION BY \"user\", threshold => NULL)",
        )
        .await;
        assert!(
            message.contains("argument `threshold` of `thresholdfunction` is NULL, but its Rust type is not an `Option`"),
            "{message}"
        );
    }
}

crate::on_both_backends! {
    async fn tables_and_values_in_the_wrong_place() {
        let message = planning_error("SELECT * FROM Counter(input => 1)").await;
        assert!(
            message.contains("argument `input` of `counter` is a table"),
            "{message}"
        );
        let message = planning_error("SELECT counter(event) FROM events").await;
        assert!(
            message.contains(
                "`counter` is a process table function, which yields rows rather than a value"
            ),
            "{message}"
        );
    }
}

crate::on_both_backends! {
    async fn uid_format_and_time_columns_are_checked() {
        let message = planning_error(
            "SELECT * FROM Counter(input => TABLE events PARTITION BY \"user\", uid => '1st')",
        )
        .await;
        assert!(message.contains("`uid` of `counter` must be"), "{message}");
        let message = planning_error(
            "SELECT * FROM Counter(input => TABLE events PARTITION BY \"user\", on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert!(
            message.contains("`on_time` of `counter` names `ts`, which is not a column"),
            "{message}"
        );
        let message = planning_error(
            "SELECT * FROM Counter(input => TABLE events PARTITION BY \"user\" ORDER BY event)",
        )
        .await;
        assert!(
            message.contains("the first ORDER BY column of `counter` must be a TIMESTAMP"),
            "{message}"
        );
    }
}

crate::on_both_backends! {
    async fn a_typed_table_argument_needs_its_columns() {
        let message =
            planning_error("SELECT * FROM MyTypedPTF(TABLE events PARTITION BY \"user\")").await;
        assert!(
            message.contains("the table has no column `s` (its columns: user, event)"),
            "{message}"
        );
    }
}

crate::on_both_backends! {
    async fn an_error_in_eval_names_the_function_and_the_row() {
        let session = one_processor("events", &events());
        session.register(history_function).unwrap();
        let message = error(
            &session,
            "SELECT * FROM HistoryFunction(input => TABLE events PARTITION BY \"user\")",
        )
        .await;
        assert!(
            message.contains("process table function `historyfunction` failed: the table needs a STRING column `eventId` (row 0 of the batch, input row: {user: a, event: x})"),
            "{message}"
        );
    }
}

/// Clears a state entry that does not exist.
#[ptf(name = "ClearsTypo")]
fn clears_typo(
    ctx: &mut Context,
    #[state] count: &mut i64,
    #[argument(set_semantic_table)] input: Row,
    out: &mut Collector<i64>,
) {
    let _ = input;
    *count += 1;
    ctx.clear_state("cuont");
    out.collect(*count);
}

crate::on_both_backends! {
    async fn clearing_an_unknown_state_entry_fails_the_query() {
        let session = one_processor("events", &events());
        session.register(clears_typo).unwrap();
        let message = error(
            &session,
            "SELECT * FROM ClearsTypo(input => TABLE events PARTITION BY \"user\")",
        )
        .await;
        assert!(
            message.contains(
                "clear_state(\"cuont\"): `clearstypo` has no state entry `cuont` (its entries: count)"
            ),
            "{message}"
        );
    }
}

crate::on_both_backends! {
    async fn a_scalar_argument_that_does_not_convert_names_the_argument() {
        let message = planning_error(
            "SELECT * FROM ThresholdFunction(input_table => TABLE events PARTITION BY user, threshold => 'x')",
        )
        .await;
        assert!(
            message.contains("argument `threshold` of `thresholdfunction`: Cast error: Cannot cast string 'x' to value of Int32 type"),
            "{message}"
        );
    }
}

crate::on_both_backends! {
    async fn an_empty_uid_is_shown_quoted() {
        let message =
            planning_error("SELECT * FROM Counter(input => TABLE events PARTITION BY user, uid => '')")
                .await;
        assert!(
            message.ends_with("that does not start with a digit, not ''"),
            "{message}"
        );
    }
}
