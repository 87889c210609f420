use udf_core::prelude::*;

struct Echo;

#[ptf]
impl Echo {
    fn eval(&self, #[argument(set_semantic_table)] input: Row, out: &mut Collector<String>) {
        out.collect(input.to_string());
    }

    fn on_timer(&self, ctx: &mut OnTimerContext, limit: i32, out: &mut Collector<String>) {
        let _ = (ctx, limit);
        out.collect(String::new());
    }
}

fn main() {}
