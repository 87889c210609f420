//! The pieces the project's node encodings are made of: DataFusion's protobuf messages for
//! expressions and schemas (each as its own bytes), inside a postcard record per node.

use std::sync::Arc;

use datafusion::arrow::datatypes::Schema;
use datafusion::common::{
    DFSchema, DataFusionError, Dependency, FunctionalDependence, FunctionalDependencies, Result,
};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::PhysicalExpr;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::logical_plan::from_proto::parse_exprs;
use datafusion_proto::logical_plan::to_proto::serialize_exprs;
use datafusion_proto::physical_plan::from_proto::parse_physical_exprs;
use datafusion_proto::physical_plan::to_proto::serialize_physical_exprs;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf;
use prost::Message;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::streaming::event_time::{EventTime, WatermarkEmission};

/// The one input of a node or exec named `what`.
pub fn one_input<'a, T>(inputs: &'a [T], what: &str) -> Result<&'a T> {
    match inputs {
        [input] => Ok(input),
        _ => Err(DataFusionError::Plan(format!(
            "{what} takes one input, not {}",
            inputs.len()
        ))),
    }
}

/// A node's record as bytes.
pub fn record<T: Serialize>(what: &str, value: &T) -> Result<Vec<u8>> {
    postcard::to_stdvec(value)
        .map_err(|e| DataFusionError::Internal(format!("encoding {what}: {e}")))
}

/// A node's record from its bytes.
pub fn parse_record<T: DeserializeOwned>(what: &str, bytes: &[u8]) -> Result<T> {
    postcard::from_bytes(bytes).map_err(|e| {
        DataFusionError::Plan(format!(
            "{what} arrived in a form this side does not read ({e}): are the client, scheduler \
             and executors built from the same version?"
        ))
    })
}

pub fn logical_exprs(exprs: &[Expr], codec: &dyn LogicalExtensionCodec) -> Result<Vec<Vec<u8>>> {
    Ok(serialize_exprs(exprs, codec)?
        .iter()
        .map(Message::encode_to_vec)
        .collect())
}

pub fn parse_logical_exprs(
    bytes: &[Vec<u8>],
    ctx: &TaskContext,
    codec: &dyn LogicalExtensionCodec,
) -> Result<Vec<Expr>> {
    let protos = bytes
        .iter()
        .map(|b| protobuf::LogicalExprNode::decode(b.as_slice()).map_err(garbled))
        .collect::<Result<Vec<_>>>()?;
    parse_exprs(&protos, ctx, codec).map_err(|e| DataFusionError::Plan(e.to_string()))
}

#[derive(Serialize, Deserialize)]
/// A time attribute: its column and the watermark declared on it.
pub struct Time {
    name: String,
    column: usize,
    delay_millis: i64,
    every_batch: bool,
}

impl Time {
    pub fn of(time: &EventTime) -> Self {
        Time {
            name: time.name.clone(),
            column: time.column,
            delay_millis: time.delay_millis,
            every_batch: time.emission == WatermarkEmission::EveryBatch,
        }
    }

    pub fn event_time(self) -> EventTime {
        EventTime {
            name: self.name,
            column: self.column,
            delay_millis: self.delay_millis,
            emission: if self.every_batch {
                WatermarkEmission::EveryBatch
            } else {
                WatermarkEmission::EveryRow
            },
        }
    }
}

/// What physical expressions are encoded and decoded with.
pub struct Physical<'a> {
    pub codec: &'a dyn PhysicalExtensionCodec,
    pub converter: &'a dyn PhysicalProtoConverterExtension,
}

impl Physical<'_> {
    pub fn exprs(&self, exprs: &[Arc<dyn PhysicalExpr>]) -> Result<Vec<Vec<u8>>> {
        Ok(serialize_physical_exprs(exprs, self.codec, self.converter)?
            .iter()
            .map(Message::encode_to_vec)
            .collect())
    }

    /// Expressions over `input`.
    pub fn parse_exprs(
        &self,
        bytes: &[Vec<u8>],
        input: &Schema,
        ctx: &TaskContext,
    ) -> Result<Vec<Arc<dyn PhysicalExpr>>> {
        let protos = bytes
            .iter()
            .map(|b| protobuf::PhysicalExprNode::decode(b.as_slice()).map_err(garbled))
            .collect::<Result<Vec<_>>>()?;
        let decode = PhysicalPlanDecodeContext::new(ctx, self.codec);
        parse_physical_exprs(&protos, &decode, input, self.converter)
    }
}

/// A logical schema: DataFusion's message, plus the functional dependencies it leaves out
/// (an aggregate's keys determine its other columns).
#[derive(Serialize, Deserialize)]
struct LogicalSchema {
    schema: Vec<u8>,
    /// Source columns, target columns, nullable, whether a key occurs once.
    dependencies: Vec<(Vec<usize>, Vec<usize>, bool, bool)>,
}

pub fn df_schema(schema: &DFSchema) -> Result<Vec<u8>> {
    let dependencies = schema
        .functional_dependencies()
        .iter()
        .map(|d| {
            let single = d.mode == Dependency::Single;
            (
                d.source_indices.clone(),
                d.target_indices.clone(),
                d.nullable,
                single,
            )
        })
        .collect();
    let logical = LogicalSchema {
        schema: protobuf::DfSchema::try_from(schema)?.encode_to_vec(),
        dependencies,
    };
    record("a logical schema", &logical)
}

pub fn parse_df_schema(bytes: &[u8]) -> Result<DFSchema> {
    let logical: LogicalSchema = parse_record("a logical schema", bytes)?;
    let proto = protobuf::DfSchema::decode(logical.schema.as_slice()).map_err(garbled)?;
    let dependencies = logical
        .dependencies
        .into_iter()
        .map(|(source, target, nullable, single)| {
            let mode = if single {
                Dependency::Single
            } else {
                Dependency::Multi
            };
            FunctionalDependence::new(source, target, nullable).with_mode(mode)
        })
        .collect();
    DFSchema::try_from(&proto)?
        .with_functional_dependencies(FunctionalDependencies::new(dependencies))
}

pub fn schema(schema: &Schema) -> Result<Vec<u8>> {
    Ok(protobuf::Schema::try_from(schema)?.encode_to_vec())
}

pub fn parse_schema(bytes: &[u8]) -> Result<Schema> {
    let proto = protobuf::Schema::decode(bytes).map_err(garbled)?;
    Ok(Schema::try_from(&proto)?)
}

fn garbled(e: prost::DecodeError) -> DataFusionError {
    DataFusionError::Plan(format!("a plan part arrived garbled: {e}"))
}
