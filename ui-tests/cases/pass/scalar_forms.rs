//! Every form of #[scalar_function] compiles, and the specs say what the Rust code says.

use std::collections::HashMap;

use chrono::NaiveDate;
use udf_core::prelude::*;

/// Type aliases work: types are inferred through traits, not by their spelling.
type MaybeInt = Option<i32>;

#[scalar_function]
fn first_word<'a>(s: &'a str) -> &'a str {
    s.split(' ').next().unwrap_or("")
}

#[scalar_function(name = "add_or_zero", deterministic = false, constant_folding = false)]
fn add(#[argument(name = "left")] a: MaybeInt, #[argument(name = "right", optional)] b: MaybeInt) -> i32 {
    a.unwrap_or(0) + b.unwrap_or(0)
}

#[scalar_function]
#[data_type("DECIMAL(12, 3)")]
fn to_decimal(#[data_type("DOUBLE")] x: f64) -> Result<Option<Decimal>> {
    if x.is_nan() { Ok(None) } else { Decimal::from_f64(x).map(Some) }
}

#[scalar_function]
fn shout(s: &str, out: &mut String) -> Option<()> {
    if s.is_empty() {
        return None;
    }
    out.push_str(&s.to_uppercase());
    Some(())
}

#[derive(Clone, Debug, PartialEq, SqlRow)]
struct Stats {
    #[data_type("SMALLINT")]
    words: i16,
    longest: Option<String>,
    tags: Vec<String>,
    counts: HashMap<String, i64>,
    day: NaiveDate,
}

#[scalar_function]
fn stats(text: &str, day: NaiveDate) -> Stats {
    Stats {
        words: text.split(' ').count() as i16,
        longest: text.split(' ').max_by_key(|w| w.len()).map(str::to_owned),
        tags: vec![],
        counts: HashMap::new(),
        day,
    }
}

#[derive(Clone, Default)]
struct Calculator {
    offset: i64,
}

#[scalar_function]
impl Calculator {
    fn open(&mut self, context: &FunctionContext) -> Result<()> {
        self.offset = context.get_job_parameter("offset", "0").parse()?;
        Ok(())
    }

    fn close(&mut self) {}

    fn eval(&self, a: i64) -> i64 {
        a + self.offset
    }

    #[varargs]
    fn eval_many(&self, first: Value, rest: &[Option<f64>]) -> Result<f64> {
        let _ = first;
        Ok(rest.iter().flatten().sum())
    }

    fn helper(&self) -> i64 {
        self.offset
    }
}

#[derive(Clone)]
struct Typed;

#[scalar_function]
impl Typed {
    fn eval(&self, kind: &str) -> Value {
        Value::from(kind)
    }

    fn output_type(&self, call: &CallContext) -> Result<DataType> {
        let _ = call;
        Ok(DataType::string())
    }
}

fn main() {
    assert_eq!(first_word::eval("hello world"), "hello");
    assert_eq!(add::eval(Some(1), None), 1);
    assert_eq!(Calculator::default().helper(), 0);
    assert_eq!(
        first_word.spec().signature_lines("first_word"),
        ["first_word(s STRING NOT NULL) -> STRING NOT NULL"]
    );
    let spec = add.spec();
    assert!(!spec.deterministic && !spec.constant_folding);
    assert_eq!(spec.signature_lines(&spec.name), ["add_or_zero(left INT, right INT OPTIONAL) -> INT NOT NULL"]);
    assert_eq!(to_decimal.spec().signature_lines("d"), ["d(x DOUBLE NOT NULL) -> DECIMAL(12, 3)"]);
    assert_eq!(shout.spec().signature_lines("shout"), ["shout(s STRING NOT NULL) -> STRING"]);
    assert_eq!(
        stats.spec().signature_lines("stats"),
        ["stats(text STRING NOT NULL, day DATE NOT NULL) -> ROW<words SMALLINT NOT NULL, longest STRING, tags ARRAY<STRING NOT NULL> NOT NULL, counts MAP<STRING NOT NULL, BIGINT NOT NULL> NOT NULL, day DATE NOT NULL> NOT NULL"]
    );
    assert_eq!(
        Calculator::default().spec().signature_lines("calc"),
        ["calc(a BIGINT NOT NULL) -> BIGINT NOT NULL", "calc(first ANY NOT NULL, rest DOUBLE...) -> DOUBLE NOT NULL"]
    );
    assert_eq!(Typed.spec().signature_lines("typed"), ["typed(kind STRING NOT NULL) -> <computed per call>"]);
    assert_eq!(<Stats as SqlRow>::FIELD_NAMES, ["words", "longest", "tags", "counts", "day"]);
}
