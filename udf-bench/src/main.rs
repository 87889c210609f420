//! `cargo run --release --bin udf-bench -- [--rows N] [--partitions P] [--repeat K] WORKLOAD...`
//!
//! Prints one line per workload, `workload=NAME rows=N partitions=P seconds=S rows_per_sec=R`
//! (the best of K runs), then the ratio of each framework workload to its baseline when both
//! ran. Workloads and their baselines run in the same process on the same data.

mod cluster;
mod fed;
mod source;
mod src_files;
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // A scheduler or executor of the Ballista workloads' cluster.
    if args.first().is_some_and(|a| a == "--serve") {
        return match cluster::serve(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("udf-bench --serve: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("udf-bench: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(bench(args))
}

async fn bench(args: Vec<String>) -> ExitCode {
    let options = match parse(args.into_iter()) {
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
    let mut cluster: Option<cluster::Cluster> = None;
    let mut files: Option<src_files::SrcFiles> = None;
    for name in &options.workloads {
        let workload = workloads::find(name).expect("checked while parsing");
        if let Some(keys) = workload.restore_keys {
            // `--rows` sizes it when given below the default (a quick run).
            let keys = keys.min(options.rows);
            fed::restore(options.partitions, keys).await?;
            continue;
        }
        let input_rows = workload.rows.unwrap_or(options.rows);
        let session = if workload.cluster.is_some() {
            let cluster = match &mut cluster {
                Some(cluster) => cluster,
                None => cluster.insert(cluster::Cluster::start()?),
            };
            cluster.session(input_rows, options.partitions).await?
        } else {
            let session = Session::with_config(
                udf_runtime::datafusion::prelude::SessionConfig::new()
                    .with_target_partitions(options.partitions),
            );
            if workload.files {
                let files = match &mut files {
                    Some(files) => files,
                    None => files.insert(src_files::SrcFiles::new("files")?),
                };
                files
                    .register(&session, input_rows, options.partitions)
                    .await?;
            } else {
                source::register(&session, input_rows, options.partitions)?;
            }
            session
        };
        (workload.setup)(&session)?;
        let mut best = f64::INFINITY;
        let mut out_of_order = 0;
        let mut output_rows = 0;
        for _ in 0..options.repeat {
            let start = Instant::now();
            let drained = match (workload.custom, workload.fed) {
                (Some(custom), _) => custom(session.context().clone(), options.partitions).await?,
                (None, Some((table, shape))) => {
                    fed::run(&session, table, shape, input_rows, workload.sql).await?
                }
                (None, None) => source::drain(&session, workload.sql, workload.check_order).await?,
            };
            let seconds = start.elapsed().as_secs_f64();
            let expected = (workload.expected_rows)(input_rows);
            if workload.check_rows && drained.rows != expected {
                return Err(udf_runtime::datafusion::error::DataFusionError::Execution(
                    format!(
                        "workload {name} produced {} rows, expected {expected}",
                        drained.rows
                    ),
                ));
            }
            out_of_order += drained.out_of_order;
            output_rows = drained.rows;
            best = best.min(seconds);
        }
        let rate = input_rows as f64 / best;
        print!(
            "workload={name} rows={input_rows} partitions={} seconds={best:.3} rows_per_sec={rate:.0}",
            options.partitions
        );
        if let Some(ceiling) = workload.ceiling {
            print!(" ceiling={ceiling:.0} fraction={:.3}", rate / ceiling);
        }
        if workload.check_order {
            print!(" out_of_order={out_of_order}");
        }
        if !workload.check_rows {
            print!(" output_rows={output_rows}");
        }
        if let Some(uid) = workload.checkpointed {
            print!("{}", fed::checkpoint_figures(&session, uid));
        }
        println!();
        rates.push((workload, rate));
    }
    if rates.iter().any(|(w, _)| w.ceiling.is_some()) {
        // The timer rounds each sleep up to its next millisecond tick: what one call of the
        // async workloads really takes.
        let calls = 20;
        let start = Instant::now();
        for _ in 0..calls {
            tokio::time::sleep(workloads::ASYNC_LATENCY).await;
        }
        let latency = start.elapsed().as_secs_f64() / calls as f64;
        println!(
            "timer: a {:?} sleep takes {:.3} ms, so the ceilings reachable with it are {:.3} of the nominal ones",
            workloads::ASYNC_LATENCY,
            latency * 1000.0,
            workloads::ASYNC_LATENCY.as_secs_f64() / latency
        );
    }
    for (workload, rate) in &rates {
        let Some(baseline) = workload.baseline else {
            continue;
        };
        if let Some((_, base)) = rates.iter().find(|(w, _)| w.name == baseline) {
            println!("ratio {}/{baseline}={:.3}", workload.name, rate / base);
        }
        // A cluster workload against its baseline over the same files: the cluster's share.
        let files = format!("{baseline}_files");
        if workload.cluster.is_some()
            && let Some((_, base)) = rates.iter().find(|(w, _)| w.name == files)
        {
            println!("ratio {}/{files}={:.3}", workload.name, rate / base);
        }
    }
    Ok(())
}
