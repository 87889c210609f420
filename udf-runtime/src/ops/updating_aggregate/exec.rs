//! `UpdatingAggregateExec`: an updating GROUP BY over its input partitions, hash-partitioned
//! by the group keys so each partition holds whole groups (all rows in one partition without
//! keys). Every input batch may emit changelog rows, in its rows' order.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, internal_err};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{EmissionType, apply_expression_roots};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    InputDistributionRequirements, PlanProperties,
};
use futures::StreamExt;

use super::aggregation::UpdatingAggregation;
use super::calls::Call;

#[derive(Debug)]
pub struct UpdatingAggregateExec {
    input: Arc<dyn ExecutionPlan>,
    keys: Vec<Arc<dyn PhysicalExpr>>,
    calls: Arc<[Call]>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl UpdatingAggregateExec {
    pub(crate) fn new(
        input: Arc<dyn ExecutionPlan>,
        keys: Vec<Arc<dyn PhysicalExpr>>,
        calls: Vec<Call>,
        schema: SchemaRef,
    ) -> Self {
        let partitions = if keys.is_empty() {
            1
        } else {
            input.output_partitioning().partition_count()
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            input.boundedness(),
        ));
        UpdatingAggregateExec {
            input,
            keys,
            calls: calls.into(),
            schema,
            properties,
        }
    }
}

impl DisplayAs for UpdatingAggregateExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let keys: Vec<String> = self.keys.iter().map(ToString::to_string).collect();
        let calls: Vec<String> = self.calls.iter().map(ToString::to_string).collect();
        write!(
            f,
            "UpdatingAggregateExec: groupBy=[{}], aggr=[{}], emit=changelog",
            keys.join(", "),
            calls.join(", ")
        )
    }
}

impl ExecutionPlan for UpdatingAggregateExec {
    fn name(&self) -> &str {
        "UpdatingAggregateExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn input_distribution_requirements(&self) -> InputDistributionRequirements {
        let distribution = if self.keys.is_empty() {
            Distribution::SinglePartition
        } else {
            Distribution::KeyPartitioned(self.keys.clone())
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
        let exprs = self.calls.iter().flat_map(Call::expressions);
        apply_expression_roots(self.keys.iter().chain(exprs), f)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return internal_err!("UpdatingAggregateExec takes one input");
        }
        Ok(Arc::new(UpdatingAggregateExec::new(
            children.swap_remove(0),
            self.keys.clone(),
            self.calls.to_vec(),
            self.schema.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let aggregation = UpdatingAggregation::new(
            self.keys.clone(),
            self.calls.clone(),
            &self.input.schema(),
            self.schema.clone(),
        )?;
        let stream = futures::stream::unfold(
            (input, aggregation),
            |(mut input, mut aggregation)| async move {
                loop {
                    let batch = match input.next().await? {
                        Ok(batch) => batch,
                        Err(error) => return Some((Err(error), (input, aggregation))),
                    };
                    match aggregation.push(&batch) {
                        Ok(None) => continue,
                        Ok(Some(output)) => return Some((Ok(output), (input, aggregation))),
                        Err(error) => return Some((Err(error), (input, aggregation))),
                    }
                }
            },
        );
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}
