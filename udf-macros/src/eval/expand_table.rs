//! Code generation for `#[table_function]`: the `TableFunction` impl with its spec and
//! per-signature batch evaluation.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::EvalDef;
use super::expand_scalar::{lifecycle, option, signature_with};
use crate::dispatch;
use crate::signature::Receiver;
use crate::types;

pub fn expand(def: &EvalDef) -> TokenStream {
    let self_ty = &def.self_ty;
    let target = match def.evals.first().map(|e| e.receiver) {
        Some(Receiver::None) => quote!(#self_ty),
        _ => quote!(<#self_ty>),
    };
    let sql_name = &def.sql_name;

    let mut checks = TokenStream::new();
    for eval in &def.evals {
        checks.extend(dispatch::argument_checks(eval));
        checks.extend(dispatch::param_checks(eval));
        if let Some(row) = &eval.collector {
            checks.extend(dispatch::return_checks(row, eval.output_hint.as_ref()));
        }
    }
    let invokers: Vec<_> = (0..def.evals.len())
        .map(|i| format_ident!("invoke_{i}"))
        .collect();
    let bodies = def
        .evals
        .iter()
        .map(|eval| dispatch::rows_body(eval, &target));
    let indices = 0..def.evals.len();
    let bounds = dispatch::bounds(&def.evals, false);
    let eval_bounds = def.evals.iter().map(|eval| dispatch::bounds([eval], false));
    let lifecycle = lifecycle(def, quote!(__udf::TableFunction));

    let (name, deterministic, description) = (&def.sql_name, def.deterministic, &def.description);
    let signatures = def.evals.iter().map(|eval| {
        let hint = option(eval.output_hint.as_ref().map(|h| h.tokens()));
        let row = eval
            .collector
            .as_ref()
            .map(|t| types::with_lifetimes(t, "'_"));
        signature_with(eval, quote!(__udf::output_spec::<#row>(#hint)))
    });

    quote! {
        const _: () = {
            use ::udf_core::__private as __udf;

            #checks

            #(
                #[allow(unused_variables, unused_mut)]
                fn #invokers(
                    this: &#self_ty,
                    call: &mut __udf::TableCall<'_>,
                ) -> __udf::Result<(), __udf::Error>
                #eval_bounds
                {
                    #bodies
                }
            )*

            impl __udf::TableFunction for #self_ty #bounds {
                fn spec(&self) -> __udf::FunctionSpec {
                    __udf::FunctionSpec::new(#name, __udf::FunctionKind::Table)
                        .deterministic(#deterministic)
                        .description(#description)
                        #(.signature(#signatures))*
                }

                #lifecycle

                fn invoke(&self, call: &mut __udf::TableCall<'_>) -> __udf::Result<(), __udf::Error> {
                    match call.signature {
                        #(#indices => #invokers(self, call),)*
                        other => ::core::result::Result::Err(__udf::Error::msg(::std::format!(
                            "`{}` has no signature number {}", #sql_name, other
                        ))),
                    }
                }
            }

            impl __udf::UserFunction for #self_ty #bounds {
                fn into_function(self) -> __udf::Function {
                    __udf::Function::Table(::std::sync::Arc::new(self))
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
