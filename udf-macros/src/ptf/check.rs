//! Rules of a process table function that span several parameters.

use std::collections::HashMap;

use super::PtfDef;
use crate::ctxt::Ctxt;

/// Arguments every PTF call accepts besides the declared ones.
const SYSTEM_ARGUMENTS: [&str; 2] = ["uid", "on_time"];

pub fn check(def: &PtfDef, cx: &Ctxt) {
    let eval = &def.eval;
    let tables: Vec<_> = eval.args.iter().filter(|a| a.table.is_some()).collect();
    let set_semantics = tables
        .iter()
        .any(|a| a.table.as_ref().is_some_and(|t| t.set_semantics));
    if !set_semantics {
        for state in &eval.states {
            cx.error_spanned_by(
                &state.attr,
                "state needs a table argument with set semantics (#[argument(set_semantic_table)]): with row semantics each row is processed on its own",
            );
        }
    }
    for extra in tables.iter().skip(1) {
        cx.error_spanned_by(
            &extra.param.ident,
            "only one table argument per process table function is supported",
        );
    }
    if eval.states.len() > 64 {
        cx.error_spanned_by(
            &eval.states[64].ident,
            "a process table function has at most 64 state entries",
        );
    }

    let mut names: HashMap<String, &syn::Ident> = HashMap::new();
    for arg in eval.args.iter().map(|a| &a.param) {
        let key = arg.sql_name.to_lowercase();
        let at: &dyn quote::ToTokens = match &arg.renamed {
            Some(name) => name,
            None => &arg.ident,
        };
        if SYSTEM_ARGUMENTS.contains(&key.as_str()) {
            cx.error_spanned_by(
                at,
                format!(
                    "`{}` is a system argument every process table function takes; choose another name",
                    arg.sql_name
                ),
            );
        }
        if names.insert(key, &arg.ident).is_some() {
            cx.error_spanned_by(
                at,
                format!(
                    "duplicate argument name `{}` (SQL names ignore case)",
                    arg.sql_name
                ),
            );
        }
    }
    let mut states: HashMap<&str, ()> = HashMap::new();
    for state in &eval.states {
        if states.insert(&state.name, ()).is_some() {
            cx.error_spanned_by(
                &state.ident,
                format!("duplicate state entry name `{}`", state.name),
            );
        }
    }
}
