//! Route values: for each of `n` partitions, an `Int64` that DataFusion's hash partitioner
//! (which a cluster's shuffle writer matches byte for byte) sends to that partition. Found by
//! asking the partitioner itself, so a change of its hash cannot route rows astray unseen.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Int64Type, Schema};
use datafusion::common::{Result, internal_err};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_plan::Partitioning;
use datafusion::physical_plan::metrics::Time;
use datafusion::physical_plan::repartition::BatchPartitioner;

use super::ROUTE;

/// Candidates tried per round, per partition.
const CANDIDATES: i64 = 64;
/// A bound on the search (each round finds a partition's value with high likelihood).
const ROUNDS: i64 = 64;

/// The route value of each of `partitions` partitions: the smallest non-negative value the
/// hash partitioner sends there.
pub(crate) fn routes(partitions: usize) -> Result<Vec<i64>> {
    let mut found: Vec<Option<i64>> = vec![None; partitions];
    let schema = Arc::new(Schema::new(vec![Field::new(ROUTE, DataType::Int64, false)]));
    let width = CANDIDATES * partitions as i64;
    for round in 0..ROUNDS {
        let candidates = Int64Array::from_iter_values(round * width..(round + 1) * width);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(candidates)])?;
        let mut partitioner = BatchPartitioner::try_new(
            Partitioning::Hash(vec![Arc::new(Column::new(ROUTE, 0))], partitions),
            Time::new(),
            0,
            1,
        )?;
        partitioner.partition(batch, |partition, rows| {
            if found[partition].is_none() && rows.num_rows() > 0 {
                let values = rows.column(0).as_primitive::<Int64Type>();
                found[partition] = Some(values.values().iter().copied().min().unwrap_or(0));
            }
            Ok(())
        })?;
        if found.iter().all(Option::is_some) {
            return Ok(found.into_iter().flatten().collect());
        }
    }
    internal_err!("no route value reaches each of {partitions} partitions")
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::common::hash_utils::create_hashes;
    use datafusion::physical_plan::repartition::REPARTITION_RANDOM_STATE;

    #[test]
    fn each_partition_gets_a_value_hashing_to_it() {
        for partitions in [1, 2, 3, 8, 33] {
            let routes = routes(partitions).unwrap();
            assert_eq!(routes.len(), partitions);
            let values = Int64Array::from(routes.clone());
            let mut hashes = vec![0; partitions];
            create_hashes(
                &[Arc::new(values) as datafusion::arrow::array::ArrayRef],
                REPARTITION_RANDOM_STATE.random_state(),
                &mut hashes,
            )
            .unwrap();
            for (partition, hash) in hashes.iter().enumerate() {
                // The partitioner's reduction is a plain remainder.
                assert_eq!(*hash % partitions as u64, partition as u64, "{routes:?}");
            }
        }
    }
}
