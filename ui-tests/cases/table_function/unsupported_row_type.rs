use udf_core::prelude::*;

struct Word {
    text: String,
}

#[table_function]
fn words(s: &str, out: &mut Collector<Word>) {
    out.collect(Word { text: s.to_owned() });
}

fn main() {}
