//! Binding a PTF call in FROM to its signature:
//!
//! ```sql
//! SELECT * FROM Counter(input => TABLE t PARTITION BY k, threshold => 5, uid => 'counter')
//! SELECT * FROM Counter(TABLE (SELECT k, v FROM t) PARTITION BY (k, v), 5)
//! SELECT * FROM AdditionFunction(1, 2)
//! ```
//!
//! Arguments are matched to parameters as every call's are (`functions/arguments.rs`); every
//! PTF also takes `uid` and `on_time`. Scalar arguments must be constant; they are evaluated and cast here, once.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::Schema;
use datafusion::arrow::datatypes::{DataType as ArrowType, TimeUnit};
use datafusion::common::{Column, DFSchema, Result, ScalarValue, plan_datafusion_err, plan_err};
use datafusion::execution::context::ExecutionProps;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::planner::RelationPlannerContext;
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::{EmptyRelation, Expr, ExprSchemable, Extension, LogicalPlan, cast};
use datafusion::physical_expr::create_physical_expr;
use datafusion::sql::sqlparser::ast::{Expr as SqlExpr, FunctionArg, TableFactor};
use udf_core::ptf::ProcessTableFunction;
use udf_core::types::{DataType, TypeKind};
use udf_core::{ArgSpec, ArgType, FunctionSpec, Metrics, OutputType, Semantics, TableArg};

use super::call::{PtfCall, TableBinding};
use super::node::PtfNode;
use crate::changelog;
use crate::functions::arguments;
use crate::plan::table_argument::{Given, TableArgument, call_arguments, descriptor_columns};
use crate::streaming::event_time::{EventTime, Watermarks};
use crate::streaming::time_attribute;

/// System arguments every PTF takes.
const UID: &str = "uid";
const ON_TIME: &str = "on_time";

/// A PTF call to bind.
pub struct PtfArguments<'a> {
    pub name: &'a str,
    pub spec: &'a Arc<FunctionSpec>,
    pub function: &'a Arc<dyn ProcessTableFunction>,
    /// The session's declared watermarks (for `on_time`).
    pub watermarks: &'a Watermarks,
    pub metrics: &'a Metrics,
}

impl PtfArguments<'_> {
    /// The plan of the call: its node over the table arguments (or over one empty row).
    pub fn plan(
        &self,
        args: &[FunctionArg],
        context: &mut dyn RelationPlannerContext,
    ) -> Result<LogicalPlan> {
        let name = self.name;
        let signature = &self.spec.signatures[0];
        let declared = &signature.args;
        let matched =
            arguments::match_names(name, declared, &[UID, ON_TIME], call_arguments(name, args)?)
                .map_err(|e| plan_datafusion_err!("{e}"))?;
        let (mut uid, mut on_time) = (None, None);
        for (index, given) in matched.extra {
            match index {
                0 => uid = Some(self.uid(given, context)?),
                _ => on_time = Some(descriptor(name, given)?),
            }
        }
        let bound = matched.params;

        let mut scalars = Vec::new();
        let mut tables = Vec::new();
        for (spec, given) in declared.iter().zip(bound) {
            match (&spec.ty, given) {
                (ArgType::Table(traits), Some(Given::Table(argument))) => {
                    tables.push(self.bind_table(spec, traits, argument, context)?);
                }
                (ArgType::Table(_), Some(Given::Value(value))) => {
                    return plan_err!(
                        "argument `{}` of `{name}` is a table: pass `TABLE t` (with PARTITION BY for set semantics), not `{value}`",
                        spec.name
                    );
                }
                (ArgType::Table(_), None) => {
                    return plan_err!(
                        "`{name}` needs its table argument `{}`: `{name}({} => TABLE t ...)`",
                        spec.name,
                        spec.name
                    );
                }
                (_, Some(Given::Table(_))) => {
                    return plan_err!(
                        "argument `{}` of `{name}` is a scalar value, not a table",
                        spec.name
                    );
                }
                (_, Some(Given::Value(value))) => {
                    scalars.push(self.constant(spec, *value, context)?);
                }
                (_, None) if spec.optional => scalars.push(null_of(spec)?),
                (_, None) => {
                    return plan_err!(
                        "`{name}` needs argument `{}`; its signature: {}",
                        spec.name,
                        signature.display(name)
                    );
                }
            }
        }
        self.finish(tables, scalars, uid, on_time)
    }

    /// The call over its bound tables: their event time, the checks across tables, the node.
    fn finish(
        &self,
        mut tables: Vec<(LogicalPlan, TableBinding)>,
        scalars: Vec<ScalarValue>,
        uid: Option<String>,
        on_time: Option<Vec<String>>,
    ) -> Result<LogicalPlan> {
        if tables.is_empty() && on_time.is_some() {
            return plan_err!(
                "`{}` takes no table, so `on_time` has nothing to refer to",
                self.name
            );
        }
        if let Some(columns) = &on_time {
            if tables.len() == 1 && columns.len() > 1 {
                return plan_err!(
                    "`on_time` of `{}` names one time column (one table argument)",
                    self.name
                );
            }
            // Every name is some table's time column: none is silently left over (one table
            // names a missing column in its own error below).
            let unknown = columns.iter().find(|column| {
                !tables.iter().any(|(input, _)| {
                    input
                        .schema()
                        .fields()
                        .iter()
                        .any(|f| f.name().eq_ignore_ascii_case(column))
                })
            });
            if let (Some(column), true) = (unknown, tables.len() > 1) {
                return plan_err!(
                    "`on_time` of `{}` names `{column}`, which is not a column of any table argument",
                    self.name
                );
            }
        }
        for (input, table) in &mut tables {
            table.event_time = self.event_time(on_time.as_deref(), table, input)?;
        }
        let key_types = self.check_tables(&tables, on_time.is_some())?;
        self.build(tables, key_types, scalars, uid, on_time.is_some())
    }

    /// Several table arguments are co-partitioned set-semantics tables (Flink's rule): equal
    /// PARTITION BY arity and comparable key types, no pass-through; with `on_time`, time
    /// columns of one type (they become one `rowtime`). The types every table's keys compare
    /// as (none to cast to with one table).
    fn check_tables(
        &self,
        tables: &[(LogicalPlan, TableBinding)],
        on_time: bool,
    ) -> Result<Vec<ArrowType>> {
        let name = self.name;
        let [(first_input, first), rest @ ..] = tables else {
            return Ok(Vec::new());
        };
        if rest.is_empty() {
            return Ok(Vec::new());
        }
        for (_, table) in tables {
            if table.semantics == Semantics::Row {
                return plan_err!(
                    "table argument `{}` of `{name}` has row semantics, next to other table arguments: several tables must all have set semantics (they share one key space)",
                    table.name
                );
            }
            if table.pass_through {
                return plan_err!(
                    "table argument `{}` of `{name}` passes its columns through, which takes a single table argument; `{name}` has {}",
                    table.name,
                    tables.len()
                );
            }
        }
        let key_types = |input: &LogicalPlan, table: &TableBinding| {
            table
                .keys
                .iter()
                .map(|key| key.get_type(input.schema()))
                .collect::<Result<Vec<_>>>()
        };
        let first_types = key_types(first_input, first)?;
        let mut shared = first_types.clone();
        for (input, table) in rest {
            let types = key_types(input, table)?;
            let shown = |table: &TableBinding| {
                let keys: Vec<String> = table.keys.iter().map(ToString::to_string).collect();
                format!("PARTITION BY ({})", keys.join(", "))
            };
            if types.len() != first_types.len() {
                let columns = |n: usize| match n {
                    1 => "1 column".to_owned(),
                    n => format!("{n} columns"),
                };
                return plan_err!(
                    "the table arguments of `{name}` are not co-partitioned: `{}` is {} ({}), `{}` is {} ({}); every table needs as many PARTITION BY columns, of comparable types",
                    first.name,
                    shown(first),
                    columns(first_types.len()),
                    table.name,
                    shown(table),
                    columns(types.len())
                );
            }
            for (position, b) in types.iter().enumerate() {
                let a = &first_types[position];
                let common = comparison_coercion(&shared[position], b);
                let Some(common) = common else {
                    return plan_err!(
                        "the table arguments of `{name}` are not co-partitioned: PARTITION BY column {} is `{}` ({a}) in `{}` but `{}` ({b}) in `{}`, which do not compare",
                        position + 1,
                        first.keys[position],
                        first.name,
                        table.keys[position],
                        table.name
                    );
                };
                shared[position] = common;
            }
        }
        if on_time {
            let time_type = |input: &LogicalPlan, table: &TableBinding| {
                table
                    .event_time
                    .as_ref()
                    .map(|t| input.schema().field(t.column).data_type().clone())
            };
            let first_type = time_type(first_input, first);
            for (input, table) in rest {
                if time_type(input, table) != first_type {
                    return plan_err!(
                        "the `on_time` columns of `{name}` differ in type: {} in `{}`, {} in `{}`; they become one `rowtime` column, so cast one",
                        first_type.map_or("none".to_owned(), |t| t.to_string()),
                        first.name,
                        time_type(input, table).map_or("none".to_owned(), |t| t.to_string()),
                        table.name
                    );
                }
            }
        }
        Ok(shared)
    }

    /// The event time of table argument `table`: the column `on_time` names in it (or,
    /// without `on_time`, its first ORDER BY column) and its declared watermark. An error if
    /// the argument requires `on_time` and the call names none.
    fn event_time(
        &self,
        on_time: Option<&[String]>,
        table: &TableBinding,
        input: &LogicalPlan,
    ) -> Result<Option<EventTime>> {
        let name = self.name;
        let arg = &table.name;
        let traits = self
            .spec
            .table_args()
            .find(|(_, spec, _)| spec.name == *arg)
            .map(|(_, _, traits)| traits);
        let order_by = table.order_by.first().map(|(c, _, _)| *c);
        if on_time.is_none() && traits.is_some_and(|t| t.require_on_time) {
            return plan_err!(
                "table argument `{arg}` of `{name}` requires a time attribute: name one with `on_time => DESCRIPTOR(ts)`"
            );
        }
        let schema = input.schema();
        let index = match on_time {
            Some(columns) => {
                let found: Vec<(usize, &String)> = columns
                    .iter()
                    .filter_map(|column| {
                        schema
                            .fields()
                            .iter()
                            .position(|f| f.name().eq_ignore_ascii_case(column))
                            .map(|index| (index, column))
                    })
                    .collect();
                let (index, column) = match found.as_slice() {
                    [one] => *one,
                    [] => {
                        let names: Vec<String> = columns.iter().map(|c| format!("`{c}`")).collect();
                        return plan_err!(
                            "`on_time` of `{name}` names {}, which is not a column of table argument `{arg}`",
                            names.join(", ")
                        );
                    }
                    [(_, a), (_, b), ..] => {
                        return plan_err!(
                            "`on_time` of `{name}` names two columns of table argument `{arg}`, `{a}` and `{b}`: name one time column per table"
                        );
                    }
                };
                if order_by.is_some_and(|first| first != index) {
                    return plan_err!(
                        "ORDER BY of table argument `{arg}` in `{name}` must start with the `on_time` column `{column}`"
                    );
                }
                index
            }
            None => match order_by {
                Some(index) => index,
                None => return Ok(self.declared_watermark(input)),
            },
        };
        let field = schema.field(index);
        let column = field.name();
        let what = if on_time.is_some() {
            "`on_time`"
        } else {
            "the first ORDER BY column"
        };
        if !matches!(
            field.data_type(),
            ArrowType::Timestamp(TimeUnit::Second | TimeUnit::Millisecond, _)
        ) {
            return plan_err!(
                "{what} of `{name}` must be a TIMESTAMP or TIMESTAMP_LTZ column of precision up to 3; `{column}` is {}",
                field.data_type()
            );
        }
        // The watermark declared where the column is read from: the first table (or view)
        // on the way down that declares one.
        let sources = time_attribute::sources(input, index, self.watermarks);
        let spec = sources.iter().find_map(|s| s.watermark.clone());
        let Some(spec) = spec else {
            let (table, source_column) = match sources.last() {
                Some(source) => (source.table.as_str(), source.column.as_str()),
                None => (
                    schema
                        .qualified_field(index)
                        .0
                        .map_or("<table>", |q| q.table()),
                    column.as_str(),
                ),
            };
            return plan_err!(
                "`{column}` has no watermark, so it cannot be the time of `{name}`: declare one with `session.declare_watermark(\"{table}\", \"{source_column}\", delay)`{}",
                if sources.is_empty() {
                    " (a computed time column has none: compute it in a view and declare the watermark on the view)"
                } else {
                    ""
                }
            );
        };
        Ok(Some(EventTime::declared(column, index, &spec)))
    }

    /// Without `on_time` or ORDER BY, the watermark of the table argument's time column, if
    /// one column has one declared (as in Flink, the function sees the watermark then, not
    /// the row times). With several such columns (a join of two tables with watermarks),
    /// none: there is no one time attribute.
    fn declared_watermark(&self, input: &LogicalPlan) -> Option<EventTime> {
        let schema = input.schema();
        let mut found = (0..schema.fields().len()).filter_map(|index| {
            let field = schema.field(index);
            let timestamp = matches!(
                field.data_type(),
                ArrowType::Timestamp(TimeUnit::Second | TimeUnit::Millisecond, _)
            );
            if !timestamp {
                return None;
            }
            let sources = time_attribute::sources(input, index, self.watermarks);
            let spec = sources.iter().find_map(|s| s.watermark.clone())?;
            Some(EventTime::declared(field.name(), index, &spec))
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// A DataFrame call: `inputs` are the table arguments (by name, or `None` for the first
    /// one not named), each partitioned by its keys; scalar arguments by position, then by
    /// name.
    #[allow(clippy::too_many_arguments)]
    pub fn bind_dataframe(
        &self,
        inputs: Vec<(Option<String>, LogicalPlan, Vec<Expr>)>,
        positional: Vec<Expr>,
        named: Vec<(String, Expr)>,
        uid: Option<String>,
        on_time: Option<String>,
    ) -> Result<LogicalPlan> {
        let name = self.name;
        let signature = &self.spec.signatures[0];
        if let Some(uid) = &uid
            && !valid_uid(uid)
        {
            return plan_err!(
                "`uid` of `{name}` must be letters, digits, `-` and `_`, not starting with a digit: `{uid}`"
            );
        }
        // The DataFrames are the table arguments: the values are the scalar arguments.
        let scalar_params = signature
            .args
            .iter()
            .filter(|a| !matches!(a.ty, ArgType::Table(_)));
        let given = positional
            .into_iter()
            .map(|value| (None, value))
            .chain(named.into_iter().map(|(n, value)| {
                let name = arguments::ArgName {
                    value: n,
                    quoted: false,
                };
                (Some(name), value)
            }))
            .collect();
        let bound = arguments::match_names(name, scalar_params.clone(), &[], given)
            .map_err(|e| plan_datafusion_err!("{e}"))?;
        let mut scalars = Vec::new();
        for (spec, value) in scalar_params.zip(bound.params) {
            match value {
                Some(value) => scalars.push(self.constant_expr(spec, value)?),
                None if spec.optional => scalars.push(null_of(spec)?),
                None => {
                    return plan_err!(
                        "`{name}` needs argument `{}`; its signature: {}",
                        spec.name,
                        signature.display(name)
                    );
                }
            }
        }
        let declared: Vec<(&ArgSpec, &TableArg)> = signature
            .args
            .iter()
            .filter_map(|spec| match &spec.ty {
                ArgType::Table(traits) => Some((spec, traits)),
                _ => None,
            })
            .collect();
        if declared.is_empty() {
            return plan_err!(
                "`{name}` takes no table argument: call it in SQL, as `SELECT * FROM {name}(...)`"
            );
        }
        let mut slots: Vec<Option<(LogicalPlan, Vec<Expr>)>> = vec![None; declared.len()];
        let mut unnamed = Vec::new();
        for (arg, input, keys) in inputs {
            match arg {
                Some(arg) => {
                    let Some(position) = declared
                        .iter()
                        .position(|(spec, _)| spec.name.eq_ignore_ascii_case(&arg))
                    else {
                        let names: Vec<&str> =
                            declared.iter().map(|(s, _)| s.name.as_str()).collect();
                        return plan_err!(
                            "`{name}` has no table argument `{arg}` (its table arguments: {})",
                            names.join(", ")
                        );
                    };
                    if slots[position].replace((input, keys)).is_some() {
                        return plan_err!("table argument `{arg}` of `{name}` is given twice");
                    }
                }
                None => unnamed.push((input, keys)),
            }
        }
        for (input, keys) in unnamed {
            let Some(slot) = slots.iter_mut().find(|s| s.is_none()) else {
                return plan_err!(
                    "`{name}` takes {} table argument(s), and every one is given already",
                    declared.len()
                );
            };
            *slot = Some((input, keys));
        }
        let mut tables = Vec::with_capacity(declared.len());
        for ((spec, traits), slot) in declared.into_iter().zip(slots) {
            let Some((input, keys)) = slot else {
                return plan_err!(
                    "`{name}` needs its table argument `{}`: pass it with `.table(\"{}\", frame)`",
                    spec.name,
                    spec.name
                );
            };
            let binding = self.bind_table_plan(spec, traits, &input, keys)?;
            tables.push((input, binding));
        }
        self.finish(tables, scalars, uid, on_time.map(|c| vec![c]))
    }

    /// The call's node over its tables' plans (or over one empty row, without a table).
    pub fn build(
        &self,
        tables: Vec<(LogicalPlan, TableBinding)>,
        key_types: Vec<ArrowType>,
        scalars: Vec<ScalarValue>,
        uid: Option<String>,
        on_time: bool,
    ) -> Result<LogicalPlan> {
        let name = self.name;
        let signature = &self.spec.signatures[0];
        let OutputType::Fixed(row_type) = signature.output.clone() else {
            return plan_err!("`{name}` has no fixed row type");
        };
        let (mut inputs, tables): (Vec<LogicalPlan>, Vec<TableBinding>) =
            tables.into_iter().unzip();
        if inputs.is_empty() {
            // Without a table, `eval` runs once: over one row without columns.
            inputs.push(LogicalPlan::EmptyRelation(EmptyRelation {
                produce_one_row: true,
                schema: Arc::new(DFSchema::empty()),
            }));
        }
        let call = PtfCall {
            name: name.to_owned(),
            spec: self.spec.clone(),
            function: self.function.clone(),
            metrics: self.metrics.clone(),
            scalars,
            tables,
            key_types,
            row_type,
            uid,
            on_time,
        };
        let node = PtfNode::try_new(inputs, call)?;
        Ok(LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        }))
    }

    /// `uid => 'name'`: Flink's format for state identifiers.
    fn uid(&self, given: Given, context: &mut dyn RelationPlannerContext) -> Result<String> {
        let name = self.name;
        let Given::Value(value) = given else {
            return plan_err!("`uid` of `{name}` is a string, not a table");
        };
        let uid_spec = ArgSpec::new(UID, ArgType::Typed(DataType::string()));
        match self.constant(&uid_spec, *value, context)? {
            ScalarValue::Utf8(Some(uid)) if valid_uid(&uid) => Ok(uid),
            ScalarValue::Utf8(Some(uid)) => plan_err!(
                "`uid` of `{name}` must be a string of letters, digits, `-` and `_` that does not start with a digit, not '{uid}'"
            ),
            other => plan_err!(
                "`uid` of `{name}` must be a string of letters, digits, `-` and `_` that does not start with a digit, not {other}"
            ),
        }
    }

    /// A scalar argument written in SQL: a constant expression, evaluated and cast.
    fn constant(
        &self,
        spec: &ArgSpec,
        value: SqlExpr,
        context: &mut dyn RelationPlannerContext,
    ) -> Result<ScalarValue> {
        let expr = context
            .sql_to_expr(value, &DFSchema::empty())
            .map_err(|e| not_constant(self.name, spec, e.to_string()))?;
        self.constant_expr(spec, expr)
    }

    /// A scalar argument: a constant expression, evaluated and cast to the parameter type.
    pub fn constant_expr(&self, spec: &ArgSpec, expr: Expr) -> Result<ScalarValue> {
        let name = self.name;
        let empty = DFSchema::empty();
        if !expr.column_refs().is_empty() || expr.is_volatile() {
            return Err(not_constant(name, spec, format!("`{expr}` is not")));
        }
        let target = match &spec.ty {
            ArgType::Typed(t) => Some(t),
            _ => None,
        };
        let expr = match target {
            Some(t) if expr.get_type(&empty)? != t.to_arrow() => cast(expr, t.to_arrow()),
            _ => expr,
        };
        let physical = create_physical_expr(
            &expr,
            &empty,
            &ExecutionProps::new(),
            &PhysicalPlanningContext::default(),
        )?;
        let batch = RecordBatch::try_new_with_options(
            Arc::new(Schema::empty()),
            vec![],
            &datafusion::arrow::array::RecordBatchOptions::new().with_row_count(Some(1)),
        )?;
        // A value that does not convert (`threshold => 'x'` for an INT) names the argument.
        let value = physical
            .evaluate(&batch)
            .and_then(|value| match value {
                datafusion::logical_expr::ColumnarValue::Scalar(value) => Ok(value),
                datafusion::logical_expr::ColumnarValue::Array(array) => {
                    ScalarValue::try_from_array(&array, 0)
                }
            })
            .map_err(|e| {
                plan_datafusion_err!(
                    "argument `{}` of `{name}`: {}",
                    spec.name,
                    e.find_root().message()
                )
            })?;
        if value.is_null() && !spec.ty.nullable() {
            return plan_err!(
                "argument `{}` of `{name}` is NULL, but its Rust type is not an `Option`",
                spec.name
            );
        }
        Ok(value)
    }

    /// The table argument: its plan, PARTITION BY keys and the row the function reads.
    fn bind_table(
        &self,
        spec: &ArgSpec,
        traits: &TableArg,
        argument: TableArgument,
        context: &mut dyn RelationPlannerContext,
    ) -> Result<(LogicalPlan, TableBinding)> {
        let name = self.name;
        let arg = &spec.name;
        let input = context.plan(TableFactor::Derived {
            lateral: false,
            subquery: argument.query,
            alias: None,
            sample: None,
        })?;
        let schema = input.schema().clone();
        let keys = argument
            .partition_by
            .into_iter()
            .map(|expr| context.sql_to_expr(expr, &schema))
            .collect::<Result<Vec<_>>>()?;
        let mut binding = self.bind_table_plan(spec, traits, &input, keys)?;
        for (position, item) in argument.order_by.into_iter().enumerate() {
            let shown = item.expr.to_string();
            let descending = item.options.asc == Some(false);
            // SQL's default: NULLs last ascending, first descending.
            let nulls_first = item.options.nulls_first.unwrap_or(descending);
            let index = match context.sql_to_expr(item.expr, &schema)? {
                Expr::Column(column) => schema.index_of_column(&column)?,
                _ => {
                    return plan_err!(
                        "ORDER BY of `{arg}` in `{name}` takes columns of the table, not `{shown}`"
                    );
                }
            };
            if position == 0 && descending {
                return plan_err!(
                    "ORDER BY of `{arg}` in `{name}` starts with its time column, ascending: `{shown}` cannot be DESC"
                );
            }
            binding.order_by.push((index, descending, nulls_first));
            binding.order_names.push(schema.field(index).name().clone());
        }
        if !binding.order_by.is_empty() && traits.semantics == Semantics::Row {
            return plan_err!(
                "table argument `{arg}` of `{name}` has row semantics: it takes no ORDER BY"
            );
        }
        Ok((input, binding))
    }

    /// The table argument over `input` partitioned by `keys`: the row the function reads.
    pub fn bind_table_plan(
        &self,
        spec: &ArgSpec,
        traits: &TableArg,
        input: &LogicalPlan,
        keys: Vec<Expr>,
    ) -> Result<TableBinding> {
        let name = self.name;
        let arg = &spec.name;
        match traits.semantics {
            Semantics::Row if !keys.is_empty() => {
                return plan_err!(
                    "table argument `{arg}` of `{name}` has row semantics: each row is processed on its own, so it takes no PARTITION BY"
                );
            }
            Semantics::Set if keys.is_empty() && !traits.optional_partition_by => {
                return plan_err!(
                    "table argument `{arg}` of `{name}` has set semantics: pass it with PARTITION BY, e.g. `{arg} => TABLE t PARTITION BY k`"
                );
            }
            _ => {}
        }
        let schema = input.schema().clone();
        let kinds = match changelog::row_kind_column(&schema) {
            None => None,
            Some(_) if !traits.supports_updates => {
                return plan_err!(
                    "table argument `{arg}` of `{name}` is a changelog (rows of kinds +I, -U, +U, -D), which it does not declare it takes: add `supports_updates` to its #[argument(...)] to read each row with its kind"
                );
            }
            Some(_) if traits.pass_columns_through => {
                return plan_err!(
                    "table argument `{arg}` of `{name}` is a changelog: `pass_columns_through` would copy its row kinds into an insert-only output"
                );
            }
            Some(index) => Some(Expr::Column(Column::from(schema.qualified_field(index)))),
        };
        for key in &keys {
            if !matches!(key, Expr::Column(_)) {
                return plan_err!(
                    "PARTITION BY of `{arg}` in `{name}` takes columns of the table, not `{key}`"
                );
            }
        }
        let key_columns: Vec<&Column> = keys
            .iter()
            .filter_map(|k| match k {
                Expr::Column(c) => Some(c),
                _ => None,
            })
            .collect();

        // The function's row: the table's columns as they are, or the declared type's
        // fields matched by name and cast.
        let (row, row_names) = match &traits.row {
            None => {
                // Every column but a changelog's row kinds (`ctx.row_kind()` has them).
                let columns: Vec<Column> = schema
                    .iter()
                    .filter(|(_, field)| !changelog::is_row_kind(field))
                    .map(Column::from)
                    .collect();
                let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
                (columns.into_iter().map(Expr::Column).collect(), names)
            }
            Some(DataType {
                kind: TypeKind::Row(fields),
                ..
            }) => {
                let mut row = Vec::with_capacity(fields.len());
                for field in fields {
                    let Some((qualifier, column)) = schema
                        .iter()
                        .find(|(_, f)| f.name().eq_ignore_ascii_case(&field.name))
                    else {
                        let names: Vec<&String> =
                            schema.fields().iter().map(|f| f.name()).collect();
                        return plan_err!(
                            "table argument `{arg}` of `{name}` is read as {}, but the table has no column `{}` (its columns: {})",
                            traits.row.as_ref().expect("matched"),
                            field.name,
                            names
                                .iter()
                                .map(|n| n.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        );
                    };
                    let expr = Expr::Column(Column::from((qualifier, column)));
                    let target = field.data_type.to_arrow();
                    row.push(if column.data_type() == &target {
                        expr
                    } else {
                        cast(expr, target)
                    });
                }
                (row, fields.iter().map(|f| f.name.clone()).collect())
            }
            Some(other) => {
                return plan_err!(
                    "table argument `{arg}` of `{name}` must be read as a ROW type, not {other}"
                );
            }
        };
        let key_positions = key_columns
            .iter()
            .filter_map(|key| match &traits.row {
                // Its place among the columns the row keeps.
                None => schema.index_of_column(key).ok().map(|index| {
                    (0..index)
                        .filter(|&i| !changelog::is_row_kind(schema.field(i)))
                        .count()
                }),
                Some(_) => row_names
                    .iter()
                    .position(|n: &String| n.eq_ignore_ascii_case(&key.name)),
            })
            .collect();
        Ok(TableBinding {
            name: arg.clone(),
            semantics: traits.semantics,
            keys,
            row,
            row_names,
            key_positions,
            pass_through: traits.pass_columns_through,
            order_by: Vec::new(),
            order_names: Vec::new(),
            event_time: None,
            kinds,
        })
    }
}

fn not_constant(name: &str, spec: &ArgSpec, detail: String) -> datafusion::common::DataFusionError {
    plan_datafusion_err!(
        "argument `{}` of `{name}` must be a constant: {detail}",
        spec.name
    )
}

/// `DESCRIPTOR(ts)` (or, for several tables, `DESCRIPTOR(order_ts, paid_ts)`): the columns
/// it names.
fn descriptor(name: &str, given: Given) -> Result<Vec<String>> {
    let columns = match &given {
        Given::Value(value) => descriptor_columns(value),
        Given::Table(_) => None,
    };
    columns.ok_or_else(|| {
        plan_datafusion_err!(
            "`on_time` of `{name}` takes a column descriptor: `on_time => DESCRIPTOR(ts)`"
        )
    })
}

/// NULL of an omitted optional argument's type.
pub(crate) fn null_of(spec: &ArgSpec) -> Result<ScalarValue> {
    match &spec.ty {
        ArgType::Typed(t) => Ok(ScalarValue::try_from(&t.to_arrow())?),
        _ => Ok(ScalarValue::Null),
    }
}

/// Flink's uid format: `^[a-zA-Z_][a-zA-Z-_0-9]*$`.
pub(crate) fn valid_uid(uid: &str) -> bool {
    let mut chars = uid.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    #[test]
    fn uids_follow_flinks_format() {
        assert!(super::valid_uid("counter_1"));
        assert!(super::valid_uid("_a-b"));
        assert!(!super::valid_uid("1counter"));
        assert!(!super::valid_uid("a b"));
        assert!(!super::valid_uid(""));
    }
}
