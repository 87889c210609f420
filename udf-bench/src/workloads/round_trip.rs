//! Every benchmark query, planned as a Ballista scheduler plans it, comes back through the
//! cluster's codecs as it went: the logical plan equal, the physical plan displayed the same.
//! A query over a fed table (unbounded, which clusters do not run) is refused by name.

use udf_runtime::Session;
use udf_runtime::ballista::{PlanCodec, RoundTrip, scheduler_session};

use super::ALL;
use crate::{fed, source};

/// A scheduler's session with the workload's input (small) and functions.
fn session_of(setup: fn(&Session) -> udf_runtime::datafusion::error::Result<()>) -> Session {
    scheduler_session(|session| {
        source::register(session, 1000, 2)?;
        setup(session)
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_query_comes_back_through_the_cluster_codecs() {
    let mut round_trips = 0;
    for workload in ALL {
        if workload.custom.is_some() || workload.restore_keys.is_some() {
            // Hand-written runs and the restore measurement have no query.
            continue;
        }
        let (name, sql) = (workload.name, workload.sql);
        let session = session_of(workload.setup);
        let codec = PlanCodec::of(&session);
        if let Some((table, shape)) = workload.fed {
            let _feed = fed::register(&session, table, shape).unwrap();
            let plan = session.sql(sql).await.unwrap().into_optimized_plan();
            let message = codec
                .encode_logical(&plan.unwrap())
                .unwrap_err()
                .to_string();
            // Refused by its unbounded table or, first met, by the streaming operator over it.
            let by_table = format!("table `{table}` cannot be read by a Ballista cluster");
            assert!(
                message.contains(&by_table)
                    || message.contains("cannot run on a Ballista cluster yet"),
                "{name}: {message}"
            );
            continue;
        }
        let query = session.sql(sql).await.unwrap();
        let trip = codec
            .round_trip(query)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(trip.logical_back, trip.logical, "{name}");
        assert_eq!(
            RoundTrip::shown(&trip.physical_back),
            RoundTrip::shown(&trip.physical),
            "{name}"
        );
        round_trips += 1;
    }
    assert!(round_trips >= 20, "only {round_trips} queries went round");
}
