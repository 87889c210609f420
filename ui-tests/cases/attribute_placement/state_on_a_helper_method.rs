use udf_core::prelude::*;

#[derive(Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Count {
    n: i64,
}

#[derive(Clone, Default)]
struct Counter;

#[ptf]
impl Counter {
    fn eval(
        &self,
        #[state] count: &mut Count,
        #[argument(set_semantic_table)] input: Row,
        out: &mut Collector<i64>,
    ) {
        let _ = input;
        count.n += 1;
        out.collect(count.n);
    }

    #[state]
    fn helper(&self) {}
}

fn main() {}
