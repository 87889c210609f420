//! The `#[ptf]` model and its checks, on signatures as the user writes them: what the model
//! holds, and which errors the parse and check steps collect.

use quote::quote;
use syn::ItemFn;

use super::model::{PtfEval, StateKind};
use super::{PtfDef, check};
use crate::ctxt::Ctxt;
use crate::signature::Receiver;

/// The model of `function`'s signature (as `eval`, or `on_timer` with `timer`), and every
/// error its parse reported.
fn parse(function: ItemFn, receiver: Receiver, timer: bool) -> (PtfEval, Vec<String>) {
    let mut function = function;
    let cx = Ctxt::new();
    let eval = PtfEval::parse(&mut function.sig, &mut function.attrs, receiver, timer, &cx);
    (eval, messages(cx))
}

fn messages(cx: Ctxt) -> Vec<String> {
    match cx.check() {
        Ok(()) => Vec::new(),
        Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
    }
}

/// The errors `check` reports for `eval` and `on_timer`.
fn checked(eval: PtfEval, on_timer: Option<PtfEval>) -> Vec<String> {
    let def = PtfDef {
        self_ty: syn::parse_quote!(F),
        sql_name: "F".into(),
        description: String::new(),
        eval,
        on_timer,
        open: None,
        close: None,
    };
    let cx = Ctxt::new();
    check::check(&def, &cx);
    messages(cx)
}

#[test]
fn parameters_in_flinks_order_make_the_model() {
    let (eval, errors) = parse(
        syn::parse_quote! {
            fn eval(
                &self,
                ctx: &mut Context,
                #[state(name = "n", ttl = "1 min")] count: &mut Count,
                #[state] seen: &mut MapView<String, i64>,
                #[state] log: &mut ListView<i64>,
                #[argument(set_semantic_table, pass_columns_through)] input: Row,
                #[argument(name = "max", optional)] limit: Option<i64>,
                out: &mut Collector<Row>,
            ) {}
        },
        Receiver::Ref,
        false,
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert!(eval.context.as_ref().is_some_and(|c| c.mutable));
    let states: Vec<(&str, StateKind, usize, Option<u64>)> = eval
        .states
        .iter()
        .map(|s| (s.name.as_str(), s.kind, s.types.len(), s.ttl_millis))
        .collect();
    assert_eq!(
        states,
        [
            ("n", StateKind::Value, 1, Some(60_000)),
            ("seen", StateKind::Map, 2, None),
            ("log", StateKind::List, 1, None),
        ]
    );
    let table = eval.args[0].table.as_ref().expect("a table argument");
    assert!(table.set_semantics && table.pass_columns_through && !table.require_on_time);
    assert_eq!(eval.args[1].param.sql_name, "max");
    assert!(eval.args[1].table.is_none() && eval.args[1].param.optional.is_some());
    assert!(eval.collector.is_some());
}

#[test]
fn parameters_out_of_order_are_each_reported() {
    let (_, errors) = parse(
        syn::parse_quote! {
            fn eval(
                #[argument(set_semantic_table)] input: Row,
                ctx: &mut Context,
                #[state] count: &mut Count,
                out: &mut Collector<i64>,
                extra: i64,
            ) {}
        },
        Receiver::None,
        false,
    );
    assert_eq!(
        errors,
        [
            "the `Context` parameter comes first, before state entries and arguments",
            "state entries come before the arguments (after an optional `Context`)",
            "the output collector `out: &mut Collector<T>` must be the last parameter",
        ]
    );
}

#[test]
fn state_options_are_checked_where_they_are_written() {
    let (_, errors) = parse(
        syn::parse_quote! {
            fn eval(
                #[state(ttl = "0 s")] a: &mut Count,
                #[state(name = "not a name")] b: &mut Count,
                #[state(size = 3)] c: &mut Count,
                #[state] d: Count,
                #[argument(set_semantic_table)] input: Row,
                out: &mut Collector<i64>,
            ) {}
        },
        Receiver::None,
        false,
    );
    assert_eq!(
        errors,
        [
            "a TTL must be longer than zero; leave `ttl` out to keep entries forever",
            "a state name must be an identifier",
            "unknown option of #[state]; expected one of `name`, `ttl`, `type`",
            "a state entry is a `&mut` parameter: write `d: &mut Count`",
        ]
    );
}

#[test]
fn table_traits_need_a_table_and_one_semantics() {
    let (_, errors) = parse(
        syn::parse_quote! {
            fn eval(
                #[argument(row_semantic_table, set_semantic_table)] a: Row,
                #[argument(require_on_time)] b: i64,
                #[argument(row_semantic_table, optional_partition_by)] c: Row,
                #[argument(row_semantic_table, supports_updates)] d: Row,
                out: &mut Collector<i64>,
            ) {}
        },
        Receiver::None,
        false,
    );
    assert_eq!(
        errors,
        [
            "a table argument has either row semantics or set semantics, not both",
            "`require_on_time` applies to table arguments: add `row_semantic_table` or `set_semantic_table`",
            "`optional_partition_by` applies to set semantics; a row-semantics table is never partitioned",
            "`supports_updates` applies to set semantics; a row-semantics table is read insert-only",
        ]
    );
}

#[test]
fn cross_parameter_rules_are_checked_together() {
    let (eval, errors) = parse(
        syn::parse_quote! {
            fn eval(
                #[state] count: &mut Count,
                #[state(name = "count")] again: &mut Count,
                #[argument(row_semantic_table)] input: Row,
                uid: &str,
                #[argument(row_semantic_table)] other: Option<Row>,
                out: &mut Collector<i64>,
            ) {}
        },
        Receiver::None,
        false,
    );
    assert!(errors.is_empty(), "{errors:?}");
    let errors = checked(eval, None);
    assert_eq!(
        errors,
        [
            "state needs a table argument with set semantics (#[argument(set_semantic_table)]): with row semantics each row is processed on its own",
            "state needs a table argument with set semantics (#[argument(set_semantic_table)]): with row semantics each row is processed on its own",
            "with several table arguments every table has set semantics (#[argument(set_semantic_table)]): they share one key space, and a row-semantics table has no key",
            "with several table arguments each row comes from one of them: write `input: Option<Row>`, `None` when the row is another table's",
            "with several table arguments every table has set semantics (#[argument(set_semantic_table)]): they share one key space, and a row-semantics table has no key",
            "`uid` is a system argument every process table function takes; choose another name",
            "duplicate state entry name `count`",
        ]
    );
}

#[test]
fn several_tables_are_options_without_pass_through() {
    let (eval, errors) = parse(
        syn::parse_quote! {
            fn eval(
                #[argument(set_semantic_table)] orders: Option<Row>,
                #[argument(set_semantic_table, pass_columns_through)] payments: Option<Row>,
                #[argument(set_semantic_table)] refunds: Row,
                out: &mut Collector<i64>,
            ) {}
        },
        Receiver::None,
        false,
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        checked(eval, None),
        [
            "`pass_columns_through` takes a single table argument: with several, an output row would have the columns of only one of them",
            "with several table arguments each row comes from one of them: write `refunds: Option<Row>`, `None` when the row is another table's",
        ]
    );
}

#[test]
fn on_timer_declares_the_state_of_eval_and_emits_its_rows() {
    let (eval, _) = parse(
        syn::parse_quote! {
            fn eval(
                &self,
                #[state] count: &mut Count,
                #[state] seen: &mut MapView<String, i64>,
                #[argument(set_semantic_table, pass_columns_through)] input: Row,
                out: &mut Collector<i64>,
            ) {}
        },
        Receiver::Ref,
        false,
    );
    let (timer, errors) = parse(
        syn::parse_quote! {
            fn on_timer(&self, ctx: &mut OnTimerContext, #[state] count: &mut Count, out: &mut Collector<String>) {}
        },
        Receiver::Ref,
        true,
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        checked(eval, Some(timer)),
        [
            "`pass_columns_through` cannot be combined with `on_timer`: a timer's rows have no input row to pass through",
            "`on_timer` declares the state entries of `eval`, in the same order: #[state] count: &mut Count, #[state] seen: &mut MapView<String, i64>",
            "`on_timer` emits the rows of `eval`: `Collector<i64>`",
        ]
    );
}

#[test]
fn on_timer_takes_no_arguments() {
    let (_, errors) = parse(
        syn::parse_quote! {
            fn on_timer(&self, value: i64, out: &mut Collector<i64>) {}
        },
        Receiver::Ref,
        true,
    );
    assert_eq!(
        errors,
        [
            "`on_timer` takes an optional `ctx: &mut OnTimerContext`, the state entries of `eval` and the collector; it has no arguments"
        ]
    );
}

#[test]
fn a_whole_invocation_reports_every_error_at_once() {
    // Through the macro's entry: an overloaded `eval` and a bad TTL, both reported.
    let output = super::expand(
        quote!(),
        quote! {
            impl F {
                fn eval(&self, #[state(ttl = "soon")] s: &mut Count, #[argument(set_semantic_table)] t: Row, out: &mut Collector<i64>) {}
                fn eval_other(&self, #[argument(set_semantic_table)] t: Row, out: &mut Collector<i64>) {}
            }
        },
    )
    .to_string();
    assert_eq!(output.matches("compile_error").count(), 2, "{output}");
    assert!(output.contains("invalid TTL"), "{output}");
    assert!(output.contains("cannot be overloaded"), "{output}");
}
