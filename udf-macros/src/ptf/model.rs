//! The model of a `#[ptf]` evaluation method, parsed from its Rust signature. Parameters
//! come in Flink's order: an optional `Context`, the `#[state]` entries, the arguments
//! (table and scalar), and the output collector last.

use syn::{FnArg, Ident, LitStr, Pat, ReturnType, Type};

use crate::attr::{self, ArgumentAttr};
use crate::ctxt::Ctxt;
use crate::hint::Hint;
use crate::signature::{Param, Receiver};
use crate::types;

/// The kind of a state entry, from its Rust type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateKind {
    Value,
    List,
    Map,
}

/// `#[state] name: &mut T`.
pub struct StateParam {
    pub ident: Ident,
    pub name: String,
    pub kind: StateKind,
    /// The value type (`T`), the list element type, or the map's key and value types.
    pub types: Vec<Type>,
    /// The declared type as written, for the catalog.
    pub shown: String,
    pub hint: Option<Hint>,
    pub ttl_millis: Option<u64>,
    /// The `#[state]` attribute, where errors about the entry point.
    pub attr: syn::Attribute,
}

/// A table argument's traits.
pub struct TableTraits {
    pub set_semantics: bool,
    pub optional_partition_by: bool,
    pub pass_columns_through: bool,
    pub require_on_time: bool,
    /// The table may be a changelog: every row reaches `eval` with its kind.
    pub supports_updates: bool,
}

/// One SQL argument: a table or a scalar value.
pub struct ArgParam {
    pub param: Param,
    /// `Some` for a table argument.
    pub table: Option<TableTraits>,
}

/// The `Context` parameter.
pub struct ContextParam {
    pub mutable: bool,
}

pub struct PtfEval {
    pub ident: Ident,
    pub receiver: Receiver,
    pub context: Option<ContextParam>,
    pub states: Vec<StateParam>,
    pub args: Vec<ArgParam>,
    /// `T` of the last parameter `out: &mut Collector<T>`.
    pub collector: Option<Type>,
    /// The return type (`()` or `Result<()>`); `None` for `()`.
    pub output: Option<Type>,
    pub output_hint: Option<Hint>,
}

/// Where in the parameter list parsing is.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Start,
    States,
    Arguments,
    Collector,
}

impl PtfEval {
    /// Parses `eval` (`timer == false`) or `on_timer`, whose context is an
    /// `OnTimerContext` and which takes no arguments.
    pub fn parse(
        signature: &mut syn::Signature,
        attrs: &mut Vec<syn::Attribute>,
        receiver: Receiver,
        timer: bool,
        cx: &Ctxt,
    ) -> PtfEval {
        let context_type = if timer { "OnTimerContext" } else { "Context" };
        let output_hint =
            attr::take_one(attrs, attr::DATA_TYPE, cx).and_then(|a| attr::parse_data_type(&a, cx));
        for misplaced in attr::take(attrs, attr::VARARGS) {
            cx.error_spanned_by(
                misplaced,
                "a process table function has one fixed signature: it cannot take varargs",
            );
        }
        for name in [attr::ARGUMENT, attr::STATE] {
            for misplaced in attr::take(attrs, name) {
                cx.error_spanned_by(
                    misplaced,
                    format!("#[{name}] belongs on a parameter, not on the function"),
                );
            }
        }
        if let Some(asyncness) = &signature.asyncness {
            cx.error_spanned_by(asyncness, "#[ptf] cannot be an `async fn`");
            signature.asyncness = None;
        }
        if !signature.generics.params.is_empty()
            && signature
                .generics
                .params
                .iter()
                .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
        {
            cx.error_spanned_by(
                &signature.generics,
                "a SQL function cannot be generic over types or constants",
            );
        }

        let mut eval = PtfEval {
            ident: signature.ident.clone(),
            receiver,
            context: None,
            states: Vec::new(),
            args: Vec::new(),
            collector: None,
            output: match &signature.output {
                ReturnType::Default => None,
                ReturnType::Type(_, ty) => match &**ty {
                    Type::Tuple(t) if t.elems.is_empty() => None,
                    ty => Some(ty.clone()),
                },
            },
            output_hint,
        };

        let mut stage = Stage::Start;
        let mut seen_receiver = false;
        for input in signature.inputs.iter_mut() {
            let pat_type = match input {
                FnArg::Receiver(r) => {
                    seen_receiver = true;
                    check_receiver(r, receiver, cx);
                    continue;
                }
                FnArg::Typed(pat_type) => pat_type,
            };
            if stage == Stage::Collector {
                cx.error_spanned_by(
                    &pat_type.ty,
                    "the output collector `out: &mut Collector<T>` must be the last parameter",
                );
            }
            let state_attr = attr::take_one(&mut pat_type.attrs, attr::STATE, cx);
            if let Some(mutable) = types::context_reference(&pat_type.ty, context_type) {
                if stage != Stage::Start || eval.context.is_some() {
                    cx.error_spanned_by(
                        &pat_type.ty,
                        format!("the `{context_type}` parameter comes first, before state entries and arguments"),
                    );
                }
                if let Some(state) = &state_attr {
                    cx.error_spanned_by(state, "a `Context` is not a state entry");
                }
                for name in [attr::ARGUMENT, attr::DATA_TYPE] {
                    for misplaced in attr::take(&mut pat_type.attrs, name) {
                        cx.error_spanned_by(
                            misplaced,
                            format!("#[{name}] goes on the function's arguments; the `{context_type}` is not one"),
                        );
                    }
                }
                eval.context = Some(ContextParam { mutable });
                continue;
            }
            if let Some(row) = types::collector_item(&pat_type.ty, "Collector") {
                eval.collector = Some(row.clone());
                stage = Stage::Collector;
                for misplaced in attr::take(&mut pat_type.attrs, attr::DATA_TYPE) {
                    cx.error_spanned_by(
                        misplaced,
                        "put the row type hint on the function: #[data_type(\"...\")] above `fn`",
                    );
                }
                for misplaced in attr::take(&mut pat_type.attrs, attr::ARGUMENT) {
                    cx.error_spanned_by(
                        misplaced,
                        "the collector is not an argument: #[argument] goes on the function's arguments",
                    );
                }
                if let Some(state) = &state_attr {
                    cx.error_spanned_by(state, "the collector is not a state entry");
                }
                continue;
            }
            if let Some(state_attr) = state_attr {
                if stage > Stage::States {
                    cx.error_spanned_by(
                        &state_attr,
                        "state entries come before the arguments (after an optional `Context`)",
                    );
                }
                stage = stage.max(Stage::States);
                if let Some(state) = parse_state(pat_type, state_attr, cx) {
                    eval.states.push(state);
                }
                continue;
            }
            stage = Stage::Arguments;
            if timer {
                cx.error_spanned_by(
                    &pat_type.ty,
                    "`on_timer` takes an optional `ctx: &mut OnTimerContext`, the state entries of `eval` and the collector; it has no arguments",
                );
                continue;
            }
            if let Some(arg) = parse_arg(pat_type, cx) {
                eval.args.push(arg);
            }
        }
        if receiver == Receiver::Ref && !seen_receiver {
            cx.error_spanned_by(
                &signature.ident,
                "an evaluation method of #[ptf] takes `&self` first",
            );
        }
        if eval.collector.is_none() {
            cx.error_spanned_by(
                &signature.ident,
                format!(
                    "`{}` emits rows through a last parameter `out: &mut Collector<T>`, where `T` is the row type",
                    signature.ident
                ),
            );
        }
        if let (true, Some(hint)) = (timer, &eval.output_hint) {
            cx.error_spanned_by(
                &hint.literal,
                "the row type hint goes on `eval`; `on_timer` emits the same rows",
            );
        }
        eval
    }
}

fn check_receiver(receiver: &syn::Receiver, expected: Receiver, cx: &Ctxt) {
    match expected {
        Receiver::None => cx.error_spanned_by(receiver, "a free function has no `self`"),
        Receiver::Ref => {
            if receiver.reference.is_none()
                || receiver.colon_token.is_some()
                || receiver.mutability.is_some()
            {
                cx.error_spanned_by(
                    receiver,
                    "an evaluation method of #[ptf] takes `&self`: keyed state lives in #[state] parameters, not in the function",
                );
            }
        }
    }
}

fn plain_name(pat_type: &syn::PatType, cx: &Ctxt) -> Option<Ident> {
    match &*pat_type.pat {
        Pat::Ident(pat_ident) => Some(pat_ident.ident.clone()),
        other => {
            cx.error_spanned_by(
                other,
                "parameters of SQL functions need a plain name (it becomes the SQL name)",
            );
            None
        }
    }
}

/// `#[state(name = "...", ttl = "1 day", type = "ROW<...>")] ident: &mut T`.
fn parse_state(
    pat_type: &mut syn::PatType,
    state_attr: syn::Attribute,
    cx: &Ctxt,
) -> Option<StateParam> {
    for misplaced in attr::take(&mut pat_type.attrs, attr::ARGUMENT) {
        cx.error_spanned_by(
            misplaced,
            "a state entry takes its options in #[state(name = \"...\", ttl = \"...\", type = \"...\")]",
        );
    }
    let data_type = attr::take_one(&mut pat_type.attrs, attr::DATA_TYPE, cx)
        .and_then(|a| attr::parse_data_type(&a, cx));
    let ident = plain_name(pat_type, cx)?;
    let mut name: Option<LitStr> = None;
    let mut ttl_millis = None;
    let mut hint = data_type;
    if !matches!(state_attr.meta, syn::Meta::Path(_)) {
        let result = state_attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                let literal: LitStr = meta.value()?.parse()?;
                if !attr::is_identifier(&literal.value()) {
                    return Err(syn::Error::new(
                        literal.span(),
                        "a state name must be an identifier",
                    ));
                }
                name = Some(literal);
                Ok(())
            } else if meta.path.is_ident("ttl") {
                let literal: LitStr = meta.value()?.parse()?;
                let duration = udf_types::parse_duration(&literal.value())
                    .map_err(|e| syn::Error::new(literal.span(), format!("invalid TTL: {e}")))?;
                if duration.is_zero() {
                    return Err(syn::Error::new(
                        literal.span(),
                        "a TTL must be longer than zero; leave `ttl` out to keep entries forever",
                    ));
                }
                ttl_millis = Some(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX));
                Ok(())
            } else if meta.path.is_ident("type") {
                let literal: LitStr = meta.value()?.parse()?;
                hint = Some(Hint::parse(literal)?);
                Ok(())
            } else {
                Err(meta.error("unknown option of #[state]; expected one of `name`, `ttl`, `type`"))
            }
        });
        if let Err(error) = result {
            cx.push(error);
        }
    }

    let Some(referent) = types::mutable_referent(&pat_type.ty) else {
        cx.error_spanned_by(
            &pat_type.ty,
            format!(
                "a state entry is a `&mut` parameter: write `{ident}: &mut {}`",
                types::display(&pat_type.ty)
                    .trim_start_matches('&')
                    .trim_start()
            ),
        );
        return None;
    };
    let (kind, types) = if let Some(args) = types::generic_args(referent, "ListView") {
        (StateKind::List, args)
    } else if let Some(args) = types::generic_args(referent, "MapView") {
        (StateKind::Map, args)
    } else {
        (StateKind::Value, vec![referent])
    };
    let expected = match kind {
        StateKind::Value => 1,
        StateKind::List => 1,
        StateKind::Map => 2,
    };
    if types.len() != expected {
        cx.error_spanned_by(
            referent,
            match kind {
                StateKind::List => "write the element type: `ListView<T>`",
                _ => "write the key and value types: `MapView<K, V>`",
            },
        );
        return None;
    }
    if let (Some(hint), false) = (&hint, kind == StateKind::Value) {
        cx.error_spanned_by(
            &hint.literal,
            "a type hint applies to value state (`&mut Row`), not to list or map views",
        );
    }
    Some(StateParam {
        name: name.as_ref().map_or_else(
            || ident.to_string().trim_start_matches("r#").to_owned(),
            LitStr::value,
        ),
        ident,
        kind,
        types: types.into_iter().cloned().collect(),
        shown: types::display(referent),
        hint,
        ttl_millis,
        attr: state_attr,
    })
}

fn parse_arg(pat_type: &mut syn::PatType, cx: &Ctxt) -> Option<ArgParam> {
    let argument = attr::take_one(&mut pat_type.attrs, attr::ARGUMENT, cx)
        .map(|a| ArgumentAttr::parse(&a, true, cx))
        .unwrap_or_default();
    let data_type = attr::take_one(&mut pat_type.attrs, attr::DATA_TYPE, cx)
        .and_then(|a| attr::parse_data_type(&a, cx));
    let ident = plain_name(pat_type, cx)?;
    let hint = match (argument.hint.clone(), data_type) {
        (Some(a), Some(b)) => {
            cx.error_spanned_by(
                &b.literal,
                "two type hints for one parameter: keep `#[argument(type = ...)]` or `#[data_type(...)]`",
            );
            Some(a)
        }
        (a, b) => a.or(b),
    };

    let row = argument.table_trait("row_semantic_table");
    let set = argument.table_trait("set_semantic_table");
    let table = match (row, set) {
        (Some(_), Some(set)) => {
            cx.error_spanned_by(
                set,
                "a table argument has either row semantics or set semantics, not both",
            );
            None
        }
        (None, None) => {
            for flag in &argument.traits {
                cx.error_spanned_by(
                    flag,
                    format!(
                        "`{}` applies to table arguments: add `row_semantic_table` or `set_semantic_table`",
                        quote::ToTokens::to_token_stream(flag)
                    ),
                );
            }
            None
        }
        (row, set) => {
            let optional_partition_by = argument.table_trait("optional_partition_by");
            if let (Some(flag), Some(_)) = (optional_partition_by, row) {
                cx.error_spanned_by(
                    flag,
                    "`optional_partition_by` applies to set semantics; a row-semantics table is never partitioned",
                );
            }
            let supports_updates = argument.table_trait("supports_updates");
            if let (Some(flag), Some(_)) = (supports_updates, row) {
                cx.error_spanned_by(
                    flag,
                    "`supports_updates` applies to set semantics; a row-semantics table is read insert-only",
                );
            }
            if let Some(optional) = &argument.optional {
                cx.error_spanned_by(optional, "a table argument cannot be `optional`");
            }
            Some(TableTraits {
                set_semantics: set.is_some(),
                optional_partition_by: optional_partition_by.is_some(),
                pass_columns_through: argument.table_trait("pass_columns_through").is_some(),
                require_on_time: argument.table_trait("require_on_time").is_some(),
                supports_updates: supports_updates.is_some(),
            })
        }
    };
    if types::mutable_referent(&pat_type.ty).is_some() {
        cx.error_spanned_by(
            &pat_type.ty,
            if table.is_some() {
                "a table argument is a row taken by value (`Row` or a #[derive(SqlRow)] struct)"
            } else {
                "a `&mut` parameter of a #[ptf] function is a state entry: mark it #[state]"
            },
        );
        return None;
    }
    let rust_name = ident.to_string();
    Some(ArgParam {
        param: Param {
            sql_name: argument.name.as_ref().map_or_else(
                || rust_name.trim_start_matches("r#").to_owned(),
                LitStr::value,
            ),
            ident,
            ty: (*pat_type.ty).clone(),
            renamed: argument.name,
            optional: argument.optional,
            hint,
        },
        table,
    })
}
