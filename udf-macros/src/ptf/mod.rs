//! `#[ptf]`: process table functions, on a `fn` or on an `impl` block with one `eval`
//! (and optional `open`/`close`). Parse → model (model.rs) → check (check.rs) → expand
//! (expand.rs).

mod check;
mod expand;
mod model;
#[cfg(test)]
mod tests;

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Ident, ImplItem, Item, Type};

use crate::attr::{self, FunctionOptions};
use crate::ctxt::Ctxt;
use crate::eval::{Lifecycle, impl_target, item_keyword, lifecycle_method};
use crate::signature::Receiver;
use model::PtfEval;

const MACRO: &str = "ptf";

/// The model of one process table function.
pub struct PtfDef {
    pub self_ty: Type,
    pub sql_name: String,
    pub description: String,
    pub eval: PtfEval,
    /// `on_timer`, in the impl form.
    pub on_timer: Option<PtfEval>,
    pub open: Option<Ident>,
    pub close: Option<Ident>,
}

pub fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let options = FunctionOptions::parse(MACRO, &["name"], args, &cx);
    let item = match syn::parse2::<Item>(input) {
        Ok(item) => item,
        Err(error) => return error.to_compile_error(),
    };
    match item {
        Item::Fn(function) => from_fn(function, options, cx),
        Item::Impl(block) => from_impl(block, options, cx),
        other => {
            let error = syn::Error::new_spanned(
                item_keyword(&other),
                "#[ptf] goes on a `fn` or on the `impl` block of a function type",
            );
            let mut tokens = other.into_token_stream();
            tokens.extend(error.to_compile_error());
            tokens
        }
    }
}

fn finish(def: Option<PtfDef>, item: TokenStream, cx: Ctxt) -> TokenStream {
    // Rules across parameters are checked once each parameter parsed: a parameter that did
    // not would make them report what is only a consequence.
    if let Some(def) = &def
        && !cx.has_errors()
    {
        check::check(def, &cx);
    }
    match (cx.check(), def) {
        (Ok(()), Some(def)) => {
            let generated = expand::expand(&def);
            quote!(#item #generated)
        }
        (Err(error), _) => {
            let mut tokens = item;
            tokens.extend(error.to_compile_error());
            tokens
        }
        (Ok(()), None) => item,
    }
}

/// `fn name(...)` becomes `struct name;` with the function as `name::eval`.
fn from_fn(mut function: syn::ItemFn, options: FunctionOptions, cx: Ctxt) -> TokenStream {
    let mut eval = PtfEval::parse(
        &mut function.sig,
        &mut function.attrs,
        Receiver::None,
        false,
        &cx,
    );
    eval.ident = Ident::new("eval", function.sig.ident.span());
    let ident = function.sig.ident.clone();
    let def = PtfDef {
        self_ty: syn::parse_quote!(#ident),
        sql_name: options.name.as_ref().map_or_else(
            || ident.to_string().trim_start_matches("r#").to_owned(),
            syn::LitStr::value,
        ),
        description: attr::doc_text(&function.attrs),
        eval,
        on_timer: None,
        open: None,
        close: None,
    };
    let docs: Vec<_> = function
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let vis = &function.vis;
    let mut method = function.clone();
    method.sig.ident = Ident::new("eval", ident.span());
    method.attrs.retain(|a| !a.path().is_ident("doc"));
    // Called once per row from the generated loop, in the user's crate.
    method.attrs.push(syn::parse_quote!(#[inline]));
    let item = quote! {
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

fn from_impl(mut block: syn::ItemImpl, options: FunctionOptions, cx: Ctxt) -> TokenStream {
    let Some((self_ty, type_name)) = impl_target(&block, MACRO, &cx) else {
        return finish(None, block.into_token_stream(), cx);
    };

    let mut eval = None;
    let mut on_timer = None;
    let (mut open, mut close) = (None, None);
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let name = method.sig.ident.to_string();
        if name == "eval" || name.starts_with("eval_") {
            let parsed = PtfEval::parse(
                &mut method.sig,
                &mut method.attrs,
                Receiver::Ref,
                false,
                &cx,
            );
            if eval.is_some() {
                cx.error_spanned_by(
                    &method.sig.ident,
                    "a process table function has one `eval`: it cannot be overloaded",
                );
            } else {
                eval = Some(parsed);
            }
            continue;
        }
        if name == "on_timer" {
            on_timer = Some(PtfEval::parse(
                &mut method.sig,
                &mut method.attrs,
                Receiver::Ref,
                true,
                &cx,
            ));
            continue;
        }
        attr::reject(
            &mut method.attrs,
            &[attr::DATA_TYPE, attr::ARGUMENT, attr::STATE],
            "`eval` and its parameters",
            &cx,
        );
        match name.as_str() {
            "open" | "close" => match lifecycle_method(&method.sig, &cx) {
                Lifecycle::Open(ident) => open = Some(ident),
                Lifecycle::Close(ident) => close = Some(ident),
            },
            _ => {}
        }
    }
    let Some(eval) = eval else {
        cx.error_spanned_by(
            &block.self_ty,
            "no evaluation method: a #[ptf] impl needs a method named `eval`",
        );
        return finish(None, block.into_token_stream(), cx);
    };
    let def = PtfDef {
        self_ty,
        sql_name: options.name.as_ref().map_or(type_name, syn::LitStr::value),
        description: attr::doc_text(&block.attrs),
        eval,
        on_timer,
        open,
        close,
    };
    finish(Some(def), block.into_token_stream(), cx)
}
