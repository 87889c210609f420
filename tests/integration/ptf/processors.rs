//! Virtual processors (rule 19 of docs/semantics.md): rows with equal keys reach the same processor, whatever
//! the number of processors; each processor keeps the input order.

use udf_core::Value;
use udf_examples::ptf::conformance::counter;

use crate::support::{column, partitioned_session, rows, strs};

crate::on_both_backends! {
    async fn equal_keys_meet_in_one_processor() {
        // 200 keys, five rows each, dealt over four input partitions and four processors.
        let keys: Vec<String> = (0..1000).map(|i| format!("k{}", i % 200)).collect();
        let keys: Vec<Option<&str>> = keys.iter().map(|k| Some(k.as_str())).collect();
        let session = partitioned_session("t", &[column("k", "STRING", strs(&keys))], 4);
        session.register(counter).unwrap();
        let plan = crate::support::explain(
            &session,
            "SELECT * FROM Counter(input => TABLE t PARTITION BY k)",
        )
        .await;
        assert!(
            plan.contains("processors=4 (rows routed by key hash)"),
            "{plan}"
        );

        let mut counted = rows(
            &session,
            "SELECT * FROM Counter(input => TABLE t PARTITION BY k)",
        )
        .await;
        counted
            .sort_by(|a, b| (a[0].to_string(), a[1].as_i64()).cmp(&(b[0].to_string(), b[1].as_i64())));
        // A key split over processors would count from 1 twice.
        let mut expected: Vec<Vec<Value>> = (0..200)
            .flat_map(|k| (1..=5_i64).map(move |n| vec![Value::from(format!("k{k}")), Value::from(n)]))
            .collect();
        expected
            .sort_by(|a, b| (a[0].to_string(), a[1].as_i64()).cmp(&(b[0].to_string(), b[1].as_i64())));
        assert_eq!(counted, expected);
    }
}

crate::on_both_backends! {
    async fn processors_can_be_read_one_after_the_other() {
        use futures::StreamExt;
        use udf_runtime::datafusion::physical_plan::ExecutionPlanProperties;

        // Far more batches (one row each) than the routing queues hold: reading processor 1 to its end before
        // processor 0 must not wait on processor 0 being read.
        let keys: Vec<String> = (0..20_000).map(|i| format!("k{}", i % 1000)).collect();
        let keys: Vec<Option<&str>> = keys.iter().map(|k| Some(k.as_str())).collect();
        let session = partitioned_session("t", &[column("k", "STRING", strs(&keys))], 2);
        session.register(counter).unwrap();
        let df = session
            .sql("SELECT * FROM Counter(input => TABLE t PARTITION BY k)")
            .await
            .unwrap();
        let plan = df.create_physical_plan().await.unwrap();
        assert_eq!(plan.output_partitioning().partition_count(), 2);
        let mut total = 0;
        for partition in [1, 0] {
            let mut stream = plan.execute(partition, session.task_ctx()).unwrap();
            while let Some(batch) = stream.next().await {
                total += batch.unwrap().num_rows();
            }
        }
        assert_eq!(total, 20_000);
    }
}
