//! Code generation for `#[async_scalar_function]` and `#[async_table_function]`: the
//! `AsyncScalarFunction` / `AsyncTableFunction` impl. Each signature gets a batch future
//! that reads the arguments once and hands one future per row to `run_in_order`, which
//! bounds concurrency, times out and retries; results are taken in row order.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::expand_scalar::{lifecycle, option, signature_with};
use super::{EvalDef, Flavor};
use crate::dispatch;
use crate::signature::{EvalMethod, Receiver};
use crate::types;

pub fn expand(def: &EvalDef) -> TokenStream {
    let self_ty = &def.self_ty;
    let target = match def.evals.first().map(|e| e.receiver) {
        Some(Receiver::None) => quote!(#self_ty),
        _ => quote!(<#self_ty>),
    };
    let sql_name = &def.sql_name;
    let table = def.flavor == Flavor::AsyncTable;

    let mut checks = TokenStream::new();
    for eval in &def.evals {
        checks.extend(dispatch::argument_checks(eval));
        checks.extend(dispatch::param_checks(eval));
        if let Some(ret) = &eval.output {
            let checked: syn::Type = if table {
                syn::parse_quote_spanned!(ret.span()=> <#ret as __udf::AsyncRows>::Item)
            } else {
                ret.clone()
            };
            checks.extend(dispatch::return_checks(&checked, eval.output_hint.as_ref()));
        }
    }
    let invokers: Vec<_> = (0..def.evals.len())
        .map(|i| format_ident!("invoke_{i}"))
        .collect();
    let bodies = def
        .evals
        .iter()
        .map(|eval| batch_body(eval, &target, table));
    let future_bounds = def.evals.iter().map(|eval| bounds(eval, table));
    let impl_bounds: Vec<_> = def
        .evals
        .iter()
        .flat_map(|eval| bounds(eval, table))
        .collect();
    let impl_bounds = quote!(where #(#impl_bounds,)*);
    let indices = 0..def.evals.len();

    let (name, deterministic, description) = (&def.sql_name, def.deterministic, &def.description);
    let signatures = def.evals.iter().map(|eval| {
        let hint = option(eval.output_hint.as_ref().map(|h| h.tokens()));
        let ret = eval.output.as_ref().map(|t| types::with_lifetimes(t, "'_"));
        let output = if table {
            quote!(__udf::output_spec::<<#ret as __udf::AsyncRows>::Item>(#hint))
        } else {
            quote!(__udf::output_spec::<#ret>(#hint))
        };
        signature_with(eval, output)
    });
    let unknown_signature = quote! {
        ::std::boxed::Box::pin(async move {
            ::core::result::Result::Err(__udf::AsyncFailure::setup(__udf::Error::msg(
                ::std::format!("`{}` has no signature number {}", #sql_name, call.signature),
            )))
        })
    };

    let (kind, function_trait, variant, extra_params, extra_args, output) = if table {
        (
            quote!(AsyncTable),
            quote!(__udf::AsyncTableFunction),
            quote!(AsyncTable),
            quote!(, chunk: usize, sink: &'a mut (dyn __udf::RowSink + ::core::marker::Send)),
            quote!(, chunk, sink),
            quote!(()),
        )
    } else {
        (
            quote!(AsyncScalar),
            quote!(__udf::AsyncScalarFunction),
            quote!(AsyncScalar),
            quote!(),
            quote!(),
            quote!(__udf::ArrayRef),
        )
    };
    let lifecycle = lifecycle(def, function_trait.clone());

    quote! {
        const _: () = {
            use ::udf_core::__private as __udf;

            #checks

            #(
                #[allow(unused_variables, unused_mut)]
                fn #invokers<'a>(
                    this: &'a #self_ty,
                    call: __udf::AsyncCall<'a>
                    #extra_params
                ) -> __udf::BatchFuture<'a, #output>
                where #(#future_bounds,)*
                {
                    ::std::boxed::Box::pin(async move { #bodies })
                }
            )*

            impl #function_trait for #self_ty #impl_bounds {
                fn spec(&self) -> __udf::FunctionSpec {
                    __udf::FunctionSpec::new(#name, __udf::FunctionKind::#kind)
                        .deterministic(#deterministic)
                        .description(#description)
                        #(.signature(#signatures))*
                }

                #lifecycle

                fn invoke<'a>(
                    &'a self,
                    call: __udf::AsyncCall<'a>
                    #extra_params
                ) -> __udf::BatchFuture<'a, #output> {
                    match call.signature {
                        #(#indices => #invokers(self, call #extra_args),)*
                        _ => #unknown_signature,
                    }
                }
            }

            impl __udf::UserFunction for #self_ty #impl_bounds {
                fn into_function(self) -> __udf::Function {
                    __udf::Function::#variant(::std::sync::Arc::new(self))
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

/// The bounds on one signature's argument and result types that the generated items assume
/// rather than check (for-all bounds, as `dispatch::bounds` writes them), so an unsupported
/// type gets the one error of its check (`argument_checks`, the return checks), not one per
/// use. (The batch future stays `Send` under them because readers and builders are
/// `Send` by their traits' bounds.)
fn bounds(eval: &EvalMethod, table: bool) -> Vec<TokenStream> {
    let mut bounds: Vec<_> = dispatch::param_bounds(eval).collect();
    if let Some(ret) = &eval.output {
        if table {
            bounds.push(dispatch::for_all(ret, quote!(__udf::AsyncRows)));
            let row: syn::Type =
                syn::parse_quote_spanned!(ret.span()=> <#ret as __udf::AsyncRows>::Item);
            bounds.push(dispatch::row_bound(&row, quote!(__udf)));
        } else {
            bounds.push(dispatch::for_all(ret, quote!(__udf::FunctionReturn)));
        }
    }
    bounds
}

/// The body of one signature's batch future.
fn batch_body(eval: &EvalMethod, target: &TokenStream, table: bool) -> TokenStream {
    let method = &eval.ident;
    let receiver = match eval.receiver {
        Receiver::None => quote!(),
        Receiver::Ref => quote!(this,),
    };
    let Some(ret) = &eval.output else {
        // The signature parser has reported the missing result.
        return quote!(::core::compile_error!(
            "an async function returns its result"
        ));
    };
    let span = ret.span();
    let ret = types::with_lifetimes(ret, "'_");

    let names: Vec<_> = (0..eval.params.len())
        .map(|i| format_ident!("arg{i}"))
        .collect();
    let values: Vec<_> = (0..eval.params.len())
        .map(|i| format_ident!("value{i}"))
        .collect();
    let indices: Vec<_> = (0..eval.params.len()).collect();
    let readers = eval
        .params
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(i, (param, input))| {
            let ty = types::with_lifetimes(&param.ty, "'a");
            let name = &param.sql_name;
            let reader = quote_spanned!(param.ty.span()=> __udf::reader::<#ty>);
            quote!(let #input = #reader(&args[#i], #name)?;)
        });
    let fixed = eval.params.len();
    let (varargs_setup, varargs_strict, varargs_row, varargs_arg) = match &eval.varargs {
        Some(param) => {
            let ty = types::with_lifetimes(&param.ty, "'a");
            let name = &param.sql_name;
            let reader = quote_spanned!(param.ty.span()=> __udf::readers::<#ty>);
            (
                quote!(let varargs_inputs = #reader(&args[#fixed..], #name)?;),
                quote!(.chain(args[#fixed..].iter().zip(&varargs_inputs).map(|(column, input)| (column, input.strict)))),
                quote! {
                    let varargs: ::std::vec::Vec<#ty> = varargs_inputs
                        .iter()
                        .map(|input| __udf::ArgReader::get(&input.reader, row & input.mask))
                        .collect::<__udf::Result<_, __udf::Error>>()?;
                },
                quote!(&varargs),
            )
        }
        None => (quote!(), quote!(), quote!(), quote!()),
    };
    let (varargs_binding, varargs_tuple) = if eval.varargs.is_some() {
        (
            quote!(let varargs_inputs = &varargs_inputs;),
            quote!(varargs_inputs,),
        )
    } else {
        (quote!(), quote!())
    };

    let call_future = if table {
        quote_spanned! {span=>
            async move {
                __udf::AsyncRows::into_rows(#target::#method(#receiver #(#values,)* #varargs_arg).await)
            }
        }
    } else {
        quote_spanned! {span=>
            async move {
                __udf::FunctionReturn::into_value(#target::#method(#receiver #(#values,)* #varargs_arg).await)
            }
        }
    };
    let (prepare, accept, finish) = if table {
        let row_ty = quote_spanned!(span=> <#ret as __udf::AsyncRows>::Item);
        (
            quote! {
                let mut emitted = __udf::Emitted::<#row_ty>::new(output, chunk)
                    .map_err(__udf::AsyncFailure::setup)?;
                let sink = &mut *sink;
            },
            quote! {
                |row: usize, emitted_rows: ::core::option::Option<::std::vec::Vec<#row_ty>>| {
                    if let ::core::option::Option::Some(emitted_rows) = emitted_rows {
                        let mut collector = emitted.collector(row);
                        for emitted_row in emitted_rows {
                            collector.collect(emitted_row);
                        }
                        if let ::core::option::Option::Some(error) = emitted.take_error() {
                            return ::core::result::Result::Err(error);
                        }
                        if emitted.len() >= chunk {
                            __udf::hand_over(&mut emitted, &mut *sink)?;
                        }
                    }
                    ::core::result::Result::Ok(())
                }
            },
            quote! {
                __udf::hand_over(&mut emitted, &mut *sink).map_err(__udf::AsyncFailure::setup)
            },
        )
    } else {
        (
            quote_spanned! {span=>
                let mut out = __udf::return_builder::<#ret>(output, rows)
                    .map_err(__udf::AsyncFailure::setup)?;
            },
            quote_spanned! {span=>
                |row: usize, value| match value {
                    ::core::option::Option::Some(value) => __udf::ValueBuilder::append(&mut out, value),
                    ::core::option::Option::None => {
                        __udf::append_null_result::<#ret>(&mut out);
                        ::core::result::Result::Ok(())
                    }
                }
            },
            quote_spanned! {span=>
                __udf::finish_result::<#ret>(&mut out).map_err(__udf::AsyncFailure::setup)
            },
        )
    };

    quote! {
        let args: &'a [__udf::ArgColumn] = call.args;
        let rows = call.rows;
        let output = call.output;
        let readers = || -> __udf::Result<_, __udf::Error> {
            #(#readers)*
            #varargs_setup
            ::core::result::Result::Ok((#(#names,)* #varargs_tuple))
        };
        let (#(#names,)* #varargs_tuple) = readers().map_err(__udf::AsyncFailure::setup)?;
        let validity = __udf::Validity::of(
            [#((&args[#indices], #names.strict)),*].into_iter() #varargs_strict
        );
        #prepare
        {
            let validity = &validity;
            #(let #names = &#names;)*
            #varargs_binding
            __udf::run_in_order(
                rows,
                call.options,
                move |row: usize| {
                    if !validity.is_valid(row) {
                        return ::core::result::Result::Ok(::core::option::Option::None);
                    }
                    #(let #values = __udf::ArgReader::get(&#names.reader, row & #names.mask)?;)*
                    #varargs_row
                    ::core::result::Result::Ok(::core::option::Option::Some(#call_future))
                },
                #accept,
            )
            .await?;
        }
        #finish
    }
}
