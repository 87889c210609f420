//! `cargo run --release --bin udf-bench -- [--rows N] [--partitions P] [--repeat K] WORKLOAD...`
//!
//! Prints one line per workload, `workload=NAME rows=N partitions=P seconds=S rows_per_sec=R`
//! (the best of K runs), then the ratio of each framework workload to its baseline when both
//! ran. Workloads and their baselines run in the same process on the same data.

mod source;
mod workloads;

use std::process::ExitCode;
use std::time::Instant;

use udf_runtime::Session;

struct Options {
    rows: u64,
    partitions: usize,
    repeat: usize,
    workloads: Vec<String>,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        rows: 10_000_000,
        partitions: 1,
        repeat: 3,
        workloads: Vec::new(),
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--rows" => options.rows = number(&value("--rows")?)?,
            "--partitions" => options.partitions = number(&value("--partitions")?)? as usize,
            "--repeat" => options.repeat = number(&value("--repeat")?)? as usize,
            "--help" | "-h" => return Err(usage()),
            name if name.starts_with('-') => {
                return Err(format!("unknown option `{name}`\n{}", usage()));
            }
            name => match workloads::find(name) {
                Some(_) => options.workloads.push(name.to_owned()),
                None => return Err(format!("unknown workload `{name}`\n{}", usage())),
            },
        }
    }
    if options.workloads.is_empty() {
        return Err(usage());
    }
    if options.partitions == 0 || options.repeat == 0 || options.rows == 0 {
        return Err("--rows, --partitions and --repeat must be at least 1".into());
    }
    Ok(options)
}

fn number(text: &str) -> Result<u64, String> {
    text.replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))
}

fn usage() -> String {
    let names: Vec<&str> = workloads::ALL.iter().map(|w| w.name).collect();
    format!(
        "usage: udf-bench [--rows N] [--partitions P] [--repeat K] WORKLOAD...\nworkloads: {}",
        names.join(", ")
    )
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(&options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("udf-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: &Options) -> udf_runtime::datafusion::error::Result<()> {
    let mut rates = Vec::new();
    for name in &options.workloads {
        let workload = workloads::find(name).expect("checked while parsing");
        let session = Session::with_config(
            udf_runtime::datafusion::prelude::SessionConfig::new()
                .with_target_partitions(options.partitions),
        );
        source::register(&session, options.rows, options.partitions)?;
        (workload.setup)(&session)?;
        let mut best = f64::INFINITY;
        for _ in 0..options.repeat {
            let start = Instant::now();
            let rows = source::drain(&session, workload.sql).await?;
            let seconds = start.elapsed().as_secs_f64();
            if rows != (workload.expected_rows)(options.rows) {
                return Err(udf_runtime::datafusion::error::DataFusionError::Execution(
                    format!(
                        "workload {name} produced {rows} rows, expected {}",
                        (workload.expected_rows)(options.rows)
                    ),
                ));
            }
            best = best.min(seconds);
        }
        let rate = options.rows as f64 / best;
        println!(
            "workload={name} rows={} partitions={} seconds={best:.3} rows_per_sec={rate:.0}",
            options.rows, options.partitions
        );
        rates.push((workload, rate));
    }
    for (workload, rate) in &rates {
        let Some(baseline) = workload.baseline else {
            continue;
        };
        if let Some((_, base)) = rates.iter().find(|(w, _)| w.name == baseline) {
            println!("ratio {}/{baseline}={:.3}", workload.name, rate / base);
        }
    }
    Ok(())
}
