//! Code generation for `#[aggregate_function]`: the `AggregateLogic` impl.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::{AggregateDef, GetValue};
use crate::dispatch;
use crate::signature::{EvalMethod, Receiver};
use crate::types;

pub fn expand(def: &AggregateDef, get_value: &GetValue) -> TokenStream {
    let self_ty = &def.self_ty;
    let acc = &def.acc;
    let target = quote!(<#self_ty>);
    let sql_name = &def.sql_name;

    let mut checks: TokenStream = def.accumulates.iter().map(dispatch::param_checks).collect();
    checks.extend(dispatch::return_checks(
        &get_value.output,
        get_value.hint.as_ref(),
    ));

    let accumulators: Vec<_> = (0..def.accumulates.len())
        .map(|i| format_ident!("accumulate_{i}"))
        .collect();
    let accumulate_bodies = def
        .accumulates
        .iter()
        .map(|eval| dispatch::fold_body(eval, &target));
    let indices: Vec<_> = (0..def.accumulates.len()).collect();

    let (retract_fns, retract) = match &def.retracts {
        Some(retracts) => {
            let names: Vec<_> = (0..retracts.len())
                .map(|i| format_ident!("retract_{i}"))
                .collect();
            let bodies = retracts
                .iter()
                .map(|eval| dispatch::fold_body(eval, &target));
            (
                quote! {
                    #(
                        #[allow(unused_variables, unused_mut)]
                        fn #names(this: &#self_ty, accs: &mut [#acc], batch: &mut __udf::AggregateBatch<'_>) -> __udf::Result<(), __udf::Error> {
                            #bodies
                        }
                    )*
                },
                quote! {
                    match signature {
                        #(#indices => #names(&self.0, accs, batch),)*
                        other => ::core::result::Result::Err(__udf::Error::msg(::std::format!(
                            "`{}` has no signature number {}", #sql_name, other
                        ))),
                    }
                },
            )
        }
        None => (
            quote!(),
            quote! {
                let _ = (signature, accs, batch);
                ::core::result::Result::Err(__udf::Error::msg(::std::format!("`{}` cannot retract", #sql_name)))
            },
        ),
    };

    let merge = match &def.merge {
        Some(merge) => {
            let method = &merge.ident;
            let receiver = receiver(merge.receiver);
            let unit = match &merge.output {
                Some(ret) => quote_spanned!(ret.span()=> __udf::UnitResult::into_result),
                None => quote!(__udf::UnitResult::into_result),
            };
            let this = bind_this(merge.receiver);
            quote!(#this #unit(#target::#method(#receiver acc, other)))
        }
        None => quote! {
            let _ = (acc, other);
            ::core::result::Result::Err(__udf::Error::msg(::std::format!("`{}` cannot merge", #sql_name)))
        },
    };

    // Without `reset`, the trait's default (`Default::default()`) applies.
    let reset = def.reset.as_ref().map(|reset| {
        let method = &reset.ident;
        let receiver = receiver(reset.receiver);
        let unit = match &reset.output {
            Some(ret) => quote_spanned!(ret.span()=> __udf::UnitResult::into_result),
            None => quote!(__udf::UnitResult::into_result),
        };
        let this = bind_this(reset.receiver);
        quote! {
            fn reset(&self, acc: &mut #acc) -> __udf::Result<(), __udf::Error> {
                #this
                #unit(#target::#method(#receiver acc))
            }
        }
    });

    let get_value_method = &get_value.ident;
    let get_value_receiver = receiver(get_value.receiver);
    let span = get_value.output.span();
    let ret = types::with_lifetimes(&get_value.output, "'_");
    let evaluate = quote_spanned! {span=>
        let mut out = __udf::return_builder::<#ret>(output, accs.len())?;
        for acc in accs {
            let value = #target::#get_value_method(#get_value_receiver acc);
            __udf::ValueBuilder::append(&mut out, __udf::FunctionReturn::into_value(value)?)?;
        }
        __udf::finish_result::<#ret>(&mut out)
    };

    let spec = spec(def, get_value);

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

            #retract_fns

            /// The function as the runtime calls it: a type of its own, so the accumulator
            /// type may be private to the user's module.
            struct UdfLogic(#self_ty);

            impl __udf::AggregateLogic for UdfLogic {
                type Acc = #acc;

                fn spec(&self) -> __udf::FunctionSpec {
                    #spec
                }

                fn accumulate(&self, signature: usize, accs: &mut [#acc], batch: &mut __udf::AggregateBatch<'_>) -> __udf::Result<(), __udf::Error> {
                    match signature {
                        #(#indices => #accumulators(&self.0, accs, batch),)*
                        other => ::core::result::Result::Err(__udf::Error::msg(::std::format!(
                            "`{}` has no signature number {}", #sql_name, other
                        ))),
                    }
                }

                fn retract(&self, signature: usize, accs: &mut [#acc], batch: &mut __udf::AggregateBatch<'_>) -> __udf::Result<(), __udf::Error> {
                    #retract
                }

                fn merge(&self, acc: &mut #acc, other: &#acc) -> __udf::Result<(), __udf::Error> {
                    #merge
                }

                #reset

                #[allow(unused_variables)]
                fn evaluate(&self, accs: &[#acc], output: &__udf::DataType) -> __udf::Result<__udf::ArrayRef, __udf::Error> {
                    let this = &self.0;
                    #evaluate
                }
            }

            impl __udf::UserFunction for #self_ty {
                fn into_function(self) -> __udf::Function {
                    __udf::Function::Aggregate(::std::sync::Arc::new(UdfLogic(self)))
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

pub fn receiver(receiver: Receiver) -> TokenStream {
    match receiver {
        Receiver::None => quote!(),
        Receiver::Ref => quote!(this,),
    }
}

/// `let this = &self.0;` for methods that take `&self` (the generated `UdfLogic` holds the function).
pub fn bind_this(receiver: Receiver) -> TokenStream {
    match receiver {
        Receiver::None => quote!(),
        Receiver::Ref => quote!(let this = &self.0;),
    }
}

fn spec(def: &AggregateDef, get_value: &GetValue) -> TokenStream {
    let (name, deterministic, description) = (&def.sql_name, def.deterministic, &def.description);
    let (retract, merge) = (def.retracts.is_some(), def.merge.is_some());
    let hint = match &get_value.hint {
        Some(hint) => {
            let tokens = hint.tokens();
            quote!(::core::option::Option::Some(#tokens))
        }
        None => quote!(::core::option::Option::None),
    };
    let ret = types::with_lifetimes(&get_value.output, "'_");
    let signatures = def
        .accumulates
        .iter()
        .map(|eval| signature(eval, &ret, &hint));
    quote! {
        __udf::FunctionSpec::new(#name, __udf::FunctionKind::Aggregate)
            .deterministic(#deterministic)
            .description(#description)
            .capabilities(__udf::Capabilities { retract: #retract, merge: #merge })
            #(.signature(#signatures))*
    }
}

pub fn signature(eval: &EvalMethod, ret: &syn::Type, hint: &TokenStream) -> TokenStream {
    let method = eval.ident.to_string();
    let arg = |param: &crate::signature::Param| {
        let ty = types::with_lifetimes(&param.ty, "'_");
        let name = &param.sql_name;
        let hint = match &param.hint {
            Some(h) => {
                let tokens = h.tokens();
                quote!(::core::option::Option::Some(#tokens))
            }
            None => quote!(::core::option::Option::None),
        };
        let optional = param.optional.is_some();
        quote_spanned!(param.ty.span()=> __udf::arg_spec::<#ty>(#name, #hint, #optional))
    };
    let args = eval.params.iter().map(arg);
    let varargs = eval.varargs.as_ref().map(|p| {
        let spec = arg(p);
        quote!(.varargs(#spec))
    });
    quote! {
        __udf::Signature::new(#method)
            #(.arg(#args))*
            #varargs
            .output(__udf::output_spec::<#ret>(#hint))
    }
}
