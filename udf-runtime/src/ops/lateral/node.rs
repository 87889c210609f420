//! The `LateralTableFunction` logical node: the input, the call, the kind of join, and the
//! output schema (the input's columns, then the function's).

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::datatypes::FieldRef;
use datafusion::common::{DFSchema, DFSchemaRef, Result, TableReference, plan_datafusion_err};
use datafusion::logical_expr::{EmptyRelation, Expr, LogicalPlan, UserDefinedLogicalNodeCore};

use super::call::{ResolvedCall, TableFunctionCall};

/// Which input rows a lateral join keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd)]
pub enum LateralJoin {
    /// Rows for which the function emitted rows, once per emitted row.
    Inner,
    /// Every row; where the function emitted nothing, its columns are NULL.
    Left,
}

#[derive(Clone, Debug)]
pub struct LateralNode {
    pub(crate) input: LogicalPlan,
    pub(crate) call: ResolvedCall,
    pub(crate) join: LateralJoin,
    /// The function's columns as they appear in the output, with their qualifiers.
    pub(crate) function_fields: Vec<(Option<TableReference>, FieldRef)>,
    pub(crate) schema: DFSchemaRef,
}

impl LateralNode {
    pub(crate) fn try_new(
        input: LogicalPlan,
        call: ResolvedCall,
        join: LateralJoin,
        function_fields: Vec<(Option<TableReference>, FieldRef)>,
    ) -> Result<Self> {
        let mut fields: Vec<(Option<TableReference>, FieldRef)> = input
            .schema()
            .iter()
            .map(|(qualifier, field)| (qualifier.cloned(), field.clone()))
            .collect();
        fields.extend(function_fields.iter().cloned());
        let schema = DFSchema::new_with_metadata(fields, HashMap::new()).map_err(|e| {
            plan_datafusion_err!(
                "the columns of `{}` clash with the input's: {e}; rename them with an alias",
                call.call.name
            )
        })?;
        Ok(LateralNode {
            input,
            call,
            join,
            function_fields,
            schema: Arc::new(schema),
        })
    }

    /// `input` joined with the rows `call` emits for each of its rows (DataFrame API).
    pub fn join(input: LogicalPlan, call: TableFunctionCall, join: LateralJoin) -> Result<Self> {
        let call = call.resolve(input.schema())?;
        let fields = call
            .fields(join == LateralJoin::Left)?
            .into_iter()
            .map(|f| (None, f))
            .collect();
        LateralNode::try_new(input, call, join, fields)
    }

    /// A call on its own (`TABLE(f(1, 10))`, or the right side of a lateral join before
    /// it is moved onto the left side): evaluated once, over one empty row.
    pub fn standalone(call: TableFunctionCall) -> Result<Self> {
        let input = LogicalPlan::EmptyRelation(EmptyRelation {
            produce_one_row: true,
            schema: Arc::new(DFSchema::empty()),
        });
        LateralNode::join(input, call, LateralJoin::Inner)
    }

    /// Whether the node evaluates its call once, over one empty row.
    pub(crate) fn is_standalone(&self) -> bool {
        matches!(&self.input, LogicalPlan::EmptyRelation(empty)
            if empty.produce_one_row && empty.schema.fields().is_empty())
    }
}

impl PartialEq for LateralNode {
    fn eq(&self, other: &Self) -> bool {
        self.call.call.name == other.call.call.name
            && self.call.call.function.same_as(&other.call.call.function)
            && self.call.call.args == other.call.call.args
            && self.join == other.join
            && self.input == other.input
            && self.schema == other.schema
    }
}

impl Eq for LateralNode {}

impl Hash for LateralNode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.call.call.name.hash(state);
        self.call.call.args.hash(state);
        self.join.hash(state);
    }
}

impl PartialOrd for LateralNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.call
            .call
            .name
            .partial_cmp(&other.call.call.name)
            .filter(|ordering| ordering.is_ne())
            .or_else(|| self.call.call.args.partial_cmp(&other.call.call.args))
    }
}

impl UserDefinedLogicalNodeCore for LateralNode {
    fn name(&self) -> &str {
        "LateralTableFunction"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        self.call.call.args.clone()
    }

    /// Filters on the input's columns go below the join; those on the function's stay.
    fn prevent_predicate_push_down_columns(&self) -> HashSet<String> {
        self.function_fields
            .iter()
            .map(|(_, field)| field.name().clone())
            .collect()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let join = match self.join {
            LateralJoin::Inner => "inner",
            LateralJoin::Left => "left",
        };
        write!(
            f,
            "LateralTableFunction: {} join={join}",
            self.call.display()
        )
    }

    /// The input columns the output keeps, and those the arguments read.
    fn necessary_children_exprs(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        let input = self.input.schema();
        let width = input.fields().len();
        let mut needed: BTreeSet<usize> = output_columns
            .iter()
            .copied()
            .filter(|&i| i < width)
            .collect();
        for arg in &self.call.call.args {
            for column in arg.column_refs() {
                needed.insert(input.maybe_index_of_column(column)?);
            }
        }
        Some(vec![needed.into_iter().collect()])
    }

    fn with_exprs_and_inputs(
        &self,
        exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let mut call = self.call.clone();
        // Arguments are not output columns: names the optimizer keeps with aliases go.
        call.call.args = exprs
            .into_iter()
            .map(Expr::unalias_nested)
            .map(|t| t.data)
            .collect();
        LateralNode::try_new(
            inputs.swap_remove(0),
            call,
            self.join,
            self.function_fields.clone(),
        )
    }
}
