//! A Ballista executor that knows every example function:
//! `cargo run -p udf-examples --bin udf-executor -- --scheduler-port 50050 --bind-port 50051`
//! (`--help` lists the options).
//!
//! An executor of your own is this line with your function list in place of the examples'.

fn main() -> std::process::ExitCode {
    udf_runtime::ballista::executor_main(udf_examples::catalog::register_all)
}
