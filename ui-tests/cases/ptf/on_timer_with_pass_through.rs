use udf_core::prelude::*;

struct Echo;

#[ptf]
impl Echo {
    fn eval(
        &self,
        #[argument(set_semantic_table, pass_columns_through)] input: Row,
        out: &mut Collector<String>,
    ) {
        out.collect(input.to_string());
    }

    fn on_timer(&self, out: &mut Collector<String>) {
        out.collect(String::new());
    }
}

fn main() {}
