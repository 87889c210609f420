//! The DataFrame form: `df.partition_by(keys).process(call)` and `df.process(call)`.

use udf_examples::ptf::conformance::{counter, repeat_rows};
use udf_examples::ptf::threshold::threshold_function;
use udf_runtime::prelude::*;

use super::{events, one_processor};
use crate::row;
use crate::support::{batches_to_rows, column, rows, strs};

crate::on_both_backends! {
    async fn partitioned_dataframes_call_set_semantics_functions() {
        let session = one_processor("events", &events());
        session.register(counter).unwrap();
        let df = session
            .table("events")
            .await
            .unwrap()
            .partition_by(vec![col("user")])
            .process(session.process_table("Counter", []).unwrap().uid("counter"))
            .unwrap();
        let from_sql = rows(
            &session,
            "SELECT * FROM Counter(input => TABLE events PARTITION BY \"user\")",
        )
        .await;
        assert_eq!(batches_to_rows(&df.collect().await.unwrap()), from_sql);
    }
}

crate::on_both_backends! {
    async fn scalar_arguments_by_position_or_name() {
        let table = vec![
            column("k", "STRING", strs(&[Some("a"), Some("b")])),
            column("amount", "INT", vec![4.into(), 9.into()]),
        ];
        let session = one_processor("orders", &table);
        session.register(threshold_function).unwrap();
        session.register(repeat_rows).unwrap();
        let orders = session.table("orders").await.unwrap();

        let positional = orders
            .clone()
            .partition_by(vec![col("k")])
            .process(
                session
                    .process_table("ThresholdFunction", [lit(5)])
                    .unwrap(),
            )
            .unwrap();
        assert_eq!(
            batches_to_rows(&positional.collect().await.unwrap()),
            vec![row!["b", 9]]
        );

        let named = orders
            .clone()
            .partition_by(vec![col("k")])
            .process(
                session
                    .process_table("ThresholdFunction", [])
                    .unwrap()
                    .arg("threshold", lit(4)),
            )
            .unwrap();
        assert_eq!(
            batches_to_rows(&named.collect().await.unwrap()),
            vec![row!["a", 4], row!["b", 9]]
        );

        // Row semantics: no partitioning.
        let repeated = orders
            .process(session.process_table("RepeatRows", [lit(3)]).unwrap())
            .unwrap();
        let repeated = batches_to_rows(&repeated.collect().await.unwrap());
        assert_eq!(repeated.len(), 6);

        let missing = session
            .table("orders")
            .await
            .unwrap()
            .partition_by(vec![col("k")])
            .process(session.process_table("ThresholdFunction", []).unwrap())
            .unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("`thresholdfunction` needs argument `threshold`"),
            "{missing}"
        );
    }
}
