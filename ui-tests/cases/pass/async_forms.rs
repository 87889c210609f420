//! Every form of #[async_scalar_function] and #[async_table_function] compiles, and the
//! specs say what the Rust code says.

use std::time::Duration;

use udf_core::prelude::*;

#[async_scalar_function]
async fn lookup(id: i32) -> Result<Option<String>> {
    tokio::time::sleep(Duration::from_millis(1)).await;
    Ok((id > 0).then(|| id.to_string()))
}

/// Borrowed arguments, overloads, varargs, hints and a lifecycle.
#[derive(Clone, Default)]
struct Enrich {
    prefix: String,
}

#[async_scalar_function(name = "enrich", deterministic = false)]
impl Enrich {
    fn open(&mut self, context: &FunctionContext) -> Result<()> {
        self.prefix = context.get_job_parameter("prefix", "");
        Ok(())
    }

    async fn eval(&self, s: &str) -> String {
        format!("{}{s}", self.prefix)
    }

    #[data_type("DECIMAL(10, 2)")]
    async fn eval_number(&self, x: f64) -> Result<Decimal> {
        Decimal::from_f64(x)
    }

    #[varargs]
    async fn eval_all(&self, parts: &[i64]) -> i64 {
        parts.iter().sum()
    }
}

#[derive(Clone, Debug, SqlRow)]
struct Tour {
    user: String,
    stops: i32,
}

#[async_table_function]
async fn tours(#[argument(name = "user")] user: &str, #[argument(name = "limit", optional)] limit: Option<i32>) -> Result<Vec<Tour>> {
    Ok((0..limit.unwrap_or(1)).map(|stops| Tour { user: user.to_owned(), stops }).collect())
}

fn main() {
    let spec = AsyncScalarFunction::spec(&lookup);
    assert_eq!(spec.signature_lines("lookup"), ["lookup(id INT NOT NULL) -> STRING"]);
    let spec = AsyncScalarFunction::spec(&Enrich::default());
    assert!(!spec.deterministic);
    assert_eq!(
        spec.signature_lines("enrich"),
        [
            "enrich(s STRING NOT NULL) -> STRING NOT NULL",
            "enrich(x DOUBLE NOT NULL) -> DECIMAL(10, 2) NOT NULL",
            "enrich(parts BIGINT NOT NULL...) -> BIGINT NOT NULL",
        ]
    );
    assert!(AsyncScalarFunction::instantiate(&Enrich::default()).is_some());
    let spec = AsyncTableFunction::spec(&tours);
    assert_eq!(
        spec.signature_lines("tours"),
        ["tours(user STRING NOT NULL, limit INT OPTIONAL) -> ROW<user STRING NOT NULL, stops INT NOT NULL> NOT NULL"]
    );
}
