//! The lateral join of a table function (`LateralTableFunction` node, `LateralExec`) on the
//! wire: the function by catalog name and identity, its chosen signature and column names,
//! the join kind, the arguments, and the output schema. The function itself is looked up in
//! the receiving side's catalog.

use std::sync::Arc;

use datafusion::arrow::datatypes::FieldRef;
use datafusion::common::{Result, TableReference, plan_err};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use serde::{Deserialize, Serialize};

use super::functions::{FunctionCodec, Identity, fixed_row_type};
use super::wire;
use crate::ops::lateral::{
    LateralExec, LateralJoin, LateralNode, ResolvedCall, TableFunctionCall, TableFunctionImpl,
};

/// One lateral join, logical or physical.
#[derive(Serialize, Deserialize)]
struct Lateral {
    function: String,
    identity: Identity,
    signature: usize,
    names: Option<Vec<String>>,
    left: bool,
    /// The arguments (logical or physical expressions).
    args: Vec<Vec<u8>>,
    /// The output schema (a qualified `DFSchema` for the node, an Arrow schema for the exec).
    schema: Vec<u8>,
}

impl Lateral {
    fn of(call: &ResolvedCall, join: LateralJoin, functions: &FunctionCodec) -> Result<Self> {
        Ok(Lateral {
            function: call.call.name.clone(),
            identity: functions.identity(&call.call.name)?,
            signature: call.signature,
            names: call.call.names.clone(),
            left: join == LateralJoin::Left,
            args: Vec::new(),
            schema: Vec::new(),
        })
    }

    fn join(&self) -> LateralJoin {
        if self.left {
            LateralJoin::Left
        } else {
            LateralJoin::Inner
        }
    }

    /// The call as the receiving side's catalog has it, with `args` as its arguments.
    fn call(
        &self,
        functions: &FunctionCodec,
        args: Vec<datafusion::logical_expr::Expr>,
    ) -> Result<ResolvedCall> {
        let entry = functions.resolve(&self.function, &self.identity)?;
        let Some(function) = TableFunctionImpl::of(&entry.function) else {
            return plan_err!("`{}` is not a table function here", self.function);
        };
        let row_type = fixed_row_type(&entry, self.signature)?;
        let mut call = TableFunctionCall::new(
            entry.name,
            entry.spec,
            function,
            args,
            functions.metrics().clone(),
        );
        call.names = self.names.clone();
        Ok(ResolvedCall {
            call,
            signature: self.signature,
            row_type,
        })
    }
}

pub fn encode_node(
    node: &LateralNode,
    functions: &FunctionCodec,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Vec<u8>> {
    let mut lateral = Lateral::of(&node.call, node.join, functions)?;
    lateral.args = wire::logical_exprs(&node.call.call.args, codec)?;
    lateral.schema = wire::df_schema(&node.schema)?;
    wire::record("a lateral join", &lateral)
}

pub fn decode_node(
    bytes: &[u8],
    inputs: &[LogicalPlan],
    ctx: &TaskContext,
    functions: &FunctionCodec,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Extension> {
    let lateral: Lateral = wire::parse_record("a lateral join", bytes)?;
    let input = wire::one_input(inputs, "a lateral join")?;
    let args = wire::parse_logical_exprs(&lateral.args, ctx, codec)?;
    let call = lateral.call(functions, args)?;
    let schema = wire::parse_df_schema(&lateral.schema)?;
    // The function's columns follow the input's.
    let function_fields: Vec<(Option<TableReference>, FieldRef)> = schema
        .iter()
        .skip(input.schema().fields().len())
        .map(|(qualifier, field)| (qualifier.cloned(), field.clone()))
        .collect();
    let node = LateralNode::try_new(input.clone(), call, lateral.join(), function_fields)?;
    Ok(Extension {
        node: Arc::new(node),
    })
}

pub fn encode_exec(
    exec: &LateralExec,
    functions: &FunctionCodec,
    physical: &wire::Physical,
) -> Result<Vec<u8>> {
    let mut lateral = Lateral::of(exec.call(), exec.join(), functions)?;
    lateral.args = physical.exprs(exec.args())?;
    lateral.schema = wire::schema(&exec.schema())?;
    wire::record("a lateral join", &lateral)
}

pub fn decode_exec(
    bytes: &[u8],
    inputs: &[Arc<dyn ExecutionPlan>],
    ctx: &TaskContext,
    functions: &FunctionCodec,
    physical: &wire::Physical,
) -> Result<Arc<dyn ExecutionPlan>> {
    let lateral: Lateral = wire::parse_record("a lateral join", bytes)?;
    let input = wire::one_input(inputs, "a lateral join")?;
    let args = physical.parse_exprs(&lateral.args, &input.schema(), ctx)?;
    // The exec evaluates its physical arguments; the logical ones stay with the client's plan.
    let call = lateral.call(functions, Vec::new())?;
    let schema = Arc::new(wire::parse_schema(&lateral.schema)?);
    Ok(Arc::new(LateralExec::new(
        input.clone(),
        args,
        call,
        lateral.join(),
        schema,
    )))
}
