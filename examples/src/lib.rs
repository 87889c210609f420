//! Rust counterparts of the user-defined function examples in Flink's documentation.
//!
//! Each module names the Flink example it ports; `tests/` runs every one of them.
//! `src/bin/quickstart.rs` puts several to work on the bundled dataset in `data/`.

pub mod aggregate;
pub mod asynchronous;
pub mod catalog;
pub mod java;
pub mod ptf;
pub mod scalar;
pub mod table;
pub mod table_aggregate;
pub mod ticks;

/// The directory of the bundled dataset.
pub fn data_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// Registers the bundled `data/orders.csv` as the table `orders`.
pub async fn register_orders(
    session: &udf_runtime::Session,
) -> udf_runtime::datafusion::error::Result<()> {
    let orders = data_dir().join("orders.csv");
    session
        .register_csv(
            "orders",
            orders.to_str().expect("a UTF-8 path"),
            udf_runtime::datafusion::prelude::CsvReadOptions::new(),
        )
        .await
}
