//! #[aggregate_function] forms: `type Acc`, accumulator from `accumulate`, `&self`,
//! overloads with retracts, Result returns, a hinted result, `reset`.

use udf_core::prelude::*;

#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Range {
    low: Option<i64>,
    high: Option<i64>,
}

#[derive(Clone)]
struct Spread {
    scale: i64,
}

#[aggregate_function(name = "spread", merge)]
impl Spread {
    type Acc = Range;

    fn accumulate(&self, acc: &mut Self::Acc, value: i64) {
        let value = value * self.scale;
        acc.low = Some(acc.low.map_or(value, |l| l.min(value)));
        acc.high = Some(acc.high.map_or(value, |h| h.max(value)));
    }

    fn accumulate_text(&self, acc: &mut Self::Acc, value: &str) -> Result<()> {
        self.accumulate(acc, value.parse()?);
        Ok(())
    }

    fn merge(acc: &mut Range, other: &Range) {
        acc.low = acc.low.into_iter().chain(other.low).min();
        acc.high = acc.high.into_iter().chain(other.high).max();
    }

    #[data_type("DECIMAL(20, 0)")]
    fn get_value(acc: &Range) -> Result<Option<Decimal>> {
        Ok(acc.low.zip(acc.high).map(|(l, h)| Decimal::new((h - l) as i128, 0)))
    }
}

#[derive(Clone)]
struct Count;

#[aggregate_function(retract)]
impl Count {
    fn accumulate(acc: &mut i64, _value: Value) {
        *acc += 1;
    }

    fn retract(acc: &mut i64, _value: Value) {
        *acc -= 1;
    }

    fn get_value(acc: &i64) -> i64 {
        *acc
    }
}

/// `&self` on `merge` and `reset`; `reset` returning `Result`.
#[derive(Clone)]
struct Capped {
    cap: i64,
}

#[aggregate_function(merge)]
impl Capped {
    fn accumulate(&self, acc: &mut i64, value: i64) {
        *acc = (*acc + value).min(self.cap);
    }

    fn merge(&self, acc: &mut i64, other: &i64) {
        *acc = (*acc + *other).min(self.cap);
    }

    fn reset(&self, acc: &mut i64) -> Result<()> {
        *acc = 0;
        Ok(())
    }

    fn get_value(acc: &i64) -> i64 {
        *acc
    }
}

fn main() {
    assert!(spec_of(Capped { cap: 3 }).capabilities.merge);
    let spec = spec_of(Spread { scale: 1 });
    assert!(spec.capabilities.merge && !spec.capabilities.retract);
    assert_eq!(
        spec.signature_lines("spread"),
        ["spread(value BIGINT NOT NULL) -> DECIMAL(20, 0)", "spread(value STRING NOT NULL) -> DECIMAL(20, 0)"]
    );
    let spec = spec_of(Count);
    assert!(spec.capabilities.retract && !spec.capabilities.merge);
    assert_eq!(spec.signature_lines("count"), ["count(_value ANY NOT NULL) -> BIGINT NOT NULL"]);
}

/// The spec the function registers with.
fn spec_of(function: impl udf_core::UserFunction) -> udf_core::FunctionSpec {
    function.into_function().spec()
}
