use udf_core::prelude::*;

struct Timeout;

#[ptf]
impl Timeout {
    fn eval(
        &self,
        #[state] count: &mut i64,
        #[state] seen: &mut ListView<String>,
        #[argument(set_semantic_table)] input: Row,
        out: &mut Collector<i64>,
    ) {
        let _ = (input, seen, out);
        *count += 1;
    }

    fn on_timer(&self, #[state] seen: &mut ListView<String>, out: &mut Collector<i64>) {
        let _ = seen;
        out.collect(0);
    }
}

fn main() {}
