//! A process table function call (`ProcessTableFunction` node, `ProcessTableFunctionExec`) on
//! the wire: the function by catalog name and identity, its scalar argument values, how each
//! table argument is passed (keys, row, ORDER BY, time column and watermark, row kinds), the
//! shared key types, the emitted row type, uid and `on_time`; the exec adds its inputs'
//! physical expressions, output schema and processor count.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType as ArrowType;
use datafusion::common::{DataFusionError, Result, ScalarValue, plan_err};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::protobuf;
use prost::Message;
use serde::{Deserialize, Serialize};
use udf_core::types::DataType;
use udf_core::{Function, Semantics};

use super::functions::{FunctionCodec, Identity};
use super::wire::{self, Time};
use crate::ops::ptf::PtfNode;
use crate::ops::ptf::call::{PtfCall, TableBinding};
use crate::ops::ptf::exec::PtfExec;
use crate::ops::ptf::input::PtfInput;
use crate::ops::routing::shuffle::ShuffleStampExec;

#[derive(Serialize, Deserialize)]
struct Call {
    function: String,
    identity: Identity,
    /// Protobuf `ScalarValue`s.
    scalars: Vec<Vec<u8>>,
    tables: Vec<Table>,
    /// Protobuf `ArrowType`s.
    key_types: Vec<Vec<u8>>,
    /// In the type syntax (`ROW<cnt BIGINT> NOT NULL`).
    row_type: String,
    uid: Option<String>,
    on_time: bool,
}

#[derive(Serialize, Deserialize)]
struct Table {
    name: String,
    set_semantics: bool,
    keys: Vec<Vec<u8>>,
    row: Vec<Vec<u8>>,
    row_names: Vec<String>,
    key_positions: Vec<usize>,
    pass_through: bool,
    order_by: Vec<(usize, bool, bool)>,
    order_names: Vec<String>,
    event_time: Option<Time>,
    kinds: Option<Vec<u8>>,
}

/// The stamp of a table argument's rows before a cluster's shuffle.
#[derive(Serialize, Deserialize)]
struct Stamp {
    keys: Vec<Vec<u8>>,
    event_time: Option<Time>,
    processors: usize,
}

/// An exec's inputs' physical expressions, its output schema and processors.
#[derive(Serialize, Deserialize)]
struct Exec {
    call: Call,
    inputs: Vec<Input>,
    schema: Vec<u8>,
    processors: usize,
    on_cluster: bool,
    stamped: Option<Vec<usize>>,
}

#[derive(Serialize, Deserialize)]
struct Input {
    keys: Vec<Vec<u8>>,
    row: Vec<Vec<u8>>,
    kinds: Option<Vec<u8>>,
}

fn encode_call(
    call: &PtfCall,
    functions: &FunctionCodec,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Call> {
    let scalars = call
        .scalars
        .iter()
        .map(|value| Ok(protobuf::ScalarValue::try_from(value)?.encode_to_vec()))
        .collect::<Result<Vec<_>>>()?;
    let key_types = call
        .key_types
        .iter()
        .map(|t| Ok(protobuf::ArrowType::try_from(t)?.encode_to_vec()))
        .collect::<Result<Vec<_>>>()?;
    let tables = call
        .tables
        .iter()
        .map(|table| {
            Ok(Table {
                name: table.name.clone(),
                set_semantics: table.semantics == Semantics::Set,
                keys: wire::logical_exprs(&table.keys, codec)?,
                row: wire::logical_exprs(&table.row, codec)?,
                row_names: table.row_names.clone(),
                key_positions: table.key_positions.clone(),
                pass_through: table.pass_through,
                order_by: table.order_by.clone(),
                order_names: table.order_names.clone(),
                event_time: table.event_time.as_ref().map(Time::of),
                kinds: match &table.kinds {
                    Some(kinds) => wire::logical_exprs(std::slice::from_ref(kinds), codec)?.pop(),
                    None => None,
                },
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Call {
        function: call.name.clone(),
        identity: functions.identity(&call.name)?,
        scalars,
        tables,
        key_types,
        row_type: call.row_type.to_string(),
        uid: call.uid.clone(),
        on_time: call.on_time,
    })
}

fn decode_call(
    call: Call,
    ctx: &TaskContext,
    functions: &FunctionCodec,
    codec: &dyn LogicalExtensionCodec,
) -> Result<PtfCall> {
    let entry = functions.resolve(&call.function, &call.identity)?;
    let Function::Process(function) = &entry.function else {
        return plan_err!("`{}` is not a process table function here", call.function);
    };
    let scalars = call
        .scalars
        .iter()
        .map(|bytes| {
            let proto = protobuf::ScalarValue::decode(bytes.as_slice()).map_err(garbled)?;
            Ok(ScalarValue::try_from(&proto)?)
        })
        .collect::<Result<Vec<_>>>()?;
    let key_types = call
        .key_types
        .iter()
        .map(|bytes| {
            let proto = protobuf::ArrowType::decode(bytes.as_slice()).map_err(garbled)?;
            Ok(ArrowType::try_from(&proto)?)
        })
        .collect::<Result<Vec<_>>>()?;
    let tables = call
        .tables
        .into_iter()
        .map(|table| {
            Ok(TableBinding {
                name: table.name,
                semantics: if table.set_semantics {
                    Semantics::Set
                } else {
                    Semantics::Row
                },
                keys: wire::parse_logical_exprs(&table.keys, ctx, codec)?,
                row: wire::parse_logical_exprs(&table.row, ctx, codec)?,
                row_names: table.row_names,
                key_positions: table.key_positions,
                pass_through: table.pass_through,
                order_by: table.order_by,
                order_names: table.order_names,
                event_time: table.event_time.map(Time::event_time),
                kinds: match table.kinds {
                    Some(kinds) => wire::parse_logical_exprs(&[kinds], ctx, codec)?.pop(),
                    None => None,
                },
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let row_type: DataType = call.row_type.parse().map_err(|e| {
        DataFusionError::Plan(format!(
            "the row type `{}` of `{}` does not read back: {e}",
            call.row_type, call.function
        ))
    })?;
    Ok(PtfCall {
        name: entry.name.clone(),
        spec: entry.spec.clone(),
        function: function.clone(),
        metrics: functions.metrics().clone(),
        scalars,
        tables,
        key_types,
        row_type,
        uid: call.uid,
        on_time: call.on_time,
    })
}

pub fn encode_node(
    node: &PtfNode,
    functions: &FunctionCodec,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Vec<u8>> {
    wire::record(
        "a process table function call",
        &encode_call(&node.call, functions, codec)?,
    )
}

pub fn decode_node(
    bytes: &[u8],
    inputs: &[LogicalPlan],
    ctx: &TaskContext,
    functions: &FunctionCodec,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Extension> {
    let call: Call = wire::parse_record("a process table function call", bytes)?;
    let call = decode_call(call, ctx, functions, codec)?;
    let node = PtfNode::try_new(inputs.to_vec(), call)?;
    Ok(Extension {
        node: Arc::new(node),
    })
}

pub fn encode_exec(
    exec: &PtfExec,
    functions: &FunctionCodec,
    logical: &dyn LogicalExtensionCodec,
    physical: &wire::Physical,
) -> Result<Vec<u8>> {
    if exec.committing_sink() {
        return plan_err!(
            "`{}` writes to a committing sink under checkpoints, which a Ballista cluster does \
             not take: clusters run bounded queries",
            exec.call().name
        );
    }
    let inputs = exec
        .inputs()
        .iter()
        .map(|input| {
            Ok(Input {
                keys: physical.exprs(&input.keys)?,
                row: physical.exprs(&input.row)?,
                kinds: match &input.kinds {
                    Some(kinds) => physical.exprs(std::slice::from_ref(kinds))?.pop(),
                    None => None,
                },
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let record = Exec {
        call: encode_call(exec.call(), functions, logical)?,
        inputs,
        schema: wire::schema(&exec.schema())?,
        processors: exec.processors(),
        on_cluster: exec.is_on_cluster(),
        stamped: exec.stamped().map(<[usize]>::to_vec),
    };
    wire::record("a process table function call", &record)
}

pub fn decode_exec(
    bytes: &[u8],
    plans: &[Arc<dyn ExecutionPlan>],
    ctx: &TaskContext,
    functions: &FunctionCodec,
    logical: &dyn LogicalExtensionCodec,
    physical: &wire::Physical,
) -> Result<Arc<dyn ExecutionPlan>> {
    let record: Exec = wire::parse_record("a process table function call", bytes)?;
    if record.inputs.len() != plans.len() {
        return plan_err!(
            "a process table function call with {} inputs arrived with {} plans",
            record.inputs.len(),
            plans.len()
        );
    }
    let inputs = record
        .inputs
        .into_iter()
        .zip(plans)
        .map(|(input, plan)| {
            let schema = plan.schema();
            Ok(PtfInput {
                plan: plan.clone(),
                keys: physical.parse_exprs(&input.keys, &schema, ctx)?,
                row: physical.parse_exprs(&input.row, &schema, ctx)?,
                kinds: match input.kinds {
                    Some(kinds) => physical.parse_exprs(&[kinds], &schema, ctx)?.pop(),
                    None => None,
                },
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let call = decode_call(record.call, ctx, functions, logical)?;
    let schema = Arc::new(wire::parse_schema(&record.schema)?);
    Ok(Arc::new(if record.on_cluster {
        PtfExec::on_cluster_as_planned(inputs, call, schema, record.processors, record.stamped)
    } else {
        PtfExec::new(inputs, call, schema, record.processors)
    }))
}

fn garbled(e: prost::DecodeError) -> DataFusionError {
    DataFusionError::Plan(format!(
        "a process table function call arrived garbled: {e}"
    ))
}

pub fn encode_stamp(stamp: &ShuffleStampExec, physical: &wire::Physical) -> Result<Vec<u8>> {
    let record = Stamp {
        keys: physical.exprs(stamp.keys())?,
        event_time: stamp.event_time().map(Time::of),
        processors: stamp.processors(),
    };
    wire::record("the stamp before a shuffle", &record)
}

pub fn decode_stamp(
    bytes: &[u8],
    plans: &[Arc<dyn ExecutionPlan>],
    ctx: &TaskContext,
    physical: &wire::Physical,
) -> Result<Arc<dyn ExecutionPlan>> {
    let record: Stamp = wire::parse_record("the stamp before a shuffle", bytes)?;
    let input = wire::one_input(plans, "the stamp before a shuffle")?.clone();
    let keys = physical.parse_exprs(&record.keys, &input.schema(), ctx)?;
    Ok(Arc::new(ShuffleStampExec::new(
        input,
        keys,
        record.event_time.map(Time::event_time),
        record.processors,
    )))
}
