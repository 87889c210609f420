//! Code generation for `#[table_aggregate_function]`: the `TableAggregateLogic` impl.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::expand::{bind_this, receiver, signature};
use super::{AggregateDef, Emission, Emit};
use crate::dispatch;
use crate::types;

pub fn expand(def: &AggregateDef, emission: &Emission) -> TokenStream {
    let self_ty = &def.self_ty;
    let acc = &def.acc;
    let row = &emission.row;
    let target = quote!(<#self_ty>);
    let sql_name = &def.sql_name;

    let mut checks: TokenStream = def.accumulates.iter().map(dispatch::param_checks).collect();
    checks.extend(dispatch::return_checks(row, emission.hint.as_ref()));

    let accumulators: Vec<_> = (0..def.accumulates.len())
        .map(|i| format_ident!("accumulate_{i}"))
        .collect();
    let accumulate_bodies = def
        .accumulates
        .iter()
        .map(|eval| dispatch::fold_body(eval, &target));
    let indices: Vec<_> = (0..def.accumulates.len()).collect();

    let emit = |method: Option<&Emit>, what: &str| match method {
        Some(emit) => {
            let ident = &emit.ident;
            let receiver = receiver(emit.receiver);
            let unit = match &emit.output {
                Some(ret) => quote_spanned!(ret.span()=> __udf::UnitResult::into_result),
                None => quote!(__udf::UnitResult::into_result),
            };
            let this = bind_this(emit.receiver);
            quote! {
                #this
                #unit(#target::#ident(#receiver acc, out))
            }
        }
        None => quote! {
            let _ = (acc, out);
            ::core::result::Result::Err(__udf::Error::msg(::std::format!("`{}` has no `{}`", #sql_name, #what)))
        },
    };
    let emit_value = emit(emission.value.as_ref(), "emit_value");
    let emit_update = emit(
        emission.update_with_retract.as_ref(),
        "emit_update_with_retract",
    );
    let (has_value, has_update) = (
        emission.value.is_some(),
        emission.update_with_retract.is_some(),
    );

    let merge_call = match &def.merge {
        Some(merge) => {
            let method = &merge.ident;
            let receiver = receiver(merge.receiver);
            let unit = match &merge.output {
                Some(ret) => quote_spanned!(ret.span()=> __udf::UnitResult::into_result),
                None => quote!(__udf::UnitResult::into_result),
            };
            let this = bind_this(merge.receiver);
            quote! {
                #this
                #unit(#target::#method(#receiver acc, other))
            }
        }
        None => quote! {
            let _ = (acc, other);
            ::core::result::Result::Err(__udf::Error::msg(::std::format!("`{}` cannot merge", #sql_name)))
        },
    };
    let (name, deterministic, description) = (&def.sql_name, def.deterministic, &def.description);
    let merge = def.merge.is_some();
    let hint = match &emission.hint {
        Some(hint) => {
            let tokens = hint.tokens();
            quote!(::core::option::Option::Some(#tokens))
        }
        None => quote!(::core::option::Option::None),
    };
    let row_type = types::with_lifetimes(row, "'_");
    let signatures = def
        .accumulates
        .iter()
        .map(|eval| signature(eval, &row_type, &hint));

    // Bounded on the row type, so an unsupported one gets the one error of its check (and,
    // for the registration, on what `TableAggregateFunction` asks of the row's builder).
    let bound = dispatch::row_bound(row, quote!(__udf));
    let builder_bound = {
        let ty = types::with_lifetimes(row, "'__udf_a");
        quote_spanned!(row.span()=> for<'__udf_a> <#ty as __udf::ResultValue>::Builder: ::core::marker::Send + ::core::marker::Sync)
    };

    quote! {
        const _: () = {
            use ::udf_core::__private as __udf;

            #checks

            #(
                #[allow(unused_variables, unused_mut)]
                fn #accumulators(this: &#self_ty, accs: &mut [#acc], batch: &mut __udf::AggregateBatch<'_>) -> __udf::Result<(), __udf::Error> {
                    #accumulate_bodies
                }
            )*

            /// The function as the runtime calls it: a type of its own, so the accumulator
            /// and row types may be private to the user's module.
            struct UdfLogic(#self_ty);

            impl __udf::TableAggregateLogic for UdfLogic where #bound {
                type Acc = #acc;
                type Row = #row;

                const EMITS: __udf::Emits = __udf::Emits { value: #has_value, update_with_retract: #has_update };

                fn spec(&self) -> __udf::FunctionSpec {
                    __udf::FunctionSpec::new(#name, __udf::FunctionKind::TableAggregate)
                        .deterministic(#deterministic)
                        .description(#description)
                        .capabilities(__udf::Capabilities { retract: false, merge: #merge })
                        #(.signature(#signatures))*
                }

                fn accumulate(&self, signature: usize, accs: &mut [#acc], batch: &mut __udf::AggregateBatch<'_>) -> __udf::Result<(), __udf::Error> {
                    match signature {
                        #(#indices => #accumulators(&self.0, accs, batch),)*
                        other => ::core::result::Result::Err(__udf::Error::msg(::std::format!(
                            "`{}` has no signature number {}", #sql_name, other
                        ))),
                    }
                }

                fn merge(&self, acc: &mut #acc, other: &#acc) -> __udf::Result<(), __udf::Error> {
                    #merge_call
                }

                #[allow(unused_variables)]
                fn emit_value(&self, acc: &#acc, out: &mut __udf::Collector<'_, #row>) -> __udf::Result<(), __udf::Error> {
                    #emit_value
                }

                #[allow(unused_variables)]
                fn emit_update_with_retract(&self, acc: &#acc, out: &mut __udf::RetractableCollector<'_, #row>) -> __udf::Result<(), __udf::Error> {
                    #emit_update
                }
            }

            impl __udf::UserFunction for #self_ty where #bound, #builder_bound {
                fn into_function(self) -> __udf::Function {
                    __udf::Function::TableAggregate(::std::sync::Arc::new(UdfLogic(self)))
                }

                fn settings(&self) -> ::core::option::Option<::std::vec::Vec<u8>> {
                    #[allow(unused_imports)]
                    use __udf::{NoSettings as _, SerializedSettings as _};
                    (&__udf::Probe(self)).settings()
                }
            }
        };
    }
}
