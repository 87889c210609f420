//! #[table_aggregate_function] forms: both emit methods, a parameterized instance, a
//! hinted row type.

use udf_core::prelude::*;

#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Seen {
    values: Vec<i64>,
    previous: Vec<i64>,
}

#[derive(Clone)]
struct Distinct {
    limit: usize,
}

#[table_aggregate_function(name = "distinct_values", merge)]
impl Distinct {
    fn accumulate(&self, acc: &mut Seen, value: i64) {
        acc.previous = acc.values.clone();
        if !acc.values.contains(&value) && acc.values.len() < self.limit {
            acc.values.push(value);
        }
    }

    fn merge(acc: &mut Seen, other: &Seen) {
        for v in &other.values {
            if !acc.values.contains(v) {
                acc.values.push(*v);
            }
        }
    }

    fn emit_value(acc: &Seen, out: &mut Collector<i64>) {
        for v in &acc.values {
            out.collect(*v);
        }
    }

    fn emit_update_with_retract(acc: &Seen, out: &mut RetractableCollector<i64>) -> Result<()> {
        for v in acc.values.iter().filter(|v| !acc.previous.contains(v)) {
            out.collect(*v);
        }
        Ok(())
    }
}

#[derive(Clone)]
struct Pairs;

#[table_aggregate_function]
impl Pairs {
    fn accumulate(acc: &mut Vec<i64>, value: i64) {
        acc.push(value);
    }

    #[data_type("ROW<a BIGINT, b BIGINT>")]
    fn emit_value(acc: &Vec<i64>, out: &mut Collector<Row>) {
        for pair in acc.chunks(2) {
            out.collect(Row::of(pair.iter().map(|v| Value::BigInt(*v))));
        }
    }
}

fn main() {
    let spec = spec_of(Distinct { limit: 3 });
    assert!(spec.capabilities.merge);
    assert_eq!(spec.signature_lines("d"), ["d(value BIGINT NOT NULL) -> BIGINT NOT NULL"]);
    let udf_core::Function::TableAggregate(distinct) =
        udf_core::UserFunction::into_function(Distinct { limit: 3 })
    else {
        unreachable!("a table aggregate")
    };
    let emits = distinct.emits();
    assert!(emits.value && emits.update_with_retract);
    assert_eq!(spec_of(Pairs).signature_lines("p"), ["p(value BIGINT NOT NULL) -> ROW<a BIGINT, b BIGINT> NOT NULL"]);
}

/// The spec the function registers with.
fn spec_of(function: impl udf_core::UserFunction) -> udf_core::FunctionSpec {
    function.into_function().spec()
}
