//! The project's scalar and aggregate functions in an encoded plan: by catalog name, with the
//! signatures the client planned against, so a scheduler or executor whose function differs
//! refuses the plan instead of computing something else.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result, plan_err};
use datafusion::logical_expr::async_udf::AsyncScalarUDF;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use serde::{Deserialize, Serialize};
use udf_core::types::DataType;
use udf_core::{Metrics, OutputType};

use crate::functions::aggregate::group_keys::{group_key_count, with_group_keys};
use crate::functions::aggregate::udf::AggregateUdf;
use crate::functions::registration::EngineFunction;
use crate::functions::scalar::ScalarUdf;
use crate::session::catalog::{Catalog, CatalogEntry};

/// What travels with a call: enough to check that the receiving side has the same function.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct Identity {
    kind: String,
    signatures: Vec<String>,
    /// The instance's fields, when its type is `Serialize` (`UserFunction::settings`).
    settings: Option<Vec<u8>>,
}

impl Identity {
    fn of(entry: &CatalogEntry) -> Identity {
        Identity {
            kind: entry.spec.kind.to_string(),
            signatures: entry.spec.signature_lines(&entry.name),
            settings: entry.settings.clone(),
        }
    }
}

/// An encoded call: the function's identity, and how many GROUP BY keys a physical
/// aggregate call takes after its arguments (see `functions::aggregate::group_keys`).
#[derive(Serialize, Deserialize)]
struct Call {
    identity: Identity,
    group_keys: Option<usize>,
}

/// Resolves functions against one session's catalog.
#[derive(Clone)]
pub struct FunctionCodec {
    catalog: Arc<Catalog>,
    metrics: Metrics,
}

impl std::fmt::Debug for FunctionCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionCodec")
            .field("catalog", &self.catalog)
            .finish()
    }
}

impl FunctionCodec {
    pub fn new(catalog: Arc<Catalog>, metrics: Metrics) -> Self {
        FunctionCodec { catalog, metrics }
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The identity of the registered function `name`, to send with a node that calls it.
    pub fn identity(&self, name: &str) -> Result<Identity> {
        match self.catalog.get(name) {
            Some(entry) => Ok(Identity::of(&entry)),
            None => not_registered(name),
        }
    }

    /// The registered function `name`, if it is the one the sender had (`sent`).
    pub fn resolve(&self, name: &str, sent: &Identity) -> Result<CatalogEntry> {
        let Some(entry) = self.catalog.get(name) else {
            return plan_err!(
                "the query calls `{name}`, which this Ballista scheduler or executor does not \
                 have: register it in the function list its binary is built with, as on the \
                 client"
            );
        };
        let here = Identity::of(&entry);
        if sent.kind != here.kind || sent.signatures != here.signatures {
            return plan_err!(
                "`{name}` differs between the client and this Ballista scheduler or executor: \
                 the client has {} `{}`, this side {} `{}`; build both from the same functions",
                sent.kind,
                sent.signatures.join("`, `"),
                here.kind,
                here.signatures.join("`, `")
            );
        }
        if sent.settings != here.settings {
            return plan_err!(
                "`{name}` is configured differently on the client and on this Ballista scheduler \
                 or executor (its settings differ): register the same instance on both"
            );
        }
        Ok(entry)
    }

    pub fn encode_udf(&self, udf: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        let ours = udf.inner().is::<ScalarUdf>() || udf.inner().is::<AsyncScalarUDF>();
        self.encode(udf.name(), ours, None, buf)
    }

    pub fn encode_udaf(&self, udaf: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        let group_keys = group_key_count(udaf);
        let ours = udaf.inner().is::<AggregateUdf>() || group_keys.is_some();
        self.encode(udaf.name(), ours, group_keys, buf)
    }

    /// A registered function's identity; nothing for DataFusion's own functions, which the
    /// receiving side resolves by name.
    fn encode(
        &self,
        name: &str,
        ours: bool,
        group_keys: Option<usize>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let identity = match self.catalog.get(name) {
            Some(entry) => Identity::of(&entry),
            None if ours => return not_registered(name),
            None => return Ok(()),
        };
        let call = Call {
            identity,
            group_keys,
        };
        let bytes = postcard::to_stdvec(&call)
            .map_err(|e| DataFusionError::Internal(format!("encoding `{name}`: {e}")))?;
        buf.extend_from_slice(&bytes);
        Ok(())
    }

    pub fn decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match self.decode(name, buf)? {
            (EngineFunction::Scalar(udf), None) => Ok(udf),
            _ => plan_err!("`{name}` is not a scalar function here"),
        }
    }

    pub fn decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        match self.decode(name, buf)? {
            (EngineFunction::Aggregate(udaf), None) => Ok(udaf),
            (EngineFunction::Aggregate(udaf), Some(keys)) => {
                with_group_keys(&udaf, keys).map(Arc::new).ok_or_else(|| {
                    DataFusionError::Plan(format!("`{name}` cannot take group keys here"))
                })
            }
            _ => plan_err!("`{name}` is not an aggregate function here"),
        }
    }

    /// The registered aggregate function `name`, if it is the one the sender had (`sent`).
    pub fn aggregate(&self, name: &str, sent: &Identity) -> Result<Arc<AggregateUDF>> {
        match self.engine_function(name, sent)? {
            EngineFunction::Aggregate(udaf) => Ok(udaf),
            _ => plan_err!("`{name}` is not an aggregate function here"),
        }
    }

    /// The function a call names, with the group keys its aggregate call takes.
    fn decode(&self, name: &str, buf: &[u8]) -> Result<(EngineFunction, Option<usize>)> {
        let call: Call = postcard::from_bytes(buf).map_err(|e| {
            DataFusionError::Plan(format!("the call of `{name}` arrived garbled: {e}"))
        })?;
        Ok((self.engine_function(name, &call.identity)?, call.group_keys))
    }

    /// The registered function `name` as the engine calls it, if it is the sender's.
    fn engine_function(&self, name: &str, sent: &Identity) -> Result<EngineFunction> {
        let entry = self.resolve(name, sent)?;
        EngineFunction::new(
            &entry.name,
            &entry.function,
            entry.spec.clone(),
            &self.metrics,
        )
    }
}

/// The row type a table function's or table aggregate's signature `signature` emits.
pub fn fixed_row_type(entry: &CatalogEntry, signature: usize) -> Result<DataType> {
    match entry.spec.signatures.get(signature).map(|s| &s.output) {
        Some(OutputType::Fixed(row_type)) => Ok(row_type.clone()),
        _ => plan_err!(
            "`{}` has no signature {signature} with a fixed row type here",
            entry.name
        ),
    }
}

fn not_registered<T>(name: &str) -> Result<T> {
    plan_err!(
        "`{name}` is called inline (not registered), which a Ballista cluster cannot resolve: \
         register the function, on the client and in the scheduler's and executors' function \
         list"
    )
}
