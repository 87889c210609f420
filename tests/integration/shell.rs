//! The SQL shell (`udf_runtime::shell`) driven by scripts, as `udf-sql -c` and `-f` run them:
//! the examples' functions over the bundled orders, in every result mode, with the catalog's
//! statements, errors that stop a script (or not), and an unbounded result.

use std::sync::Arc;

use udf_core::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use udf_core::arrow::datatypes::{DataType, Field, Schema};
use udf_runtime::Session;
use udf_runtime::datafusion::prelude::SessionConfig;
use udf_runtime::shell::{Shell, Transcript};

/// The session `udf-sql` starts with: every example function and the `orders` table (one
/// processor, so that rows of an unbounded result come in one order).
async fn examples_session() -> Session {
    let session = Session::with_config(SessionConfig::new().with_target_partitions(1));
    udf_examples::catalog::register_all(&session).unwrap();
    udf_examples::register_orders(&session).await.unwrap();
    session
}

async fn run(shell: &mut Shell, script: &str) -> (bool, String) {
    let mut transcript = Transcript::default();
    let succeeded = shell.run_script(script, &mut transcript).await;
    (succeeded, transcript.0)
}

const SCRIPT: &str = "
-- The catalog: one function's signature, capabilities and state.
DESCRIBE FUNCTION weighted_avg;
\\df counter
-- A scalar function over the bundled orders, as a table (the default mode).
SELECT order_id, SubstringFunction(product, 0, 4) AS short, NULL AS nothing
FROM orders
ORDER BY order_id
LIMIT 3;
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT customer, weighted_avg(price, quantity) AS avg_price
FROM orders GROUP BY customer ORDER BY customer;
SET 'sql-client.execution.result-mode' = 'changelog';
SELECT * FROM counter(input => TABLE (SELECT customer, order_id FROM orders) PARTITION BY customer)
ORDER BY customer, cnt LIMIT 4;
SELECT * FROM orders WHERE order_id < 0;
";

#[tokio::test]
async fn a_script_in_every_result_mode() {
    let mut shell = Shell::new(examples_session().await);
    let (succeeded, transcript) = run(&mut shell, SCRIPT).await;
    assert!(succeeded, "{transcript}");
    insta::assert_snapshot!(transcript);
}

#[tokio::test]
async fn show_functions_lists_every_example_with_its_kind() {
    let mut shell = Shell::new(examples_session().await);
    let (succeeded, transcript) = run(&mut shell, "SHOW FUNCTIONS").await;
    assert!(succeeded, "{transcript}");
    let functions = shell.session().functions();
    assert!(functions.len() > 40, "{} functions", functions.len());
    for function in &functions {
        let line = transcript
            .lines()
            .find(|line| line.starts_with(&format!("| {} ", function.name)))
            .unwrap_or_else(|| panic!("no line for {}\n{transcript}", function.name));
        assert!(line.contains(&function.kind.to_string()), "{line}");
    }
    assert!(
        transcript.ends_with(&format!("{} rows in set\n", functions.len())),
        "{transcript}"
    );
}

#[tokio::test]
async fn a_script_stops_at_its_first_failing_statement_unless_told_to_continue() {
    let script = "SELECT 1 AS one;\nSELECT no_such_function(1);\nSELECT 2 AS two;";
    let mut shell = Shell::new(examples_session().await);
    let (succeeded, transcript) = run(&mut shell, script).await;
    assert!(!succeeded);
    assert!(transcript.contains("| one |"), "{transcript}");
    assert!(
        transcript.contains("[ERROR]") && transcript.contains("no_such_function"),
        "{transcript}"
    );
    assert!(
        !transcript.contains("two"),
        "stopped at the error\n{transcript}"
    );

    let mut shell = Shell::new(examples_session().await).continue_on_error(true);
    let (succeeded, transcript) = run(&mut shell, script).await;
    assert!(!succeeded, "a statement failed");
    assert!(transcript.contains("| two |"), "went on\n{transcript}");

    // `\q` ends a script; an unknown command is an error naming it.
    let (succeeded, transcript) = run(&mut shell, "\\q\nSELECT 3 AS three;").await;
    assert!(succeeded && !transcript.contains("three"), "{transcript}");
    let (succeeded, transcript) = run(&mut shell, "\\nope").await;
    assert!(
        !succeeded && transcript.contains("unknown command `\\nope`"),
        "{transcript}"
    );
}

#[tokio::test]
async fn an_unbounded_result_prints_its_rows_with_their_row_kind() {
    let session = examples_session().await;
    let schema = Arc::new(Schema::new(vec![
        Field::new("customer", DataType::Utf8, false),
        Field::new("order_id", DataType::Int64, false),
    ]));
    let feed = session
        .register_feed("live_orders", schema.clone())
        .unwrap();
    let batches = [(["a", "b"], [1, 2]), (["a", "c"], [3, 4])].map(|(customers, ids)| {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from_iter_values(customers)) as ArrayRef,
                Arc::new(Int64Array::from_iter_values(ids)),
            ],
        )
        .unwrap()
    });
    let sender = tokio::spawn(async move {
        for batch in batches {
            feed.send(batch).await.unwrap();
        }
        feed.close();
    });
    let mut shell = Shell::new(session);
    let (succeeded, transcript) = run(
        &mut shell,
        "SET 'sql-client.execution.result-mode' = 'tableau';
         SELECT customer, cnt FROM counter(input => TABLE live_orders PARTITION BY customer);",
    )
    .await;
    sender.await.unwrap();
    assert!(succeeded, "{transcript}");
    insta::assert_snapshot!(transcript);
}

/// A changelog result: applied in `table` mode (the table it leaves), row by row with each
/// row's kind as `op` in `changelog` mode — the row-kind column is not printed as a column.
#[tokio::test]
async fn a_changelog_result_is_applied_in_table_mode_and_listed_in_changelog_mode() {
    let dir = std::env::temp_dir().join(format!("udf-shell-changelog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("products.json");
    std::fs::write(
        &path,
        concat!(
            "{\"before\":null,\"after\":{\"id\":1,\"name\":\"scooter\"},\"op\":\"c\"}\n",
            "{\"before\":null,\"after\":{\"id\":2,\"name\":\"battery\"},\"op\":\"c\"}\n",
            "{\"before\":{\"id\":2,\"name\":\"battery\"},\"after\":null,\"op\":\"d\"}\n",
        ),
    )
    .unwrap();
    let session = examples_session().await;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    session
        .register_debezium_json("products", &path, schema)
        .unwrap();
    let mut shell = Shell::new(session);
    let query = "SELECT name, COUNT(*) AS n FROM products GROUP BY name;";
    let (succeeded, table) = run(&mut shell, query).await;
    assert!(succeeded, "{table}");
    assert!(table.contains("| name    | n |"), "{table}");
    assert!(table.contains("| scooter | 1 |"), "{table}");
    assert!(
        !table.contains("battery") && !table.contains("op"),
        "{table}"
    );
    assert!(table.ends_with("1 row in set\n"), "{table}");
    let script = format!("SET 'sql-client.execution.result-mode' = 'changelog';\n{query}");
    let (succeeded, changes) = run(&mut shell, &script).await;
    assert!(succeeded, "{changes}");
    let lines: Vec<&str> = changes
        .lines()
        .filter(|l| l.trim_start().starts_with(['+', '-']))
        .map(str::trim)
        .collect();
    assert_eq!(
        lines,
        ["+I scooter 1", "+I battery 1", "-D battery 1",],
        "{changes}"
    );
    assert!(changes.contains(" op "), "{changes}");
}
