//! Windows on the wire: a window table function alone (`WindowTvf` node, `WindowTvfExec`) and
//! a window aggregate (`WindowAggregate` node, `WindowAggregateExec`) — the window and its
//! sizes, the time attribute with its watermark, the GROUP BY keys and where each grouped
//! column comes from, the aggregate calls (a project function by catalog name and identity,
//! a built-in by name); the exec adds its output schema, processors and, on a cluster, the
//! source partitions stamped before the shuffle.

use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::common::{Result, plan_err};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDFImpl, Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use serde::{Deserialize, Serialize};

use super::functions::{FunctionCodec, Identity};
use super::wire::{self, Time};
use crate::functions::aggregate::capabilities::ours;
use crate::ops::updating_aggregate::calls::{Call, CallFunction};
use crate::ops::window::aggregate_node::GroupColumn;
use crate::ops::window::spec::WindowKind;
use crate::ops::window::{
    WindowAggregate, WindowAggregateExec, WindowAggregateNode, WindowTvfExec, WindowTvfNode,
};

#[derive(Serialize, Deserialize)]
enum Window {
    Tumble { size: i64 },
    Hop { slide: i64, size: i64 },
    Cumulate { step: i64, size: i64 },
    Session { gap: i64 },
}

impl Window {
    fn of(kind: WindowKind) -> Self {
        match kind {
            WindowKind::Tumble { size } => Window::Tumble { size },
            WindowKind::Hop { slide, size } => Window::Hop { slide, size },
            WindowKind::Cumulate { step, size } => Window::Cumulate { step, size },
            WindowKind::Session { gap } => Window::Session { gap },
        }
    }

    fn kind(self) -> WindowKind {
        match self {
            Window::Tumble { size } => WindowKind::Tumble { size },
            Window::Hop { slide, size } => WindowKind::Hop { slide, size },
            Window::Cumulate { step, size } => WindowKind::Cumulate { step, size },
            Window::Session { gap } => WindowKind::Session { gap },
        }
    }
}

#[derive(Serialize, Deserialize)]
enum Grouped {
    WindowStart,
    WindowEnd,
    Key(usize),
}

impl Grouped {
    fn of(column: GroupColumn) -> Self {
        match column {
            GroupColumn::WindowStart => Grouped::WindowStart,
            GroupColumn::WindowEnd => Grouped::WindowEnd,
            GroupColumn::Key(index) => Grouped::Key(index),
        }
    }

    fn column(self) -> GroupColumn {
        match self {
            Grouped::WindowStart => GroupColumn::WindowStart,
            Grouped::WindowEnd => GroupColumn::WindowEnd,
            Grouped::Key(index) => GroupColumn::Key(index),
        }
    }
}

/// A window table function alone, as a node.
#[derive(Serialize, Deserialize)]
struct Tvf {
    window: Window,
    time: Time,
    partition_by: Vec<Vec<u8>>,
}

/// A window table function alone, as an exec: the time column is all it reads.
#[derive(Serialize, Deserialize)]
struct TvfExec {
    window: Window,
    time_column: usize,
    schema: Vec<u8>,
}

/// A window aggregate; keys and calls are logical expressions in a node's record.
#[derive(Serialize, Deserialize)]
struct Aggregate {
    window: Window,
    time: Time,
    keys: Vec<Vec<u8>>,
    layout: Vec<Grouped>,
    calls: Vec<Vec<u8>>,
    schema: Vec<u8>,
}

/// A window aggregate's exec: its physical calls, processors and stamping.
#[derive(Serialize, Deserialize)]
struct AggregateExec {
    window: Window,
    time: Time,
    keys: Vec<Vec<u8>>,
    layout: Vec<Grouped>,
    calls: Vec<PhysicalCall>,
    schema: Vec<u8>,
    processors: usize,
    stamped: Option<usize>,
}

#[derive(Serialize, Deserialize)]
struct PhysicalCall {
    function: String,
    /// A project function's identity; `None` for a built-in.
    identity: Option<Identity>,
    args: Vec<Vec<u8>>,
    filter: Option<Vec<u8>>,
    distinct: bool,
    /// The result field, as a schema of one field.
    output: Vec<u8>,
}

pub fn encode_tvf_node(node: &WindowTvfNode, codec: &dyn LogicalExtensionCodec) -> Result<Vec<u8>> {
    let record = Tvf {
        window: Window::of(node.window),
        time: Time::of(&node.time),
        partition_by: wire::logical_exprs(&node.partition_by, codec)?,
    };
    wire::record("a window table function", &record)
}

pub fn decode_tvf_node(
    bytes: &[u8],
    inputs: &[LogicalPlan],
    ctx: &TaskContext,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Extension> {
    let record: Tvf = wire::parse_record("a window table function", bytes)?;
    let input = wire::one_input(inputs, "a window table function")?;
    let node = WindowTvfNode::try_new(
        input.clone(),
        record.window.kind(),
        record.time.event_time(),
        wire::parse_logical_exprs(&record.partition_by, ctx, codec)?,
    )?;
    Ok(Extension {
        node: Arc::new(node),
    })
}

pub fn encode_tvf_exec(exec: &WindowTvfExec) -> Result<Vec<u8>> {
    let record = TvfExec {
        window: Window::of(exec.window()),
        time_column: exec.time_column(),
        schema: wire::schema(&exec.schema())?,
    };
    wire::record("a window table function", &record)
}

pub fn decode_tvf_exec(
    bytes: &[u8],
    inputs: &[Arc<dyn ExecutionPlan>],
) -> Result<Arc<dyn ExecutionPlan>> {
    let record: TvfExec = wire::parse_record("a window table function", bytes)?;
    let input = wire::one_input(inputs, "a window table function")?;
    Ok(Arc::new(WindowTvfExec::new(
        input.clone(),
        record.window.kind(),
        record.time_column,
        Arc::new(wire::parse_schema(&record.schema)?),
    )))
}

pub fn encode_aggregate_node(
    node: &WindowAggregateNode,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Vec<u8>> {
    let record = Aggregate {
        window: Window::of(node.window),
        time: Time::of(&node.time),
        keys: wire::logical_exprs(&node.keys, codec)?,
        layout: node.layout.iter().copied().map(Grouped::of).collect(),
        calls: wire::logical_exprs(&node.calls, codec)?,
        schema: wire::df_schema(&node.schema)?,
    };
    wire::record("a window aggregate", &record)
}

pub fn decode_aggregate_node(
    bytes: &[u8],
    inputs: &[LogicalPlan],
    ctx: &TaskContext,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Extension> {
    let record: Aggregate = wire::parse_record("a window aggregate", bytes)?;
    let input = wire::one_input(inputs, "a window aggregate")?;
    let node = WindowAggregateNode {
        input: input.clone(),
        window: record.window.kind(),
        time: record.time.event_time(),
        keys: wire::parse_logical_exprs(&record.keys, ctx, codec)?,
        layout: record.layout.into_iter().map(Grouped::column).collect(),
        calls: wire::parse_logical_exprs(&record.calls, ctx, codec)?,
        schema: Arc::new(wire::parse_df_schema(&record.schema)?),
    };
    Ok(Extension {
        node: Arc::new(node),
    })
}

pub fn encode_aggregate_exec(
    exec: &WindowAggregateExec,
    functions: &FunctionCodec,
    physical: &wire::Physical,
) -> Result<Vec<u8>> {
    if exec.is_checkpointed() {
        return plan_err!(
            "the window aggregate over `{}` runs under checkpoints, which a Ballista cluster \
             does not take: clusters run bounded queries",
            exec.time().name
        );
    }
    let calls = exec
        .calls()
        .iter()
        .map(|call| encode_call(call, functions, physical))
        .collect::<Result<Vec<_>>>()?;
    let record = AggregateExec {
        window: Window::of(exec.window()),
        time: Time::of(exec.time()),
        keys: physical.exprs(exec.keys())?,
        layout: exec.layout().iter().copied().map(Grouped::of).collect(),
        calls,
        schema: wire::schema(&exec.schema())?,
        processors: exec.processors(),
        stamped: exec.stamped(),
    };
    wire::record("a window aggregate", &record)
}

pub fn decode_aggregate_exec(
    bytes: &[u8],
    inputs: &[Arc<dyn ExecutionPlan>],
    ctx: &TaskContext,
    functions: &FunctionCodec,
    physical: &wire::Physical,
) -> Result<Arc<dyn ExecutionPlan>> {
    let record: AggregateExec = wire::parse_record("a window aggregate", bytes)?;
    let input = wire::one_input(inputs, "a window aggregate")?;
    let schema = input.schema();
    let calls = record
        .calls
        .into_iter()
        .map(|call| decode_call(call, &schema, ctx, functions, physical))
        .collect::<Result<Vec<_>>>()?;
    let grouped = WindowAggregate {
        window: record.window.kind(),
        time: record.time.event_time(),
        keys: physical.parse_exprs(&record.keys, &schema, ctx)?,
        layout: record.layout.into_iter().map(Grouped::column).collect(),
        calls,
        schema: Arc::new(wire::parse_schema(&record.schema)?),
    };
    Ok(Arc::new(WindowAggregateExec::as_planned(
        input.clone(),
        grouped,
        record.processors,
        record.stamped,
    )))
}

fn encode_call(
    call: &Call,
    functions: &FunctionCodec,
    physical: &wire::Physical,
) -> Result<PhysicalCall> {
    let (function, identity) = match &call.function {
        CallFunction::Ours(udaf) => {
            let name = AggregateUDFImpl::name(udaf.as_ref()).to_owned();
            let identity = functions.identity(&name)?;
            (name, Some(identity))
        }
        CallFunction::BuiltIn(name) => (name.clone(), None),
    };
    Ok(PhysicalCall {
        function,
        identity,
        args: physical.exprs(&call.args)?,
        filter: match &call.filter {
            Some(filter) => physical.exprs(std::slice::from_ref(filter))?.pop(),
            None => None,
        },
        distinct: call.distinct,
        output: wire::schema(&Schema::new(vec![call.output.as_ref().clone()]))?,
    })
}

fn decode_call(
    call: PhysicalCall,
    input: &Schema,
    ctx: &TaskContext,
    functions: &FunctionCodec,
    physical: &wire::Physical,
) -> Result<Call> {
    let function = match &call.identity {
        Some(identity) => {
            let udaf = functions.aggregate(&call.function, identity)?;
            match ours(&udaf) {
                Some(ours) => CallFunction::Ours(Arc::new(ours.clone())),
                None => return plan_err!("`{}` is not a project aggregate here", call.function),
            }
        }
        None => CallFunction::BuiltIn(call.function.clone()),
    };
    let output = wire::parse_schema(&call.output)?;
    let [output]: [Arc<Field>; 1] = output.fields().to_vec().try_into().map_err(|_| {
        datafusion::common::DataFusionError::Plan(format!(
            "the result of `{}` arrived without its one field",
            call.function
        ))
    })?;
    let filter = match call.filter {
        Some(filter) => physical.parse_exprs(&[filter], input, ctx)?.pop(),
        None => None,
    };
    Call::new(
        function,
        physical.parse_exprs(&call.args, input, ctx)?,
        filter,
        call.distinct,
        output,
        input,
    )
}
