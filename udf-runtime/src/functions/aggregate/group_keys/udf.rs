//! A call of one of our aggregate functions that also takes its GROUP BY keys, as trailing
//! arguments, so that its accumulators know the key of each group. A partial aggregation
//! hands the keys on with its states (extra state columns), so the final one knows them too.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType as ArrowType, Field, FieldRef};
use datafusion::common::{Result, internal_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{Accumulator, AggregateUDFImpl, GroupsAccumulator, Signature};

use super::store::GroupKeys;
use crate::functions::aggregate::udf::AggregateUdf;

/// [`AggregateUdf`] with `keys` GROUP BY keys after its arguments.
#[derive(Debug)]
pub(in crate::functions::aggregate) struct KeyedAggregateUdf {
    inner: Arc<AggregateUdf>,
    keys: usize,
    signature: Signature,
}

impl KeyedAggregateUdf {
    pub(in crate::functions::aggregate) fn new(inner: Arc<AggregateUdf>, keys: usize) -> Self {
        // Built from planned calls only: its arguments are never coerced.
        let signature = Signature::variadic_any(inner.signature().volatility);
        KeyedAggregateUdf {
            inner,
            keys,
            signature,
        }
    }

    pub(in crate::functions::aggregate) fn keys(&self) -> usize {
        self.keys
    }

    /// The function's own arguments, without the keys.
    fn arguments<'a>(&self, fields: &'a [FieldRef]) -> Result<&'a [FieldRef]> {
        match fields.len().checked_sub(self.keys) {
            Some(arguments) => Ok(&fields[..arguments]),
            None => internal_err!(
                "`{}` takes {} group keys after its arguments, but has {} arguments in all",
                self.inner.name(),
                self.keys,
                fields.len()
            ),
        }
    }
}

impl PartialEq for KeyedAggregateUdf {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner && self.keys == other.keys
    }
}

impl Eq for KeyedAggregateUdf {}

impl Hash for KeyedAggregateUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.inner.hash(state);
        self.keys.hash(state);
    }
}

impl AggregateUDFImpl for KeyedAggregateUdf {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[ArrowType]) -> Result<ArrowType> {
        self.inner.return_type(arg_types)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        self.inner.return_field(self.arguments(arg_fields)?)
    }

    fn is_nullable(&self) -> bool {
        self.inner.is_nullable()
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        internal_err!(
            "`{}` with its group keys runs only as a GROUP BY's groups accumulator",
            self.inner.name()
        )
    }

    /// The function's state, then one column per key.
    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let arguments = self.arguments(args.input_fields)?;
        let mut fields = self.inner.state_fields(StateFieldsArgs {
            input_fields: arguments,
            ..args
        })?;
        for (i, key) in args.input_fields[arguments.len()..].iter().enumerate() {
            fields.push(Arc::new(Field::new(
                format_state_name(args.name, &format!("group_key_{i}")),
                key.data_type().clone(),
                true,
            )));
        }
        Ok(fields)
    }

    fn groups_accumulator_supported(&self, _args: AccumulatorArgs) -> bool {
        true
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        let arguments = self.arguments(args.expr_fields)?;
        let keys = GroupKeys::new(self.keys);
        Ok(Box::new(self.inner.groups(
            arguments,
            &args.return_field,
            Some(keys),
        )?))
    }
}
