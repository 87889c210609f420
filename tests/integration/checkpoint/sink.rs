//! `INSERT INTO` a file table with checkpoints: files appear in the table's directory only
//! when the checkpoint that covers them is complete, and together they hold exactly the
//! uninterrupted output.

use std::path::Path;

use super::*;

/// Every row of the committed files in `dir`, read back as the table.
pub async fn committed_rows(dir: &Path, format: &str) -> Vec<RecordBatch> {
    let session = Session::new();
    // Files in the order they were committed (checkpoint id, then partition), so each key's
    // rows come in order: a key is written by one partition.
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    files.sort();
    let mut batches = Vec::new();
    for file in files {
        let path = file.to_str().unwrap();
        let df = match format {
            "csv" => session
                .read_csv(
                    path,
                    udf_runtime::datafusion::prelude::CsvReadOptions::new().schema(&out_schema()),
                )
                .await
                .unwrap(),
            _ => session
                .read_parquet(path, Default::default())
                .await
                .unwrap(),
        };
        batches.extend(df.collect().await.unwrap());
    }
    batches
}

/// The output table's columns as CSV reads them back.
fn out_schema() -> Schema {
    Schema::new(vec![
        Field::new("k", udf_core::arrow::datatypes::DataType::Utf8, false),
        Field::new("rows", udf_core::arrow::datatypes::DataType::Int64, false),
        Field::new(
            "same_word",
            udf_core::arrow::datatypes::DataType::Int64,
            false,
        ),
        Field::new("what", udf_core::arrow::datatypes::DataType::Utf8, false),
        Field::new(
            "rowtime",
            udf_core::arrow::datatypes::DataType::Timestamp(
                udf_core::arrow::datatypes::TimeUnit::Millisecond,
                Some("+00:00".into()),
            ),
            false,
        ),
    ])
}

/// Creates the output table `out` in `dir` for the session.
pub async fn create_output(session: &Session, dir: &Path, format: &str) {
    let location = format!("{}/", dir.display());
    let sql = match format {
        "csv" => format!(
            "CREATE EXTERNAL TABLE out (k VARCHAR NOT NULL, rows BIGINT NOT NULL, same_word BIGINT NOT NULL, what VARCHAR NOT NULL, rowtime TIMESTAMP) STORED AS CSV LOCATION '{location}' OPTIONS ('format.has_header' 'true')"
        ),
        _ => format!(
            "CREATE EXTERNAL TABLE out (k VARCHAR NOT NULL, rows BIGINT NOT NULL, same_word BIGINT NOT NULL, what VARCHAR NOT NULL, rowtime TIMESTAMP) STORED AS PARQUET LOCATION '{location}'"
        ),
    };
    session.sql(&sql).await.unwrap();
}

/// The rows of `batches` with every time column as epoch milliseconds (CSV and the PTF's
/// output spell the time zone differently).
pub fn comparable(rows: BTreeMap<String, Vec<Vec<Value>>>) -> BTreeMap<String, Vec<String>> {
    rows.into_iter()
        .map(|(k, rows)| {
            (
                k,
                rows.into_iter().map(|r| format!("{:?}", &r[..4])).collect(),
            )
        })
        .collect()
}

crate::on_both_backends! {
    async fn insert_into_a_file_table_commits_each_row_once() {
        for format in ["csv", "parquet"] {
            let input = input(2000, 13);
            let expected = uninterrupted(&input, 2).await;
            let root = scratch(&format!("sink-{format}"));
            let out = root.join("out");
            let uid = own(&format!("sink-{format}"));
            let (session, feed) = fed_session(2);
            checkpoint_every(&session, "20 ms", &root.join("checkpoints"));
            create_output(&session, &out, format).await;
            let insert = format!("INSERT INTO out {}", query(&uid));
            let df = session.sql(&insert).await.unwrap();
            let plan = df.clone().create_physical_plan().await.unwrap();
            let plan = udf_runtime::datafusion::physical_plan::displayable(plan.as_ref()).indent(false).to_string();
            assert!(plan.starts_with("CommittingSinkExec"), "{plan}");
            let result = tokio::spawn(async move { df.collect().await });
            let mut seen_committed = false;
            for start in (0..2000).step_by(100) {
                send(&feed, &input, start..start + 100, 50).await;
                tokio::time::sleep(Duration::from_millis(10)).await;
                // Readers see committed files only, never one being written.
                for entry in std::fs::read_dir(&out).into_iter().flatten() {
                    let name = entry.unwrap().file_name().into_string().unwrap();
                    assert!(name.ends_with(format) || name.ends_with(".inprogress"), "{name}");
                    seen_committed |= name.starts_with("part-");
                }
            }
            feed.close();
            let result = tokio::time::timeout(Duration::from_secs(30), result)
                .await
                .expect("the insert ends")
                .unwrap()
                .unwrap();
            let count = result[0].column(0).as_any().downcast_ref::<udf_core::arrow::array::UInt64Array>().unwrap().value(0);
            let total: usize = expected.values().map(Vec::len).sum();
            assert_eq!(count as usize, total);
            assert!(seen_committed, "files were committed while the query ran");
            assert_eq!(in_progress_files(&out), Vec::<String>::new());
            let committed = by_key(&committed_rows(&out, format).await);
            assert_eq!(comparable(committed), comparable(expected), "{format}");
            let _ = std::fs::remove_dir_all(&root);
        }
    }
}
