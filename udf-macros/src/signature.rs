//! The model of one evaluation method, parsed from a Rust signature and its attributes.
//! Shared by every function kind.

use proc_macro2::Span;
use syn::{FnArg, Ident, LitStr, Pat, ReturnType, Type};

use crate::attr::{self, ArgumentAttr};
use crate::ctxt::Ctxt;
use crate::hint::Hint;
use crate::types::{self, BufferKind};
use udf_types::RootSet;

/// How the method is called.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    /// A free function: `name::eval(args)`.
    None,
    /// `&self`: `Self::method(self, args)`.
    Ref,
}

/// One SQL parameter.
pub struct Param {
    pub ident: Ident,
    /// The Rust type of a value (for varargs: the slice element type).
    pub ty: Type,
    /// The SQL name: `#[argument(name = ...)]`, else the Rust name.
    pub sql_name: String,
    /// Where a renaming `name = "..."` was written, if it was.
    pub renamed: Option<LitStr>,
    /// Where `optional` was written, if it was.
    pub optional: Option<syn::Path>,
    pub hint: Option<Hint>,
}

/// An output buffer parameter (`out: &mut String` / `&mut Vec<u8>`).
pub struct Buffer {
    pub kind: BufferKind,
}

/// What an evaluation method gives back.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Returns {
    /// The SQL result (scalar functions): a value, or text written into an `out` buffer.
    Value,
    /// Nothing SQL sees (`accumulate`, `retract`): `()` or `Result<()>`.
    Nothing,
    /// Rows, through a last parameter `out: &mut Collector<T>` (table functions); the method
    /// returns `()` or `Result<()>`.
    Rows,
    /// Rows, returned by an `async fn` as a collection (async table functions).
    AsyncRows,
}

/// One evaluation method: a signature of the SQL function.
pub struct EvalMethod {
    pub ident: Ident,
    pub receiver: Receiver,
    /// Leading parameters that are not SQL arguments (the accumulator of `accumulate`).
    pub leading: Vec<Type>,
    pub params: Vec<Param>,
    pub varargs: Option<Param>,
    pub buffer: Option<Buffer>,
    /// The row type `T` of a last parameter `out: &mut Collector<T>` (table functions).
    pub collector: Option<Type>,
    /// The return type; `None` for `()`.
    pub output: Option<Type>,
    pub output_hint: Option<Hint>,
    pub span: Span,
}

impl EvalMethod {
    /// Parses `signature` with `attrs` (the method's attributes; ours are removed).
    /// `kind` names the macro in messages, `receiver` is what this form of function expects.
    /// `leading` parameters after the receiver are taken as they are (not SQL arguments).
    pub fn parse(
        signature: &mut syn::Signature,
        attrs: &mut Vec<syn::Attribute>,
        macro_name: &str,
        receiver: Receiver,
        (leading, returns): (usize, Returns),
        cx: &Ctxt,
    ) -> EvalMethod {
        let output_hint =
            attr::take_one(attrs, attr::DATA_TYPE, cx).and_then(|a| attr::parse_data_type(&a, cx));
        if let (Returns::Nothing, Some(hint)) = (returns, &output_hint) {
            cx.error_spanned_by(
                &hint.literal,
                format!(
                    "`{}` returns nothing SQL sees: put the result type hint on `get_value`",
                    signature.ident
                ),
            );
        }
        let varargs = attr::take_one(attrs, attr::VARARGS, cx);
        if let Some(flag) = &varargs {
            attr::check_flag(flag, cx);
        }
        for misplaced in attr::take(attrs, attr::ARGUMENT) {
            cx.error_spanned_by(
                misplaced,
                "#[argument] belongs on a parameter, not on the function",
            );
        }
        for misplaced in attr::take(attrs, attr::STATE) {
            cx.error_spanned_by(
                misplaced,
                "#[state] belongs on a parameter of a #[ptf] function",
            );
        }

        check_header(signature, macro_name, cx);
        if !macro_name.starts_with("async_") {
            // Reported above; the item is passed on without it, so rustc adds no errors
            // about the async body on top of ours.
            signature.asyncness = None;
        }

        let mut params = Vec::new();
        let mut leading_types = Vec::new();
        let mut seen_receiver = false;
        for input in signature.inputs.iter_mut() {
            match input {
                FnArg::Receiver(r) => {
                    seen_receiver = true;
                    check_receiver(r, receiver, macro_name, cx);
                }
                FnArg::Typed(pat_type) if leading_types.len() < leading => {
                    leading_types.push((*pat_type.ty).clone());
                }
                FnArg::Typed(pat_type) => {
                    if let Some(param) = parse_param(pat_type, cx) {
                        params.push(param);
                    }
                }
            }
        }
        if receiver == Receiver::Ref && !seen_receiver {
            cx.error_spanned_by(
                &signature.ident,
                format!("an evaluation method of #[{macro_name}] takes `&self` first"),
            );
        }

        let buffer = match params.last() {
            Some(last) if returns == Returns::Value => types::output_buffer(&last.ty).map(|kind| {
                let param = params.pop().expect("checked non-empty");
                if let Some(a) = &param.hint {
                    cx.error_spanned_by(&a.literal, "put the result type hint on the function: #[data_type(\"...\")] above `fn`");
                }
                Buffer { kind }
            }),
            _ => None,
        };

        let collector = if returns == Returns::Rows {
            match params
                .last()
                .and_then(|p| types::collector_item(&p.ty, "Collector"))
            {
                Some(row) => {
                    let row = row.clone();
                    let param = params.pop().expect("checked non-empty");
                    if let Some(hint) = &param.hint {
                        cx.error_spanned_by(&hint.literal, "put the row type hint on the function: #[data_type(\"...\")] above `fn`");
                    }
                    Some(row)
                }
                None => {
                    cx.error_spanned_by(
                        &signature.ident,
                        format!("`{}` emits rows through a last parameter `out: &mut Collector<T>`, where `T` is the row type", signature.ident),
                    );
                    None
                }
            }
        } else {
            if returns == Returns::AsyncRows
                && let Some(last) = params.last()
                && types::collector_item(&last.ty, "Collector").is_some()
            {
                cx.error_spanned_by(
                    &last.ty,
                    "an async table function returns its rows (`-> Vec<T>`); it takes no collector",
                );
                params.pop();
                if let Some(syn::FnArg::Typed(last)) = signature.inputs.last_mut() {
                    types::name_collector_lifetime(&mut last.ty);
                }
            }
            None
        };

        let varargs = match (varargs, params.last()) {
            (Some(flag), Some(last)) => match types::slice_element(&last.ty).cloned() {
                Some(element) => {
                    let mut param = params.pop().expect("checked non-empty");
                    param.ty = element;
                    if let Some(optional) = &param.optional {
                        cx.error_spanned_by(optional, "a varargs parameter cannot be `optional`");
                    }
                    Some(param)
                }
                None => {
                    let _ = flag;
                    cx.error_spanned_by(
                        &last.ty,
                        format!(
                            "#[varargs] needs the last parameter to be a slice such as `&[f64]`, found `{}`",
                            types::display(&last.ty)
                        ),
                    );
                    None
                }
            },
            (Some(flag), None) => {
                cx.error_spanned_by(
                    flag,
                    "#[varargs] needs a last parameter of slice type such as `&[f64]`",
                );
                None
            }
            (None, _) => None,
        };

        let output = match &signature.output {
            ReturnType::Default => None,
            ReturnType::Type(_, ty) => match &**ty {
                Type::Tuple(t) if t.elems.is_empty() => None,
                ty => Some(ty.clone()),
            },
        };
        if let (Some(buffer), Some(hint)) = (&buffer, &output_hint) {
            let fits = match buffer.kind {
                BufferKind::Text => RootSet::CHARACTER,
                BufferKind::Bytes => RootSet::BINARY,
            }
            .contains(hint.data_type.root());
            if !fits {
                cx.error_spanned_by(
                    &hint.literal,
                    "the type hint does not fit the output buffer: `&mut String` writes CHAR/VARCHAR/STRING, `&mut Vec<u8>` writes BINARY/VARBINARY/BYTES",
                );
            }
        }
        if returns == Returns::Value && buffer.is_none() && output.is_none() {
            cx.error_spanned_by(
                &signature.ident,
                "a scalar function must return a value (or write it into a last parameter `out: &mut String`)",
            );
        }

        if returns == Returns::AsyncRows && output.is_none() {
            cx.error_spanned_by(
                &signature.ident,
                "an async table function returns its rows: `-> Vec<T>` or `-> Result<Vec<T>>`",
            );
        }

        EvalMethod {
            ident: signature.ident.clone(),
            receiver,
            leading: leading_types,
            params,
            varargs,
            buffer,
            collector,
            output,
            output_hint,
            span: signature.ident.span(),
        }
    }

    /// Every SQL parameter, varargs last.
    pub fn all_params(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().chain(self.varargs.as_ref())
    }
}

fn check_header(signature: &syn::Signature, macro_name: &str, cx: &Ctxt) {
    let wants_async = macro_name.starts_with("async_");
    match (&signature.asyncness, wants_async) {
        (Some(asyncness), false) => {
            let suggestion = match macro_name {
                "scalar_function" => "; use #[async_scalar_function] for an async function",
                "table_function" => "; use #[async_table_function] for an async function",
                _ => "",
            };
            cx.error_spanned_by(
                asyncness,
                format!("#[{macro_name}] cannot be an `async fn`{suggestion}"),
            );
        }
        (None, true) => {
            let plain = macro_name.trim_start_matches("async_");
            cx.error_spanned_by(
                signature.fn_token,
                format!(
                    "#[{macro_name}] needs an `async fn`; use #[{plain}] for a synchronous function"
                ),
            );
        }
        _ => {}
    }
    if let Some(unsafety) = &signature.unsafety {
        cx.error_spanned_by(
            unsafety,
            format!("#[{macro_name}] cannot be an `unsafe fn`"),
        );
    }
    if let Some(abi) = &signature.abi {
        cx.error_spanned_by(abi, format!("#[{macro_name}] cannot have an `extern` ABI"));
    }
    if let Some(variadic) = &signature.variadic {
        cx.error_spanned_by(
            variadic,
            "C variadics are not supported; use #[varargs] with a slice parameter",
        );
    }
    for param in &signature.generics.params {
        match param {
            syn::GenericParam::Lifetime(_) => {}
            other => cx.error_spanned_by(
                other,
                "a SQL function cannot be generic over types or constants: each signature needs concrete types",
            ),
        }
    }
}

fn check_receiver(receiver: &syn::Receiver, expected: Receiver, macro_name: &str, cx: &Ctxt) {
    match expected {
        Receiver::None => cx.error_spanned_by(receiver, "a free function has no `self`"),
        Receiver::Ref => {
            if receiver.reference.is_none() || receiver.colon_token.is_some() {
                cx.error_spanned_by(
                    receiver,
                    format!("an evaluation method of #[{macro_name}] takes `&self`"),
                );
            } else if receiver.mutability.is_some() {
                cx.error_spanned_by(
                    receiver,
                    format!("an evaluation method of #[{macro_name}] takes `&self`, not `&mut self`: one instance evaluates batches on several threads"),
                );
            }
        }
    }
}

fn parse_param(pat_type: &mut syn::PatType, cx: &Ctxt) -> Option<Param> {
    let argument = attr::take_one(&mut pat_type.attrs, attr::ARGUMENT, cx)
        .map(|a| ArgumentAttr::parse(&a, false, cx));
    let data_type = attr::take_one(&mut pat_type.attrs, attr::DATA_TYPE, cx)
        .and_then(|a| attr::parse_data_type(&a, cx));
    for misplaced in attr::take(&mut pat_type.attrs, attr::VARARGS) {
        cx.error_spanned_by(misplaced, "#[varargs] belongs on the function, above `fn`");
    }
    for misplaced in attr::take(&mut pat_type.attrs, attr::STATE) {
        cx.error_spanned_by(misplaced, "#[state] is only allowed in #[ptf] functions");
    }
    let Pat::Ident(pat_ident) = &*pat_type.pat else {
        cx.error_spanned_by(
            &pat_type.pat,
            "parameters of SQL functions need a plain name (it becomes the SQL argument name)",
        );
        return None;
    };
    let argument = argument.unwrap_or_default();
    let hint = match (argument.hint, data_type) {
        (Some(a), Some(b)) => {
            cx.error_spanned_by(&b.literal, "two type hints for one parameter: keep `#[argument(type = ...)]` or `#[data_type(...)]`");
            Some(a)
        }
        (a, b) => a.or(b),
    };
    let ident = pat_ident.ident.clone();
    let rust_name = ident.to_string();
    let sql_name = argument.name.as_ref().map_or_else(
        || rust_name.trim_start_matches("r#").to_owned(),
        LitStr::value,
    );
    Some(Param {
        ident,
        ty: (*pat_type.ty).clone(),
        sql_name,
        renamed: argument.name,
        optional: argument.optional,
        hint,
    })
}
