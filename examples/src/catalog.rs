//! Every example function registered on one session, under the names the examples' tests and
//! Flink's documentation call them — what the `udf-sql` shell carries. Where two examples
//! share a name (the scalar and the table `OverloadedFunction`), the table one is registered as
//! `OverloadedTableFunction`; parameterized instances get the settings their docs show.

use std::time::Duration;

use udf_runtime::Session;
use udf_runtime::datafusion::error::Result;

use crate::aggregate::{
    efficient_aggregate::EfficientAggregateFunction, string_concat::StringConcatFunction,
    weighted_average::WeightedAverageFunction, weighted_avg::WeightedAvg,
};
use crate::asynchronous::{
    async_background::AsyncBackgroundFunction, beverage_name_lookup::BeverageNameLookupFunction,
};
use crate::ptf::{
    concat_non_keys::concat_non_keys_function,
    conformance::{Timeout, counter, repeat_rows, seen_order},
    counting::{
        counting_function, efficient_second_event_function, row_counting_function,
        second_event_function,
    },
    history::history_function,
    my_ptf::{my_polymorphic_ptf, my_structured_ptf, my_typed_ptf},
    payment_match::PaymentMatch,
    scalar_arguments::{addition_function, decimal_duplicator_function, duplicator_function},
    threshold::threshold_function,
    timer::TimerFunction,
};
use crate::scalar::{
    complex_return::complex_return, configurable::ConfigurableFunction,
    efficient_string::EfficientStringFunction, hash::hash_function, hash_code::HashCodeFunction,
    literal::LiteralFunction, my_concat::MyConcatFunction, named_parameters::NamedParameterClass,
    overloaded::OverloadedFunction, power::PowerFunction, resource::ResourceFunction,
    string_hash::StringHashFunction, substring::SubstringFunction, substring::substring,
    sum::SumFunction,
};
use crate::table::{
    generate_series::GenerateSeriesFunction, overloaded::HintedOverloadedFunction,
    overloaded::OverloadedFunction as OverloadedTableFunction, split::split_function,
    split_string::SplitStringFunction,
};
use crate::table_aggregate::{top_n::TopNFunction, top2::Top2, top2_with_retract::Top2WithRetract};

/// Registers every example function on `session`, and the job parameter `hashCode` reads.
pub fn register_all(session: &Session) -> Result<()> {
    // Scalar.
    session.register(substring)?;
    session.register_as(
        "SubstringInclusive",
        SubstringFunction {
            end_inclusive: true,
        },
    )?;
    session.register(NamedParameterClass)?;
    session.register(HashCodeFunction::default())?;
    session.set_job_parameter("hashcode_factor", "31");
    session.register(OverloadedFunction)?;
    session.register(StringHashFunction)?;
    session.register(PowerFunction)?;
    session.register(SumFunction)?;
    session.register(MyConcatFunction)?;
    session.register_as(
        "ConfigurableFunction",
        ConfigurableFunction {
            prefix: "> ".into(),
        },
    )?;
    session.register(complex_return)?;
    session.register(EfficientStringFunction)?;
    session.register(LiteralFunction)?;
    session.register(ResourceFunction::default())?;
    session.register(hash_function)?;
    // Asynchronous.
    session.register(BeverageNameLookupFunction {
        latency: Duration::from_millis(1),
    })?;
    session.register(AsyncBackgroundFunction)?;
    // Table.
    session.register_as("OverloadedTableFunction", OverloadedTableFunction)?;
    session.register(HintedOverloadedFunction)?;
    session.register(split_function)?;
    session.register(SplitStringFunction)?;
    session.register(GenerateSeriesFunction)?;
    // Aggregate and table aggregate.
    session.register(EfficientAggregateFunction)?;
    session.register(WeightedAvg)?;
    session.register(WeightedAverageFunction)?;
    session.register(StringConcatFunction)?;
    session.register(TopNFunction { n: 3 })?;
    session.register(Top2)?;
    session.register(Top2WithRetract)?;
    // Process table functions.
    session.register(counter)?;
    session.register(repeat_rows)?;
    session.register(Timeout)?;
    session.register(seen_order)?;
    session.register(history_function)?;
    session.register(addition_function)?;
    session.register(duplicator_function)?;
    session.register(decimal_duplicator_function)?;
    session.register(TimerFunction)?;
    session.register(my_typed_ptf)?;
    session.register(my_structured_ptf)?;
    session.register(my_polymorphic_ptf)?;
    session.register(threshold_function)?;
    session.register(counting_function)?;
    session.register(second_event_function)?;
    session.register(row_counting_function)?;
    session.register(efficient_second_event_function)?;
    session.register(PaymentMatch)?;
    session.register(concat_non_keys_function)?;
    Ok(())
}
