//! Table aggregates (rule 17 of docs/semantics.md): final results per group, changelogs, the DataFrame API.

use udf_core::Value;
use udf_core::arrow::array::RecordBatch;
use udf_examples::table_aggregate::{
    top_n::TopNFunction, top2::Top2, top2_with_retract::Top2WithRetract,
};
use udf_runtime::prelude::*;

use crate::support::{Column, batches_to_rows, column, explain, partitioned_session};

mod on_disk;

/// `MyTable(myField, value)`: group 1 gets 3, 1, 5; group 2 gets 4.
fn my_table() -> Vec<Column> {
    vec![
        column(
            "myField",
            "INT",
            [1, 2, 1, 1].into_iter().map(Value::Int).collect(),
        ),
        column(
            "value",
            "INT",
            [3, 4, 1, 5].into_iter().map(Value::Int).collect(),
        ),
    ]
}

fn row(values: &[i32]) -> Vec<Value> {
    values.iter().map(|v| Value::Int(*v)).collect()
}

async fn sorted(df: DataFrame) -> Vec<Vec<Value>> {
    let mut rows = batches_to_rows(&df.collect().await.unwrap());
    rows.sort_by_key(|r| r.iter().map(ToString::to_string).collect::<Vec<_>>());
    rows
}

/// The guide's call: `groupBy(myField).flatAggregate(call("Top2", value).as("value", "rank"))`.
#[tokio::test]
async fn top2_per_group_at_one_and_two_partitions() {
    for partitions in [1, 2] {
        let session = partitioned_session("MyTable", &my_table(), partitions);
        session.register(Top2).unwrap();
        let df = session
            .table("MyTable")
            .await
            .unwrap()
            .group_by(vec![ident("myField")])
            .flat_aggregate(
                session
                    .table_aggregate("Top2", [col("value")])
                    .unwrap()
                    .alias(["value", "rank"]),
            )
            .unwrap();
        let names: Vec<String> = df
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(names, ["myField", "value", "rank"]);
        assert_eq!(
            sorted(df).await,
            vec![row(&[1, 3, 2]), row(&[1, 5, 1]), row(&[2, 4, 1])],
            "{partitions} partitions"
        );
    }
}

#[tokio::test]
async fn merging_partial_accumulators_shows_in_the_plan() {
    let session = partitioned_session("MyTable", &my_table(), 2);
    session.register(Top2).unwrap();
    session.register(Top2WithRetract).unwrap();
    let call = |name: &str| session.table_aggregate(name, [col("value")]).unwrap();
    let df = session.table("MyTable").await.unwrap();
    let with_merge = df
        .clone()
        .group_by(vec![ident("myField")])
        .flat_aggregate(call("Top2"))
        .unwrap();
    let plan = explain_df(with_merge).await;
    assert!(
        plan.contains("TableAggregate: top2(value) groupBy=[myField] emit=final"),
        "{plan}"
    );
    assert!(plan.contains("(merge partial accumulators)"), "{plan}");
    let without_merge = df
        .group_by(vec![ident("myField")])
        .flat_aggregate(call("Top2WithRetract"))
        .unwrap();
    let plan = explain_df(without_merge).await;
    assert!(
        plan.contains("(whole groups per partition)")
            && plan.contains("RepartitionExec: partitioning=Hash"),
        "{plan}"
    );
}

async fn explain_df(df: DataFrame) -> String {
    let rows = batches_to_rows(&df.explain(false, false).unwrap().collect().await.unwrap());
    rows.iter()
        .map(|r| format!("{}:\n{}", r[0], r[1]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A function with only `emit_update_with_retract` gets its final result by applying its
/// own changelog: the same rows as Top2.
#[tokio::test]
async fn final_result_of_an_update_only_function() {
    let session = partitioned_session("MyTable", &my_table(), 2);
    session.register(Top2WithRetract).unwrap();
    let df = session
        .table("MyTable")
        .await
        .unwrap()
        .group_by(vec![ident("myField")])
        .flat_aggregate(
            session
                .table_aggregate("Top2WithRetract", [col("value")])
                .unwrap(),
        )
        .unwrap();
    assert_eq!(
        sorted(df).await,
        vec![row(&[1, 3, 2]), row(&[1, 5, 1]), row(&[2, 4, 1])]
    );
}

fn changelog_rows(batches: &[RecordBatch]) -> Vec<String> {
    batches_to_rows(batches)
        .into_iter()
        .filter(|r| r[0] == Value::Int(1))
        .map(|r| format!("{} ({}, {})", r[3], r[1], r[2]))
        .collect()
}

/// With `emit_value`, each input row retracts the group's previous rows and emits the new
/// ones; with `emit_update_with_retract`, only what changed.
#[tokio::test]
async fn changelogs_in_group_input_order() {
    let session = partitioned_session("MyTable", &my_table(), 1);
    session.register(Top2).unwrap();
    session.register(Top2WithRetract).unwrap();
    let run = |name: &'static str| {
        let session = &session;
        async move {
            let df = session
                .table("MyTable")
                .await
                .unwrap()
                .group_by(vec![ident("myField")])
                .flat_aggregate(
                    session
                        .table_aggregate(name, [col("value")])
                        .unwrap()
                        .changelog(),
                )
                .unwrap();
            let names: Vec<String> = df
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            assert_eq!(names, ["myField", "value", "rank", "op"]);
            changelog_rows(&df.collect().await.unwrap())
        }
    };
    assert_eq!(
        run("Top2").await,
        [
            "+I (3, 1)",
            "-D (3, 1)",
            "+I (3, 1)",
            "+I (1, 2)",
            "-D (3, 1)",
            "-D (1, 2)",
            "+I (5, 1)",
            "+I (3, 2)",
        ]
    );
    assert_eq!(
        run("Top2WithRetract").await,
        [
            "+I (3, 1)",
            "+I (1, 2)",
            "-D (3, 1)",
            "+I (5, 1)",
            "-D (1, 2)",
            "+I (3, 2)"
        ]
    );
}

#[tokio::test]
async fn parameterized_top_n_without_groups() {
    let scores: Vec<Value> = [2.5, 9.0, 4.0, 7.5, 1.0]
        .into_iter()
        .map(Value::Double)
        .collect();
    let session = partitioned_session("scores", &[column("score", "DOUBLE", scores)], 2);
    let df = session
        .table("scores")
        .await
        .unwrap()
        .flat_aggregate(
            session
                .table_aggregate_inline(TopNFunction { n: 3 }, [col("score")])
                .unwrap(),
        )
        .unwrap();
    assert_eq!(
        batches_to_rows(&df.collect().await.unwrap()),
        vec![
            vec![Value::Double(9.0), Value::Int(1)],
            vec![Value::Double(7.5), Value::Int(2)],
            vec![Value::Double(4.0), Value::Int(3)],
        ]
    );
}

#[tokio::test]
async fn misuse_is_reported() {
    let session = partitioned_session("MyTable", &my_table(), 1);
    session.register(Top2).unwrap();
    let as_scalar = session
        .call("Top2", [col("value")])
        .unwrap_err()
        .to_string();
    assert!(
        as_scalar.contains("`top2` is a table aggregate, which yields rows rather than a value"),
        "{as_scalar}"
    );
    let names = session
        .table("MyTable")
        .await
        .unwrap()
        .flat_aggregate(
            session
                .table_aggregate("Top2", [col("value")])
                .unwrap()
                .alias(["only_one"]),
        )
        .unwrap_err()
        .to_string();
    assert!(
        names.contains("`top2` emits 2 columns, but 1 names were given"),
        "{names}"
    );
    let _ = explain;
}

/// The SQL form: a TABLE argument with PARTITION BY; the table's other columns are the
/// function's arguments.
#[tokio::test]
async fn sql_form_with_table_argument() {
    let session = partitioned_session("MyTable", &my_table(), 2);
    session.register(Top2).unwrap();
    session.register(Top2WithRetract).unwrap();
    let rows = |sql: &'static str| {
        let session = &session;
        async move {
            let mut rows = crate::support::rows(session, sql).await;
            rows.sort_by_key(|r| r.iter().map(ToString::to_string).collect::<Vec<_>>());
            rows
        }
    };
    let expected = vec![row(&[1, 3, 2]), row(&[1, 5, 1]), row(&[2, 4, 1])];
    assert_eq!(
        rows("SELECT * FROM Top2(TABLE MyTable PARTITION BY \"myField\")").await,
        expected
    );
    assert_eq!(
        rows("SELECT k, v, r FROM Top2(input => TABLE (SELECT \"myField\", value FROM MyTable) PARTITION BY \"myField\") AS t(k, v, r)").await,
        expected
    );
    // Without PARTITION BY, all rows are one group.
    assert_eq!(
        rows("SELECT * FROM Top2(TABLE (SELECT value FROM MyTable))").await,
        vec![row(&[4, 2]), row(&[5, 1])]
    );

    let changelog = crate::support::rows(
        &session,
        "SELECT value, rank, op FROM Top2WithRetract(TABLE MyTable PARTITION BY \"myField\", changelog => TRUE) WHERE \"myField\" = 1",
    )
    .await;
    let changelog: Vec<String> = changelog
        .iter()
        .map(|r| format!("{} ({}, {})", r[2], r[0], r[1]))
        .collect();
    assert_eq!(
        changelog,
        [
            "+I (3, 1)",
            "+I (1, 2)",
            "-D (3, 1)",
            "+I (5, 1)",
            "-D (1, 2)",
            "+I (3, 2)"
        ]
    );
}

#[tokio::test]
async fn sql_form_errors() {
    let session = partitioned_session("MyTable", &my_table(), 1);
    session.register(Top2).unwrap();
    let cases = [
        ("SELECT * FROM Top2(1)", "`top2` takes one TABLE argument"),
        (
            "SELECT * FROM Top2(TABLE MyTable PARTITION BY \"myField\", size => 3)",
            "`top2` has no argument named `size`",
        ),
        (
            "SELECT * FROM Top2(TABLE MyTable PARTITION BY \"myField\" ORDER BY value)",
            "takes no ORDER BY",
        ),
        (
            "SELECT * FROM Top2(TABLE MyTable PARTITION BY \"myField\", changelog => 'yes')",
            "must be TRUE or FALSE",
        ),
    ];
    for (sql, expected) in cases {
        let message = crate::support::error(&session, sql).await;
        assert!(message.contains(expected), "{sql}\n{message}");
    }
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Largest {
    value: Option<i32>,
}

/// Emits a group's largest value, and fails on a group whose largest is 5 (returning an
/// error) or 4 (panicking).
#[derive(Clone, Debug, Default)]
struct Picky;

#[udf_core::prelude::table_aggregate_function(merge)]
impl Picky {
    fn accumulate(acc: &mut Largest, value: i32) {
        acc.value = acc.value.max(Some(value));
    }

    fn merge(acc: &mut Largest, other: &Largest) {
        acc.value = acc.value.max(other.value);
    }

    fn emit_value(
        acc: &Largest,
        out: &mut udf_core::prelude::Collector<i32>,
    ) -> udf_core::Result<()> {
        match acc.value {
            Some(5) => Err(udf_core::Error::msg("five is too large")),
            Some(4) => panic!("four is unlucky"),
            Some(v) => {
                out.collect(v);
                Ok(())
            }
            None => Ok(()),
        }
    }
}

#[tokio::test]
async fn emit_failures_name_the_group_key_and_the_accumulator() {
    let session = partitioned_session("MyTable", &my_table(), 1);
    session.register(Picky).unwrap();
    let message = crate::support::error(
        &session,
        "SELECT * FROM Picky(TABLE MyTable PARTITION BY \"myField\")",
    )
    .await;
    assert!(
        message.contains("table aggregate function `picky` failed in emit_value: five is too large (accumulator: {value: Some(5)}) (group key: 1)"),
        "{message}"
    );
    let message = crate::support::error(
        &session,
        "SELECT * FROM Picky(TABLE (SELECT * FROM MyTable WHERE \"myField\" = 2) PARTITION BY \"myField\")",
    )
    .await;
    assert!(
        message.contains(
            "table aggregate function `picky` panicked in emit_value: four is unlucky (at tests/"
        ) && message.contains(") (accumulator: {value: Some(4)}) (group key: 2)"),
        "{message}"
    );
}

/// Over a fed (unbounded) table a changelog goes on as rows come — asked for or not: final
/// results would never come, so a table aggregate over a stream emits a changelog, as in
/// Flink, its `op` column the row kinds (rule 35).
#[tokio::test]
async fn over_unbounded_input_a_table_aggregate_streams_a_changelog() {
    use std::sync::Arc;

    use futures::StreamExt;
    use udf_core::arrow::array::{Int32Array, StringArray};
    use udf_core::arrow::datatypes::{DataType, Field, Schema};

    for asked in [false, true] {
        let session = crate::support::session_of(1);
        session.register(Top2).unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, false),
            Field::new("v", DataType::Int32, false),
        ]));
        let feed = session.register_feed("events", schema.clone()).unwrap();
        let grouped = || async {
            session
                .table("events")
                .await
                .unwrap()
                .group_by(vec![ident("k")])
        };
        let top2 = session.table_aggregate("Top2", [col("v")]).unwrap();
        let top2 = if asked { top2.changelog() } else { top2 };

        let mut changes = grouped()
            .await
            .flat_aggregate(top2)
            .unwrap()
            .execute_stream()
            .await
            .unwrap();
        let op = changes.schema().field(3).clone();
        assert!(udf_runtime::changelog::is_row_kind(&op), "{op:?}");
        let rows = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["a", "a"])),
                Arc::new(Int32Array::from(vec![1, 2])),
            ],
        )
        .unwrap();
        feed.send(rows).await.unwrap();
        let first = tokio::time::timeout(std::time::Duration::from_secs(10), changes.next())
            .await
            .expect("changes while the feed is open")
            .unwrap()
            .unwrap();
        let changes: Vec<String> = batches_to_rows(&[first])
            .into_iter()
            .map(|r| format!("{} {} ({}, {})", r[3], r[0], r[1], r[2]))
            .collect();
        assert_eq!(
            changes,
            ["+I a (1, 1)", "-D a (1, 1)", "+I a (2, 1)", "+I a (1, 2)"],
            "changelog asked: {asked}"
        );
    }
}
