//! Parsing of the attributes the macros understand. Every key is checked: an unknown or
//! repeated key is an error at that key, listing what is allowed.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Attribute, LitBool, LitStr};

use crate::ctxt::Ctxt;
use crate::hint::Hint;

/// Attribute names consumed by the function macros (inert helpers).
pub const ARGUMENT: &str = "argument";
pub const DATA_TYPE: &str = "data_type";
pub const VARARGS: &str = "varargs";
pub const STATE: &str = "state";

/// Options of `#[scalar_function(...)]` and the other function macros; each macro says
/// which keys it takes.
#[derive(Default)]
pub struct FunctionOptions {
    pub name: Option<LitStr>,
    pub deterministic: Option<LitBool>,
    pub constant_folding: Option<LitBool>,
    /// `retract` / `merge`: capabilities an aggregate promises (checked against its methods).
    pub retract: Option<syn::Path>,
    pub merge: Option<syn::Path>,
}

impl FunctionOptions {
    pub fn parse(
        macro_name: &str,
        allowed: &[&str],
        args: TokenStream,
        cx: &Ctxt,
    ) -> FunctionOptions {
        let mut options = FunctionOptions::default();
        let parser = syn::meta::parser(|meta| {
            let key = path_name(&meta);
            if !allowed.contains(&key.as_str()) {
                let expected: Vec<String> = allowed.iter().map(|k| format!("`{k}`")).collect();
                return Err(meta.error(format!(
                    "unknown option `{key}` of #[{macro_name}]; expected one of {}",
                    expected.join(", ")
                )));
            }
            match key.as_str() {
                "name" => set_once(&meta, &mut options.name, "name"),
                "deterministic" => set_once(&meta, &mut options.deterministic, "deterministic"),
                "constant_folding" => {
                    set_once(&meta, &mut options.constant_folding, "constant_folding")
                }
                "retract" => set_flag(&meta, &mut options.retract, "retract"),
                _ => set_flag(&meta, &mut options.merge, "merge"),
            }
        });
        if let Err(error) = parser.parse2(args) {
            cx.push(error);
        }
        if let Some(name) = &options.name
            && name.value().trim().is_empty()
        {
            cx.error_spanned_by(name, "the SQL name cannot be empty");
        }
        options
    }
}

fn set_flag(
    meta: &ParseNestedMeta<'_>,
    slot: &mut Option<syn::Path>,
    key: &str,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("duplicate `{key}`")));
    }
    if meta.input.peek(syn::Token![=]) {
        return Err(meta.error(format!(
            "`{key}` is a flag: write `{key}`, not `{key} = ...`"
        )));
    }
    *slot = Some(meta.path.clone());
    Ok(())
}

fn path_name(meta: &ParseNestedMeta<'_>) -> String {
    quote::ToTokens::to_token_stream(&meta.path)
        .to_string()
        .replace(' ', "")
}

fn set_once<T: syn::parse::Parse>(
    meta: &ParseNestedMeta<'_>,
    slot: &mut Option<T>,
    key: &str,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("duplicate `{key}`")));
    }
    *slot = Some(meta.value()?.parse()?);
    Ok(())
}

/// The table traits `#[argument(...)]` takes on parameters of `#[ptf]` functions.
pub const TABLE_TRAITS: &[&str] = &[
    "row_semantic_table",
    "set_semantic_table",
    "optional_partition_by",
    "pass_columns_through",
    "require_on_time",
    "supports_updates",
];

/// `#[argument(name = "...", optional, type = "...")]` on a parameter, and table traits
/// such as `set_semantic_table` (process table functions).
#[derive(Default)]
pub struct ArgumentAttr {
    pub name: Option<LitStr>,
    pub optional: Option<syn::Path>,
    pub hint: Option<Hint>,
    pub traits: Vec<syn::Path>,
}

impl ArgumentAttr {
    /// The trait `name`, if it was written.
    pub fn table_trait(&self, name: &str) -> Option<&syn::Path> {
        self.traits.iter().find(|p| p.is_ident(name))
    }
}

impl ArgumentAttr {
    /// `ptf`: the attribute is on an argument of a `#[ptf]` function, which takes table traits.
    pub fn parse(attr: &Attribute, ptf: bool, cx: &Ctxt) -> ArgumentAttr {
        let mut parsed = ArgumentAttr::default();
        if let syn::Meta::Path(_) = attr.meta {
            cx.error_spanned_by(
                attr,
                "#[argument] needs options, e.g. #[argument(name = \"x\", optional)]",
            );
            return parsed;
        }
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                set_once(&meta, &mut parsed.name, "name")?;
                let name = parsed.name.as_ref().expect("just set");
                if !is_identifier(&name.value()) {
                    return Err(syn::Error::new(
                        name.span(),
                        "an argument name must be an identifier (letters, digits and `_`, not starting with a digit)",
                    ));
                }
                Ok(())
            } else if meta.path.is_ident("optional") {
                if parsed.optional.is_some() {
                    return Err(meta.error("duplicate `optional`"));
                }
                if meta.input.peek(syn::Token![=]) {
                    return Err(meta.error("`optional` is a flag: write `optional`, not `optional = ...`"));
                }
                parsed.optional = Some(meta.path.clone());
                Ok(())
            } else if meta.path.is_ident("type") {
                if parsed.hint.is_some() {
                    return Err(meta.error("duplicate `type`"));
                }
                let literal: LitStr = meta.value()?.parse()?;
                parsed.hint = Some(Hint::parse(literal)?);
                Ok(())
            } else if TABLE_TRAITS.iter().any(|t| meta.path.is_ident(t)) {
                let key = path_name(&meta);
                if !ptf {
                    return Err(meta.error(format!(
                        "`{key}` is a table trait: only arguments of #[ptf] functions take it"
                    )));
                }
                if parsed.traits.iter().any(|p| p.is_ident(&key)) {
                    return Err(meta.error(format!("duplicate `{key}`")));
                }
                if meta.input.peek(syn::Token![=]) {
                    return Err(meta.error(format!(
                        "`{key}` is a flag: write `{key}`, not `{key} = ...`"
                    )));
                }
                parsed.traits.push(meta.path.clone());
                Ok(())
            } else if ptf {
                Err(meta.error(format!(
                    "unknown option `{}` of #[argument]; expected one of `name`, `optional`, `type`, or a table trait ({})",
                    path_name(&meta),
                    TABLE_TRAITS
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            } else {
                Err(meta.error(format!(
                    "unknown option `{}` of #[argument]; expected one of `name`, `optional`, `type`",
                    path_name(&meta)
                )))
            }
        });
        if let Err(error) = result {
            cx.push(error);
        }
        parsed
    }
}

/// `#[data_type("...")]`: a hint parsed at compile time.
pub fn parse_data_type(attr: &Attribute, cx: &Ctxt) -> Option<Hint> {
    match attr.parse_args::<LitStr>() {
        Ok(literal) => match Hint::parse(literal) {
            Ok(hint) => Some(hint),
            Err(error) => {
                cx.push(error);
                None
            }
        },
        Err(_) => {
            cx.error_spanned_by(
                attr,
                "expected a data type string, e.g. #[data_type(\"DECIMAL(12, 3)\")]",
            );
            None
        }
    }
}

/// Removes and returns the attributes named `name`.
pub fn take(attrs: &mut Vec<Attribute>, name: &str) -> Vec<Attribute> {
    let (taken, kept) = std::mem::take(attrs)
        .into_iter()
        .partition(|a| a.path().is_ident(name));
    *attrs = kept;
    taken
}

/// Takes every attribute named in `names` off an item where none of them belongs: each is an
/// error saying `#[name] is only allowed on {place}`.
pub fn reject(attrs: &mut Vec<Attribute>, names: &[&str], place: &str, cx: &Ctxt) {
    for name in names {
        for misplaced in take(attrs, name) {
            cx.error_spanned_by(misplaced, format!("#[{name}] is only allowed on {place}"));
        }
    }
}

/// At most one attribute named `name`; repeats are errors.
pub fn take_one(attrs: &mut Vec<Attribute>, name: &str, cx: &Ctxt) -> Option<Attribute> {
    let mut taken = take(attrs, name).into_iter();
    let first = taken.next();
    for repeated in taken {
        cx.error_spanned_by(repeated, format!("duplicate #[{name}]"));
    }
    first
}

/// `#[varargs]` takes no arguments.
pub fn check_flag(attr: &Attribute, cx: &Ctxt) {
    if !matches!(attr.meta, syn::Meta::Path(_)) {
        let name = attr
            .path()
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        cx.error_spanned_by(attr, format!("#[{name}] takes no arguments"));
    }
}

/// The doc comment of an item, joined into one text.
pub fn doc_text(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').unwrap_or(&line).to_owned())
        .collect();
    lines.join("\n").trim().to_owned()
}

pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn errors(cx: Ctxt) -> Vec<String> {
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn function_options_take_only_the_keys_a_macro_allows() {
        let cx = Ctxt::new();
        let options = FunctionOptions::parse(
            "aggregate_function",
            &["name", "deterministic", "retract", "merge"],
            quote!(name = "wavg", deterministic = false, retract),
            &cx,
        );
        assert!(errors(cx).is_empty());
        assert_eq!(options.name.map(|n| n.value()).as_deref(), Some("wavg"));
        assert_eq!(options.deterministic.map(|d| d.value), Some(false));
        assert!(options.retract.is_some() && options.merge.is_none());

        for (args, expected) in [
            (
                quote!(nmae = "x"),
                "unknown option `nmae` of #[ptf]; expected one of `name`",
            ),
            (quote!(name = 3), "expected string literal"),
            (quote!(name = "a", name = "b"), "duplicate `name`"),
            (quote!(name = " "), "the SQL name cannot be empty"),
        ] {
            let cx = Ctxt::new();
            FunctionOptions::parse("ptf", &["name"], args, &cx);
            assert_eq!(errors(cx), [expected]);
        }
        let cx = Ctxt::new();
        FunctionOptions::parse("aggregate_function", &["merge"], quote!(merge = true), &cx);
        assert_eq!(
            errors(cx),
            ["`merge` is a flag: write `merge`, not `merge = ...`"]
        );
    }

    #[test]
    fn argument_attributes_know_what_a_ptf_takes() {
        let attr: Attribute = syn::parse_quote!(#[argument(name = "x", optional, type = "INT")]);
        let cx = Ctxt::new();
        let parsed = ArgumentAttr::parse(&attr, false, &cx);
        assert!(errors(cx).is_empty());
        assert_eq!(parsed.name.map(|n| n.value()).as_deref(), Some("x"));
        assert!(parsed.optional.is_some() && parsed.hint.is_some());

        let attr: Attribute = syn::parse_quote!(#[argument(set_semantic_table)]);
        let cx = Ctxt::new();
        ArgumentAttr::parse(&attr, false, &cx);
        assert_eq!(
            errors(cx),
            ["`set_semantic_table` is a table trait: only arguments of #[ptf] functions take it"]
        );
        let cx = Ctxt::new();
        let parsed = ArgumentAttr::parse(&attr, true, &cx);
        assert!(errors(cx).is_empty());
        assert!(parsed.table_trait("set_semantic_table").is_some());

        for (attr, expected) in [
            (
                syn::parse_quote!(#[argument(name = "1x")]),
                "an argument name must be an identifier (letters, digits and `_`, not starting with a digit)",
            ),
            (
                syn::parse_quote!(#[argument(optional = true)]),
                "`optional` is a flag: write `optional`, not `optional = ...`",
            ),
            (
                syn::parse_quote!(#[argument(type = "INTEGRAL")]),
                "invalid data type: unknown data type `INTEGRAL`",
            ),
            (
                syn::parse_quote!(#[argument]),
                "#[argument] needs options, e.g. #[argument(name = \"x\", optional)]",
            ),
        ] {
            let attr: Attribute = attr;
            let cx = Ctxt::new();
            ArgumentAttr::parse(&attr, true, &cx);
            let found = errors(cx);
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(found[0].starts_with(expected), "{found:?}");
        }
    }
}
