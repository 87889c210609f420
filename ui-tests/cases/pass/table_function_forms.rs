//! Every form of #[table_function] compiles, and the specs say what the Rust code says.

use udf_core::prelude::*;

#[derive(Clone, Debug, SqlRow)]
struct Word {
    word: String,
    #[data_type("SMALLINT")]
    length: i16,
}

/// A free function with a row struct.
#[table_function]
fn words(s: &str, out: &mut Collector<Word>) {
    for word in s.split(' ') {
        out.collect(Word { word: word.to_owned(), length: word.len() as i16 });
    }
}

/// A hinted dynamic row, a fallible method, named and optional arguments.
#[table_function(name = "pieces", deterministic = false)]
#[data_type("ROW<piece STRING, position INT>")]
fn split_at(
    #[argument(name = "text")] s: Option<&str>,
    #[argument(name = "sep", optional)] sep: Option<&str>,
    out: &mut Collector<Row>,
) -> Result<()> {
    let Some(s) = s else { bail!("no text") };
    for (i, piece) in s.split(sep.unwrap_or(",")).enumerate() {
        out.collect(Row::of([Value::from(piece), Value::Int(i as i32)]));
    }
    Ok(())
}

/// Overloads with different row types, varargs, and a lifecycle.
#[derive(Clone, Default)]
struct Series {
    opened: bool,
}

#[table_function]
impl Series {
    fn open(&mut self, _context: &FunctionContext) -> Result<()> {
        self.opened = true;
        Ok(())
    }

    fn close(&mut self) {}

    fn eval(&self, n: i32, out: &mut Collector<i32>) {
        (0..n).for_each(|i| out.collect(i));
    }

    #[varargs]
    fn eval_all(&self, values: &[i64], out: &mut Collector<Option<i64>>) {
        values.iter().for_each(|v| out.collect(Some(*v)));
    }
}

fn main() {
    let spec = TableFunction::spec(&words);
    assert_eq!(
        spec.signature_lines("words"),
        ["words(s STRING NOT NULL) -> ROW<word STRING NOT NULL, length SMALLINT NOT NULL> NOT NULL"]
    );
    let spec = TableFunction::spec(&split_at);
    assert!(!spec.deterministic);
    assert_eq!(
        spec.signature_lines("pieces"),
        ["pieces(text STRING, sep STRING OPTIONAL) -> ROW<piece STRING, position INT> NOT NULL"]
    );
    let spec = TableFunction::spec(&Series::default());
    assert_eq!(
        spec.signature_lines("series"),
        ["series(n INT NOT NULL) -> INT NOT NULL", "series(values BIGINT NOT NULL...) -> BIGINT"]
    );
    assert!(TableFunction::instantiate(&Series::default()).is_some());
}
