//! Quickstart: scalar functions written in Rust, called from SQL and the DataFrame API over
//! the bundled `data/orders.csv`.
//!
//! Run with `cargo run -p udf-examples --bin quickstart`; with `-- --remote df://host:port` the
//! same queries run on a Ballista cluster whose scheduler and executors carry the examples'
//! functions (`udf-scheduler`, `udf-executor`; see the README).

use udf_examples::aggregate::{
    string_concat::StringConcatFunction, weighted_average::WeightedAverageFunction,
};
use udf_examples::scalar::{
    hash_code::HashCodeFunction, power::PowerFunction, string_hash::StringHashFunction,
    substring::SubstringFunction, substring::substring,
};
use udf_runtime::datafusion::error::DataFusionError;
use udf_runtime::prelude::*;

#[tokio::main]
async fn main() -> udf_runtime::datafusion::error::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let session = match args.as_slice() {
        [] => Session::new(),
        [flag, url] if flag == "--remote" => Session::remote(url)?,
        _ => {
            return Err(DataFusionError::Configuration(
                "usage: quickstart [--remote df://host:port]".into(),
            ));
        }
    };
    udf_examples::register_orders(&session).await?;

    session.register(substring)?;
    session.register_as(
        "SubstringInclusive",
        SubstringFunction {
            end_inclusive: true,
        },
    )?;
    session.register(StringHashFunction)?;
    session.register(PowerFunction)?;
    session.register(HashCodeFunction::default())?;
    session.register(WeightedAverageFunction)?;
    session.register(StringConcatFunction)?;
    session.set_job_parameter("hashcode_factor", "31");

    println!("Registered functions:");
    for function in session.functions() {
        println!("{function}");
    }

    let queries = [
        (
            "Positional and named arguments",
            "SELECT order_id, product, SubstringFunction(product, 0, 4) AS short, \
                    SubstringInclusive(s => product, `end` => 4, begin => 0) AS inclusive \
             FROM orders ORDER BY order_id LIMIT 5",
        ),
        (
            "Overloads resolve by argument type",
            "SELECT customer, string_hash(customer) AS hashed, string_hash(customer, 'c') AS prefixed, \
                    power_func(price, 2.0) AS price_squared, power_func(quantity, 2) AS quantity_squared \
             FROM orders ORDER BY order_id LIMIT 5",
        ),
        (
            "A function configured by a job parameter, inside an aggregation",
            "SELECT customer, hashCode(customer) AS customer_hash, SUM(price * quantity) AS spent \
             FROM orders GROUP BY customer ORDER BY spent DESC",
        ),
        (
            "Aggregate functions: a weighted average and a string concatenation per customer",
            "SELECT customer, weighted_avg(price, quantity) AS avg_price, string_concat(product, ' + ') AS products \
             FROM orders GROUP BY customer ORDER BY customer",
        ),
    ];
    for (title, sql) in queries {
        println!("\n{title}:\n{sql}");
        session.sql(sql).await?.show().await?;
    }

    println!("\nThe same projection through the DataFrame API:");
    let df = session
        .table("orders")
        .await?
        .select(vec![
            col("product"),
            session
                .call_named(
                    "SubstringFunction",
                    [("s", col("product")), ("begin", lit(0)), ("end", lit(3))],
                )?
                .alias("short"),
        ])?
        .limit(0, Some(3))?;
    df.show().await?;
    Ok(())
}
