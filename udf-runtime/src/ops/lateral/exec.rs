//! `LateralExec`: evaluates a table function for every input row and joins each row to the
//! rows it emitted, in input order. Output comes in batches of the session's batch size.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::compute::BatchCoalescer;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{EmissionType, apply_expression_roots};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::StreamExt;

use super::call::{ResolvedCall, TableFunctionImpl};
use super::correlate::Correlate;
use super::instance::Instance;
use super::node::LateralJoin;
use crate::session::table_options::TableOptions;

#[derive(Debug)]
pub struct LateralExec {
    input: Arc<dyn ExecutionPlan>,
    args: Vec<Arc<dyn PhysicalExpr>>,
    call: ResolvedCall,
    join: LateralJoin,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl LateralExec {
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        args: Vec<Arc<dyn PhysicalExpr>>,
        call: ResolvedCall,
        join: LateralJoin,
        schema: SchemaRef,
    ) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(input.output_partitioning().partition_count()),
            EmissionType::Incremental,
            input.boundedness(),
        ));
        LateralExec {
            input,
            args,
            call,
            join,
            schema,
            properties,
        }
    }
}

impl LateralExec {
    /// The call's arguments, evaluated over the input.
    pub(crate) fn args(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.args
    }

    pub(crate) fn call(&self) -> &ResolvedCall {
        &self.call
    }

    pub(crate) fn join(&self) -> LateralJoin {
        self.join
    }
}

impl DisplayAs for LateralExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let join = match self.join {
            LateralJoin::Inner => "inner",
            LateralJoin::Left => "left",
        };
        let mode = match self.call.call.function {
            TableFunctionImpl::Sync(_) => "",
            TableFunctionImpl::Async(_) => " async",
        };
        write!(
            f,
            "LateralExec: {}({}) join={join}{mode}",
            self.call.call.name,
            args.join(", ")
        )
    }
}

impl ExecutionPlan for LateralExec {
    fn name(&self) -> &str {
        "LateralExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    /// Rows come out in input order; spreading one partition over several would lose it.
    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        apply_expression_roots(self.args.iter(), f)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("LateralExec takes one input");
        }
        Ok(Arc::new(LateralExec::new(
            children.swap_remove(0),
            self.args.clone(),
            self.call.clone(),
            self.join,
            self.schema.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let batch_size = context.session_config().batch_size();
        let options = context.session_config().options();
        let instance = Instance::open(&self.call, options)?;
        let async_options = TableOptions::async_table(options);
        let input = self.input.execute(partition, context)?;
        Ok(lateral_stream(
            input,
            Correlate {
                instance,
                options: async_options,
                args: self.args.clone(),
                call: self.call.clone(),
                join: self.join,
                schema: self.schema.clone(),
                batch_size,
                coalescer: BatchCoalescer::new(self.schema.clone(), batch_size),
                ready: VecDeque::new(),
                pending: None,
            },
        ))
    }
}

/// The output of one partition: each input batch joined as it arrives, then the rest.
fn lateral_stream(
    input: SendableRecordBatchStream,
    correlate: Correlate,
) -> SendableRecordBatchStream {
    let schema = correlate.schema.clone();
    let stream = futures::stream::try_unfold(
        (input, correlate, false),
        |(mut input, mut correlate, mut done)| async move {
            loop {
                if let Some(batch) = correlate.ready.pop_front() {
                    return Ok(Some((batch, (input, correlate, done))));
                }
                if done {
                    return Ok(None);
                }
                // Each poll does a bounded amount of work: one step of the batch being
                // joined, or taking the next input batch (so dropping the stream stops it
                // between calls, and a consumer's timeout can fire).
                if correlate.in_progress() {
                    correlate.step().await?;
                    continue;
                }
                match input.next().await {
                    Some(batch) => correlate.start(batch?)?,
                    None => {
                        done = true;
                        correlate.finish()?;
                    }
                }
            }
        },
    );
    Box::pin(RecordBatchStreamAdapter::new(schema, stream))
}
