//! What cannot read a changelog (rule 38), and bad changelog input: planning errors naming the
//! operator or function and where the changelog comes from; row errors naming the row.

use super::{Change, batch_of, changelog_table, schema, session};

/// The planning error of `sql` in a session with changelog table `t` and table `dim`.
async fn planning_error(sql: &str) -> String {
    let session = session(1);
    let _feed = changelog_table(&session);
    session
        .register_batch("dim", batch_of(&[("+I", "a", Some(1))], false))
        .unwrap();
    let df = session
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}\n{e}"));
    df.create_physical_plan()
        .await
        .map(|_| ())
        .expect_err(sql)
        .to_string()
}

#[tokio::test]
async fn operators_that_cannot_read_a_changelog_are_planning_errors_naming_them() {
    let sorted = planning_error("SELECT k, v FROM t ORDER BY v").await;
    assert!(
        sorted.contains("Sort: t.v") && sorted.contains("from table `t`"),
        "{sorted}"
    );
    let joined = planning_error(
        "SELECT s.k, s.n, dim.v FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k) s JOIN dim ON s.k = dim.k",
    )
    .await;
    assert!(
        joined.contains("Inner Join") && joined.contains("from table `t`"),
        "{joined}"
    );
    let over = planning_error("SELECT k, SUM(v) OVER (PARTITION BY k) FROM t").await;
    assert!(
        over.contains("WindowAggr") && over.contains("cannot read a changelog"),
        "{over}"
    );
}

#[tokio::test]
async fn aggregates_an_updating_group_by_cannot_compute_are_planning_errors() {
    let median = planning_error("SELECT k, median(v) FROM t GROUP BY k").await;
    assert!(
        median.contains("aggregate function `median` cannot aggregate a stream or a changelog"),
        "{median}"
    );
    // Rule 37: ORDER BY inside an aggregate and grouping sets over a changelog.
    let ordered = planning_error("SELECT k, array_agg(v ORDER BY v) FROM t GROUP BY k").await;
    assert!(
        ordered
            .contains("an aggregate with ORDER BY over a stream or a changelog is not supported"),
        "{ordered}"
    );
    let rollup = planning_error("SELECT k, COUNT(*) FROM t GROUP BY ROLLUP(k)").await;
    assert!(
        rollup.contains(
            "GROUPING SETS, CUBE and ROLLUP over a stream or a changelog are not supported"
        ),
        "{rollup}"
    );
}

#[tokio::test]
async fn a_row_kind_that_is_not_one_is_an_error_naming_the_row() {
    let session = session(1);
    let feed = changelog_table(&session);
    let rows: [Change; 2] = [("+I", "a", Some(1)), ("+X", "a", Some(2))];
    let error = feed
        .send(batch_of(&rows, true))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(
            "row 1 of the batch sent to `t` has row kind `+X`, not one of +I, -U, +U, -D"
        ),
        "{error}"
    );
}

/// Only the `op` an insert leaves out takes the row kinds (rule 38): a query's own
/// column named `op` over a changelog is refused, not filled.
#[tokio::test]
async fn a_query_of_its_own_op_over_a_changelog_is_refused() {
    let error =
        planning_error("SELECT k, n, NULL AS op FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k)")
            .await;
    assert!(error.contains("selects a column named `op`"), "{error}");
}

#[tokio::test]
async fn a_changelog_table_with_its_own_op_column_is_refused() {
    let session = session(1);
    let with_op = udf_core::arrow::datatypes::Schema::new(vec![
        schema().field(0).clone(),
        udf_core::arrow::datatypes::Field::new(
            "op",
            udf_core::arrow::datatypes::DataType::Utf8,
            true,
        ),
    ]);
    let error = session
        .register_changelog_feed("u", std::sync::Arc::new(with_op))
        .unwrap_err()
        .to_string();
    assert!(error.contains("has a column named `op`"), "{error}");
}

/// A GROUP BY over an insert-only stream is where the changelog a join refuses comes from.
#[tokio::test]
async fn an_error_names_the_group_by_that_made_the_changelog() {
    let session = session(1);
    let _feed = session.register_feed("s", schema()).unwrap();
    session
        .register_batch("dim", batch_of(&[("+I", "a", Some(1))], false))
        .unwrap();
    let sql =
        "SELECT g.k FROM (SELECT k, COUNT(*) AS n FROM s GROUP BY k) g JOIN dim ON g.k = dim.k";
    let error = session
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("cannot read a changelog")
            && error.contains("from a GROUP BY over a stream"),
        "{error}"
    );
}

/// A PTF reads a changelog only where its table argument says it can (`supports_updates`,
/// rule 39).
#[tokio::test]
async fn a_ptf_without_supports_updates_refuses_a_changelog() {
    let session = session(1);
    let _feed = changelog_table(&session);
    session
        .register(udf_examples::ptf::conformance::counter)
        .unwrap();
    let error = session
        .sql("SELECT * FROM Counter(input => TABLE t PARTITION BY k)")
        .await
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("table argument `input` of `counter` is a changelog")
            && error.contains("add `supports_updates`"),
        "{error}"
    );
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Total {
    sum: i64,
}

/// A sum that refuses 13.
#[derive(Clone, Debug, Default)]
struct Unlucky;

#[udf_core::prelude::aggregate_function]
impl Unlucky {
    fn accumulate(acc: &mut Total, v: i64) -> udf_core::prelude::Result<()> {
        if v == 13 {
            return Err(udf_core::prelude::Error::msg("unlucky value"));
        }
        acc.sum += v;
        Ok(())
    }

    fn get_value(acc: &Total) -> i64 {
        acc.sum
    }
}

/// The updating GROUP BY folds a batch in rounds, out of row order; a failing call is
/// still named with its row in the batch as it came.
#[tokio::test]
async fn a_failing_call_names_its_row_in_the_batch_as_it_came() {
    let session = session(1);
    session.register(Unlucky).unwrap();
    let feed = session.register_feed("s", schema()).unwrap();
    let rows: [Change; 4] = [
        ("+I", "a", Some(1)),
        ("+I", "a", Some(2)),
        ("+I", "b", Some(3)),
        ("+I", "a", Some(13)),
    ];
    let mut output = session
        .sql("SELECT k, unlucky(v) FROM s GROUP BY k")
        .await
        .unwrap()
        .execute_stream()
        .await
        .unwrap();
    feed.send(batch_of(&rows, false)).await.unwrap();
    drop(feed);
    let mut error = None;
    while let Some(batch) = futures::StreamExt::next(&mut output).await {
        if let Err(e) = batch {
            error = Some(e.to_string());
            break;
        }
    }
    let error = error.expect("the query fails");
    assert!(
        error.contains("aggregate function `unlucky` failed: unlucky value (row 3 of the batch, arguments: v => 13)"),
        "{error}"
    );
}
