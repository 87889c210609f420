//! The logical and physical plan codecs a client, scheduler and executors share: Ballista's
//! own, plus the project's functions, in-memory tables and nodes (one file each). A node of
//! the project's without an encoding yet is refused by name when the plan is sent, never
//! dropped on the way.

use std::any::Any;
use std::sync::Arc;

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{Result, TableReference, plan_err};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};

use super::functions::FunctionCodec;
use super::{lateral, memory_table, ptf, table_aggregate, window, wire};
use crate::ops::lateral::{LateralExec, LateralNode};
use crate::ops::ptf::PtfNode;
use crate::ops::ptf::exec::PtfExec;
use crate::ops::routing::shuffle::ShuffleStampExec;
use crate::ops::table_aggregate::{TableAggregateExec, TableAggregateNode};
use crate::ops::window::{WindowAggregateExec, WindowAggregateNode, WindowTvfExec, WindowTvfNode};

/// Tags the table encodings: one of Ballista's, or an in-memory table of ours.
const BALLISTA_TABLE: u8 = 0;
const MEMORY_TABLE: u8 = 1;

/// The start of each node encoding of ours, then its kind: Ballista's own are protobuf
/// messages, which cannot start so.
const OURS: &[u8] = b"udf\x01";
const LATERAL: u8 = 1;
const TABLE_AGGREGATE: u8 = 2;
const PROCESS_TABLE_FUNCTION: u8 = 3;
const SHUFFLE_STAMP: u8 = 4;
const WINDOW_TVF: u8 = 5;
const WINDOW_AGGREGATE: u8 = 6;

/// `encoded` as the node of `kind`.
fn tagged(kind: u8, encoded: Vec<u8>, buf: &mut Vec<u8>) {
    buf.extend_from_slice(OURS);
    buf.push(kind);
    buf.extend_from_slice(&encoded);
}

/// The kind and encoding of a node of ours; `None` for Ballista's.
fn untagged(buf: &[u8]) -> Option<(u8, &[u8])> {
    buf.strip_prefix(OURS)?
        .split_first()
        .map(|(kind, rest)| (*kind, rest))
}

#[derive(Debug)]
pub struct LogicalCodec {
    functions: FunctionCodec,
    ballista: BallistaLogicalExtensionCodec,
}

impl LogicalCodec {
    pub fn new(functions: FunctionCodec) -> Self {
        LogicalCodec {
            functions,
            ballista: BallistaLogicalExtensionCodec::default(),
        }
    }
}

impl LogicalExtensionCodec for LogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        match untagged(buf) {
            Some((LATERAL, rest)) => lateral::decode_node(rest, inputs, ctx, &self.functions, self),
            Some((TABLE_AGGREGATE, rest)) => {
                table_aggregate::decode_node(rest, inputs, ctx, &self.functions, self)
            }
            Some((PROCESS_TABLE_FUNCTION, rest)) => {
                ptf::decode_node(rest, inputs, ctx, &self.functions, self)
            }
            Some((WINDOW_TVF, rest)) => window::decode_tvf_node(rest, inputs, ctx, self),
            Some((WINDOW_AGGREGATE, rest)) => {
                window::decode_aggregate_node(rest, inputs, ctx, self)
            }
            Some((kind, _)) => unknown_kind(kind),
            None => self.ballista.try_decode(buf, inputs, ctx),
        }
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        let any = node.node.as_any();
        if let Some(lateral) = any.downcast_ref::<LateralNode>() {
            tagged(
                LATERAL,
                lateral::encode_node(lateral, &self.functions, self)?,
                buf,
            );
            return Ok(());
        }
        if let Some(aggregate) = any.downcast_ref::<TableAggregateNode>() {
            let encoded = table_aggregate::encode_node(aggregate, &self.functions, self)?;
            tagged(TABLE_AGGREGATE, encoded, buf);
            return Ok(());
        }
        if let Some(call) = any.downcast_ref::<PtfNode>() {
            let encoded = ptf::encode_node(call, &self.functions, self)?;
            tagged(PROCESS_TABLE_FUNCTION, encoded, buf);
            return Ok(());
        }
        if let Some(tvf) = any.downcast_ref::<WindowTvfNode>() {
            tagged(WINDOW_TVF, window::encode_tvf_node(tvf, self)?, buf);
            return Ok(());
        }
        if let Some(aggregate) = any.downcast_ref::<WindowAggregateNode>() {
            let encoded = window::encode_aggregate_node(aggregate, self)?;
            tagged(WINDOW_AGGREGATE, encoded, buf);
            return Ok(());
        }
        self.ballista.try_encode(node, buf).or_else(|_| {
            plan_err!(
                "the plan node `{}` cannot run on a Ballista cluster yet: run this query on a \
                 local session",
                node.node.name()
            )
        })
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match buf.split_first() {
            Some((&MEMORY_TABLE, rest)) => memory_table::decode(rest, schema),
            Some((&BALLISTA_TABLE, rest)) => self
                .ballista
                .try_decode_table_provider(rest, table_ref, schema, ctx),
            _ => plan_err!("table `{table_ref}` arrived in a form this side does not know"),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if let Some(encoded) = memory_table::encode(&node, table_ref)? {
            buf.push(MEMORY_TABLE);
            buf.extend_from_slice(&encoded);
            return Ok(());
        }
        let mut encoded = Vec::new();
        match self
            .ballista
            .try_encode_table_provider(table_ref, node, &mut encoded)
        {
            Ok(()) => {
                buf.push(BALLISTA_TABLE);
                buf.extend_from_slice(&encoded);
                Ok(())
            }
            Err(_) => plan_err!(
                "table `{table_ref}` cannot be read by a Ballista cluster: it takes files \
                 (Parquet, CSV, JSON, Arrow) and in-memory tables, not unbounded or \
                 application-fed tables"
            ),
        }
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.ballista.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.ballista.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.functions.decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.functions.encode_udf(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.functions.decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.functions.encode_udaf(node, buf)
    }
}

#[derive(Debug)]
pub struct PhysicalCodec {
    /// The functions, and the logical expressions an exec keeps (a PTF call's).
    logical: LogicalCodec,
    ballista: BallistaPhysicalExtensionCodec,
}

impl PhysicalCodec {
    pub fn new(functions: FunctionCodec) -> Self {
        PhysicalCodec {
            logical: LogicalCodec::new(functions),
            ballista: BallistaPhysicalExtensionCodec::default(),
        }
    }

    fn functions(&self) -> &FunctionCodec {
        &self.logical.functions
    }

    fn wire<'a>(
        &'a self,
        converter: &'a dyn PhysicalProtoConverterExtension,
    ) -> wire::Physical<'a> {
        wire::Physical {
            codec: self,
            converter,
        }
    }
}

impl PhysicalExtensionCodec for PhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match untagged(buf) {
            Some((LATERAL, rest)) => {
                lateral::decode_exec(rest, inputs, ctx, self.functions(), &self.wire(converter))
            }
            Some((TABLE_AGGREGATE, rest)) => {
                let wire = self.wire(converter);
                table_aggregate::decode_exec(rest, inputs, ctx, self.functions(), &wire)
            }
            Some((PROCESS_TABLE_FUNCTION, rest)) => {
                let wire = self.wire(converter);
                ptf::decode_exec(rest, inputs, ctx, self.functions(), &self.logical, &wire)
            }
            Some((SHUFFLE_STAMP, rest)) => {
                ptf::decode_stamp(rest, inputs, ctx, &self.wire(converter))
            }
            Some((WINDOW_TVF, rest)) => window::decode_tvf_exec(rest, inputs),
            Some((WINDOW_AGGREGATE, rest)) => {
                let wire = self.wire(converter);
                window::decode_aggregate_exec(rest, inputs, ctx, self.functions(), &wire)
            }
            Some((kind, _)) => unknown_kind(kind),
            None => self.ballista.try_decode(buf, inputs, ctx, converter),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let any = node.as_ref() as &dyn Any;
        if let Some(lateral) = any.downcast_ref::<LateralExec>() {
            let encoded = lateral::encode_exec(lateral, self.functions(), &self.wire(converter))?;
            tagged(LATERAL, encoded, buf);
            return Ok(());
        }
        if let Some(aggregate) = any.downcast_ref::<TableAggregateExec>() {
            let wire = self.wire(converter);
            let encoded = table_aggregate::encode_exec(aggregate, self.functions(), &wire)?;
            tagged(TABLE_AGGREGATE, encoded, buf);
            return Ok(());
        }
        if let Some(call) = any.downcast_ref::<PtfExec>() {
            let wire = self.wire(converter);
            let encoded = ptf::encode_exec(call, self.functions(), &self.logical, &wire)?;
            tagged(PROCESS_TABLE_FUNCTION, encoded, buf);
            return Ok(());
        }
        if let Some(stamp) = any.downcast_ref::<ShuffleStampExec>() {
            let encoded = ptf::encode_stamp(stamp, &self.wire(converter))?;
            tagged(SHUFFLE_STAMP, encoded, buf);
            return Ok(());
        }
        if let Some(tvf) = any.downcast_ref::<WindowTvfExec>() {
            tagged(WINDOW_TVF, window::encode_tvf_exec(tvf)?, buf);
            return Ok(());
        }
        if let Some(aggregate) = any.downcast_ref::<WindowAggregateExec>() {
            let wire = self.wire(converter);
            let encoded = window::encode_aggregate_exec(aggregate, self.functions(), &wire)?;
            tagged(WINDOW_AGGREGATE, encoded, buf);
            return Ok(());
        }
        let name = node.name().to_owned();
        self.ballista.try_encode(node, buf, converter).or_else(|_| {
            plan_err!(
                "the operator `{name}` cannot run on a Ballista cluster yet: run this query on \
                 a local session"
            )
        })
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.functions().decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.functions().encode_udf(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.functions().decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.functions().encode_udaf(node, buf)
    }
}

fn unknown_kind<T>(kind: u8) -> Result<T> {
    plan_err!(
        "a plan node of kind {kind} arrived, which this side does not know: are the client, \
         scheduler and executors built from the same version?"
    )
}
