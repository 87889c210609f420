//! A Ballista scheduler that knows every example function:
//! `cargo run -p udf-examples --bin udf-scheduler -- --bind-port 50050`.
//!
//! A scheduler of your own is this line with your function list in place of the examples'.

fn main() -> std::process::ExitCode {
    udf_runtime::ballista::scheduler_main(udf_examples::catalog::register_all)
}
