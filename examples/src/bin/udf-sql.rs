//! A SQL shell with every example function registered, the bundled `orders` table
//! (`data/orders.csv`) and an unbounded `ticks` table (a row every 200 ms, with a watermark on
//! `ts`): `cargo run -p udf-examples --bin udf-sql` for the terminal, `-- -c "SHOW FUNCTIONS"`
//! or `-- -f script.sql` for scripts.
//!
//! A shell of your own is these lines with your functions in place of the examples'.

use udf_runtime::Session;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let session = Session::new();
    if let Err(error) = setup(&session).await {
        eprintln!("[ERROR] {error}");
        return std::process::ExitCode::FAILURE;
    }
    udf_runtime::shell::run(session).await
}

async fn setup(session: &Session) -> udf_runtime::datafusion::error::Result<()> {
    udf_examples::catalog::register_all(session)?;
    udf_examples::register_orders(session).await?;
    let ticks = udf_examples::ticks::ticks_table(std::time::Duration::from_millis(200))?;
    session.register_table("ticks", std::sync::Arc::new(ticks))?;
    session.declare_watermark("ticks", "ts", std::time::Duration::ZERO);
    Ok(())
}
