//! Event time (rules 25, 30 of docs/semantics.md): `on_time => DESCRIPTOR(ts)` over a table with a declared
//! watermark, `rowtime` in the output, `time()` and `current_watermark()` in `eval`, and
//! watermarks combined over input partitions.

use std::time::Duration;

use udf_core::Value;
use udf_core::prelude::*;

use crate::row;
use crate::support::{error, events, partitioned_session, rows, session_with_partitions};

/// The row's time and the watermark it is processed under, in milliseconds.
fn time_and_watermark(ctx: &mut Context) -> Row {
    let tc = ctx.time_context();
    let time = tc.time().map(|t| t.timestamp_millis());
    let watermark = tc.current_watermark().map(|w| w.timestamp_millis());
    Row::of([time.into(), watermark.into()])
}

/// Emits the row's time and the watermark it was processed under, in milliseconds.
#[ptf(name = "Clock")]
#[data_type("ROW<t BIGINT, wm BIGINT>")]
fn clock(
    ctx: &mut Context,
    #[argument(set_semantic_table, optional_partition_by, require_on_time)] input: Row,
    out: &mut Collector<Row>,
) {
    let _ = input;
    out.collect(time_and_watermark(ctx));
}

/// One processor over `events` a@1000, b@5000, a@3000, b@7000, watermark max - 500 ms,
/// with `Clock` registered.
fn four_events_with_clock() -> udf_runtime::Session {
    let session = session_with_partitions(
        "events",
        &events(&["a", "b", "a", "b"], &[1000, 5000, 3000, 7000]),
        1,
    );
    session.declare_watermark("events", "ts", Duration::from_millis(500));
    session.register(clock).unwrap();
    session
}

crate::on_both_backends! {
    async fn rows_see_their_time_and_the_watermark_before_them() {
        let session = four_events_with_clock();
        // (A millisecond timestamp cast to BIGINT is its epoch milliseconds.)
        let sql = "SELECT k, t, wm, CAST(rowtime AS BIGINT) AS r \
                   FROM Clock(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))";
        // The watermark after each row is max(ts seen) - 500 ms; the row at 3000 is late and
        // still reaches eval (rule 30 of docs/semantics.md). `rowtime` is the row's time.
        assert_eq!(
            rows(&session, sql).await,
            vec![
                row!["a", 1000_i64, None::<i64>, 1000_i64],
                row!["b", 5000_i64, 500_i64, 5000_i64],
                row!["a", 3000_i64, 4500_i64, 3000_i64],
                row!["b", 7000_i64, 4500_i64, 7000_i64],
            ]
        );
    }
}

crate::on_both_backends! {
    async fn a_time_column_read_unchanged_keeps_its_tables_watermark() {
        let session = four_events_with_clock();
        session
            .sql("CREATE VIEW recent AS SELECT k, ts FROM events WHERE k <> 'z'")
            .await
            .unwrap();
        // The same rows and watermarks as over `events` itself: through a renaming subquery,
        // and through a view.
        let expected = vec![
            row!["a", 1000_i64, None::<i64>],
            row!["b", 5000_i64, 500_i64],
            row!["a", 3000_i64, 4500_i64],
            row!["b", 7000_i64, 4500_i64],
        ];
        for sql in [
            "SELECT k, t, wm FROM Clock(input => TABLE (SELECT k, ts AS seen FROM events WHERE k <> 'z') PARTITION BY k, on_time => DESCRIPTOR(seen))",
            "SELECT k, t, wm FROM Clock(input => TABLE recent PARTITION BY k, on_time => DESCRIPTOR(ts))",
        ] {
            assert_eq!(rows(&session, sql).await, expected, "{sql}");
        }
        // A time column computed in a view takes the watermark declared on the view.
        session
            .sql("CREATE VIEW shifted AS SELECT k, ts + INTERVAL '1' SECOND AS later FROM events")
            .await
            .unwrap();
        session.declare_watermark("shifted", "later", Duration::from_millis(500));
        assert_eq!(
            rows(
                &session,
                "SELECT k, t, wm FROM Clock(input => TABLE shifted PARTITION BY k, on_time => DESCRIPTOR(later))",
            )
            .await,
            vec![
                row!["a", 2000_i64, None::<i64>],
                row!["b", 6000_i64, 1500_i64],
                row!["a", 4000_i64, 5500_i64],
                row!["b", 8000_i64, 5500_i64],
            ]
        );
        // A computed time column has no watermark.
        let computed = error(
            &session,
            "SELECT * FROM Clock(input => TABLE (SELECT k, ts + INTERVAL '1' SECOND AS later FROM events) PARTITION BY k, on_time => DESCRIPTOR(later))",
        )
        .await;
        assert!(
            computed.contains("`later` has no watermark")
                && computed.contains("a computed time column has none"),
            "{computed}"
        );
    }
}

crate::on_both_backends! {
    async fn the_output_ends_with_rowtime_of_the_time_columns_type() {
        let session = session_with_partitions("events", &events(&["a"], &[1000]), 1);
        session.declare_watermark("events", "ts", Duration::ZERO);
        session.register(clock).unwrap();
        let types = crate::support::column_types(
            &session,
            "SELECT * FROM Clock(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert_eq!(
            types,
            ["STRING", "BIGINT", "BIGINT", "TIMESTAMP_LTZ(3) NOT NULL"]
        );
    }
}

crate::on_both_backends! {
    async fn the_watermark_is_the_minimum_over_input_partitions() {
        // Dealt round-robin over two partitions: partition 0 gets 10 s, 20 s, ...; partition 1
        // gets 1 s, 2 s, 3 s. One processor (no PARTITION BY) hears from both.
        let millis = [10_000, 1000, 20_000, 2000, 30_000, 3000, 40_000, 50_000];
        let keys = ["x"; 8];
        let session = partitioned_session("events", &events(&keys, &millis), 2);
        session.declare_watermark("events", "ts", Duration::ZERO);
        session.register(clock).unwrap();
        let seen = rows(
            &session,
            "SELECT t, wm FROM Clock(input => TABLE events, on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert_eq!(seen.len(), 8);
        let watermarks: Vec<Option<i64>> = seen.iter().map(|r| r[1].as_i64()).collect();
        // Until partition 1 ends the slower partition holds the watermark at 3 s at most; once
        // it has ended only partition 0 counts. None until both have reported.
        assert_eq!(watermarks[0], None, "{seen:?}");
        for w in watermarks.iter().flatten() {
            assert!(*w <= 3000 || *w >= 10_000, "{seen:?}");
        }
        let known: Vec<i64> = watermarks.iter().flatten().copied().collect();
        assert!(known.windows(2).all(|w| w[0] <= w[1]), "monotone: {seen:?}");
    }
}

crate::on_both_backends! {
    async fn event_time_errors_name_what_to_declare() {
        let session = session_with_partitions("events", &events(&["a"], &[1000]), 1);
        session.register(clock).unwrap();
        let no_watermark = error(
            &session,
            "SELECT * FROM Clock(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert!(
            no_watermark.contains("`ts` has no watermark, so it cannot be the time of `clock`: declare one with `session.declare_watermark(\"events\", \"ts\", delay)`"),
            "{no_watermark}"
        );
        session.declare_watermark("events", "ts", Duration::ZERO);
        let required = error(
            &session,
            "SELECT * FROM Clock(input => TABLE events PARTITION BY k)",
        )
        .await;
        assert!(
            required.contains("table argument `input` of `clock` requires a time attribute: name one with `on_time => DESCRIPTOR(ts)`"),
            "{required}"
        );
        let not_time = error(
            &session,
            "SELECT * FROM Clock(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(k))",
        )
        .await;
        assert!(
            not_time.contains("`on_time` of `clock` must be a TIMESTAMP or TIMESTAMP_LTZ column of precision up to 3; `k` is Utf8"),
            "{not_time}"
        );
        let unknown = error(
            &session,
            "SELECT * FROM Clock(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(nope))",
        )
        .await;
        assert!(
            unknown.contains("`on_time` of `clock` names `nope`, which is not a column"),
            "{unknown}"
        );
    }
}

crate::on_both_backends! {
    async fn watermarks_emitted_per_batch_move_between_batches() {
        use std::sync::Arc;
        use udf_runtime::WatermarkEmission;
        use udf_runtime::datafusion::datasource::MemTable;

        let first = crate::support::batch(&events(&["a", "a"], &[1000, 5000]));
        let second = crate::support::batch(&events(&["a", "a"], &[3000, 7000]));
        let table = MemTable::try_new(first.schema(), vec![vec![first, second]]).unwrap();
        let session = session_with_partitions("unused", &events(&["a"], &[0]), 1);
        session.register_table("events", Arc::new(table)).unwrap();
        session.register(clock).unwrap();
        let sql =
            "SELECT wm FROM Clock(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))";
        session.declare_watermark_with(
            "events",
            "ts",
            Duration::ZERO,
            WatermarkEmission::EveryBatch,
        );
        let per_batch: Vec<Value> = rows(&session, sql)
            .await
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        assert_eq!(
            per_batch,
            [Value::Null, Value::Null, 5000_i64.into(), 5000_i64.into()]
        );
        session.declare_watermark("events", "ts", Duration::ZERO);
        let per_row: Vec<Value> = rows(&session, sql)
            .await
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        assert_eq!(
            per_row,
            [
                Value::Null,
                1000_i64.into(),
                5000_i64.into(),
                5000_i64.into()
            ]
        );
    }
}

crate::on_both_backends! {
    async fn watermarks_can_be_declared_in_create_table() {
        // Both backends run at once: a directory each.
        let dir = std::env::temp_dir().join(format!(
            "udf-watermark-ddl-{}-{:?}",
            std::process::id(),
            crate::support::test_backend()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("events.csv");
        std::fs::write(
            &file,
            "k,ts\na,1970-01-01T00:00:01\nb,1970-01-01T00:00:05\na,1970-01-01T00:00:03\n",
        )
        .unwrap();
        let session = session_with_partitions("unused", &events(&["a"], &[0]), 1);
        session.register(clock).unwrap();
        session
            .sql(&format!(
                "CREATE EXTERNAL TABLE events (k VARCHAR, ts TIMESTAMP(3), \
                 WATERMARK FOR ts AS ts - INTERVAL '0.5' SECOND) \
                 STORED AS CSV LOCATION '{}' OPTIONS ('format.has_header' 'true')",
                file.display()
            ))
            .await
            .unwrap();
        let seen = rows(
            &session,
            "SELECT t, wm FROM Clock(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
        )
        .await;
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(
            seen,
            vec![
                row![1000_i64, None::<i64>],
                row![5000_i64, 500_i64],
                row![3000_i64, 4500_i64],
            ]
        );
    }
}

crate::on_both_backends! {
    async fn watermarks_in_create_table_with_inserted_rows() {
        let session = session_with_partitions("unused", &events(&["a"], &[0]), 1);
        session.register(clock).unwrap();
        session
            .sql("CREATE TABLE events (k VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        session
            .sql("INSERT INTO events VALUES ('a', TIMESTAMP '1970-01-01 00:00:02'), ('a', TIMESTAMP '1970-01-01 00:00:04')")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let seen = rows(
            &session,
            "SELECT t, wm FROM Clock(input => TABLE events PARTITION BY k, on_time => DESCRIPTOR(ts))",
        )
        .await;
        assert_eq!(
            seen,
            vec![row![2000_i64, None::<i64>], row![4000_i64, 1000_i64]]
        );
    }
}

crate::on_both_backends! {
    async fn a_watermark_on_a_missing_or_untimed_column_fails_its_create_table() {
        let session = session_with_partitions("unused", &events(&["a"], &[0]), 1);
        let cases = [
            (
                "CREATE TABLE e1 (k VARCHAR, ts TIMESTAMP(3), WATERMARK FOR tss AS tss)",
                "the WATERMARK of the CREATE TABLE of `e1` is declared on `tss`, which is not a column of the table",
            ),
            (
                "CREATE TABLE e2 (k VARCHAR, ts TIMESTAMP(3), WATERMARK FOR k AS k - INTERVAL '1' SECOND)",
                "the WATERMARK of the CREATE TABLE of `e2` is declared on `k`, a Utf8",
            ),
            (
                "CREATE TABLE e3 (ts TIMESTAMP(3), u TIMESTAMP(3), WATERMARK FOR ts AS ts, WATERMARK FOR u AS u)",
                "the CREATE TABLE of `e3` has 2 WATERMARK clauses",
            ),
            (
                "CREATE TABLE e4 (ts TIMESTAMP(3), WATERMARK FOR ts AS ts + INTERVAL '1' SECOND)",
                "the WATERMARK of `ts` in the CREATE TABLE of `e4` must be `ts - INTERVAL '<n>' <unit>` or `ts`",
            ),
        ];
        for (sql, expected) in cases {
            let error = session.sql(sql).await.expect_err(sql).to_string();
            assert!(error.contains(expected), "{sql}\n{error}");
        }
        // A table whose clause failed is not left behind, so the statement can be run again fixed.
        for table in ["e1", "e2", "e3", "e4"] {
            assert!(!session.context().table_exist(table).unwrap(), "{table}");
        }
        session
            .sql("CREATE TABLE e1 (k VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)")
            .await
            .unwrap();
    }
}

/// `Clock` without `require_on_time`: what a call without `on_time` sees.
#[ptf(name = "Watch")]
#[data_type("ROW<t BIGINT, wm BIGINT>")]
fn watch(
    ctx: &mut Context,
    #[argument(set_semantic_table, optional_partition_by)] input: Row,
    out: &mut Collector<Row>,
) {
    let _ = input;
    out.collect(time_and_watermark(ctx));
}

crate::on_both_backends! {
    async fn without_on_time_the_declared_watermark_still_reaches_the_function() {
        let session = four_events_with_clock();
        session.register(watch).unwrap();
        // As in Flink: the watermark of the table's time attribute, but no row time and no
        // `rowtime` column.
        let sql = "SELECT * FROM Watch(input => TABLE events PARTITION BY k)";
        assert_eq!(
            rows(&session, sql).await,
            vec![
                row!["a", None::<i64>, None::<i64>],
                row!["b", None::<i64>, 500_i64],
                row!["a", None::<i64>, 4500_i64],
                row!["b", None::<i64>, 4500_i64],
            ]
        );
        // A table without a declared watermark has none.
        let plain = session_with_partitions(
            "events",
            &events(&["a", "b"], &[1000, 5000]),
            1,
        );
        plain.register(watch).unwrap();
        assert_eq!(
            rows(&plain, sql).await,
            vec![row!["a", None::<i64>, None::<i64>], row!["b", None::<i64>, None::<i64>]]
        );
    }
}
