//! Rules that span several parts of a function definition, in one place.

use std::collections::HashMap;

use crate::ctxt::Ctxt;
use crate::signature::EvalMethod;

/// Named and optional arguments need a single signature without varargs (SQL calls with
/// names are resolved against exactly one parameter list); names must be unique.
pub fn check_arguments(evals: &[EvalMethod], cx: &Ctxt) {
    let overloaded = evals.len() > 1;
    for eval in evals {
        let reason = if overloaded {
            Some("the function has several evaluation methods (overloads)")
        } else if eval.varargs.is_some() {
            Some("the function takes varargs")
        } else {
            None
        };
        if let Some(reason) = reason {
            for param in eval.all_params() {
                if let Some(name) = &param.renamed {
                    cx.error_spanned_by(
                        name,
                        format!("named arguments are not supported here: {reason}"),
                    );
                }
                // An optional varargs parameter is reported by the signature parser.
                let is_varargs = eval
                    .varargs
                    .as_ref()
                    .is_some_and(|v| std::ptr::eq(v, param));
                if let (Some(optional), false) = (&param.optional, is_varargs) {
                    cx.error_spanned_by(
                        optional,
                        format!("optional arguments are not supported here: {reason}"),
                    );
                }
            }
        }

        let mut seen: HashMap<String, &syn::Ident> = HashMap::new();
        for param in eval.all_params() {
            let key = param.sql_name.to_lowercase();
            if seen.insert(key, &param.ident).is_some() {
                let at: &dyn quote::ToTokens = match &param.renamed {
                    Some(name) => name,
                    None => &param.ident,
                };
                cx.error_spanned_by(
                    at,
                    format!(
                        "duplicate argument name `{}` (SQL names ignore case)",
                        param.sql_name
                    ),
                );
            }
        }
    }
}
