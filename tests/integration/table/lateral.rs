//! The SQL forms of a lateral join (rules 11–13 of docs/semantics.md): comma, JOIN ... ON TRUE, LEFT JOIN ...
//! ON TRUE, aliases, named arguments, constant and chained calls.

use std::sync::Mutex;

use udf_core::Value;
use udf_core::prelude::*;
use udf_examples::table::generate_series::GenerateSeriesFunction;
use udf_examples::table::split::split_function;

use super::my_session;
use crate::row;
use crate::support::rows;

#[tokio::test]
async fn join_on_true_is_the_comma_form() {
    let session = my_session();
    session.register(split_function).unwrap();
    let comma = rows(
        &session,
        "SELECT id, word FROM MyTable, LATERAL TABLE(SplitFunction(\"myField\"))",
    )
    .await;
    let join = rows(
        &session,
        "SELECT id, word FROM MyTable JOIN LATERAL TABLE(SplitFunction(\"myField\")) ON TRUE",
    )
    .await;
    let inner_join = rows(
        &session,
        "SELECT id, word FROM MyTable INNER JOIN LATERAL TABLE(SplitFunction(\"myField\")) ON TRUE",
    )
    .await;
    assert_eq!(comma.len(), 7);
    assert_eq!(comma, join);
    assert_eq!(comma, inner_join);
}

#[tokio::test]
async fn an_alias_renames_and_qualifies_the_columns() {
    let session = my_session();
    session.register(split_function).unwrap();
    let result = rows(
        &session,
        "SELECT m.id, T.w, T.l FROM MyTable m LEFT JOIN LATERAL TABLE(SplitFunction(m.\"myField\")) AS T(w, l) ON TRUE \
         WHERE m.id IN (1, 4)",
    )
    .await;
    assert_eq!(
        result,
        vec![
            row![1, "Hello", 5],
            row![1, "World", 5],
            row![4, Value::Null, Value::Null],
        ]
    );
}

/// An inner join's condition other than TRUE filters the joined rows (a LEFT join takes
/// only ON TRUE, see `errors`).
#[tokio::test]
async fn an_inner_join_condition_filters_the_joined_rows() {
    let session = my_session();
    session.register(split_function).unwrap();
    let result = rows(
        &session,
        "SELECT id, word FROM MyTable JOIN LATERAL TABLE(SplitFunction(\"myField\")) ON length > 1",
    )
    .await;
    assert_eq!(result, vec![row![1, "Hello"], row![1, "World"]]);
}

/// Tokens of `text` at `sep` (`,` when left out).
#[table_function]
fn tokens(
    #[argument(name = "text")] text: &str,
    #[argument(name = "sep", optional)] sep: Option<&str>,
    out: &mut Collector<String>,
) {
    for token in text.split(sep.unwrap_or(",")) {
        out.collect(token.to_owned());
    }
}

#[tokio::test]
async fn named_and_omitted_optional_arguments() {
    let session = crate::support::session_with(
        "t",
        &[crate::support::column(
            "s",
            "STRING",
            crate::support::strs(&[Some("a;b,c")]),
        )],
    );
    session.register(tokens).unwrap();
    let named = rows(
        &session,
        "SELECT f0 FROM t, LATERAL TABLE(tokens(sep => ';', text => s))",
    )
    .await;
    assert_eq!(named, vec![row!["a"], row!["b,c"]]);
    let omitted = rows(
        &session,
        "SELECT f0 FROM t, LATERAL TABLE(tokens(text => s))",
    )
    .await;
    assert_eq!(omitted, vec![row!["a;b"], row!["c"]]);
    let constant = rows(&session, "SELECT * FROM TABLE(tokens(text => 'x,y'))").await;
    assert_eq!(constant, vec![row!["x"], row!["y"]]);
}

#[tokio::test]
async fn constant_and_chained_calls() {
    let session = my_session();
    session.register(split_function).unwrap();
    session.register(GenerateSeriesFunction).unwrap();
    // A call reading no column joins every row to the same rows.
    let constant = rows(
        &session,
        "SELECT id, f0 FROM MyTable, LATERAL TABLE(generate_series_function(1, 2)) WHERE id <= 2",
    )
    .await;
    assert_eq!(
        constant,
        vec![row![1, 1], row![1, 2], row![2, 1], row![2, 2]]
    );
    // A LEFT join to a call that emits nothing keeps every row once.
    let nothing = rows(
        &session,
        "SELECT id, f0 FROM MyTable LEFT JOIN LATERAL TABLE(generate_series_function(2, 1)) ON TRUE",
    )
    .await;
    assert_eq!(nothing.len(), 4);
    assert!(nothing.iter().all(|r| r[1] == Value::Null), "{nothing:?}");
    // The second call reads a column of the first.
    let chained = rows(
        &session,
        "SELECT id, w.word, s.f0 FROM MyTable, LATERAL TABLE(SplitFunction(\"myField\")) AS w, \
         LATERAL TABLE(generate_series_function(1, w.length)) AS s WHERE id = 1 AND w.word = 'World' AND s.f0 > 3",
    )
    .await;
    assert_eq!(chained, vec![row![1, "World", 4], row![1, "World", 5]]);
}

#[tokio::test]
async fn inside_subqueries_and_ctes() {
    let session = my_session();
    session.register(split_function).unwrap();
    let counted = rows(
        &session,
        "WITH words AS (SELECT id, word FROM MyTable, LATERAL TABLE(SplitFunction(\"myField\"))) \
         SELECT id, COUNT(*) FROM words GROUP BY id ORDER BY id",
    )
    .await;
    assert_eq!(counted, vec![row![1, 2i64], row![2, 4i64], row![3, 1i64]]);
    let nested = rows(
        &session,
        "SELECT id FROM (SELECT id, word FROM MyTable, LATERAL TABLE(SplitFunction(\"myField\"))) WHERE word = 'c'",
    )
    .await;
    assert_eq!(nested, vec![row![2]]);
}

static LIFECYCLE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Emits its prefix (a job parameter read in `open`) before the input.
#[derive(Clone, Default)]
struct Prefixed {
    prefix: String,
}

#[table_function]
impl Prefixed {
    fn open(&mut self, context: &FunctionContext) -> Result<()> {
        self.prefix = context.get_job_parameter("prefix", "?");
        LIFECYCLE
            .lock()
            .unwrap()
            .push(format!("open {}", self.prefix));
        Ok(())
    }

    fn close(&mut self) {
        LIFECYCLE.lock().unwrap().push("close".to_owned());
    }

    fn eval(&self, s: &str, out: &mut Collector<String>) {
        out.collect(format!("{}{s}", self.prefix));
    }
}

#[tokio::test]
async fn open_reads_job_parameters_and_close_follows() {
    let session = my_session();
    session.register(Prefixed::default()).unwrap();
    session.set_job_parameter("prefix", "> ");
    let result = rows(
        &session,
        "SELECT f0 FROM MyTable, LATERAL TABLE(Prefixed(\"myField\")) WHERE id = 1",
    )
    .await;
    assert_eq!(result, vec![row!["> Hello World"]]);
    let events = LIFECYCLE.lock().unwrap().clone();
    assert_eq!(events, ["open > ", "close"]);
}
