//! A table aggregate (`TableAggregate` node, `TableAggregateExec`) on the wire: the function
//! by catalog name and identity, its chosen signature, column names, emit mode and uid, the
//! GROUP BY keys and arguments, and (for the exec) the output schema.

use std::sync::Arc;

use datafusion::common::{Result, plan_err};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use serde::{Deserialize, Serialize};
use udf_core::Function;
use udf_core::types::TypeKind;

use super::functions::{FunctionCodec, Identity, fixed_row_type};
use super::wire;
use crate::ops::table_aggregate::aggregation::EmitMode;
use crate::ops::table_aggregate::{TableAggregateCall, TableAggregateExec, TableAggregateNode};
use crate::session::catalog::CatalogEntry;

/// One table aggregate, logical or physical.
#[derive(Serialize, Deserialize)]
struct TableAggregate {
    function: String,
    identity: Identity,
    signature: usize,
    names: Option<Vec<String>>,
    changelog: bool,
    uid: Option<String>,
    /// GROUP BY keys and arguments (logical or physical expressions).
    group_by: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
    /// The exec's output schema (the node works its own out).
    schema: Vec<u8>,
}

impl TableAggregate {
    fn of(call: &TableAggregateCall, signature: usize, functions: &FunctionCodec) -> Result<Self> {
        Ok(TableAggregate {
            function: call.name.clone(),
            identity: functions.identity(&call.name)?,
            signature,
            names: call.names.clone(),
            changelog: call.mode == EmitMode::Changelog,
            uid: call.uid.clone(),
            group_by: Vec::new(),
            args: Vec::new(),
            schema: Vec::new(),
        })
    }

    /// The call as the receiving side's catalog has it, with `args` as its arguments.
    fn call(&self, entry: CatalogEntry, args: Vec<Expr>) -> Result<TableAggregateCall> {
        let Function::TableAggregate(function) = &entry.function else {
            return plan_err!("`{}` is not a table aggregate here", self.function);
        };
        Ok(TableAggregateCall {
            name: entry.name.clone(),
            spec: entry.spec.clone(),
            function: function.clone(),
            args,
            names: self.names.clone(),
            mode: if self.changelog {
                EmitMode::Changelog
            } else {
                EmitMode::Final
            },
            uid: self.uid.clone(),
        })
    }
}

pub fn encode_node(
    node: &TableAggregateNode,
    functions: &FunctionCodec,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Vec<u8>> {
    let mut aggregate = TableAggregate::of(&node.call, node.signature, functions)?;
    aggregate.group_by = wire::logical_exprs(&node.group_by, codec)?;
    // The node's arguments, cast and optimized as planned (the call keeps the ones given).
    aggregate.args = wire::logical_exprs(&node.args, codec)?;
    wire::record("a table aggregate", &aggregate)
}

pub fn decode_node(
    bytes: &[u8],
    inputs: &[LogicalPlan],
    ctx: &TaskContext,
    functions: &FunctionCodec,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Extension> {
    let aggregate: TableAggregate = wire::parse_record("a table aggregate", bytes)?;
    let input = wire::one_input(inputs, "a table aggregate")?;
    let entry = functions.resolve(&aggregate.function, &aggregate.identity)?;
    let group_by = wire::parse_logical_exprs(&aggregate.group_by, ctx, codec)?;
    let args = wire::parse_logical_exprs(&aggregate.args, ctx, codec)?;
    let call = aggregate.call(entry, args)?;
    let node = TableAggregateNode::try_new(input.clone(), group_by, call)?;
    if node.signature != aggregate.signature {
        return plan_err!(
            "`{}` resolves to another signature here than on the client",
            aggregate.function
        );
    }
    Ok(Extension {
        node: Arc::new(node),
    })
}

pub fn encode_exec(
    exec: &TableAggregateExec,
    functions: &FunctionCodec,
    physical: &wire::Physical,
) -> Result<Vec<u8>> {
    if exec.is_checkpointed() {
        return plan_err!(
            "the table aggregate `{}` runs under checkpoints, which a Ballista cluster does not \
             take: clusters run bounded queries",
            exec.call().name
        );
    }
    let mut aggregate = TableAggregate::of(exec.call(), exec.signature(), functions)?;
    aggregate.group_by = physical.exprs(exec.group_by())?;
    aggregate.args = physical.exprs(exec.args())?;
    aggregate.schema = wire::schema(&exec.schema())?;
    wire::record("a table aggregate", &aggregate)
}

pub fn decode_exec(
    bytes: &[u8],
    inputs: &[Arc<dyn ExecutionPlan>],
    ctx: &TaskContext,
    functions: &FunctionCodec,
    physical: &wire::Physical,
) -> Result<Arc<dyn ExecutionPlan>> {
    let aggregate: TableAggregate = wire::parse_record("a table aggregate", bytes)?;
    let input = wire::one_input(inputs, "a table aggregate")?;
    let entry = functions.resolve(&aggregate.function, &aggregate.identity)?;
    let input_schema = input.schema();
    let group_by = physical.parse_exprs(&aggregate.group_by, &input_schema, ctx)?;
    let args = physical.parse_exprs(&aggregate.args, &input_schema, ctx)?;
    let row_type = fixed_row_type(&entry, aggregate.signature)?;
    let row_is_struct = matches!(row_type.kind, TypeKind::Row(_));
    // The exec evaluates its physical arguments; the logical ones stay with the client's plan.
    let call = aggregate.call(entry, Vec::new())?;
    Ok(Arc::new(TableAggregateExec::new(
        input.clone(),
        group_by,
        args,
        call,
        aggregate.signature,
        row_type,
        row_is_struct,
        Arc::new(wire::parse_schema(&aggregate.schema)?),
    )))
}
