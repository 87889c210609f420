//! Code generation for `#[ptf]`: the spec, and a processor type whose `process` loops over
//! the rows of a batch — fire the timers the row's watermark made due, load state, call
//! `eval`, write state back, hand emitted rows on.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::PtfDef;
use super::model::{StateKind, StateParam};
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

/// The store type of a state entry, and the constructor taking its spec.
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
    let method = &eval.ident;
    let (target, this_arg) = match eval.receiver {
        Receiver::None => (quote!(#self_ty), quote!()),
        Receiver::Ref => (quote!(<#self_ty>), quote!(this,)),
    };
    let Some(row) = &eval.collector else {
        return quote!();
    };
    let row_ty = types::with_lifetimes(row, "'_");

    // Compile-time checks of hints and of the table parameters' types.
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

    // The spec.
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

    // The processor's state stores.
    let fields: Vec<_> = (0..eval.states.len())
        .map(|i| format_ident!("state_{i}"))
        .collect();
    let (store_types, store_new): (Vec<_>, Vec<_>) = eval.states.iter().map(store).unzip();
    let indices: Vec<usize> = (0..eval.states.len()).collect();
    let stateful = !eval.states.is_empty();

    // Per batch: readers of the table and scalar arguments.
    let mut setup = TokenStream::new();
    let mut call_args = TokenStream::new();
    if let Some(context) = &eval.context {
        call_args.extend(if context.mutable {
            quote!(&mut ctx,)
        } else {
            quote!(&ctx,)
        });
    }
    for (state, field) in eval.states.iter().zip(&fields) {
        call_args.extend(match state.kind {
            StateKind::Value => quote!(&mut #field,),
            StateKind::List | StateKind::Map => quote!(#field,),
        });
    }
    let mut scalar = 0usize;
    for (i, arg) in eval.args.iter().enumerate() {
        let param = &arg.param;
        let ty = types::with_lifetimes(&param.ty, "'_");
        let name = &param.sql_name;
        let input = format_ident!("arg{i}");
        let reader = quote_spanned!(param.ty.span()=> __udf::reader::<#ty>);
        if arg.table.is_some() {
            setup.extend(quote! {
                let #input = match call.table {
                    ::core::option::Option::Some(column) => #reader(column, #name)?,
                    ::core::option::Option::None => {
                        return ::std::result::Result::Err(__udf::Error::msg("the table argument is missing"));
                    }
                };
            });
            call_args.extend(quote!(__udf::ArgReader::get(&#input.reader, row)?,));
        } else {
            setup.extend(quote!(let #input = #reader(&self.setup.scalars[#scalar], #name)?;));
            call_args.extend(quote!(__udf::ArgReader::get(&#input.reader, 0)?,));
            scalar += 1;
        }
    }

    let load: TokenStream = eval
        .states
        .iter()
        .zip(&fields)
        .map(|(state, field)| match state.kind {
            StateKind::Value => quote!(let mut #field = self.#field.load(key, now);),
            StateKind::List | StateKind::Map => quote!(let #field = self.#field.view(key, now);),
        })
        .collect();
    // Each store says whether the key is left without an entry; a key left with none at
    // all may give its slot back.
    let write_back: TokenStream = eval
        .states
        .iter()
        .zip(&fields)
        .zip(&indices)
        .map(|((state, field), i)| {
            let keep = match state.kind {
                StateKind::Value => quote!(self.#field.store(key, #field, now)),
                StateKind::List | StateKind::Map => quote!(self.#field.finish(key)),
            };
            quote! {
                let absent = if ctx.is_cleared(#i) {
                    self.#field.clear(key);
                    true
                } else {
                    #keep
                } && absent;
            }
        })
        .collect();
    // Keys have slots when there is state or timers.
    let keyed = stateful || def.on_timer.is_some();
    let key = if keyed {
        quote!(let key = call.keys[row] as usize;)
    } else {
        quote!()
    };
    let apply_timers = if def.on_timer.is_some() {
        quote! {
            if !ctx.timer_requests().is_empty() {
                call.timers.apply(key as u32, ctx.timer_requests());
            }
        }
    } else {
        quote!()
    };
    let on_timer = def.on_timer.as_ref().map(|timer| {
        on_timer_method(
            &fire_loop(timer, &fields, &load, &write_back, quote!(0)),
            &emitted_type(row),
        )
    });
    // Timers the watermark made due fire before the row (rule 26 of docs/semantics.md).
    let fire_before_row = match &def.on_timer {
        Some(timer) => {
            let fire = fire_loop(timer, &fields, &load, &write_back, quote!(call.rows));
            quote! {
                let mut own = watermark;
                while let ::core::option::Option::Some(watermark) = call.next_firing(row, &mut own) {
                    if call.timers.due(watermark) {
                        #fire
                    }
                }
                call.row = row;
            }
        }
        None => quote!(),
    };
    let has_timer = def.on_timer.is_some();
    let release = if stateful {
        quote! {
            if absent {
                call.released.push(key as u32);
            }
        }
    } else {
        quote!()
    };
    let unit = match &eval.output {
        Some(ret) => quote_spanned!(ret.span()=> __udf::UnitResult::into_result),
        None => quote!(__udf::UnitResult::into_result),
    };
    // Sized for about a row out per row in (a call may cover a single row).
    let emitted = quote_spanned!(row.span()=> __udf::Emitted::<#row_ty>::new(&self.setup.output, call.chunk.min(call.rows))?);

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

            struct UdfProcessor {
                function: ::std::sync::Arc<#self_ty>,
                setup: __udf::ProcessorSetup,
                #(#fields: #store_types,)*
            }

            impl __udf::Processor for UdfProcessor {
                #[allow(unused_variables, unused_mut, clippy::needless_borrow)]
                fn process(&mut self, call: &mut __udf::ProcessCall<'_>) -> __udf::Result<(), __udf::Error> {
                    let this: &#self_ty = &self.function;
                    let now = call.now;
                    #setup
                    let mut emitted = #emitted;
                    let mut ctx = __udf::Context::new(&self.setup.info);
                    for row in 0..call.rows {
                        call.row = row;
                        let watermark = call.watermark_at(row);
                        #fire_before_row
                        #key
                        ctx.next_row(call.time(row), watermark);
                        #load
                        #unit(#target::#method(#this_arg #call_args &mut emitted.collector(row)))?;
                        if let ::core::option::Option::Some(error) = ctx.take_error() {
                            return ::std::result::Result::Err(error);
                        }
                        let absent = true;
                        #write_back
                        #apply_timers
                        #release
                        if let ::core::option::Option::Some(error) = emitted.take_error() {
                            return ::std::result::Result::Err(error);
                        }
                        if emitted.len() >= call.chunk {
                            __udf::hand_over(&mut emitted, &mut *call.sink)?;
                        }
                    }
                    __udf::hand_over(&mut emitted, &mut *call.sink)
                }

                #on_timer

                fn key_is_empty(&self, key: usize) -> bool {
                    true #(&& self.#fields.is_absent(key))*
                }

                fn state_entries(&self) -> usize {
                    0 #(+ self.#fields.len())*
                }
            }

            impl __udf::ProcessTableFunction for #self_ty {
                fn spec(&self) -> __udf::FunctionSpec {
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

                #lifecycle

                fn processor(
                    self: ::std::sync::Arc<Self>,
                    setup: __udf::ProcessorSetup,
                ) -> __udf::Result<::std::boxed::Box<dyn __udf::Processor>, __udf::Error> {
                    let spec = __udf::ProcessTableFunction::spec(&*self);
                    ::std::result::Result::Ok(::std::boxed::Box::new(UdfProcessor {
                        #(#fields: #store_new(setup.backend, &spec.state[#indices]),)*
                        function: self,
                        setup,
                    }))
                }
            }

            impl __udf::UserFunction for #self_ty {
                fn into_function(self) -> __udf::Function {
                    __udf::Function::Process(::std::sync::Arc::new(self))
                }
            }
        };
    }
}

/// `Emitted::<T>` for row type `T`.
fn emitted_type(row: &syn::Type) -> TokenStream {
    let row_ty = types::with_lifetimes(row, "'_");
    quote_spanned!(row.span()=> __udf::Emitted::<#row_ty>)
}

/// The loop that fires the timers due: each still registered gets its key's state, runs
/// `on_timer` (its rows owned by `base` + the timer's index in `call.fired`), and hands the
/// state and timer requests back as `eval` does. Shared by `on_timer` (the runtime fires)
/// and `process` (the watermark moved between rows).
fn fire_loop(
    timer: &super::model::PtfEval,
    fields: &[syn::Ident],
    load: &TokenStream,
    write_back: &TokenStream,
    base: TokenStream,
) -> TokenStream {
    let method = &timer.ident;
    let mut call_args = TokenStream::new();
    if let Some(context) = &timer.context {
        call_args.extend(if context.mutable {
            quote!(&mut ctx,)
        } else {
            quote!(&ctx,)
        });
    }
    for (state, field) in timer.states.iter().zip(fields) {
        call_args.extend(match state.kind {
            StateKind::Value => quote!(&mut #field,),
            StateKind::List | StateKind::Map => quote!(#field,),
        });
    }
    let unit = match &timer.output {
        Some(ret) => quote_spanned!(ret.span()=> __udf::UnitResult::into_result),
        None => quote!(__udf::UnitResult::into_result),
    };
    quote! {
        while let ::core::option::Option::Some(timer) = call.timers.next_due() {
            let index = call.fired.len();
            call.row = #base + index;
            call.fired.push(timer);
            let timer = &call.fired[index];
            let key = timer.key as usize;
            let mut ctx = __udf::OnTimerContext::new(&self.setup.info, timer, ::core::option::Option::Some(watermark));
            #load
            #unit(this.#method(#call_args &mut emitted.collector(#base + index)))?;
            if let ::core::option::Option::Some(error) = ctx.take_error() {
                return ::std::result::Result::Err(error);
            }
            let absent = true;
            #write_back
            if !ctx.timer_requests().is_empty() {
                call.timers.apply(timer.key, ctx.timer_requests());
            }
            if absent {
                call.released.push(timer.key);
            }
            if let ::core::option::Option::Some(error) = emitted.take_error() {
                return ::std::result::Result::Err(error);
            }
            if emitted.len() >= call.chunk {
                __udf::hand_over(&mut emitted, &mut *call.sink)?;
            }
        }
    }
}

/// `Processor::on_timer`: the timers the runtime found due.
fn on_timer_method(fire: &TokenStream, emitted: &TokenStream) -> TokenStream {
    quote! {
        #[allow(unused_variables, unused_mut, clippy::needless_borrow)]
        fn on_timer(&mut self, call: &mut __udf::TimerCall<'_>) -> __udf::Result<(), __udf::Error> {
            let this = &*self.function;
            let now = call.now;
            let watermark = call.watermark;
            let mut emitted = #emitted::new(&self.setup.output, call.chunk)?;
            #fire
            __udf::hand_over(&mut emitted, &mut *call.sink)
        }
    }
}
