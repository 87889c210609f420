//! What each macro expands to, for one representative function of every kind: a reviewer sees
//! generated code change in the snapshot diff (`cargo insta review`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::{aggregate, eval, ptf, sql_row};

/// The expansion as rustfmt would print it.
fn pretty(tokens: TokenStream) -> String {
    let file = syn::parse2::<syn::File>(tokens).expect("the expansion parses as items");
    prettyplease::unparse(&file)
}

#[test]
fn scalar_function() {
    let input = quote! {
        /// `s` from `begin` to `end`.
        fn substring(s: &str, begin: i32, #[argument(optional)] end: Option<i32>) -> Option<String> {
            let end = end.unwrap_or(s.len() as i32);
            s.get(begin as usize..end as usize).map(str::to_owned)
        }
    };
    insta::assert_snapshot!(pretty(eval::expand(eval::Flavor::Scalar, quote!(), input)));
}

#[test]
fn scalar_function_with_kernel_dispatch() {
    let input = quote! {
        fn mix(a: i64, b: i64) -> i64 {
            a.wrapping_mul(31).wrapping_add(b)
        }
    };
    insta::assert_snapshot!(pretty(eval::expand(eval::Flavor::Scalar, quote!(), input)));
}

#[test]
fn async_scalar_function() {
    let input = quote! {
        async fn beverage_name(id: i32) -> Result<String> {
            Ok(format!("beverage {id}"))
        }
    };
    insta::assert_snapshot!(pretty(eval::expand(
        eval::Flavor::AsyncScalar,
        quote!(name = "GetBeverageName"),
        input
    )));
}

#[test]
fn table_function() {
    let input = quote! {
        fn split(s: &str, out: &mut Collector<Word>) {
            for word in s.split(' ') {
                out.collect(Word { word: word.to_owned(), length: word.len() as i32 });
            }
        }
    };
    insta::assert_snapshot!(pretty(eval::expand(eval::Flavor::Table, quote!(), input)));
}

#[test]
fn async_table_function() {
    let input = quote! {
        async fn tours(user: &str) -> Result<Vec<String>> {
            Ok(vec![user.to_owned()])
        }
    };
    insta::assert_snapshot!(pretty(eval::expand(
        eval::Flavor::AsyncTable,
        quote!(),
        input
    )));
}

#[test]
fn aggregate_function() {
    let input = quote! {
        impl WeightedAverage {
            type Acc = WeightedAverageAccumulator;
            fn accumulate(acc: &mut Self::Acc, value: f64, weight: f64) {
                acc.sum += value * weight;
                acc.weight_sum += weight;
            }
            fn retract(acc: &mut Self::Acc, value: f64, weight: f64) {
                acc.sum -= value * weight;
                acc.weight_sum -= weight;
            }
            fn merge(acc: &mut Self::Acc, other: &Self::Acc) {
                acc.sum += other.sum;
                acc.weight_sum += other.weight_sum;
            }
            fn get_value(acc: &Self::Acc) -> Option<f64> {
                (acc.weight_sum != 0.0).then(|| acc.sum / acc.weight_sum)
            }
        }
    };
    insta::assert_snapshot!(pretty(aggregate::expand(
        aggregate::Kind::Aggregate,
        quote!(name = "weighted_avg", retract, merge),
        input
    )));
}

#[test]
fn table_aggregate_function() {
    let input = quote! {
        impl Top2 {
            fn accumulate(acc: &mut Top2Accumulator, value: i32) {
                acc.insert(value);
            }
            fn emit_value(acc: &Top2Accumulator, out: &mut Collector<Ranked>) {
                for (rank, value) in acc.values().enumerate() {
                    out.collect(Ranked { value, rank: rank as i32 + 1 });
                }
            }
        }
    };
    insta::assert_snapshot!(pretty(aggregate::expand(
        aggregate::Kind::TableAggregate,
        quote!(),
        input
    )));
}

#[test]
fn process_table_function() {
    let input = quote! {
        impl Timeout {
            #[data_type("ROW<n BIGINT>")]
            fn eval(
                &self,
                ctx: &mut Context,
                #[state(ttl = "1 day")] count: &mut Count,
                #[state] seen: &mut MapView<String, i64>,
                #[argument(set_semantic_table, require_on_time)] input: Row,
                #[argument(optional)] limit: Option<i64>,
                out: &mut Collector<Row>,
            ) {
                count.n += 1;
                let mut time = ctx.time_context();
                if let Some(now) = time.time_millis() {
                    time.register_on_time_millis("timeout", now + limit.unwrap_or(60_000));
                }
            }

            fn on_timer(
                &self,
                ctx: &mut OnTimerContext,
                #[state(ttl = "1 day")] count: &mut Count,
                #[state] seen: &mut MapView<String, i64>,
                out: &mut Collector<Row>,
            ) {
                out.collect(Row::of([count.n.into()]));
            }
        }
    };
    insta::assert_snapshot!(pretty(ptf::expand(quote!(name = "Timeout"), input)));
}

#[test]
fn process_table_function_without_state() {
    let input = quote! {
        #[data_type("ROW<id BIGINT>")]
        fn pass_on(#[argument(row_semantic_table)] input: Keyed, out: &mut Collector<Row>) {
            out.collect(Row::of([input.id.into()]));
        }
    };
    insta::assert_snapshot!(pretty(ptf::expand(quote!(), input)));
}

#[test]
fn process_table_function_over_two_tables() {
    let input = quote! {
        fn matched(
            #[state] seen: &mut Seen,
            #[argument(set_semantic_table)] orders: Option<Order>,
            #[argument(set_semantic_table)] payments: Option<Payment>,
            out: &mut Collector<String>,
        ) {
            if let Some(order) = orders {
                seen.order = Some(order.id);
            }
            if payments.is_some() {
                out.collect(format!("paid {:?}", seen.order));
            }
        }
    };
    insta::assert_snapshot!(pretty(ptf::expand(quote!(), input)));
}

#[test]
fn sql_row() {
    let input = quote! {
        struct Word {
            word: String,
            #[data_type("INT")]
            length: i32,
        }
    };
    insta::assert_snapshot!(pretty(sql_row::expand(input)));
}
