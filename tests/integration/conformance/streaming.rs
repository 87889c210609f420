//! Streaming cases: the input fed while the query runs (with its row kinds when it is a
//! changelog), the output a changelog whose row kinds are compared with Flink's exactly.
//! Every case runs with the input sent a row per batch, three rows per batch and all at
//! once: cutting the input differently must not change a row of the output.

use std::sync::Arc;

use futures::StreamExt;
use udf_core::Value;
use udf_core::arrow::array::{ArrayRef, RecordBatch, StringArray};
use udf_core::prelude::*;
use udf_runtime::changelog;
use udf_runtime::datafusion::prelude::{DataFrame, col, ident};
use udf_runtime::prelude::FlatAggregate as _;
use udf_runtime::{Feed, Session};

use super::aggregate::{WAcc, WAvg};
use super::{Case, check, columns, load, on_a_cluster, schema_entry, value};
use crate::support::{self, session_of};

/// The case's input as batches of `rows_per_batch` rows, each with its row kind when the
/// input is a changelog.
fn input_batches(case: &Case, rows_per_batch: usize) -> Vec<RecordBatch> {
    let whole = support::batch(&columns(case));
    let whole = if case.input.changelog {
        let kinds: Vec<&str> = case
            .input
            .rows
            .iter()
            .map(|row| row[0].as_str().expect("a row kind"))
            .collect();
        let mut columns = whole.columns().to_vec();
        columns.push(Arc::new(StringArray::from(kinds)) as ArrayRef);
        let schema = changelog::with_row_kind(&whole.schema());
        RecordBatch::try_new(Arc::new(schema), columns).expect("the changelog's columns")
    } else {
        whole
    };
    (0..whole.num_rows())
        .step_by(rows_per_batch)
        .map(|start| whole.slice(start, rows_per_batch.min(whole.num_rows() - start)))
        .collect()
}

/// The case's query: SQL, or the Table API expression of a case that has one, written with
/// this project's DataFrame methods.
pub(crate) async fn case_query(case: &Case, session: &Session) -> DataFrame {
    if case.case == "table_agg_emit_update_with_retract" {
        let call = session
            .table_aggregate("Top2WithRetract", [col("v")])
            .unwrap()
            .alias(["v", "rnk"]);
        return session
            .table("input")
            .await
            .unwrap()
            .group_by(vec![ident("k")])
            .flat_aggregate(call)
            .unwrap()
            .select_columns(&["k", "v", "rnk"])
            .unwrap();
    }
    session
        .sql(&case.query)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", case.case))
}

/// Registers the case's input as a fed table (a changelog when the case's input is one).
pub(crate) fn register_input(case: &Case, session: &Session) -> Feed {
    let columns = support::batch(&columns(case)).schema();
    let table = &case.input.view_name;
    if case.input.changelog {
        session.register_changelog_feed(table, columns).unwrap()
    } else {
        session.register_feed(table, columns).unwrap()
    }
}

/// Runs the case's query over its input fed in batches of `rows_per_batch` rows; the
/// output's column names and rows, each with its kind first.
async fn run(
    case: &Case,
    session: &Session,
    rows_per_batch: usize,
) -> (Vec<String>, Vec<Vec<Value>>) {
    let batches = input_batches(case, rows_per_batch);
    let feed = register_input(case, session);
    let query = case_query(case, session).await;
    let mut output = query
        .execute_stream()
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", case.case));
    let sender = tokio::spawn(async move {
        for batch in batches {
            feed.send(batch).await.expect("the query reads its input");
        }
    });
    let mut collected = Vec::new();
    while let Some(batch) = output.next().await {
        collected.push(batch.unwrap_or_else(|e| panic!("{}: {e}", case.case)));
    }
    sender.await.unwrap();
    let schema = output.schema();
    // An insert-only output has no row-kind column: every row is `+I`.
    let op = changelog::row_kind_index(&schema);
    let names: Vec<String> = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|&(i, _)| Some(i) != op)
        .map(|(_, f)| f.name().clone())
        .collect();
    let rows = support::batches_to_rows(&collected)
        .into_iter()
        .map(|mut row| {
            let kind = match op {
                Some(op) => row.remove(op),
                None => Value::String("+I".to_owned()),
            };
            row.insert(0, kind);
            row
        })
        .collect();
    (names, rows)
}

/// Flink's output: column names, and rows with their kind first.
fn expected(case: &Case) -> (Vec<String>, Vec<Vec<Value>>) {
    let columns: Vec<_> = case.output.schema.iter().map(|e| schema_entry(e)).collect();
    let rows = case
        .output
        .rows
        .iter()
        .map(|row| {
            let mut values = vec![Value::String(row[0].as_str().expect("a kind").to_owned())];
            values.extend(
                row[1..]
                    .iter()
                    .zip(&columns)
                    .map(|(json, (_, ty))| value(json, ty)),
            );
            values
        })
        .collect();
    (columns.into_iter().map(|(name, _)| name).collect(), rows)
}

/// The case in a session of one partition (Flink's parallelism) with `register`'s
/// functions, its input cut three ways.
async fn check_changelog(case: &Case, register: impl Fn(&Session)) {
    assert_eq!(case.output.order, "total", "{}", case.case);
    let expected = expected(case);
    for rows_per_batch in [1, 3, case.input.rows.len()] {
        let session = session_of(case.parallelism);
        register(&session);
        let actual = run(case, &session, rows_per_batch).await;
        assert_eq!(
            actual, expected,
            "{} with {rows_per_batch} rows per input batch",
            case.case
        );
    }
}

#[tokio::test]
async fn group_agg_updates() {
    let case = load("group_agg_updates");
    check_changelog(&case, |session| session.register(WAvg).unwrap()).await;
}

/// `WAvg` without `retract`.
#[derive(Clone, Debug, Default)]
struct WAvgNoRetract;

#[aggregate_function(name = "WAvgNoRetract", merge)]
impl WAvgNoRetract {
    fn accumulate(acc: &mut WAcc, value: Option<i64>, weight: Option<i64>) {
        if let (Some(value), Some(weight)) = (value, weight) {
            acc.sum += value * weight;
            acc.count += weight;
        }
    }

    fn merge(acc: &mut WAcc, other: &WAcc) {
        acc.sum += other.sum;
        acc.count += other.count;
    }

    fn get_value(acc: &WAcc) -> Option<i64> {
        (acc.count != 0).then(|| acc.sum / acc.count)
    }
}

/// Flink refuses the query while planning, naming the function and the missing `retract`;
/// so does this project, before any row is read.
#[tokio::test]
async fn group_agg_no_retract_on_changelog_input() {
    let case = load("group_agg_no_retract_on_changelog_input");
    let flink = case.error.as_deref().expect("an error case");
    assert!(
        flink.contains("'retract'") && flink.contains("WAvgNoRetract"),
        "{flink}"
    );
    let session = session_of(case.parallelism);
    session.register(WAvgNoRetract).unwrap();
    let _feed = register_input(&case, &session);
    let error = session
        .sql(&case.query)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .expect_err("a GROUP BY over a changelog needs retract");
    // SQL names are case-insensitive; the catalog keeps them in lower case.
    let error = error.to_string();
    assert!(
        error.contains("`wavgnoretract` has no `retract`") && error.contains("updating input"),
        "{error}"
    );
}

/// A window aggregate's output: insert-only rows, compared per key (the cases' `per_key`
/// order: `k`, the third column, is the partition key), at one and two processors.
async fn check_windows(case: &Case, register: impl Fn(&Session)) {
    assert_eq!(case.output.order, "per_key");
    let (_, expected) = expected(case);
    for partitions in [1, 2] {
        let session = crate::support::session_with_partitions(
            &case.input.view_name,
            &columns(case),
            partitions,
        );
        register(&session);
        // "after every row: max(ts_ms seen) - 1000 ms"
        session.declare_watermark(
            &case.input.view_name,
            "ts",
            std::time::Duration::from_millis(1000),
        );
        let batches = session
            .sql(&case.query)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", case.case))
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", case.case));
        let actual: Vec<Vec<Value>> = support::batches_to_rows(&batches)
            .into_iter()
            .map(|row| {
                let mut with_kind = vec![Value::String("+I".to_owned())];
                with_kind.extend(row);
                with_kind
            })
            .collect();
        let per_key = |rows: &[Vec<Value>]| {
            let mut keys: Vec<String> = rows.iter().map(|r| r[3].to_string()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .map(|k| {
                    let of_key: Vec<Vec<Value>> = rows
                        .iter()
                        .filter(|r| r[3].to_string() == k)
                        .cloned()
                        .collect();
                    (k, of_key)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            per_key(&actual),
            per_key(&expected),
            "{}: {partitions} partitions",
            case.case
        );
    }
}

#[tokio::test]
async fn tumble_window_udaf() {
    let case = load("tumble_window_udaf");
    check_windows(&case, |session| session.register(WAvg).unwrap()).await;
    check(&case, &on_a_cluster(&case, 2, |s| s.register(WAvg)).await).await;
}

/// Sessions merge (a row bridging two sessions makes one, with `merge`); a row late for
/// its own window but touching an open session joins it.
#[tokio::test]
async fn session_window_udaf_merge() {
    let case = load("session_window_udaf_merge");
    check_windows(&case, |session| session.register(WAvg).unwrap()).await;
    check(&case, &on_a_cluster(&case, 2, |s| s.register(WAvg)).await).await;
}

/// `WAvg` without `merge`.
#[derive(Clone, Debug, Default)]
struct WAvgNoMerge;

#[aggregate_function(name = "WAvgNoMerge", retract)]
impl WAvgNoMerge {
    fn accumulate(acc: &mut WAcc, value: Option<i64>, weight: Option<i64>) {
        if let (Some(value), Some(weight)) = (value, weight) {
            acc.sum += value * weight;
            acc.count += weight;
        }
    }

    fn retract(acc: &mut WAcc, value: Option<i64>, weight: Option<i64>) {
        if let (Some(value), Some(weight)) = (value, weight) {
            acc.sum -= value * weight;
            acc.count -= weight;
        }
    }

    fn get_value(acc: &WAcc) -> Option<i64> {
        (acc.count != 0).then(|| acc.sum / acc.count)
    }
}

/// Flink refuses a session window over a function without `merge` while planning.
#[tokio::test]
async fn session_window_udaf_no_merge() {
    let case = load("session_window_udaf_no_merge");
    let flink = case.error.as_deref().expect("an error case");
    assert!(
        flink.contains("'merge'") && flink.contains("WAvgNoMerge"),
        "{flink}"
    );
    let session =
        crate::support::session_with_partitions(&case.input.view_name, &columns(&case), 1);
    session.register(WAvgNoMerge).unwrap();
    session.declare_watermark(
        &case.input.view_name,
        "ts",
        std::time::Duration::from_secs(1),
    );
    let error = session
        .sql(&case.query)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .expect_err("session windows need merge")
        .to_string();
    assert!(
        error.contains("`wavgnomerge` has no `merge`, which session windows need"),
        "{error}"
    );
}

/// Over a stream a table aggregate emits a changelog with no flag asked (Flink's
/// `flatAggregate`); `emit_update_with_retract` retracts only what it says.
#[tokio::test]
async fn table_agg_emit_update_with_retract() {
    let case = load("table_agg_emit_update_with_retract");
    assert!(
        case.query
            .contains("flatAggregate(call(\"Top2WithRetract\", $(\"v\")).as(\"v\", \"rnk\"))")
    );
    check_changelog(&case, |session| {
        session
            .register(udf_examples::table_aggregate::top2_with_retract::Top2WithRetract)
            .unwrap()
    })
    .await;
}

/// A PTF whose table argument declares `supports_updates` reads a changelog, each row with
/// its kind (`ctx.row_kind()`); its own output is insert-only, as in Flink.
#[tokio::test]
async fn ptf_changelog_input() {
    let case = load("ptf_changelog_input");
    let register = |session: &Session| {
        session
            .register(udf_examples::ptf::conformance::kind_echo)
            .unwrap()
    };
    check_changelog(&case, register).await;
    // Insert-only: the plan has no row-kind column (the rows above read as `+I`).
    let session = session_of(case.parallelism);
    register(&session);
    let _feed = register_input(&case, &session);
    let plan = session
        .sql(&case.query)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    assert!(
        changelog::row_kind_index(&plan.schema()).is_none(),
        "a PTF's output is insert-only"
    );
}
