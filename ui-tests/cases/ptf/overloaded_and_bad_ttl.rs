use udf_core::prelude::*;

struct Twice;

#[ptf]
impl Twice {
    fn eval(
        &self,
        #[state(ttl = "one day")] count: &mut i64,
        #[argument(set_semantic_table)] input: Row,
        out: &mut Collector<i64>,
    ) {
        let _ = input;
        out.collect(*count);
    }

    fn eval_other(&self, #[argument(set_semantic_table)] input: Row, out: &mut Collector<i64>) {
        let _ = (input, out);
    }
}

fn main() {}
