//! Rules of a process table function that span several parameters.

use std::collections::HashMap;

use super::PtfDef;
use super::model::{ArgParam, PtfEval, StateParam};
use crate::ctxt::Ctxt;
use crate::types;

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
    if tables.len() > 1 {
        check_several_tables(&tables, cx);
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
    if let Some(timer) = &def.on_timer {
        check_on_timer(def, timer, set_semantics, cx);
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

/// Several table arguments are co-partitioned set-semantics tables, and a row comes from one
/// of them at a time: each is an `Option`, `None` in calls for the others' rows (as Flink's
/// `null`). Pass-through columns belong to a single table.
fn check_several_tables(tables: &[&ArgParam], cx: &Ctxt) {
    for table in tables {
        let traits = table.table.as_ref().expect("a table argument");
        let ident = &table.param.ident;
        if !traits.set_semantics {
            cx.error_spanned_by(
                ident,
                "with several table arguments every table has set semantics (#[argument(set_semantic_table)]): they share one key space, and a row-semantics table has no key",
            );
        }
        if traits.pass_columns_through {
            cx.error_spanned_by(
                ident,
                "`pass_columns_through` takes a single table argument: with several, an output row would have the columns of only one of them",
            );
        }
        if types::generic_args(&table.param.ty, "Option").is_none() {
            cx.error_spanned_by(
                &table.param.ty,
                format!(
                    "with several table arguments each row comes from one of them: write `{ident}: Option<{}>`, `None` when the row is another table's",
                    types::display(&table.param.ty)
                ),
            );
        }
    }
}

/// `on_timer` needs a set-semantics table, declares `eval`'s state entries in the same order
/// (rule 21 of docs/semantics.md) and emits `eval`'s row type.
fn check_on_timer(def: &PtfDef, timer: &PtfEval, set_semantics: bool, cx: &Ctxt) {
    let eval = &def.eval;
    if !set_semantics {
        cx.error_spanned_by(
            &timer.ident,
            "timers need a table argument with set semantics (#[argument(set_semantic_table)]): they are scoped to a key",
        );
    }
    if let Some(through) = eval
        .args
        .iter()
        .find(|a| a.table.as_ref().is_some_and(|t| t.pass_columns_through))
    {
        cx.error_spanned_by(
            &through.param.ident,
            "`pass_columns_through` cannot be combined with `on_timer`: a timer's rows have no input row to pass through",
        );
    }
    let shape = |states: &[StateParam]| -> Vec<String> {
        states
            .iter()
            .map(|s| format!("#[state] {}: &mut {}", s.name, s.shown))
            .collect()
    };
    let (expected, found) = (shape(&eval.states), shape(&timer.states));
    if expected != found {
        let at: &dyn quote::ToTokens = match timer.states.first() {
            Some(state) => &state.ident,
            None => &timer.ident,
        };
        cx.error_spanned_by(
            at,
            format!(
                "`on_timer` declares the state entries of `eval`, in the same order: {}",
                if expected.is_empty() {
                    "none".to_owned()
                } else {
                    expected.join(", ")
                }
            ),
        );
    }
    let row = |eval: &PtfEval| {
        eval.collector
            .as_ref()
            .map(|t| quote::ToTokens::to_token_stream(t).to_string())
    };
    if let (Some(a), Some(b)) = (row(eval), row(timer))
        && a != b
    {
        cx.error_spanned_by(
            &timer.ident,
            format!("`on_timer` emits the rows of `eval`: `Collector<{a}>`"),
        );
    }
}
