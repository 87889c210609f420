//! `TableAggregateExec`: runs a table aggregation over its input partitions.
//!
//! A function with `merge` in final mode aggregates each input partition where it is and
//! merges the partial accumulators (moving accumulators, not rows). Otherwise the input is
//! hash-partitioned by the GROUP BY keys, so each partition holds whole groups; a changelog
//! is emitted batch by batch, in each group's input order.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, RecordBatch, StringArray};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{
    Boundedness, EmissionType, apply_expression_roots,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    InputDistributionRequirements, PlanProperties,
};
use futures::{StreamExt, TryStreamExt};

use super::node::TableAggregateCall;
use crate::ops::table_aggregate::aggregation::{EmitMode, Output, TableAggregation};
use udf_core::types::DataType;

#[derive(Debug)]
pub struct TableAggregateExec {
    input: Arc<dyn ExecutionPlan>,
    group_by: Vec<Arc<dyn PhysicalExpr>>,
    args: Vec<Arc<dyn PhysicalExpr>>,
    call: TableAggregateCall,
    signature: usize,
    row_type: DataType,
    row_is_struct: bool,
    schema: SchemaRef,
    /// Aggregate in place and merge the partial accumulators.
    merge_partials: bool,
    properties: Arc<PlanProperties>,
}

impl TableAggregateExec {
    /// The name the function was called by.
    pub fn function_name(&self) -> &str {
        &self.call.name
    }

    #[allow(clippy::too_many_arguments)]
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        group_by: Vec<Arc<dyn PhysicalExpr>>,
        args: Vec<Arc<dyn PhysicalExpr>>,
        call: TableAggregateCall,
        signature: usize,
        row_type: DataType,
        row_is_struct: bool,
        schema: SchemaRef,
    ) -> Self {
        let merge_partials = call.mode == EmitMode::Final
            && call.spec.capabilities.merge
            && call.function.emits().value
            && input.output_partitioning().partition_count() > 1;
        let partitions = if merge_partials {
            1
        } else {
            input.output_partitioning().partition_count()
        };
        let emission = match call.mode {
            EmitMode::Final => EmissionType::Final,
            EmitMode::Changelog => EmissionType::Incremental,
        };
        // Over unbounded input a changelog goes on as rows come; final results never come
        // (DataFusion refuses such a plan as pipeline breaking).
        let boundedness = match input.boundedness() {
            Boundedness::Bounded => Boundedness::Bounded,
            Boundedness::Unbounded { .. } => Boundedness::Unbounded {
                requires_infinite_memory: call.mode == EmitMode::Final,
            },
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            emission,
            boundedness,
        ));
        TableAggregateExec {
            input,
            group_by,
            args,
            call,
            signature,
            row_type,
            row_is_struct,
            schema,
            merge_partials,
            properties,
        }
    }

    fn aggregation(&self) -> Result<TableAggregation> {
        let input_schema = self.input.schema();
        let key_types = self
            .group_by
            .iter()
            .map(|e| e.data_type(&input_schema))
            .collect::<Result<Vec<_>>>()?;
        TableAggregation::new(
            &self.call.name,
            self.call.function.clone(),
            self.call.spec.clone(),
            self.signature,
            self.row_type.clone(),
            &key_types,
            self.call.mode,
        )
        .map_err(DataFusionError::Execution)
    }
}

/// Evaluates the keys and arguments of a batch and folds it in.
fn push(
    aggregation: &mut TableAggregation,
    group_by: &[Arc<dyn PhysicalExpr>],
    args: &[Arc<dyn PhysicalExpr>],
    batch: &RecordBatch,
) -> Result<Option<Output>> {
    let rows = batch.num_rows();
    let evaluate = |exprs: &[Arc<dyn PhysicalExpr>]| {
        exprs
            .iter()
            .map(|e| e.evaluate(batch)?.into_array(rows))
            .collect::<Result<Vec<ArrayRef>>>()
    };
    aggregation
        .push(&evaluate(group_by)?, evaluate(args)?, rows)
        .map_err(DataFusionError::Execution)
}

/// An output batch: keys, the emitted row's columns, and `op` for a changelog.
fn output_batch(
    schema: &SchemaRef,
    output: Output,
    row_is_struct: bool,
    mode: EmitMode,
) -> Result<RecordBatch> {
    let mut columns = output.keys;
    if row_is_struct {
        columns.extend(output.rows.as_struct().columns().iter().cloned());
    } else {
        columns.push(output.rows);
    }
    if mode == EmitMode::Changelog {
        columns.push(Arc::new(StringArray::from_iter_values(
            output.kinds.iter().map(|k| k.short()),
        )));
    }
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

impl DisplayAs for TableAggregateExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let keys: Vec<String> = self.group_by.iter().map(ToString::to_string).collect();
        let emit = match self.call.mode {
            EmitMode::Final => "final",
            EmitMode::Changelog => "changelog",
        };
        let strategy = if self.merge_partials {
            "merge partial accumulators"
        } else {
            "whole groups per partition"
        };
        write!(
            f,
            "TableAggregateExec: {}({}) groupBy=[{}] emit={emit} ({strategy})",
            self.call.name,
            args.join(", "),
            keys.join(", ")
        )
    }
}

impl ExecutionPlan for TableAggregateExec {
    fn name(&self) -> &str {
        "TableAggregateExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        let distribution = if self.merge_partials {
            Distribution::UnspecifiedDistribution
        } else if self.group_by.is_empty() {
            Distribution::SinglePartition
        } else {
            Distribution::KeyPartitioned(self.group_by.clone())
        };
        InputDistributionRequirements::new(vec![distribution])
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![false]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        apply_expression_roots(self.group_by.iter().chain(&self.args), f)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("TableAggregateExec takes one input");
        }
        Ok(Arc::new(TableAggregateExec::new(
            children.swap_remove(0),
            self.group_by.clone(),
            self.args.clone(),
            self.call.clone(),
            self.signature,
            self.row_type.clone(),
            self.row_is_struct,
            self.schema.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let schema = self.schema.clone();
        let (row_is_struct, mode) = (self.row_is_struct, self.call.mode);
        let (group_by, args) = (self.group_by.clone(), self.args.clone());

        if self.merge_partials {
            let inputs = (0..self.input.output_partitioning().partition_count())
                .map(|p| Ok((self.input.execute(p, context.clone())?, self.aggregation()?)))
                .collect::<Result<Vec<_>>>()?;
            let out_schema = schema.clone();
            let stream = futures::stream::once(async move {
                let partials = futures::future::try_join_all(inputs.into_iter().map(
                    |(mut input, mut aggregation)| {
                        let (group_by, args) = (group_by.clone(), args.clone());
                        async move {
                            while let Some(batch) = input.next().await {
                                push(&mut aggregation, &group_by, &args, &batch?)?;
                            }
                            Ok::<_, DataFusionError>(aggregation)
                        }
                    },
                ))
                .await?;
                let mut partials = partials.into_iter();
                let mut total = partials.next().expect("at least two input partitions");
                for partial in partials {
                    total.merge(partial).map_err(DataFusionError::Execution)?;
                }
                let output = total.finish().map_err(DataFusionError::Execution)?;
                output_batch(&out_schema, output, row_is_struct, mode)
            });
            return Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)));
        }

        let input = self.input.execute(partition, context)?;
        let aggregation = self.aggregation()?;
        let out_schema = schema.clone();
        // Each input batch may emit rows (a changelog); the end of input emits the rest.
        let stream = futures::stream::try_unfold(
            (Some(input), Some(aggregation)),
            move |(mut input, mut aggregation)| {
                let (group_by, args, out_schema) =
                    (group_by.clone(), args.clone(), out_schema.clone());
                async move {
                    let Some(state) = aggregation.as_mut() else {
                        return Ok(None);
                    };
                    while let Some(stream) = input.as_mut() {
                        match stream.next().await {
                            Some(batch) => {
                                if let Some(output) = push(state, &group_by, &args, &batch?)?
                                    && !output.kinds.is_empty()
                                {
                                    let batch =
                                        output_batch(&out_schema, output, row_is_struct, mode)?;
                                    return Ok(Some((batch, (input, aggregation))));
                                }
                            }
                            None => input = None,
                        }
                    }
                    let output = state.finish().map_err(DataFusionError::Execution)?;
                    let batch = output_batch(&out_schema, output, row_is_struct, mode)?;
                    Ok(Some((batch, (None, None))))
                }
            },
        );
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            stream.into_stream(),
        )))
    }
}
