//! Code generation for `#[ptf]`: the spec, a struct with one store per state entry, a struct
//! with the readers of one call's arguments, and `ProcessBody` — one `eval` (and `on_timer`)
//! call with its state loaded before and written back after. The row loop and the timer
//! protocol are udf-core's (`ptf/run.rs`), instantiated for the function.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::PtfDef;
use super::model::{ArgParam, ContextParam, PtfEval, StateKind, StateParam};
use crate::dispatch;
use crate::eval::lifecycle_of;
use crate::signature::Receiver;
use crate::types;

fn option(tokens: Option<TokenStream>) -> TokenStream {
    match tokens {
        Some(tokens) => quote!(::core::option::Option::Some(#tokens)),
        None => quote!(::core::option::Option::None),
    }
}

/// The store type of a state entry, and the constructor taking the setup and its index.
fn store(state: &StateParam) -> (TokenStream, TokenStream) {
    let tys: Vec<_> = state
        .types
        .iter()
        .map(|t| types::with_lifetimes(t, "'static"))
        .collect();
    let span = state.types[0].span();
    match state.kind {
        StateKind::Value => {
            let t = &tys[0];
            (
                quote!(__udf::ValueSlot<#t>),
                quote_spanned!(span=> __udf::value_store::<#t>),
            )
        }
        StateKind::List => {
            let t = &tys[0];
            (
                quote!(__udf::ViewSlot<__udf::ListView<#t>>),
                quote_spanned!(span=> __udf::list_store::<#t>),
            )
        }
        StateKind::Map => {
            let (k, v) = (&tys[0], &tys[1]);
            (
                quote!(__udf::ViewSlot<__udf::MapView<#k, #v>>),
                quote_spanned!(span=> __udf::map_store::<#k, #v>),
            )
        }
    }
}

pub fn expand(def: &PtfDef) -> TokenStream {
    let eval = &def.eval;
    let self_ty = &def.self_ty;
    let Some(row) = &eval.collector else {
        return quote!();
    };
    let row_ty = types::with_lifetimes(row, "'static");

    let checks = checks(eval, row);
    let spec = spec(def, row);
    let (state_items, state_ty, state_new) = state_struct(&eval.states);
    let (args_items, args_new) = args_struct(&eval.args);
    let eval_call = call_method(self_ty, eval, &eval.states, eval_arguments(eval));
    let timer = def.on_timer.as_ref().map(|timer| {
        let call = call_method(self_ty, timer, &eval.states, TokenStream::new());
        quote! {
            #[inline]
            #[allow(unused_variables)]
            fn on_timer(
                function: &Self::Function,
                key: usize,
                now: i64,
                ctx: &mut __udf::OnTimerContext<'_>,
                state: &mut Self::State,
                out: &mut __udf::Collector<'_, Self::Row>,
            ) -> __udf::Result<bool, __udf::Error> {
                #call
            }
        }
    });
    let stateful = !eval.states.is_empty();
    let has_timer = def.on_timer.is_some();
    let eval_context = eval.context.is_some();
    let lifecycle = lifecycle_of(
        &def.self_ty,
        def.open.as_ref(),
        def.close.as_ref(),
        quote!(__udf::ProcessTableFunction),
    );

    quote! {
        const _: () = {
            use ::udf_core::__private as __udf;

            #checks
            #state_items
            #args_items

            /// The function's part of the row loop (udf-core's `ptf::process`).
            struct UdfBody;

            impl __udf::ProcessBody for UdfBody {
                type Function = #self_ty;
                type State = #state_ty;
                type Args<'a> = UdfArgs<'a>;
                type Row = #row_ty;

                const STATEFUL: bool = #stateful;
                const TIMERS: bool = #has_timer;
                const EVAL_CONTEXT: bool = #eval_context;

                #[allow(unused_variables)]
                fn state(setup: &__udf::ProcessorSetup) -> __udf::Result<Self::State, __udf::Error> {
                    ::core::result::Result::Ok(#state_new)
                }

                #[allow(unused_variables)]
                fn args<'a>(
                    setup: &'a __udf::ProcessorSetup,
                    table: ::core::option::Option<&'a __udf::ArgColumn>,
                    table_index: usize,
                ) -> __udf::Result<UdfArgs<'a>, __udf::Error> {
                    ::core::result::Result::Ok(#args_new)
                }

                #[inline]
                #[allow(unused_variables)]
                fn eval(
                    function: &#self_ty,
                    args: &UdfArgs<'_>,
                    row: usize,
                    key: usize,
                    now: i64,
                    ctx: &mut __udf::Context<'_>,
                    state: &mut Self::State,
                    out: &mut __udf::Collector<'_, Self::Row>,
                ) -> __udf::Result<bool, __udf::Error> {
                    #eval_call
                }

                #timer
            }

            impl __udf::ProcessTableFunction for #self_ty {
                fn spec(&self) -> __udf::FunctionSpec {
                    #spec
                }

                #lifecycle

                fn processor(
                    self: ::std::sync::Arc<Self>,
                    setup: __udf::ProcessorSetup,
                ) -> __udf::Result<::std::boxed::Box<dyn __udf::Processor>, __udf::Error> {
                    __udf::processor_of::<UdfBody>(self, setup)
                }
            }

            impl __udf::UserFunction for #self_ty {
                fn into_function(self) -> __udf::Function {
                    __udf::Function::Process(::std::sync::Arc::new(self))
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

/// Compile-time checks of the hints and of the table parameters' types.
fn checks(eval: &PtfEval, row: &syn::Type) -> TokenStream {
    let mut checks = dispatch::params_checks(eval.args.iter().map(|a| &a.param));
    checks.extend(dispatch::return_checks(row, eval.output_hint.as_ref()));
    for arg in eval.args.iter().filter(|a| a.table.is_some()) {
        let ty = types::with_lifetimes(&arg.param.ty, "'static");
        let message = format!(
            "a table argument is read as `Row` or a #[derive(SqlRow)] struct, not `{}`",
            types::display(&arg.param.ty)
        );
        checks.extend(dispatch::assert_const(
            arg.param.ty.span(),
            quote!(__udf::arg_roots::<#ty>().contains(__udf::TypeRoot::Row)),
            &message,
        ));
    }
    checks
}

/// The function's spec: its signature (table arguments with their traits), output and state.
fn spec(def: &PtfDef, row: &syn::Type) -> TokenStream {
    let eval = &def.eval;
    let row_ty = types::with_lifetimes(row, "'_");
    let arg_specs = eval.args.iter().map(|arg| {
        let param = &arg.param;
        let ty = types::with_lifetimes(&param.ty, "'_");
        let name = &param.sql_name;
        let hint = option(param.hint.as_ref().map(|h| h.tokens()));
        match &arg.table {
            Some(traits) => {
                let semantics = if traits.set_semantics {
                    quote!(__udf::Semantics::Set)
                } else {
                    quote!(__udf::Semantics::Row)
                };
                let flags = [
                    traits.optional_partition_by,
                    traits.pass_columns_through,
                    traits.require_on_time,
                    traits.supports_updates,
                ];
                quote_spanned!(param.ty.span()=> __udf::table_arg_spec::<#ty>(#name, #hint, #semantics, [#(#flags),*]))
            }
            None => {
                let optional = param.optional.is_some();
                quote_spanned!(param.ty.span()=> __udf::arg_spec::<#ty>(#name, #hint, #optional))
            }
        }
    });
    let output_hint = option(eval.output_hint.as_ref().map(|h| h.tokens()));
    let state_specs = eval.states.iter().map(|state| {
        let name = &state.name;
        let kind = match state.kind {
            StateKind::Value => quote!(__udf::StateKind::Value),
            StateKind::List => quote!(__udf::StateKind::List),
            StateKind::Map => quote!(__udf::StateKind::Map),
        };
        let shown = &state.shown;
        let hint = option(state.hint.as_ref().map(|h| h.tokens()));
        let ttl = option(state.ttl_millis.map(|t| quote!(#t)));
        quote!(__udf::state_spec(#name, #kind, #shown, #hint, #ttl))
    });
    let (sql_name, description) = (&def.sql_name, &def.description);
    let has_timer = def.on_timer.is_some();
    quote! {
        __udf::FunctionSpec::new(#sql_name, __udf::FunctionKind::ProcessTable)
            .description(#description)
            .signature(
                __udf::Signature::new("eval")
                    #(.arg(#arg_specs))*
                    .output(__udf::output_spec::<#row_ty>(#output_hint))
            )
            #(.state(#state_specs))*
            .on_timer(#has_timer)
    }
}

/// `UdfState`, one store per state entry (named after the `eval` parameter), with its
/// `StateStores` impl; the type to name; its constructor.
fn state_struct(states: &[StateParam]) -> (TokenStream, TokenStream, TokenStream) {
    if states.is_empty() {
        return (quote!(), quote!(__udf::NoState), quote!(__udf::NoState));
    }
    let fields: Vec<_> = states.iter().map(|s| &s.ident).collect();
    let (store_types, store_new): (Vec<_>, Vec<_>) = states.iter().map(store).unzip();
    let indices: Vec<_> = (0..states.len())
        .map(proc_macro2::Literal::usize_unsuffixed)
        .collect();
    let items = quote! {
        /// The stores of the state entries, one per `#[state]` parameter, for every key slot of
        /// a processor.
        struct UdfState {
            #(#fields: #store_types,)*
        }

        impl __udf::StateStores for UdfState {
            fn entry(&self, index: usize) -> ::core::option::Option<&dyn __udf::EntryStore> {
                match index {
                    #(#indices => ::core::option::Option::Some(&self.#fields),)*
                    _ => ::core::option::Option::None,
                }
            }

            fn entry_mut(&mut self, index: usize) -> ::core::option::Option<&mut dyn __udf::EntryStore> {
                match index {
                    #(#indices => ::core::option::Option::Some(&mut self.#fields),)*
                    _ => ::core::option::Option::None,
                }
            }

            fn as_any_mut(&mut self) -> &mut dyn ::core::any::Any {
                self
            }
        }
    };
    let new = quote!(UdfState {
        #(#fields: #store_new(setup, #indices)?,)*
    });
    (items, quote!(UdfState), new)
}

/// `UdfArgs`, the reader of each argument (named after its parameter), and its constructor
/// over one call's table column and the scalar arguments. With several table arguments a
/// call's rows are one table's: the others' readers are `None` (their parameters are
/// `Option`s, passed `None`).
fn args_struct(args: &[ArgParam]) -> (TokenStream, TokenStream) {
    let several = args.iter().filter(|a| a.table.is_some()).count() > 1;
    let fields: Vec<_> = args.iter().map(|a| &a.param.ident).collect();
    let readers = args.iter().map(|arg| {
        let ty = types::with_lifetimes(&arg.param.ty, "'a");
        let input = quote_spanned!(arg.param.ty.span()=> __udf::ArgInput<<#ty as __udf::ArgValue<'a>>::Reader>);
        if several && arg.table.is_some() {
            quote!(::core::option::Option<#input>)
        } else {
            input
        }
    });
    let (mut scalar, mut table_position) = (0usize, 0usize);
    let new_readers = args.iter().map(|arg| {
        let ty = types::with_lifetimes(&arg.param.ty, "'_");
        let name = &arg.param.sql_name;
        let reader = quote_spanned!(arg.param.ty.span()=> __udf::reader::<#ty>);
        match arg.table {
            Some(_) if several => {
                let position = proc_macro2::Literal::usize_unsuffixed(table_position);
                table_position += 1;
                quote! {
                    if table_index == #position {
                        ::core::option::Option::Some(#reader(__udf::table_column(table)?, #name)?)
                    } else {
                        ::core::option::Option::None
                    }
                }
            }
            Some(_) => quote!(#reader(__udf::table_column(table)?, #name)?),
            None => {
                let index = proc_macro2::Literal::usize_unsuffixed(scalar);
                scalar += 1;
                quote!(#reader(&setup.scalars[#index], #name)?)
            }
        }
    });
    let new_readers: Vec<_> = new_readers.collect();
    // Without arguments the struct has only the lifetime to hold.
    let (marker, marker_new) = if args.is_empty() {
        (
            quote!(_call: ::core::marker::PhantomData<&'a ()>,),
            quote!(_call: ::core::marker::PhantomData,),
        )
    } else {
        (quote!(), quote!())
    };
    let items = quote! {
        /// The readers of one call's arguments: the table argument's rows and the scalar
        /// arguments' values.
        struct UdfArgs<'a> {
            #(#fields: #readers,)*
            #marker
        }
    };
    let new = quote!(UdfArgs {
        #(#fields: #new_readers,)*
        #marker_new
    });
    (items, new)
}

/// `eval`'s arguments after its state entries: the table argument at `row` (with several,
/// the call's table at `row` and `None` for the others), scalar arguments.
fn eval_arguments(eval: &PtfEval) -> TokenStream {
    let several = eval.args.iter().filter(|a| a.table.is_some()).count() > 1;
    eval.args
        .iter()
        .map(|arg| {
            let field = &arg.param.ident;
            match &arg.table {
                Some(_) if several => quote! {
                    match &args.#field {
                        ::core::option::Option::Some(input) => __udf::ArgReader::get(&input.reader, row)?,
                        ::core::option::Option::None => ::core::option::Option::None,
                    },
                },
                Some(_) => quote!(__udf::ArgReader::get(&args.#field.reader, row)?,),
                None => quote!(__udf::ArgReader::get(&args.#field.reader, 0)?,),
            }
        })
        .collect()
}

/// One call of `method`: load each state entry of `key`, call, write each back (or clear it,
/// if the call cleared it); whether the key is left without state. `states` are `eval`'s,
/// whose names the stores have (`on_timer` declares the same entries in the same order).
fn call_method(
    self_ty: &syn::Type,
    method: &PtfEval,
    states: &[StateParam],
    arguments: TokenStream,
) -> TokenStream {
    let ident = &method.ident;
    let receiver = match method.receiver {
        Receiver::None => quote!(),
        Receiver::Ref => quote!(function,),
    };
    let context = match &method.context {
        Some(ContextParam { mutable: true }) => quote!(ctx,),
        Some(ContextParam { mutable: false }) => quote!(&*ctx,),
        None => quote!(),
    };
    // Each entry's value (or view) is a local named after their entry's position: a user's names cannot
    // clash with `key`, `now` or another entry.
    let locals: Vec<_> = (0..states.len())
        .map(|i| format_ident!("entry_{i}"))
        .collect();
    let load = states.iter().zip(&locals).map(|(state, local)| {
        let field = &state.ident;
        match state.kind {
            StateKind::Value => quote!(let #local = state.#field.value(key, now);),
            StateKind::List | StateKind::Map => quote!(let #local = state.#field.view(key, now);),
        }
    });
    let pass = locals.iter().map(|local| quote!(#local,));
    let write_back = states.iter().enumerate().map(|(index, state)| {
        let index = proc_macro2::Literal::usize_unsuffixed(index);
        let field = &state.ident;
        let keep = match state.kind {
            StateKind::Value => quote!(state.#field.finish(key, now)),
            StateKind::List | StateKind::Map => quote!(state.#field.finish(key)?),
        };
        // Only a call with a context can clear state.
        if method.context.is_none() {
            return quote!(absent &= #keep;);
        }
        quote! {
            absent &= if ctx.is_cleared(#index) {
                __udf::EntryStore::clear(&mut state.#field, key as u32)?;
                true
            } else {
                #keep
            };
        }
    });
    let unit = match &method.output {
        Some(ret) => quote_spanned!(ret.span()=> __udf::UnitResult::into_result),
        None => quote!(__udf::UnitResult::into_result),
    };
    quote! {
        #(#load)*
        #unit(<#self_ty>::#ident(#receiver #context #(#pass)* #arguments out))?;
        #[allow(unused_mut)]
        let mut absent = true;
        #(#write_back)*
        ::core::result::Result::Ok(absent)
    }
}
