//! Output comes in batches of the session's batch size (never one batch per input row),
//! in input order.

use udf_core::Value;
use udf_examples::table::generate_series::GenerateSeriesFunction;
use udf_runtime::Session;
use udf_runtime::datafusion::prelude::SessionConfig;

use crate::support::{batch, batches_to_rows, column};

fn session(batch_size: usize) -> Session {
    let session = Session::with_config(
        SessionConfig::new()
            .with_batch_size(batch_size)
            .with_target_partitions(1),
    );
    // Upper bounds 10, 0 (emits nothing), 7, 3.
    let bounds = batch(&[
        column("id", "INT", (1..=4).map(Value::Int).collect()),
        column("hi", "INT", [10, 0, 7, 3].map(Value::Int).to_vec()),
    ]);
    session.register_batch("bounds", bounds).unwrap();
    session.register(GenerateSeriesFunction).unwrap();
    session
}

fn expected(left: bool) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for (id, hi) in [(1, 10), (2, 0), (3, 7), (4, 3)] {
        if hi == 0 && left {
            rows.push(vec![Value::Int(id), Value::Null]);
        }
        for i in 1..=hi {
            rows.push(vec![Value::Int(id), Value::Int(i)]);
        }
    }
    rows
}

#[tokio::test]
async fn full_batches_in_input_order() {
    for (join, left) in [(",", false), ("LEFT JOIN", true)] {
        let session = session(4);
        let on = if left { " ON TRUE" } else { "" };
        let sql = format!(
            "SELECT id, f0 FROM bounds {join} LATERAL TABLE(generate_series_function(1, hi)){on}"
        );
        let batches = session.sql(&sql).await.unwrap().collect().await.unwrap();
        let sizes: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
        let total = expected(left).len();
        assert_eq!(sizes.iter().sum::<usize>(), total, "{sql}");
        let (last, full) = sizes.split_last().unwrap();
        assert!(
            full.iter().all(|&n| n == 4) && *last <= 4,
            "{sql}: {sizes:?}"
        );
        assert_eq!(batches_to_rows(&batches), expected(left), "{sql}");
    }
}
