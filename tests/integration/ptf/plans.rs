//! Plans of PTF calls: the EXPLAIN of a set-semantics call (keys, processors, state
//! entries), the catalog signature of PTFs, and the metrics each processor reports.

use std::sync::Arc;

use udf_examples::ptf::conformance::{counter, repeat_rows};
use udf_examples::ptf::counting::efficient_second_event_function;
use udf_examples::ptf::history::history_function;
use udf_examples::ptf::my_ptf::my_typed_ptf;
use udf_examples::ptf::threshold::threshold_function;
use udf_runtime::Session;
use udf_runtime::datafusion::physical_plan::ExecutionPlan;

use crate::support::{explain, partitioned_session};

crate::on_both_backends! {
    async fn explain_of_a_set_semantics_call() {
        let session = partitioned_session("events", &crate::ptf::events(), 2);
        session.register(efficient_second_event_function).unwrap();
        let plan = explain(
            &session,
            "SELECT * FROM EfficientSecondEventFunction(input => TABLE events PARTITION BY \"user\", uid => 'pairs')",
        )
        .await;
        // One snapshot for both backends: the plan does not depend on where state lives.
        insta::with_settings!({ prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("integration__ptf__plans__explain_of_a_set_semantics_call", plan);
        });
    }
}

crate::on_both_backends! {
    async fn explain_of_a_call_with_event_time() {
        let session = partitioned_session("events", &crate::ptf::timers_table(), 2);
        session.declare_watermark("events", "ts", std::time::Duration::from_secs(1));
        session
            .register(udf_examples::ptf::timer::TimerFunction)
            .unwrap();
        let plan = explain(
            &session,
            "SELECT * FROM TimerFunction(input => TABLE events PARTITION BY k ORDER BY ts, on_time => DESCRIPTOR(ts))",
        )
        .await;
        // One snapshot for both backends: the plan does not depend on where state lives.
        insta::with_settings!({ prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("integration__ptf__plans__explain_of_a_call_with_event_time", plan);
        });
    }
}

#[test]
fn catalog_shows_table_arguments_and_state() {
    let session = Session::new();
    session.register(counter).unwrap();
    session.register(repeat_rows).unwrap();
    session.register(threshold_function).unwrap();
    session.register(history_function).unwrap();
    session.register(my_typed_ptf).unwrap();
    session.register(efficient_second_event_function).unwrap();
    let listing: Vec<String> = session
        .functions()
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(listing.join("\n"));
}

/// The sum over processors of metric `name` of the first PTF in `plan`.
pub fn ptf_metrics(plan: &Arc<dyn ExecutionPlan>) -> impl Fn(&str) -> usize {
    fn find(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
        if plan.name() == "ProcessTableFunctionExec" {
            return Some(plan.clone());
        }
        plan.children().into_iter().find_map(find)
    }
    let ptf = find(plan).expect("a PTF in the plan");
    let metrics = ptf.metrics().expect("PTF metrics").aggregate_by_name();
    move |name: &str| {
        metrics
            .sum_by_name(name)
            .map(|m| m.as_usize())
            .unwrap_or_else(|| panic!("no metric `{name}`"))
    }
}
