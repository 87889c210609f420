//! `#[aggregate_function]` and `#[table_aggregate_function]` on an `impl` block:
//! `accumulate` (overloadable as `accumulate_*`), optional `merge` and `reset`, and the result:
//! `get_value` (with optional `retract`/`retract_*` per overload) for aggregates,
//! `emit_value` and/or `emit_update_with_retract` for table aggregates. The accumulator
//! type is `type Acc = ...;` or the first parameter of `accumulate` (`acc: &mut Acc`).

mod expand;
mod expand_table;

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{FnArg, Ident, ImplItem, Item, Type};

use crate::attr::{self, FunctionOptions};
use crate::check;
use crate::ctxt::Ctxt;
use crate::dispatch;
use crate::hint::Hint;
use crate::signature::{EvalMethod, Receiver, Returns};
use crate::types;

/// Which macro is at work.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Aggregate,
    TableAggregate,
}

impl Kind {
    fn macro_name(self) -> &'static str {
        match self {
            Kind::Aggregate => "aggregate_function",
            Kind::TableAggregate => "table_aggregate_function",
        }
    }
}

/// `get_value(acc: &Acc) -> R`.
pub struct GetValue {
    pub ident: Ident,
    pub receiver: Receiver,
    pub output: Type,
    pub hint: Option<Hint>,
}

/// A method on accumulators only: `merge(acc: &mut Acc, other: &Acc)` or
/// `reset(acc: &mut Acc)`.
pub struct AccMethod {
    pub ident: Ident,
    pub receiver: Receiver,
    pub output: Option<Type>,
}

/// `emit_value(acc: &Acc, out: &mut Collector<T>)` or
/// `emit_update_with_retract(acc: &Acc, out: &mut RetractableCollector<T>)`.
pub struct Emit {
    pub ident: Ident,
    pub receiver: Receiver,
    pub output: Option<Type>,
}

/// What a table aggregate emits: rows of type `row`.
pub struct Emission {
    pub row: Type,
    pub hint: Option<Hint>,
    pub value: Option<Emit>,
    pub update_with_retract: Option<Emit>,
}

/// How the function produces its result.
pub enum Output {
    GetValue(Box<GetValue>),
    Emit(Box<Emission>),
}

pub struct AggregateDef {
    pub self_ty: Type,
    pub sql_name: String,
    pub description: String,
    pub deterministic: bool,
    pub acc: Type,
    /// One per signature.
    pub accumulates: Vec<EvalMethod>,
    /// Parallel to `accumulates` when the function can retract.
    pub retracts: Option<Vec<EvalMethod>>,
    pub merge: Option<AccMethod>,
    /// Aggregates only: prepares an emitted group's accumulator for reuse.
    pub reset: Option<AccMethod>,
    pub output: Output,
}

pub fn expand(kind: Kind, args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let keys: &[&str] = match kind {
        Kind::Aggregate => &["name", "deterministic", "retract", "merge"],
        Kind::TableAggregate => &["name", "deterministic", "merge"],
    };
    let options = FunctionOptions::parse(kind.macro_name(), keys, args, &cx);
    let block = match syn::parse2::<Item>(input) {
        Ok(Item::Impl(block)) => block,
        Ok(other) => {
            let message = match kind {
                Kind::Aggregate => {
                    "#[aggregate_function] goes on the `impl` block of a function type, with `accumulate` and `get_value` methods"
                }
                Kind::TableAggregate => {
                    "#[table_aggregate_function] goes on the `impl` block of a function type, with `accumulate` and `emit_value` methods"
                }
            };
            let error = syn::Error::new_spanned(crate::eval::item_keyword(&other), message);
            let mut tokens = other.into_token_stream();
            tokens.extend(error.to_compile_error());
            return tokens;
        }
        Err(error) => return error.to_compile_error(),
    };
    let (def, block) = parse(kind, block, options, &cx);
    match (cx.check(), def) {
        (Ok(()), Some(def)) => {
            let generated = match &def.output {
                Output::GetValue(get_value) => expand::expand(&def, get_value),
                Output::Emit(emission) => expand_table::expand(&def, emission),
            };
            quote::quote!(#block #generated)
        }
        (Err(error), _) => {
            let mut tokens = block.into_token_stream();
            tokens.extend(error.to_compile_error());
            tokens
        }
        (Ok(()), None) => block.into_token_stream(),
    }
}

fn receiver_of(sig: &syn::Signature) -> Receiver {
    match sig.inputs.first() {
        Some(FnArg::Receiver(_)) => Receiver::Ref,
        _ => Receiver::None,
    }
}

/// The types of the typed parameters of `sig`.
fn typed_params(sig: &syn::Signature) -> Vec<&Type> {
    sig.inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(t) => Some(&*t.ty),
            FnArg::Receiver(_) => None,
        })
        .collect()
}

/// The accumulator type named by `type Acc = ...;`, removed from the block.
fn take_acc_item(block: &mut syn::ItemImpl, cx: &Ctxt) -> Option<Type> {
    let mut acc = None;
    block.items.retain(|item| match item {
        ImplItem::Type(t) if t.ident == "Acc" => {
            if acc.is_some() {
                cx.error_spanned_by(&t.ident, "duplicate `type Acc`");
            }
            acc = Some(t.ty.clone());
            false
        }
        _ => true,
    });
    acc
}

fn parse(
    kind: Kind,
    mut block: syn::ItemImpl,
    options: FunctionOptions,
    cx: &Ctxt,
) -> (Option<AggregateDef>, syn::ItemImpl) {
    let macro_name = kind.macro_name();
    let Some((self_ty, sql_name)) = crate::eval::impl_target(&block, macro_name, cx) else {
        return (None, block);
    };

    // The accumulator: `type Acc`, else the first parameter of `accumulate`.
    let declared = take_acc_item(&mut block, cx);
    let acc = declared.or_else(|| {
        block.items.iter().find_map(|item| match item {
            ImplItem::Fn(f) if f.sig.ident.to_string().starts_with("accumulate") => {
                typed_params(&f.sig)
                    .first()
                    .and_then(|t| types::mutable_referent(t))
                    .cloned()
            }
            _ => None,
        })
    });
    let Some(acc) = acc else {
        cx.error_spanned_by(
            &block.self_ty,
            "no accumulator: declare `type Acc = MyAccumulator;` or write `fn accumulate(acc: &mut MyAccumulator, ...)`",
        );
        return (None, block);
    };
    for item in &mut block.items {
        if let ImplItem::Fn(f) = item {
            types::replace_self_acc(f, &acc);
        }
    }

    let mut accumulates = Vec::new();
    let mut retracts: Vec<(String, EvalMethod)> = Vec::new();
    let mut merge = None;
    let mut reset = None;
    let mut get_value = None;
    let mut emits: Vec<(bool, Emit, Type, Option<Hint>)> = Vec::new();
    // An emit method with a wrong signature has its own error; it is not also missing.
    let mut misdeclared_emit = false;
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let name = method.sig.ident.to_string();
        let receiver = receiver_of(&method.sig);
        if let Some(suffix) = overload_suffix(&name, "accumulate") {
            let eval = EvalMethod::parse(
                &mut method.sig,
                &mut method.attrs,
                macro_name,
                receiver,
                (1, Returns::Nothing),
                cx,
            );
            check_acc_param(&eval, &acc, true, cx);
            accumulates.push((suffix.to_owned(), eval));
        } else if let (Some(_), Kind::TableAggregate) = (overload_suffix(&name, "retract"), kind) {
            cx.error_spanned_by(
                &method.sig.ident,
                "a table aggregate takes append-only input, so `retract` would never be called; remove it",
            );
        } else if let Some(suffix) = overload_suffix(&name, "retract") {
            let eval = EvalMethod::parse(
                &mut method.sig,
                &mut method.attrs,
                macro_name,
                receiver,
                (1, Returns::Nothing),
                cx,
            );
            check_acc_param(&eval, &acc, true, cx);
            retracts.push((suffix.to_owned(), eval));
        } else if name == "open" || name == "close" {
            // Flink calls them on aggregates too; here nothing would: an error, not a method
            // that silently never runs.
            cx.error_spanned_by(
                &method.sig.ident,
                format!(
                    "#[{macro_name}] functions have no `open`/`close` yet (nothing would call `{name}`): set up in the function's fields, or rename the method if it is a helper"
                ),
            );
        } else if name == "merge" {
            merge = Some(acc_method(
                &method.sig,
                receiver,
                &[quote::quote!(&mut #acc), quote::quote!(&#acc)],
                format!("fn merge(acc: &mut {0}, other: &{0})", types::display(&acc)),
                cx,
            ));
        } else if name == "reset" && kind == Kind::TableAggregate {
            cx.error_spanned_by(
                &method.sig.ident,
                "a table aggregate never reuses accumulators (each group starts from `Default`), so `reset` would never be called; rename the method if it is a helper",
            );
        } else if name == "reset" {
            reset = Some(acc_method(
                &method.sig,
                receiver,
                &[quote::quote!(&mut #acc)],
                format!("fn reset(acc: &mut {})", types::display(&acc)),
                cx,
            ));
        } else if kind == Kind::TableAggregate
            && (name == "emit_value" || name == "emit_update_with_retract")
        {
            let update = name == "emit_update_with_retract";
            let hint = attr::take_one(&mut method.attrs, attr::DATA_TYPE, cx)
                .and_then(|a| attr::parse_data_type(&a, cx));
            let collector = if update {
                "RetractableCollector"
            } else {
                "Collector"
            };
            let params = typed_params(&method.sig);
            let acc_ok = params.first().is_some_and(|t| {
                t.to_token_stream().to_string() == quote::quote!(&#acc).to_string()
            });
            let row = params
                .get(1)
                .and_then(|t| types::collector_item(t, collector))
                .cloned();
            match (acc_ok && params.len() == 2, row) {
                (true, Some(row)) => {
                    dispatch::bound_user_method(&mut method.sig, &mut method.attrs, &row);
                    let emit = Emit {
                        ident: method.sig.ident.clone(),
                        receiver,
                        output: return_type(&method.sig),
                    };
                    emits.push((update, emit, row, hint));
                }
                _ => {
                    misdeclared_emit = true;
                    cx.error_spanned_by(
                        &method.sig.ident,
                        format!(
                            "`{name}` must be declared as `fn {name}(acc: &{}, out: &mut {collector}<T>)`",
                            types::display(&acc)
                        ),
                    );
                }
            }
        } else if kind == Kind::TableAggregate && name == "get_value" {
            cx.error_spanned_by(
                &method.sig.ident,
                "a table aggregate emits rows with `emit_value(acc, out: &mut Collector<T>)` instead of `get_value`",
            );
        } else if kind == Kind::Aggregate && name == "get_value" {
            let hint = attr::take_one(&mut method.attrs, attr::DATA_TYPE, cx)
                .and_then(|a| attr::parse_data_type(&a, cx));
            let params = typed_params(&method.sig);
            let ok = params.len() == 1
                && params[0].to_token_stream().to_string() == quote::quote!(&#acc).to_string();
            if !ok {
                cx.error_spanned_by(
                    &method.sig.ident,
                    format!(
                        "`get_value` must be declared as `fn get_value(acc: &{}) -> T`",
                        types::display(&acc)
                    ),
                );
            }
            match return_type(&method.sig) {
                Some(output) => {
                    get_value = Some(GetValue {
                        ident: method.sig.ident.clone(),
                        receiver,
                        output,
                        hint,
                    })
                }
                None => cx.error_spanned_by(
                    &method.sig.ident,
                    "`get_value` must return the aggregate's result",
                ),
            }
        }
        // What is left on any method but `accumulate`/`retract` (which took theirs) is
        // misplaced; `get_value` and the emit methods took their result hint.
        attr::reject(
            &mut method.attrs,
            &[attr::DATA_TYPE, attr::VARARGS, attr::ARGUMENT],
            "`accumulate`/`retract` methods (and #[data_type] on the result method)",
            cx,
        );
    }

    if accumulates.is_empty() {
        cx.error_spanned_by(
            &block.self_ty,
            format!("an #[{macro_name}] impl needs an `accumulate` method"),
        );
    }
    let output = match kind {
        Kind::Aggregate => match get_value {
            Some(get_value) => Output::GetValue(Box::new(get_value)),
            None => {
                cx.error_spanned_by(
                    &block.self_ty,
                    "an #[aggregate_function] impl needs a `get_value` method",
                );
                return (None, block);
            }
        },
        Kind::TableAggregate => match emission(emits, cx) {
            Some(emission) => Output::Emit(Box::new(emission)),
            None if misdeclared_emit => return (None, block),
            None => {
                cx.error_spanned_by(
                    &block.self_ty,
                    "a #[table_aggregate_function] impl needs `emit_value(acc, out: &mut Collector<T>)` or `emit_update_with_retract(acc, out: &mut RetractableCollector<T>)`",
                );
                return (None, block);
            }
        },
    };
    let retracts = pair_retracts(&accumulates, retracts, cx);
    check_declared(
        &options,
        retracts.is_some(),
        merge.is_some(),
        &block.self_ty,
        cx,
    );

    let accumulates: Vec<EvalMethod> = accumulates.into_iter().map(|(_, e)| e).collect();
    check::check_arguments(&accumulates, cx);
    let mut def = AggregateDef {
        self_ty,
        sql_name,
        description: attr::doc_text(&block.attrs),
        deterministic: true,
        acc,
        accumulates,
        retracts,
        merge,
        reset,
        output,
    };
    if let Some(name) = options.name {
        def.sql_name = name.value();
    }
    if let Some(value) = options.deterministic {
        def.deterministic = value.value;
    }
    (Some(def), block)
}

/// The emitted row type, agreed by both emit methods; a hint may sit on either.
fn emission(emits: Vec<(bool, Emit, Type, Option<Hint>)>, cx: &Ctxt) -> Option<Emission> {
    let (first_row, _) = emits
        .first()
        .map(|(_, _, row, hint)| (row.clone(), hint.clone()))?;
    let mut emission = Emission {
        row: first_row,
        hint: None,
        value: None,
        update_with_retract: None,
    };
    for (update, emit, row, hint) in emits {
        if row.to_token_stream().to_string() != emission.row.to_token_stream().to_string() {
            cx.error_spanned_by(
                &row,
                format!(
                    "`{}` must emit the same row type as the other emit method",
                    emit.ident
                ),
            );
        }
        emission.hint = emission.hint.or(hint);
        if update {
            emission.update_with_retract = Some(emit);
        } else {
            emission.value = Some(emit);
        }
    }
    Some(emission)
}

/// `accumulate` → `""`, `accumulate_text` → `"_text"`, anything else → `None`.
fn overload_suffix<'a>(name: &'a str, base: &str) -> Option<&'a str> {
    let rest = name.strip_prefix(base)?;
    (rest.is_empty() || rest.starts_with('_')).then_some(rest)
}

fn return_type(sig: &syn::Signature) -> Option<Type> {
    match &sig.output {
        syn::ReturnType::Type(_, ty) if !matches!(&**ty, Type::Tuple(t) if t.elems.is_empty()) => {
            Some((**ty).clone())
        }
        _ => None,
    }
}

fn check_acc_param(eval: &EvalMethod, acc: &Type, mutable: bool, cx: &Ctxt) {
    let expected = if mutable {
        quote::quote!(&mut #acc)
    } else {
        quote::quote!(&#acc)
    };
    match eval.leading.first() {
        Some(ty) if ty.to_token_stream().to_string() == expected.to_string() => {}
        Some(ty) => cx.error_spanned_by(
            ty,
            format!(
                "the first parameter of `{}` is the accumulator and must be `{}`",
                eval.ident,
                expected
                    .to_string()
                    .replace("& mut ", "&mut ")
                    .replace("& ", "&")
            ),
        ),
        None => cx.error_spanned_by(
            &eval.ident,
            format!(
                "`{}` takes the accumulator first: `acc: &mut {}`",
                eval.ident,
                types::display(acc)
            ),
        ),
    }
}

/// Each `retract_x` must undo an `accumulate_x` with the same parameters; retraction is a
/// capability of the function only when every `accumulate` has its `retract`.
fn pair_retracts(
    accumulates: &[(String, EvalMethod)],
    mut retracts: Vec<(String, EvalMethod)>,
    cx: &Ctxt,
) -> Option<Vec<EvalMethod>> {
    if retracts.is_empty() {
        return None;
    }
    for (suffix, retract) in &retracts {
        match accumulates.iter().find(|(s, _)| s == suffix) {
            None => cx.error_spanned_by(
                &retract.ident,
                format!("`{}` has no `accumulate{suffix}` to undo", retract.ident),
            ),
            Some((_, accumulate)) => {
                let shape = |e: &EvalMethod| {
                    e.all_params()
                        .map(|p| p.ty.to_token_stream().to_string())
                        .collect::<Vec<_>>()
                };
                if shape(accumulate) != shape(retract) {
                    cx.error_spanned_by(
                        &retract.ident,
                        format!(
                            "`{}` must take the same arguments as `{}`",
                            retract.ident, accumulate.ident
                        ),
                    );
                }
            }
        }
    }
    let mut paired = Vec::with_capacity(accumulates.len());
    for (suffix, accumulate) in accumulates {
        match retracts.iter().position(|(s, _)| s == suffix) {
            Some(index) => paired.push(retracts.swap_remove(index).1),
            None => {
                cx.error_spanned_by(
                    &accumulate.ident,
                    format!("`{}` has no `retract{suffix}`: with retraction, every `accumulate` needs one", accumulate.ident),
                );
                return None;
            }
        }
    }
    Some(paired)
}

/// `#[aggregate_function(retract, merge)]` promises capabilities; the methods must exist.
fn check_declared(
    options: &FunctionOptions,
    has_retract: bool,
    has_merge: bool,
    self_ty: &Type,
    cx: &Ctxt,
) {
    if let (Some(flag), false) = (&options.retract, has_retract) {
        cx.error_spanned_by(
            flag,
            format!(
                "`retract` is declared, but `{}` has no `retract` method",
                types::display(self_ty)
            ),
        );
    }
    if let (Some(flag), false) = (&options.merge, has_merge) {
        cx.error_spanned_by(
            flag,
            format!(
                "`merge` is declared, but `{}` has no `merge` method",
                types::display(self_ty)
            ),
        );
    }
}

/// `merge` / `reset`: a method over accumulators whose parameters must be `expected`
/// (`shape` is how the error shows the right declaration).
fn acc_method(
    sig: &syn::Signature,
    receiver: Receiver,
    expected: &[proc_macro2::TokenStream],
    shape: String,
    cx: &Ctxt,
) -> AccMethod {
    let params = typed_params(sig);
    let ok = params.len() == expected.len()
        && params
            .iter()
            .zip(expected)
            .all(|(param, expected)| param.to_token_stream().to_string() == expected.to_string());
    if !ok {
        cx.error_spanned_by(
            &sig.ident,
            format!("`{}` must be declared as `{shape}`", sig.ident),
        );
    }
    AccMethod {
        ident: sig.ident.clone(),
        receiver,
        output: return_type(sig),
    }
}
