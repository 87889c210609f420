//! Functions made of evaluation methods — `#[scalar_function]`, `#[table_function]` and
//! their async forms: on a `fn`, or on an `impl` block whose `eval*` methods are the
//! overloads (with optional `open` and `close`, and `output_type` for scalar functions).

mod expand_async;
mod expand_scalar;
mod expand_table;

pub use expand_scalar::lifecycle_of;

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Ident, ImplItem, Item, Type};

use crate::attr::{self, FunctionOptions};
use crate::check;
use crate::ctxt::Ctxt;
use crate::dispatch;
use crate::signature::{EvalMethod, Receiver, Returns};

/// Which macro is at work.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Scalar,
    AsyncScalar,
    Table,
    AsyncTable,
}

impl Flavor {
    fn macro_name(self) -> &'static str {
        match self {
            Flavor::Scalar => "scalar_function",
            Flavor::AsyncScalar => "async_scalar_function",
            Flavor::Table => "table_function",
            Flavor::AsyncTable => "async_table_function",
        }
    }

    fn returns(self) -> Returns {
        match self {
            Flavor::Scalar | Flavor::AsyncScalar => Returns::Value,
            Flavor::Table => Returns::Rows,
            Flavor::AsyncTable => Returns::AsyncRows,
        }
    }

    fn option_keys(self) -> &'static [&'static str] {
        match self {
            Flavor::Scalar => &["name", "deterministic", "constant_folding"],
            Flavor::AsyncScalar | Flavor::Table | Flavor::AsyncTable => &["name", "deterministic"],
        }
    }
}

/// The model of one function.
pub struct EvalDef {
    pub flavor: Flavor,
    /// The type implementing the function: the user's, or the unit struct made from a `fn`.
    pub self_ty: Type,
    pub sql_name: String,
    pub description: String,
    pub deterministic: bool,
    pub constant_folding: bool,
    pub evals: Vec<EvalMethod>,
    pub open: Option<Ident>,
    pub close: Option<Ident>,
    pub output_type: Option<Ident>,
}

pub fn expand(flavor: Flavor, args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let options = FunctionOptions::parse(flavor.macro_name(), flavor.option_keys(), args, &cx);
    let item = match syn::parse2::<Item>(input) {
        Ok(item) => item,
        Err(error) => return error.to_compile_error(),
    };
    match item {
        Item::Fn(function) => from_fn(flavor, function, options, cx),
        Item::Impl(block) => from_impl(flavor, block, options, cx),
        other => {
            let error = syn::Error::new_spanned(
                item_keyword(&other),
                format!(
                    "#[{}] goes on a `fn` or on the `impl` block of a function type",
                    flavor.macro_name()
                ),
            );
            let mut tokens = other.into_token_stream();
            tokens.extend(error.to_compile_error());
            tokens
        }
    }
}

/// The keyword token of an item, where an error about its kind reads best.
pub fn item_keyword(item: &Item) -> TokenStream {
    match item {
        Item::Struct(s) => s.struct_token.into_token_stream(),
        Item::Enum(e) => e.enum_token.into_token_stream(),
        Item::Trait(t) => t.trait_token.into_token_stream(),
        Item::Mod(m) => m.mod_token.into_token_stream(),
        Item::Fn(f) => f.sig.fn_token.into_token_stream(),
        other => other.to_token_stream(),
    }
}

fn finish(def: Option<EvalDef>, item: TokenStream, cx: Ctxt) -> TokenStream {
    match (cx.check(), def) {
        (Ok(()), Some(def)) => {
            let generated = match def.flavor {
                Flavor::Scalar => expand_scalar::expand(&def),
                Flavor::Table => expand_table::expand(&def),
                Flavor::AsyncScalar | Flavor::AsyncTable => expand_async::expand(&def),
            };
            quote::quote!(#item #generated)
        }
        (Err(error), _) => {
            let mut tokens = item;
            tokens.extend(error.to_compile_error());
            tokens
        }
        (Ok(()), None) => item,
    }
}

fn options_into(def: &mut EvalDef, options: FunctionOptions) {
    if let Some(name) = options.name {
        def.sql_name = name.value();
    }
    if let Some(value) = options.deterministic {
        def.deterministic = value.value;
    }
    if let Some(value) = options.constant_folding {
        def.constant_folding = value.value;
    }
}

/// `fn name(...)` becomes `struct name;` with the function as `name::eval`, so the name is
/// a value that can be registered and the logic stays callable from Rust.
fn from_fn(
    flavor: Flavor,
    mut function: syn::ItemFn,
    options: FunctionOptions,
    cx: Ctxt,
) -> TokenStream {
    let mut eval = EvalMethod::parse(
        &mut function.sig,
        &mut function.attrs,
        flavor.macro_name(),
        Receiver::None,
        (0, flavor.returns()),
        &cx,
    );
    eval.ident = Ident::new("eval", function.sig.ident.span());
    check::check_arguments(std::slice::from_ref(&eval), &cx);
    check_flavor(flavor, std::slice::from_ref(&eval), &cx);

    let ident = function.sig.ident.clone();
    let description = attr::doc_text(&function.attrs);
    let mut def = EvalDef {
        flavor,
        self_ty: syn::parse_quote!(#ident),
        sql_name: ident.to_string().trim_start_matches("r#").to_owned(),
        description,
        deterministic: true,
        constant_folding: true,
        evals: vec![eval],
        open: None,
        close: None,
        output_type: None,
    };
    options_into(&mut def, options);

    let docs: Vec<_> = function
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let vis = &function.vis;
    let mut method = function.clone();
    method.sig.ident = Ident::new("eval", ident.span());
    if let Some(row) = &def.evals[0].collector {
        dispatch::bound_user_method(&mut method.sig, &mut method.attrs, row);
    }
    let item = quote::quote! {
        #(#docs)*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #ident;

        impl #ident {
            #method
        }
    };
    finish(Some(def), item, cx)
}

fn from_impl(
    flavor: Flavor,
    mut block: syn::ItemImpl,
    options: FunctionOptions,
    cx: Ctxt,
) -> TokenStream {
    let macro_name = flavor.macro_name();
    let Some((self_ty, sql_name)) = impl_target(&block, macro_name, &cx) else {
        return finish(None, block.into_token_stream(), cx);
    };

    let mut def = EvalDef {
        flavor,
        self_ty,
        sql_name,
        description: attr::doc_text(&block.attrs),
        deterministic: true,
        constant_folding: true,
        evals: Vec::new(),
        open: None,
        close: None,
        output_type: None,
    };
    options_into(&mut def, options);

    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let name = method.sig.ident.to_string();
        if name == "eval" || name.starts_with("eval_") {
            let eval = EvalMethod::parse(
                &mut method.sig,
                &mut method.attrs,
                macro_name,
                Receiver::Ref,
                (0, flavor.returns()),
                &cx,
            );
            if let Some(row) = &eval.collector {
                dispatch::bound_user_method(&mut method.sig, &mut method.attrs, row);
            }
            def.evals.push(eval);
            continue;
        }
        attr::reject(
            &mut method.attrs,
            &[attr::DATA_TYPE, attr::VARARGS, attr::ARGUMENT],
            "evaluation methods (named `eval` or `eval_...`)",
            &cx,
        );
        match name.as_str() {
            "open" | "close" => match lifecycle_method(&method.sig, &cx) {
                Lifecycle::Open(ident) => def.open = Some(ident),
                Lifecycle::Close(ident) => def.close = Some(ident),
            },
            "output_type" if flavor == Flavor::Scalar => {
                check_lifecycle(
                    &method.sig,
                    false,
                    1,
                    "fn output_type(&self, call: &CallContext) -> Result<DataType>",
                    &cx,
                );
                def.output_type = Some(method.sig.ident.clone());
            }
            _ => {}
        }
    }
    if def.evals.is_empty() {
        cx.error_spanned_by(
            &block.self_ty,
            format!("no evaluation method: a #[{macro_name}] impl needs a method named `eval` (or `eval_...`, one per overload)"),
        );
    }
    check::check_arguments(&def.evals, &cx);
    check_flavor(flavor, &def.evals, &cx);
    finish(Some(def), block.into_token_stream(), cx)
}

/// The type an `impl` block of a function macro is for, and its name; errors for trait
/// impls, generics and unnamed types.
pub fn impl_target(block: &syn::ItemImpl, macro_name: &str, cx: &Ctxt) -> Option<(Type, String)> {
    if let Some((_, path, _)) = &block.trait_ {
        cx.error_spanned_by(
            path,
            format!("#[{macro_name}] goes on an inherent `impl` block, not a trait impl"),
        );
    }
    if !block.generics.params.is_empty() {
        cx.error_spanned_by(
            &block.generics,
            "a function type cannot be generic: register one concrete type per SQL function",
        );
    }
    let self_ty = (*block.self_ty).clone();
    let name = match &self_ty {
        Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    if name.is_none() {
        cx.error_spanned_by(
            &self_ty,
            format!("#[{macro_name}] needs an `impl` of a named type"),
        );
    }
    name.map(|name| (self_ty, name))
}

/// An `open` or `close` method of a function type.
pub enum Lifecycle {
    Open(Ident),
    Close(Ident),
}

/// Checks the shape of a method named `open` or `close`.
pub fn lifecycle_method(sig: &syn::Signature, cx: &Ctxt) -> Lifecycle {
    if sig.ident == "open" {
        check_lifecycle(
            sig,
            true,
            1,
            "fn open(&mut self, context: &FunctionContext) -> Result<()>",
            cx,
        );
        Lifecycle::Open(sig.ident.clone())
    } else {
        check_lifecycle(sig, true, 0, "fn close(&mut self)", cx);
        Lifecycle::Close(sig.ident.clone())
    }
}

/// `open`, `close` and `output_type` have fixed shapes.
pub fn check_lifecycle(
    sig: &syn::Signature,
    mutable: bool,
    params: usize,
    expected: &str,
    cx: &Ctxt,
) {
    let receiver_ok = match sig.inputs.first() {
        Some(syn::FnArg::Receiver(r)) => r.reference.is_some() && r.mutability.is_some() == mutable,
        _ => false,
    };
    let count = sig
        .inputs
        .iter()
        .filter(|i| matches!(i, syn::FnArg::Typed(_)))
        .count();
    if !receiver_ok || count != params || sig.asyncness.is_some() {
        cx.error_spanned_by(
            &sig.ident,
            format!("`{}` must be declared as `{expected}`", sig.ident),
        );
    }
}

/// Forms one flavor does not take.
fn check_flavor(flavor: Flavor, evals: &[EvalMethod], cx: &Ctxt) {
    if flavor != Flavor::AsyncScalar {
        return;
    }
    for eval in evals.iter().filter(|e| e.buffer.is_some()) {
        cx.error_spanned_by(
            &eval.ident,
            "an async function returns its result; it cannot write into an `out` buffer",
        );
    }
}
