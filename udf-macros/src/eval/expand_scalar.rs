//! Code generation for `#[scalar_function]`: the `ScalarFunction` impl with its spec and
//! per-signature batch evaluation.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::EvalDef;
use crate::dispatch;
use crate::signature::{EvalMethod, Receiver};
use crate::types::{self, BufferKind};

pub fn expand(def: &EvalDef) -> TokenStream {
    let self_ty = &def.self_ty;
    let spec = spec(def);
    let target = match def.evals.first().map(|e| e.receiver) {
        Some(Receiver::None) => quote!(#self_ty),
        _ => quote!(<#self_ty>),
    };

    let checks = def.evals.iter().map(|eval| {
        let mut checks = dispatch::argument_checks(eval);
        checks.extend(dispatch::compile_time_checks(
            eval,
            def.output_type.is_some(),
        ));
        checks
    });
    let invokers: Vec<_> = (0..def.evals.len())
        .map(|i| format_ident!("invoke_{i}"))
        .collect();
    let bodies = def
        .evals
        .iter()
        .map(|eval| dispatch::batch_body(eval, &target));
    let indices = 0..def.evals.len();
    let sql_name = &def.sql_name;
    let checked_returns = def.output_type.is_none();
    let bounds = dispatch::bounds(&def.evals, checked_returns);
    let eval_bounds = def
        .evals
        .iter()
        .map(|eval| dispatch::bounds([eval], checked_returns));

    let lifecycle = lifecycle(def, quote!(__udf::ScalarFunction));
    let output_type = def.output_type.as_ref().map(|method| {
        quote! {
            fn output_type(&self, call: &__udf::CallContext<'_>) -> __udf::Result<__udf::DataType, __udf::Error> {
                ::core::result::Result::map_err(<#self_ty>::#method(self, call), ::core::convert::Into::into)
            }
        }
    });

    quote! {
        const _: () = {
            use ::udf_core::__private as __udf;

            #(#checks)*

            #(
                #[allow(unused_variables, unused_mut)]
                fn #invokers(
                    this: &#self_ty,
                    call: &mut __udf::ScalarCall<'_>,
                ) -> __udf::Result<__udf::ArrayRef, __udf::Error>
                #eval_bounds
                {
                    #bodies
                }
            )*

            impl __udf::ScalarFunction for #self_ty #bounds {
                fn spec(&self) -> __udf::FunctionSpec {
                    #spec
                }

                #lifecycle
                #output_type

                fn invoke(&self, call: &mut __udf::ScalarCall<'_>) -> __udf::Result<__udf::ArrayRef, __udf::Error> {
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
                    __udf::Function::Scalar(::std::sync::Arc::new(self))
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

/// `open`/`close` make the function stateful: each query gets its own opened copy.
/// `function_trait` is the trait being implemented (`instantiate` returns a boxed one).
pub fn lifecycle(def: &EvalDef, function_trait: TokenStream) -> TokenStream {
    lifecycle_of(
        &def.self_ty,
        def.open.as_ref(),
        def.close.as_ref(),
        function_trait,
    )
}

/// `instantiate` (a clone, so every query opens its own instance), `open` and `close` for
/// a function type with `open` or `close`; nothing otherwise.
pub fn lifecycle_of(
    self_ty: &syn::Type,
    open: Option<&syn::Ident>,
    close: Option<&syn::Ident>,
    function_trait: TokenStream,
) -> TokenStream {
    let Some(anchor) = open.or(close) else {
        return quote!();
    };
    let instantiate = quote_spanned! {anchor.span()=>
        fn instantiate(&self) -> ::core::option::Option<::std::boxed::Box<dyn #function_trait>> {
            ::core::option::Option::Some(::std::boxed::Box::new(<#self_ty as ::core::clone::Clone>::clone(self)))
        }
    };
    let open = open.map(|method| {
        quote! {
            fn open(&mut self, context: &__udf::FunctionContext) -> __udf::Result<(), __udf::Error> {
                __udf::UnitResult::into_result(<#self_ty>::#method(self, context))
            }
        }
    });
    let close = close.map(|method| {
        quote! {
            fn close(&mut self) {
                <#self_ty>::#method(self)
            }
        }
    });
    quote!(#instantiate #open #close)
}

fn spec(def: &EvalDef) -> TokenStream {
    let (name, deterministic, constant_folding, description) = (
        &def.sql_name,
        def.deterministic,
        def.constant_folding,
        &def.description,
    );
    let signatures = def
        .evals
        .iter()
        .map(|eval| signature(eval, def.output_type.is_some()));
    quote! {
        __udf::FunctionSpec::new(#name, __udf::FunctionKind::Scalar)
            .deterministic(#deterministic)
            .constant_folding(#constant_folding)
            .description(#description)
            #(.signature(#signatures))*
    }
}

fn signature(eval: &EvalMethod, custom_output: bool) -> TokenStream {
    let hint = option(eval.output_hint.as_ref().map(|h| h.tokens()));
    let output = if custom_output {
        quote!(__udf::OutputType::Custom)
    } else if let Some(buffer) = &eval.buffer {
        let ret = eval.output.as_ref().map_or_else(
            || quote!(()),
            |t| {
                let t = types::with_lifetimes(t, "'_");
                quote!(#t)
            },
        );
        let bytes = buffer.kind == BufferKind::Bytes;
        quote!(__udf::writer_output_spec::<#ret>(#hint, #bytes))
    } else {
        let ret = eval.output.as_ref().map(|t| types::with_lifetimes(t, "'_"));
        quote!(__udf::output_spec::<#ret>(#hint))
    };
    signature_with(eval, output)
}

/// The `Signature` of `eval`: its parameters, and `output` (an `OutputType` expression).
pub fn signature_with(eval: &EvalMethod, output: TokenStream) -> TokenStream {
    let method = eval.ident.to_string();
    let arg = |param: &crate::signature::Param| {
        let ty = types::with_lifetimes(&param.ty, "'_");
        let name = &param.sql_name;
        let hint = option(param.hint.as_ref().map(|h| h.tokens()));
        let optional = param.optional.is_some();
        quote_spanned!(syn::spanned::Spanned::span(&param.ty)=> __udf::arg_spec::<#ty>(#name, #hint, #optional))
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
            .output(#output)
    }
}

pub fn option(tokens: Option<TokenStream>) -> TokenStream {
    match tokens {
        Some(tokens) => quote!(::core::option::Option::Some(#tokens)),
        None => quote!(::core::option::Option::None),
    }
}
