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

/// The updating GROUP BY keeps its groups in memory: with the disk backend chosen it says
/// so instead of ignoring the choice.
#[tokio::test]
async fn the_disk_backend_is_refused_by_the_updating_group_by() {
    let session = session(1);
    let _feed = changelog_table(&session);
    session.set_option("state.backend.type", "fjall").unwrap();
    let error = session
        .sql("SELECT k, COUNT(*) FROM t GROUP BY k")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("keeps its groups in memory so far"),
        "{error}"
    );
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
