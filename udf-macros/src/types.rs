//! Syntactic facts about Rust types that are shapes by nature (references, slices, the
//! primitive names of the kernel tier). SQL types never come from here: they come from traits.

use syn::visit_mut::VisitMut;
use syn::{Type, TypePath};

/// The type with every lifetime replaced by `lifetime` (`'_` inside bodies, `'static` in
/// constants), so generated code can name it outside the user's generics.
pub fn with_lifetimes(ty: &Type, lifetime: &str) -> Type {
    struct Replace(syn::Lifetime);
    impl VisitMut for Replace {
        fn visit_lifetime_mut(&mut self, lifetime: &mut syn::Lifetime) {
            *lifetime = self.0.clone();
        }
        fn visit_type_reference_mut(&mut self, reference: &mut syn::TypeReference) {
            reference.lifetime = Some(self.0.clone());
            self.visit_type_mut(&mut reference.elem);
        }
    }
    let mut ty = ty.clone();
    Replace(syn::Lifetime::new(lifetime, proc_macro2::Span::call_site())).visit_type_mut(&mut ty);
    ty
}

/// `&[T]` → `T` (the element type of a varargs parameter).
pub fn slice_element(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
            Type::Slice(slice) => Some(&slice.elem),
            _ => None,
        },
        _ => None,
    }
}

/// The kind of output buffer a `&mut String` / `&mut Vec<u8>` parameter is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum BufferKind {
    Text,
    Bytes,
}

/// `&mut String` or `&mut Vec<u8>`: an output buffer parameter.
pub fn output_buffer(ty: &Type) -> Option<BufferKind> {
    let Type::Reference(r) = ty else { return None };
    r.mutability?;
    let Type::Path(TypePath { qself: None, path }) = &*r.elem else {
        return None;
    };
    let last = path.segments.last()?;
    if last.ident == "String" && last.arguments.is_empty() {
        return Some(BufferKind::Text);
    }
    if last.ident == "Vec"
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && args.args.len() == 1
        && let Some(syn::GenericArgument::Type(Type::Path(inner))) = args.args.first()
        && inner.path.is_ident("u8")
    {
        return Some(BufferKind::Bytes);
    }
    None
}

/// `i8`..`i64`, `f32`, `f64` spelled plainly: candidates for the vectorized kernel tier.
pub fn is_kernel_primitive(ty: &Type) -> bool {
    let Type::Path(TypePath { qself: None, path }) = ty else {
        return false;
    };
    ["i8", "i16", "i32", "i64", "f32", "f64"]
        .iter()
        .any(|name| path.is_ident(name))
}

/// The type as the user wrote it, for messages.
pub fn display(ty: &Type) -> String {
    quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace(" < ", "<")
        .replace(" > ", ">")
        .replace("& ", "&")
        .replace(" >", ">")
        .replace("< ", "<")
        .replace(" ,", ",")
}

/// `&mut T` → `T`.
pub fn mutable_referent(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(r) if r.mutability.is_some() => Some(&r.elem),
        _ => None,
    }
}

/// Replaces `Self::Acc` with the accumulator type in a method (the `type Acc` item is
/// removed from the impl, since inherent associated types are not stable Rust).
pub fn replace_self_acc(method: &mut syn::ImplItemFn, acc: &Type) {
    struct Replace<'a>(&'a Type);
    impl VisitMut for Replace<'_> {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            if let Type::Path(TypePath { qself: None, path }) = ty
                && path.segments.len() == 2
                && path.segments[0].ident == "Self"
                && path.segments[1].ident == "Acc"
            {
                *ty = self.0.clone();
                return;
            }
            syn::visit_mut::visit_type_mut(self, ty);
        }
    }
    Replace(acc).visit_impl_item_fn_mut(method);
}

/// `&mut Collector<T>` (with `name` = "Collector") → `T`.
pub fn collector_item<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Reference(r) = ty else { return None };
    r.mutability?;
    let Type::Path(TypePath { qself: None, path }) = &*r.elem else {
        return None;
    };
    let last = path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|arg| match arg {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

/// Gives `&mut Collector<T>` its elided lifetime (`Collector<'_, T>`), where a signature that
/// must not take one keeps it: an `async fn` cannot elide it, and the user's mistake is
/// already reported.
pub fn name_collector_lifetime(ty: &mut Type) {
    let Type::Reference(r) = ty else { return };
    let Type::Path(TypePath { qself: None, path }) = &mut *r.elem else {
        return;
    };
    let Some(last) = path.segments.last_mut() else {
        return;
    };
    if let syn::PathArguments::AngleBracketed(args) = &mut last.arguments
        && !args
            .args
            .iter()
            .any(|arg| matches!(arg, syn::GenericArgument::Lifetime(_)))
    {
        args.args
            .insert(0, syn::GenericArgument::Lifetime(syn::parse_quote!('_)));
    }
}

/// `Name<A, B, ...>` (by its last path segment) → its type arguments.
pub fn generic_args<'a>(ty: &'a Type, name: &str) -> Option<Vec<&'a Type>> {
    let Type::Path(TypePath { qself: None, path }) = ty else {
        return None;
    };
    let last = path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return Some(Vec::new());
    };
    Some(
        args.args
            .iter()
            .filter_map(|arg| match arg {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
    )
}

/// `&Name` / `&mut Name` (any path ending in `Name`, e.g. `Context`) → whether it is `&mut`.
pub fn context_reference(ty: &Type, name: &str) -> Option<bool> {
    let Type::Reference(r) = ty else { return None };
    generic_args(&r.elem, name).map(|_| r.mutability.is_some())
}
