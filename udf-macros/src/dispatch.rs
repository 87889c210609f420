//! Generated per-batch evaluation of one signature, in tiers:
//! 1. a vectorized kernel for one or two plain numeric parameters and a numeric result;
//! 2. otherwise one loop over the rows, with NULL tests only for strict parameters,
//!    borrowed `&str`/`&[u8]` and a pre-sized builder;
//! 3. a last `out: &mut String` parameter is written straight into the result column;
//! 4. constant arguments are read at index 0 for every row (`row & mask`), never expanded.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::signature::{EvalMethod, Receiver};
use crate::types::{self, BufferKind};

/// Reading the arguments of one evaluation method, shared by every kind of loop.
struct Inputs {
    /// Creates the readers (before the loop).
    setup: TokenStream,
    /// `(column, strict)` pairs for `Validity::of`.
    strict: TokenStream,
    /// Per row, before the call: gathers the varargs values.
    fill: TokenStream,
    /// The call's arguments after the receiver and leading parameters.
    call_args: TokenStream,
}

/// Every path that names a user type is spanned at that type, so a type error points at
/// the user's code.
fn inputs(eval: &EvalMethod) -> Inputs {
    let names: Vec<_> = (0..eval.params.len())
        .map(|i| format_ident!("arg{i}"))
        .collect();
    let indices: Vec<_> = (0..eval.params.len()).collect();
    let mut setup: TokenStream = eval
        .params
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(i, (param, input))| {
            let ty = types::with_lifetimes(&param.ty, "'_");
            let name = &param.sql_name;
            let reader = quote_spanned!(param.ty.span()=> __udf::reader::<#ty>);
            quote!(let #input = #reader(&args[#i], #name)?;)
        })
        .collect();
    let fixed = eval.params.len();
    let mut strict = quote!([#((&args[#indices], #names.strict)),*].into_iter());
    let (fill, varargs_arg) = match &eval.varargs {
        Some(param) => {
            let ty = types::with_lifetimes(&param.ty, "'_");
            let name = &param.sql_name;
            let readers = quote_spanned!(param.ty.span()=> __udf::readers::<#ty>);
            setup.extend(quote! {
                let varargs_inputs = #readers(&args[#fixed..], #name)?;
                let mut varargs: ::std::vec::Vec<#ty> = ::std::vec::Vec::with_capacity(varargs_inputs.len());
            });
            strict.extend(quote!(.chain(args[#fixed..].iter().zip(&varargs_inputs).map(|(column, input)| (column, input.strict)))));
            (
                quote! {
                    varargs.clear();
                    for input in &varargs_inputs {
                        varargs.push(__udf::ArgReader::get(&input.reader, row & input.mask)?);
                    }
                },
                quote!(&varargs,),
            )
        }
        None => (quote!(), quote!()),
    };
    let call_args = quote! {
        #(__udf::ArgReader::get(&#names.reader, row & #names.mask)?,)*
        #varargs_arg
    };
    Inputs {
        setup,
        strict,
        fill,
        call_args,
    }
}

fn receiver(eval: &EvalMethod) -> TokenStream {
    match eval.receiver {
        Receiver::None => quote!(),
        Receiver::Ref => quote!(this,),
    }
}

/// The body of `fn(this: &Self, call: &mut ScalarCall) -> Result<ArrayRef>` for `eval`.
/// `target` is the path before the method name (`mix` or `<SumFunction>`).
pub fn batch_body(eval: &EvalMethod, target: &TokenStream) -> TokenStream {
    let method = &eval.ident;
    let receiver = receiver(eval);
    let kernel = kernel_tier(eval, target, &receiver);
    let Inputs {
        setup,
        strict,
        fill,
        call_args,
    } = inputs(eval);
    let call_args = quote!(#receiver #call_args);

    let (out_setup, evaluate, append_null, finish) = match (&eval.buffer, &eval.output) {
        (Some(buffer), output) => {
            let (make, new_buffer, append) = match buffer.kind {
                BufferKind::Text => (
                    quote!(text_output),
                    quote!(::std::string::String::new()),
                    quote!(append_str),
                ),
                BufferKind::Bytes => (
                    quote!(bytes_output),
                    quote!(::std::vec::Vec::new()),
                    quote!(append_bytes),
                ),
            };
            let into_present = match output {
                Some(ret) => quote_spanned!(ret.span()=> __udf::WriterReturn::into_present),
                None => quote!(__udf::WriterReturn::into_present),
            };
            (
                quote! {
                    let mut out = __udf::#make(output, rows)?;
                    let mut buffer = #new_buffer;
                },
                quote! {
                    buffer.clear();
                    let present = #into_present(#target::#method(#call_args &mut buffer))?;
                    if present {
                        out.#append(&buffer);
                    } else {
                        out.append_null();
                    }
                },
                quote!(out.append_null();),
                quote!(::std::result::Result::Ok(out.finish_array())),
            )
        }
        (None, Some(ret)) => {
            let span = ret.span();
            let ret = types::with_lifetimes(ret, "'_");
            (
                quote_spanned!(span=> let mut out = __udf::return_builder::<#ret>(output, rows)?;),
                quote_spanned! {span=>
                    let result = #target::#method(#call_args);
                    __udf::ValueBuilder::append(&mut out, __udf::FunctionReturn::into_value(result)?)?;
                },
                quote_spanned!(span=> __udf::append_null_result::<#ret>(&mut out);),
                quote_spanned!(span=> __udf::finish_result::<#ret>(&mut out)),
            )
        }
        // The signature check has reported this already; expansion does not run for it.
        (None, None) => {
            return quote!(::core::compile_error!(
                "a scalar function must return a value"
            ));
        }
    };

    quote! {
        let args: &[__udf::ArgColumn] = call.args;
        let rows = call.rows;
        let output = call.output;
        #kernel
        #setup
        let validity = __udf::Validity::of(#strict);
        if validity.is_all_null() {
            return ::std::result::Result::Ok(__udf::null_result(output, rows));
        }
        #out_setup
        for row in 0..rows {
            call.row = row;
            if !validity.is_valid(row) {
                #append_null
                continue;
            }
            #fill
            #evaluate
        }
        #finish
    }
}

/// The body of `fn(this: &Self, accs: &mut [Acc], batch: &mut AggregateBatch) -> Result<()>`:
/// folds each selected row into the accumulator of its group with `accumulate` or `retract`.
/// Rows with NULL in a strict parameter are skipped, as SQL aggregates skip NULL.
pub fn fold_body(eval: &EvalMethod, target: &TokenStream) -> TokenStream {
    let method = &eval.ident;
    let receiver = receiver(eval);
    let Inputs {
        setup,
        strict,
        fill,
        call_args,
    } = inputs(eval);
    let unit = match &eval.output {
        Some(ret) => quote_spanned!(ret.span()=> __udf::UnitResult::into_result),
        None => quote!(__udf::UnitResult::into_result),
    };
    quote! {
        let args: &[__udf::ArgColumn] = batch.args;
        let groups: &[usize] = batch.groups;
        let filter = batch.filter;
        #setup
        let validity = __udf::Validity::of(#strict);
        if validity.is_all_null() {
            return ::std::result::Result::Ok(());
        }
        for row in 0..batch.rows {
            if !validity.is_valid(row) || !__udf::selected(filter, row) {
                continue;
            }
            batch.row = row;
            #fill
            let acc = &mut accs[groups[row]];
            #unit(#target::#method(#receiver acc, #call_args))?;
        }
        ::std::result::Result::Ok(())
    }
}

/// Tier 1: `unary`/`binary` kernels when every type is a plainly spelled number.
fn kernel_tier(eval: &EvalMethod, target: &TokenStream, receiver: &TokenStream) -> TokenStream {
    let Some(ret) = &eval.output else {
        return quote!();
    };
    let eligible = eval.varargs.is_none()
        && eval.buffer.is_none()
        && eval.output_hint.is_none()
        && types::is_kernel_primitive(ret)
        && matches!(eval.params.len(), 1 | 2)
        && eval
            .params
            .iter()
            .all(|p| p.hint.is_none() && types::is_kernel_primitive(&p.ty));
    if !eligible {
        return quote!();
    }
    let method = &eval.ident;
    let tys: Vec<_> = eval.params.iter().map(|p| &p.ty).collect();
    let span = eval.span;
    // A free function is passed as it is; a method needs `this`.
    let function = match eval.receiver {
        Receiver::None => quote!(#target::#method),
        Receiver::Ref if tys.len() == 1 => quote!(|a| #target::#method(#receiver a)),
        Receiver::Ref => quote!(|a, b| #target::#method(#receiver a, b)),
    };
    let kernel = if tys.len() == 1 {
        let a = tys[0];
        quote_spanned!(span=> __udf::unary::<#a, #ret>(&args[0], rows, output, #function))
    } else {
        let (a, b) = (tys[0], tys[1]);
        quote_spanned!(span=> __udf::binary::<#a, #b, #ret>(&args[0], &args[1], rows, output, #function))
    };
    quote! {
        if !call.traced {
            return #kernel;
        }
    }
}

/// A `where` clause bounding the items generated for `evals` on their argument types (and
/// the return type where [`compile_time_checks`] checks it, `checked_returns`, and a table
/// function's row type), so what they do with these types is not checked against them: an
/// unsupported type gets the one error of its check ([`argument_checks`], the return
/// checks), not one per use. (Written as for-all bounds, which rustc takes as assumptions
/// instead of checking them where they are written.)
pub fn bounds<'a>(
    evals: impl IntoIterator<Item = &'a EvalMethod>,
    checked_returns: bool,
) -> TokenStream {
    let mut bounds = Vec::new();
    for eval in evals {
        bounds.extend(param_bounds(eval));
        match (&eval.buffer, &eval.output) {
            (None, Some(ret)) if checked_returns => {
                bounds.push(for_all(ret, quote!(__udf::FunctionReturn)));
            }
            (Some(_), Some(ret)) => bounds.push(for_all(ret, quote!(__udf::WriterReturn))),
            _ => {}
        }
        if let Some(row) = &eval.collector {
            bounds.push(row_bound(row, quote!(__udf)));
        }
    }
    quote!(where #(#bounds,)*)
}

/// The for-all bounds of `eval`'s parameter types (see [`bounds`]).
pub fn param_bounds(eval: &EvalMethod) -> impl Iterator<Item = TokenStream> + '_ {
    eval.all_params()
        .map(|param| for_all(&param.ty, quote!(__udf::ArgValue<'__udf_a>)))
}

/// `for<'__udf_a> ty: bound`, at `ty`, its lifetimes made `'__udf_a` (which `bound` may
/// name): a bound of generated items that rustc assumes rather than checks where it is
/// written (see [`bounds`]).
pub fn for_all(ty: &syn::Type, bound: TokenStream) -> TokenStream {
    let with_lifetime = types::with_lifetimes(ty, "'__udf_a");
    quote_spanned!(ty.span()=> for<'__udf_a> #with_lifetime: #bound)
}

/// The bound of a table function's row type `row` (checked by `return_checks`), with
/// `private` the path of `udf_core::__private` where it is written.
pub fn row_bound(row: &syn::Type, private: TokenStream) -> TokenStream {
    for_all(row, quote!(#private::ResultValue))
}

/// Bounds the user's `method` (an `eval` that emits rows of type `row` into a collector) on
/// its row type, so its signature and body are not checked against an unsupported one:
/// the type's one error is the generated check's. (A private row type of a public method
/// is warned about at its signature already; the bound does not warn again.)
pub fn bound_user_method(
    sig: &mut syn::Signature,
    attrs: &mut Vec<syn::Attribute>,
    row: &syn::Type,
) {
    let bound = row_bound(row, quote!(::udf_core::__private));
    sig.generics
        .make_where_clause()
        .predicates
        .push(syn::parse_quote!(#bound));
    attrs.push(syn::parse_quote!(#[allow(private_bounds)]));
}

/// For each parameter of `eval`, the check that its type can be an argument, at the type;
/// and, for a function writing into an output buffer, that it returns what such a function
/// may (the check of other results is in [`return_checks`]).
pub fn argument_checks(eval: &EvalMethod) -> TokenStream {
    let mut checks: TokenStream = eval
        .all_params()
        .map(|param| {
            let ty = types::with_lifetimes(&param.ty, "'static");
            quote_spanned!(param.ty.span()=> const _: () = __udf::argument_type::<#ty>();)
        })
        .collect();
    if let (Some(_), Some(ret)) = (&eval.buffer, &eval.output) {
        let ty = types::with_lifetimes(ret, "'static");
        checks.extend(quote_spanned!(ret.span()=> const _: () = __udf::writer_return::<#ty>();));
    }
    checks
}

/// `const` checks of hints against Rust types, evaluated by the compiler: a mismatch is
/// a compile error at the hint (or at `optional`). Covers the parameters, and the result
/// unless the method returns nothing SQL sees or the type is computed per call.
pub fn compile_time_checks(eval: &EvalMethod, custom_output: bool) -> TokenStream {
    let mut checks = param_checks(eval);
    if let (None, Some(ret), false) = (&eval.buffer, &eval.output, custom_output) {
        checks.extend(return_checks(ret, eval.output_hint.as_ref()));
    }
    checks
}

pub fn param_checks(eval: &EvalMethod) -> TokenStream {
    params_checks(eval.all_params())
}

/// [`param_checks`] for any parameters.
pub fn params_checks<'a>(params: impl Iterator<Item = &'a crate::signature::Param>) -> TokenStream {
    let mut checks = TokenStream::new();
    for param in params {
        let ty = types::with_lifetimes(&param.ty, "'static");
        let shown = types::display(&param.ty);
        if let Some(hint) = &param.hint {
            let root = crate::hint::root_tokens(&hint.data_type);
            let message = format!(
                "the type hint `{}` does not fit the Rust type `{shown}`",
                hint.literal.value()
            );
            checks.extend(assert_const(
                hint.literal.span(),
                quote!(__udf::arg_roots::<#ty>().contains(#root)),
                &message,
            ));
            if !hint.data_type.nullable {
                let message = format!(
                    "`{shown}` receives NULL, but the type hint says NOT NULL: drop one of them"
                );
                checks.extend(assert_const(
                    hint.literal.span(),
                    quote!(!__udf::arg_nullable::<#ty>()),
                    &message,
                ));
            }
        }
        if let Some(optional) = &param.optional {
            let message = format!(
                "an optional argument must have an `Option<_>` type, because an omitted argument is passed as NULL; found `{shown}`"
            );
            checks.extend(assert_const(
                optional.span(),
                quote!(__udf::arg_nullable::<#ty>()),
                &message,
            ));
        }
    }
    checks
}

/// Checks of a result type against its hint; without a hint, the type must have a SQL type.
pub fn return_checks(ret: &syn::Type, hint: Option<&crate::hint::Hint>) -> TokenStream {
    let ty = types::with_lifetimes(ret, "'static");
    let shown = types::display(ret);
    match hint {
        Some(hint) => {
            let root = crate::hint::root_tokens(&hint.data_type);
            let message = format!(
                "the type hint `{}` does not fit the Rust type `{shown}`",
                hint.literal.value()
            );
            let mut checks = assert_const(
                hint.literal.span(),
                quote!(__udf::return_roots::<#ty>().contains(#root)),
                &message,
            );
            if !hint.data_type.nullable {
                let message = format!(
                    "`{shown}` may be NULL, but the type hint says NOT NULL: drop one of them"
                );
                checks.extend(assert_const(
                    hint.literal.span(),
                    quote!(!__udf::return_nullable::<#ty>()),
                    &message,
                ));
            }
            checks
        }
        None => {
            let message = format!(
                "`{shown}` has no SQL type of its own: add #[data_type(\"...\")] to the function, or an `output_type` method"
            );
            assert_const(
                ret.span(),
                quote!(__udf::return_is_static::<#ty>()),
                &message,
            )
        }
    }
}

pub fn assert_const(span: Span, condition: TokenStream, message: &str) -> TokenStream {
    quote_spanned! {span=>
        const _: () = if !(#condition) {
            ::core::panic!(#message)
        };
    }
}

/// The body of `fn(this: &Self, call: &mut TableCall) -> Result<()>` for a table function's
/// `eval`: one loop over the input rows from `call.start`; a row with NULL in a strict
/// parameter emits nothing. Emitted rows go into one builder, handed to the sink whenever a
/// chunk is full; the call pauses there if the sink is full.
pub fn rows_body(eval: &EvalMethod, target: &TokenStream) -> TokenStream {
    let method = &eval.ident;
    let receiver = receiver(eval);
    let Inputs {
        setup,
        strict,
        fill,
        call_args,
    } = inputs(eval);
    let Some(row_ty) = &eval.collector else {
        // The signature parser has reported the missing collector.
        return quote!(::core::compile_error!("a table function needs a collector"));
    };
    let span = row_ty.span();
    let row_ty = types::with_lifetimes(row_ty, "'_");
    let unit = match &eval.output {
        Some(ret) => quote_spanned!(ret.span()=> __udf::UnitResult::into_result),
        None => quote!(__udf::UnitResult::into_result),
    };
    let emitted = quote_spanned!(span=> __udf::Emitted::<#row_ty>::new(call.output, call.chunk)?);
    quote! {
        let args: &[__udf::ArgColumn] = call.args;
        let rows = call.rows;
        #setup
        let validity = __udf::Validity::of(#strict);
        if validity.is_all_null() {
            return ::std::result::Result::Ok(());
        }
        let mut emitted = #emitted;
        for row in call.start..rows {
            if !validity.is_valid(row) {
                continue;
            }
            call.row = row;
            #fill
            #unit(#target::#method(#receiver #call_args &mut emitted.collector(row)))?;
            if let ::core::option::Option::Some(error) = emitted.take_error() {
                return ::std::result::Result::Err(error);
            }
            if emitted.len() >= call.chunk {
                __udf::hand_over(&mut emitted, &mut *call.sink)?;
                if call.sink.is_full() {
                    call.paused_at = ::core::option::Option::Some(row + 1);
                    return ::std::result::Result::Ok(());
                }
            }
        }
        __udf::hand_over(&mut emitted, &mut *call.sink)
    }
}
