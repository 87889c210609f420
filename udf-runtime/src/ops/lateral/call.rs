//! A call of a table function: the function, its arguments and the names of its columns.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, FieldRef};
use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::logical_expr::{Expr, ExprSchemable, cast};
use udf_core::types::{DataType, TypeKind};
use udf_core::{AsyncTableFunction, Function, FunctionSpec, Metrics, OutputType, TableFunction};

use crate::functions::binding;
use crate::functions::resolve::Conversion;

/// A table function, called row by row or asynchronously.
#[derive(Clone)]
pub(crate) enum TableFunctionImpl {
    Sync(Arc<dyn TableFunction>),
    Async(Arc<dyn AsyncTableFunction>),
}

impl TableFunctionImpl {
    /// The table function in `function`, if it is one.
    pub(crate) fn of(function: &Function) -> Option<TableFunctionImpl> {
        match function {
            Function::Table(f) => Some(TableFunctionImpl::Sync(f.clone())),
            Function::AsyncTable(f) => Some(TableFunctionImpl::Async(f.clone())),
            _ => None,
        }
    }

    pub(crate) fn same_as(&self, other: &TableFunctionImpl) -> bool {
        match (self, other) {
            (TableFunctionImpl::Sync(a), TableFunctionImpl::Sync(b)) => Arc::ptr_eq(a, b),
            (TableFunctionImpl::Async(a), TableFunctionImpl::Async(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// A call of a table function, before it is joined to a table (Flink's
/// `call("SplitFunction", $("myField"))`).
#[derive(Clone)]
pub struct TableFunctionCall {
    pub(crate) name: String,
    pub(crate) spec: Arc<FunctionSpec>,
    pub(crate) function: TableFunctionImpl,
    pub(crate) args: Vec<Expr>,
    pub(crate) names: Option<Vec<String>>,
    pub(crate) metrics: Metrics,
}

impl TableFunctionCall {
    pub(crate) fn new(
        name: String,
        spec: Arc<FunctionSpec>,
        function: TableFunctionImpl,
        args: Vec<Expr>,
        metrics: Metrics,
    ) -> Self {
        TableFunctionCall {
            name,
            spec,
            function,
            args,
            names: None,
            metrics,
        }
    }

    /// Names the function's columns (Flink's `.as("newWord", "newLength")`).
    pub fn alias<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.names = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The call bound to the argument types it has over `schema`: the signature, casts to
    /// the parameter types, and the row type.
    pub(crate) fn resolve(mut self, schema: &DFSchema) -> Result<ResolvedCall> {
        let arg_types = self
            .args
            .iter()
            .map(|arg| arg.get_type(schema))
            .collect::<Result<Vec<_>>>()?;
        let resolved = binding::resolve_arrow(
            &self.name,
            &self.spec,
            &arg_types.iter().collect::<Vec<_>>(),
        )?;
        self.args = self
            .args
            .into_iter()
            .zip(&resolved.conversions)
            .map(|(arg, conversion)| match conversion {
                Conversion::Keep => arg,
                Conversion::Cast(target) => cast(arg, target.to_arrow()),
            })
            .collect();
        let OutputType::Fixed(row_type) = self.spec.signatures[resolved.signature].output.clone()
        else {
            return plan_err!("table function `{}` has no fixed row type", self.name);
        };
        Ok(ResolvedCall {
            call: self,
            signature: resolved.signature,
            row_type,
        })
    }
}

impl fmt::Debug for TableFunctionCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableFunctionCall")
            .field("name", &self.name)
            .field("args", &self.args)
            .finish_non_exhaustive()
    }
}

/// A call with its signature chosen and its arguments cast to the parameter types.
#[derive(Clone, Debug)]
pub struct ResolvedCall {
    pub(crate) call: TableFunctionCall,
    pub(crate) signature: usize,
    pub(crate) row_type: DataType,
}

impl ResolvedCall {
    /// Whether the emitted rows are a ROW whose fields become columns (else one column).
    pub(crate) fn row_is_struct(&self) -> bool {
        matches!(self.row_type.kind, TypeKind::Row(_))
    }

    /// The function's columns: the fields of a ROW, or one column `f0` (Flink's implicit
    /// row), renamed by `alias`; nullable when `nullable` (the outer side of a LEFT join).
    pub(crate) fn fields(&self, nullable: bool) -> Result<Vec<FieldRef>> {
        let fields: Vec<Field> = match &self.row_type.kind {
            TypeKind::Row(fields) => fields
                .iter()
                .map(|f| f.data_type.to_arrow_field(&f.name))
                .collect(),
            _ => vec![self.row_type.to_arrow_field("f0")],
        };
        let fields = match &self.call.names {
            None => fields,
            Some(names) if names.len() == fields.len() => fields
                .into_iter()
                .zip(names)
                .map(|(f, n)| f.with_name(n))
                .collect(),
            Some(names) => {
                return plan_err!(
                    "`{}` has {} columns, but {} names were given",
                    self.call.name,
                    fields.len(),
                    names.len()
                );
            }
        };
        Ok(fields
            .into_iter()
            .map(|f| {
                let nullable = nullable || f.is_nullable();
                Arc::new(f.with_nullable(nullable))
            })
            .collect())
    }

    /// `name(arg, ...)` for plans.
    pub(crate) fn display(&self) -> String {
        let args: Vec<String> = self.call.args.iter().map(ToString::to_string).collect();
        format!("{}({})", self.call.name, args.join(", "))
    }
}
