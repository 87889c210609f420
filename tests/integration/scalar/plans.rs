//! Snapshots: EXPLAIN of queries with UDFs, and the catalog of the example functions.

use udf_examples::aggregate::{
    efficient_aggregate::EfficientAggregateFunction, string_concat::StringConcatFunction,
    weighted_average::WeightedAverageFunction, weighted_avg::WeightedAvg,
};
use udf_examples::asynchronous::{
    async_background::AsyncBackgroundFunction, beverage_name_lookup::BeverageNameLookupFunction,
};
use udf_examples::scalar::{
    complex_return::complex_return, configurable::ConfigurableFunction,
    efficient_string::EfficientStringFunction, hash::hash_function, hash_code::HashCodeFunction,
    literal::LiteralFunction, my_concat::MyConcatFunction, named_parameters::NamedParameterClass,
    overloaded::OverloadedFunction, power::PowerFunction, resource::ResourceFunction,
    string_hash::StringHashFunction, substring::SubstringFunction, substring::substring,
    sum::SumFunction,
};
use udf_examples::table::{
    generate_series::GenerateSeriesFunction, overloaded::HintedOverloadedFunction,
    overloaded::OverloadedFunction as OverloadedTableFunction, split::split_function,
    split_string::SplitStringFunction,
};
use udf_examples::table_aggregate::{
    top_n::TopNFunction, top2::Top2, top2_with_retract::Top2WithRetract,
};
use udf_runtime::Session;

use crate::support::{column, explain, session_with, strs};

#[tokio::test]
async fn explain_shows_the_function_call() {
    let session = session_with(
        "orders",
        &[column("product", "STRING", strs(&[Some("espresso")]))],
    );
    session.register(substring).unwrap();
    let plan = explain(
        &session,
        "SELECT SubstringFunction(product, 0, 3) AS short FROM orders WHERE SubstringFunction(product, 0, 1) = 'e'",
    )
    .await;
    insta::assert_snapshot!(plan);
}

#[test]
fn catalog_lists_every_example_with_its_signatures() {
    let session = Session::new();
    session.register(substring).unwrap();
    session
        .register_as(
            "SubstringInclusive",
            SubstringFunction {
                end_inclusive: true,
            },
        )
        .unwrap();
    session.register(MyConcatFunction).unwrap();
    session.register(SumFunction).unwrap();
    session.register(OverloadedFunction).unwrap();
    session.register(hash_function).unwrap();
    session.register(LiteralFunction).unwrap();
    session.register(NamedParameterClass).unwrap();
    session.register(HashCodeFunction::default()).unwrap();
    session.register(StringHashFunction).unwrap();
    session.register(PowerFunction).unwrap();
    session.register(complex_return).unwrap();
    session
        .register_as("configurable", ConfigurableFunction { prefix: "p".into() })
        .unwrap();
    session.register(ResourceFunction::default()).unwrap();
    session.register(EfficientStringFunction).unwrap();
    session.register(WeightedAvg).unwrap();
    session.register(WeightedAverageFunction).unwrap();
    session.register(StringConcatFunction).unwrap();
    session.register(EfficientAggregateFunction).unwrap();
    session.register(Top2).unwrap();
    session.register(split_function).unwrap();
    session.register(SplitStringFunction).unwrap();
    session.register(GenerateSeriesFunction).unwrap();
    session
        .register_as("OverloadedTableFunction", OverloadedTableFunction)
        .unwrap();
    session.register(HintedOverloadedFunction).unwrap();
    session
        .register(BeverageNameLookupFunction::default())
        .unwrap();
    session.register(AsyncBackgroundFunction).unwrap();
    session.register(Top2WithRetract).unwrap();
    session.register(TopNFunction { n: 3 }).unwrap();
    let listing: Vec<String> = session
        .functions()
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(listing.join("\n"));
}

#[tokio::test]
async fn explain_shows_a_two_phase_aggregation() {
    let session = crate::support::partitioned_session("sales", &crate::aggregate::sales(), 2);
    session.register(WeightedAverageFunction).unwrap();
    let plan = explain(
        &session,
        "SELECT category, weighted_avg(price, quantity) AS avg FROM sales GROUP BY category",
    )
    .await;
    insta::assert_snapshot!(plan);
}
