//! The PTF cases, with the Java functions ported in `udf_examples::ptf::conformance`. Flink
//! ran them at parallelism 1, so one processor. Each runs with its state in memory and on
//! disk.

use udf_examples::ptf::conformance::{counter, repeat_rows};

use super::{check, load, on_a_cluster, session_as_flink_on};
use crate::support::{Backend, metric, rows};

#[tokio::test]
async fn ptf_counter_set_semantics() {
    let case = load("ptf_counter_set_semantics");
    for backend in Backend::ALL {
        let session = session_as_flink_on(&case, backend);
        session.register(counter).unwrap();
        check(&case, &session).await;
        if backend == Backend::Disk {
            let analyzed = rows(&session, &format!("EXPLAIN ANALYZE {}", case.query)).await;
            let plan = format!("{analyzed:?}");
            assert!(
                metric(&plan, "state_cache_misses") > 0.0,
                "keys came back from disk\n{plan}"
            );
        }
    }
    let cluster = on_a_cluster(&case, case.parallelism, |s| s.register(counter)).await;
    check(&case, &cluster).await;
}

#[tokio::test]
async fn ptf_row_semantics() {
    let case = load("ptf_row_semantics");
    for backend in Backend::ALL {
        let session = session_as_flink_on(&case, backend);
        session.register(repeat_rows).unwrap();
        check(&case, &session).await;
    }
    let cluster = on_a_cluster(&case, case.parallelism, |s| s.register(repeat_rows)).await;
    check(&case, &cluster).await;
}

#[tokio::test]
async fn ptf_named_timer_timeout() {
    let case = load("ptf_named_timer_timeout");
    for backend in Backend::ALL {
        let session = session_as_flink_on(&case, backend);
        // The case's watermark: after every row, max(ts seen) - 0 ms; +inf at the end.
        session.declare_watermark(&case.input.view_name, "ts", std::time::Duration::ZERO);
        session
            .register(udf_examples::ptf::conformance::Timeout)
            .unwrap();
        check(&case, &session).await;
    }
    let cluster = on_a_cluster(&case, 2, |s| {
        s.register(udf_examples::ptf::conformance::Timeout)
    })
    .await;
    check(&case, &cluster).await;
}

#[tokio::test]
async fn ptf_order_by_late() {
    let case = load("ptf_order_by_late");
    for backend in Backend::ALL {
        let session = session_as_flink_on(&case, backend);
        // The case's watermark: after every row, max(ts seen) - 2 s; +inf at the end.
        session.declare_watermark(
            &case.input.view_name,
            "ts",
            std::time::Duration::from_millis(2000),
        );
        session
            .register(udf_examples::ptf::conformance::seen_order)
            .unwrap();
        check(&case, &session).await;
    }
    let cluster = on_a_cluster(&case, 2, |s| {
        s.register(udf_examples::ptf::conformance::seen_order)
    })
    .await;
    check(&case, &cluster).await;
}
