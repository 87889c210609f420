//! Changelog files in Flink's `debezium-json` format.

use std::sync::Arc;

use udf_core::arrow::datatypes::{DataType, Field, Schema};
use udf_runtime::changelog;

use super::session;
use crate::support;

fn products() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("weight", DataType::Float64, true),
    ]))
}

/// A snapshot read, an insert, an update, a delete, and one change in Debezium's envelope
/// with its schema (`payload`); other fields (`source`, `ts_ms`) are ignored.
const CHANGES: &str = r#"{"before":null,"after":{"id":101,"name":"scooter","weight":3.14},"op":"r","ts_ms":1}
{"before":null,"after":{"id":102,"name":"battery","weight":8.1},"op":"c","source":{"db":"inventory"}}

{"before":{"id":101,"name":"scooter","weight":3.14},"after":{"id":101,"name":"scooter","weight":5.18},"op":"u"}
{"schema":{"type":"struct"},"payload":{"before":{"id":102,"name":"battery","weight":8.1},"after":null,"op":"d"}}
{"before":null,"after":{"id":103,"name":"drill","weight":0.8},"op":"c"}
"#;

fn file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("udf-debezium-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("changes.json");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn debezium_json_files_are_changelogs() {
    let session = session(1);
    session
        .register_debezium_json("products", file("read", CHANGES), products())
        .unwrap();
    let rows: Vec<String> = support::rows(&session, "SELECT * FROM products")
        .await
        .iter()
        .map(|r| {
            r.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(
        rows,
        [
            "101 scooter 3.14 +I",
            "102 battery 8.1 +I",
            "101 scooter 3.14 -U",
            "101 scooter 5.18 +U",
            "102 battery 8.1 -D",
            "103 drill 0.8 +I",
        ]
    );
    // A GROUP BY over it retracts; the materialized result is the table at the end.
    let batches = session
        .sql("SELECT COUNT(*) AS n, SUM(weight) AS total FROM products")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let table = changelog::materialize(&batches).unwrap();
    let last: Vec<String> = support::batches_to_rows(&[table])
        .iter()
        .map(|r| {
            r.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(last, ["2 5.9799999999999995"]);
}

#[tokio::test]
async fn an_update_without_its_before_image_is_an_error_naming_the_line() {
    let session = session(1);
    let text = "{\"before\":null,\"after\":{\"id\":1,\"name\":\"a\",\"weight\":1.0},\"op\":\"c\"}\n{\"before\":null,\"after\":{\"id\":1,\"name\":\"a\",\"weight\":2.0},\"op\":\"u\"}\n";
    let path = file("no-before", text);
    let error = session
        .register_debezium_json("products", &path, products())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("line 2 of")
            && error.contains("has op `u` without `before`")
            && error.contains("REPLICA IDENTITY FULL"),
        "{error}"
    );
    let path = file("bad-op", "{\"before\":null,\"after\":null,\"op\":\"x\"}\n");
    let error = session
        .register_debezium_json("other", &path, products())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("line 1 of")
            && error.contains("has op `x`; debezium-json knows c, r, u and d"),
        "{error}"
    );
}
