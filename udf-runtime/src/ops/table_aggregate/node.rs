//! The `TableAggregate` logical node: input, GROUP BY keys, the call, and the output schema
//! (keys, then the emitted row's columns, then `op` for a changelog).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, FieldRef};
use datafusion::common::{
    DFSchema, DFSchemaRef, Result, TableReference, plan_datafusion_err, plan_err,
};
use datafusion::logical_expr::{
    Expr, ExprSchemable, LogicalPlan, UserDefinedLogicalNodeCore, cast,
};
use udf_core::types::{DataType, TypeKind};
use udf_core::{FunctionSpec, OutputType, TableAggregateFunction};

use crate::changelog;
use crate::functions::binding;
use crate::functions::resolve::Conversion;
use crate::ops::table_aggregate::aggregation::EmitMode;

/// A call of a table aggregate function, before it is applied to a table.
#[derive(Clone)]
pub struct TableAggregateCall {
    pub(crate) name: String,
    pub(crate) spec: Arc<FunctionSpec>,
    pub(crate) function: Arc<dyn TableAggregateFunction>,
    pub(crate) args: Vec<Expr>,
    pub(crate) names: Option<Vec<String>>,
    pub(crate) mode: EmitMode,
    /// Names the accumulators in checkpoints (Flink's operator uid).
    pub(crate) uid: Option<String>,
}

impl TableAggregateCall {
    /// Names the emitted columns (Flink's `.as("value", "rank")`).
    pub fn alias<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.names = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Emits a changelog: rows after every input row, each with its kind in column `op`
    /// (`+I` added, `-D` taken back), instead of the final result per group.
    pub fn changelog(mut self) -> Self {
        self.mode = EmitMode::Changelog;
        self
    }

    /// Names the aggregation's accumulators in checkpoints: a changelog over unbounded input
    /// needs one when checkpoints are on, and a restored query finds its state by it.
    pub fn uid(mut self, uid: &str) -> Self {
        self.uid = Some(uid.to_owned());
        self
    }
}

impl fmt::Debug for TableAggregateCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableAggregateCall")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Debug)]
pub struct TableAggregateNode {
    pub(crate) input: LogicalPlan,
    pub(crate) group_by: Vec<Expr>,
    /// The arguments, cast to the parameter types where needed.
    pub(crate) args: Vec<Expr>,
    pub(crate) call: TableAggregateCall,
    pub(crate) signature: usize,
    pub(crate) row_type: DataType,
    pub(crate) schema: DFSchemaRef,
}

impl TableAggregateNode {
    pub fn try_new(
        input: LogicalPlan,
        group_by: Vec<Expr>,
        call: TableAggregateCall,
    ) -> Result<Self> {
        if let Some(uid) = &call.uid
            && !crate::ops::ptf::binding::valid_uid(uid)
        {
            return plan_err!(
                "`uid` of `{}` must be letters, digits, `-` and `_`, not starting with a digit: `{uid}`",
                call.name
            );
        }
        let input_schema = input.schema().clone();
        let arg_types = call
            .args
            .iter()
            .map(|arg| arg.get_type(&input_schema))
            .collect::<Result<Vec<_>>>()?;
        let resolved = binding::resolve_arrow(
            &call.name,
            &call.spec,
            &arg_types.iter().collect::<Vec<_>>(),
        )?;
        let args = call
            .args
            .iter()
            .zip(&resolved.conversions)
            .map(|(arg, conversion)| match conversion {
                Conversion::Keep => arg.clone(),
                Conversion::Cast(target) => cast(arg.clone(), target.to_arrow()),
            })
            .collect();
        let OutputType::Fixed(row_type) = call.spec.signatures[resolved.signature].output.clone()
        else {
            return plan_err!("table aggregate `{}` has no fixed row type", call.name);
        };

        let mut fields: Vec<(Option<TableReference>, FieldRef)> = group_by
            .iter()
            .map(|expr| expr.to_field(&input_schema))
            .collect::<Result<_>>()?;
        fields.extend(
            function_fields(&call, &row_type)?
                .into_iter()
                .map(|f| (None, f)),
        );
        if call.mode == EmitMode::Changelog {
            fields.push((None, Arc::new(changelog::row_kind_field())));
        }
        let schema = DFSchema::new_with_metadata(fields, HashMap::new()).map_err(|e| {
            plan_datafusion_err!(
                "the output of `{}`: {e}; rename the emitted columns with `alias`",
                call.name
            )
        })?;
        Ok(TableAggregateNode {
            input,
            group_by,
            args,
            call,
            signature: resolved.signature,
            row_type,
            schema: Arc::new(schema),
        })
    }

    /// This call emitting a changelog (over a stream, where final results never come, as
    /// Flink's table aggregates do).
    pub(crate) fn as_changelog(&self) -> Result<Self> {
        TableAggregateNode::try_new(
            self.input.clone(),
            self.group_by.clone(),
            self.call.clone().changelog(),
        )
    }

    /// Whether the emitted rows are a ROW whose fields become columns (else one column).
    pub(crate) fn row_is_struct(&self) -> bool {
        matches!(self.row_type.kind, TypeKind::Row(_))
    }
}

/// The emitted row's columns: the fields of a ROW, or one column `f0`; renamed by `alias`.
fn function_fields(call: &TableAggregateCall, row_type: &DataType) -> Result<Vec<FieldRef>> {
    let fields: Vec<Field> = match &row_type.kind {
        TypeKind::Row(fields) => fields
            .iter()
            .map(|f| f.data_type.to_arrow_field(&f.name))
            .collect(),
        _ => vec![row_type.to_arrow_field("f0")],
    };
    let fields = match &call.names {
        None => fields,
        Some(names) if names.len() == fields.len() => fields
            .into_iter()
            .zip(names)
            .map(|(f, n)| f.with_name(n))
            .collect(),
        Some(names) => {
            return plan_err!(
                "`{}` emits {} columns, but {} names were given",
                call.name,
                fields.len(),
                names.len()
            );
        }
    };
    Ok(fields.into_iter().map(Arc::new).collect())
}

impl PartialEq for TableAggregateNode {
    fn eq(&self, other: &Self) -> bool {
        self.call.name == other.call.name
            && Arc::ptr_eq(&self.call.function, &other.call.function)
            && self.input == other.input
            && self.group_by == other.group_by
            && self.args == other.args
            && self.call.names == other.call.names
            && self.call.mode == other.call.mode
    }
}

impl Eq for TableAggregateNode {}

impl Hash for TableAggregateNode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.call.name.hash(state);
        self.group_by.hash(state);
        self.args.hash(state);
    }
}

impl PartialOrd for TableAggregateNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.call
            .name
            .partial_cmp(&other.call.name)
            .filter(|ordering| ordering.is_ne())
            .or_else(|| self.group_by.partial_cmp(&other.group_by))
    }
}

impl UserDefinedLogicalNodeCore for TableAggregateNode {
    fn name(&self) -> &str {
        "TableAggregate"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        self.group_by.iter().chain(&self.args).cloned().collect()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let keys: Vec<String> = self.group_by.iter().map(ToString::to_string).collect();
        let emit = match self.call.mode {
            EmitMode::Final => "final",
            EmitMode::Changelog => "changelog",
        };
        write!(
            f,
            "TableAggregate: {}({}) groupBy=[{}] emit={emit}",
            self.call.name,
            args.join(", "),
            keys.join(", ")
        )
    }

    fn with_exprs_and_inputs(
        &self,
        exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let keys = self.group_by.len();
        let mut node = self.clone();
        node.group_by = exprs[..keys].to_vec();
        node.args = exprs[keys..].to_vec();
        node.input = inputs.swap_remove(0);
        Ok(node)
    }
}
