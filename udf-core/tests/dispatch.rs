//! Generated dispatch, exercised directly on Arrow arrays (no SQL engine).

use std::sync::Arc;

use udf_core::arrow::array::{Array, ArrayRef, Float64Array, Int32Array, Int64Array, StringArray};
use udf_core::prelude::*;
use udf_core::{ArgColumn, ScalarCall};

#[scalar_function]
fn mix(a: i64, b: i64) -> i64 {
    a.wrapping_mul(31).wrapping_add(b)
}

#[scalar_function]
fn greet(name: Option<&str>, greeting: Option<&str>) -> String {
    format!(
        "{}, {}",
        greeting.unwrap_or("<null-greeting>"),
        name.unwrap_or("null")
    )
}

#[scalar_function]
fn shout(s: &str, out: &mut String) {
    out.push_str(&s.to_uppercase());
    out.push('!');
}

#[derive(Clone)]
struct SumFunction;

#[scalar_function]
impl SumFunction {
    fn eval(&self, a: i32, b: i32) -> i32 {
        a + b
    }

    fn eval_strings(&self, a: &str, b: &str) -> Result<i32> {
        Ok(a.parse::<i32>()? + b.parse::<i32>()?)
    }

    #[varargs]
    fn eval_doubles(&self, d: &[f64]) -> i32 {
        d.iter().sum::<f64>() as i32
    }
}

fn run(
    f: &dyn ScalarFunction,
    signature: usize,
    args: &[ArgColumn],
    rows: usize,
    traced: bool,
) -> Result<ArrayRef> {
    let spec = f.spec();
    let udf_core::OutputType::Fixed(output) = &spec.signatures[signature].output else {
        panic!()
    };
    let mut call = ScalarCall {
        signature,
        args,
        rows,
        output,
        row: 0,
        traced,
    };
    f.invoke(&mut call)
}

fn col(a: impl Array + 'static) -> ArgColumn {
    ArgColumn::array(Arc::new(a))
}

#[test]
fn kernel_and_loop_agree_and_skip_nulls() {
    let args = [
        col(Int64Array::from(vec![Some(1), None, Some(-5)])),
        col(Int64Array::from(vec![Some(2), Some(3), Some(7)])),
    ];
    for traced in [false, true] {
        let out = run(&mix, 0, &args, 3, traced).unwrap();
        let out = out.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(
            out.iter().collect::<Vec<_>>(),
            vec![Some(33), None, Some(-148)],
            "traced={traced}"
        );
    }
    let scalar = ArgColumn::scalar(Arc::new(Int64Array::from(vec![10])));
    let out = run(&mix, 0, &[args[0].clone(), scalar], 3, false).unwrap();
    let out = out.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(
        out.iter().collect::<Vec<_>>(),
        vec![Some(41), None, Some(-145)]
    );
}

#[test]
fn option_parameters_see_null() {
    let args = [
        col(StringArray::from(vec![Some("ann"), None])),
        ArgColumn::scalar(Arc::new(StringArray::from(vec![None::<&str>]))),
    ];
    let out = run(&greet, 0, &args, 2, false).unwrap();
    let out = out.as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(
        out.iter().collect::<Vec<_>>(),
        vec![Some("<null-greeting>, ann"), Some("<null-greeting>, null")]
    );
}

#[test]
fn output_buffer_writes_into_the_column() {
    let args = [col(StringArray::from(vec![Some("a"), None, Some("bc")]))];
    let out = run(&shout, 0, &args, 3, false).unwrap();
    let out = out.as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(
        out.iter().collect::<Vec<_>>(),
        vec![Some("A!"), None, Some("BC!")]
    );
}

#[test]
fn overloads_and_varargs() {
    let spec = SumFunction.spec();
    assert_eq!(
        spec.signature_lines("sum"),
        [
            "sum(a INT NOT NULL, b INT NOT NULL) -> INT NOT NULL",
            "sum(a STRING NOT NULL, b STRING NOT NULL) -> INT NOT NULL",
            "sum(d DOUBLE NOT NULL...) -> INT NOT NULL",
        ]
    );
    let ints = [
        col(Int32Array::from(vec![1, 2])),
        col(Int32Array::from(vec![10, 20])),
    ];
    let out = run(&SumFunction, 0, &ints, 2, false).unwrap();
    assert_eq!(
        out.as_any().downcast_ref::<Int32Array>().unwrap().values(),
        &[11, 22]
    );

    let doubles = [
        col(Float64Array::from(vec![1.5, 2.0])),
        col(Float64Array::from(vec![1.5, 0.5])),
        col(Float64Array::from(vec![1.0, 0.1])),
    ];
    let out = run(&SumFunction, 2, &doubles, 2, false).unwrap();
    assert_eq!(
        out.as_any().downcast_ref::<Int32Array>().unwrap().values(),
        &[4, 2]
    );

    let strings = [
        col(StringArray::from(vec!["1", "x"])),
        col(StringArray::from(vec!["2", "3"])),
    ];
    let mut call = ScalarCall {
        signature: 1,
        args: &strings,
        rows: 2,
        output: &DataType::int().not_null(),
        row: 0,
        traced: false,
    };
    let error = SumFunction.invoke(&mut call).unwrap_err();
    assert_eq!(call.row, 1, "the failing row is recorded");
    assert!(error.to_string().contains("invalid digit"), "{error}");
}

#[scalar_function(deterministic = false)]
fn answer() -> i32 {
    42
}

#[test]
fn nullary_functions_fill_every_row() {
    let out = run(&answer, 0, &[], 3, false).unwrap();
    assert_eq!(
        out.as_any().downcast_ref::<Int32Array>().unwrap().values(),
        &[42, 42, 42]
    );
}
