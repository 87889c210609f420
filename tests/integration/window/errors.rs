//! Window table functions refuse what they cannot window, naming it.

use super::bids;

async fn planning_error(sql: &str) -> String {
    let session = bids(1);
    match session.sql(sql).await {
        Err(error) => error.to_string(),
        Ok(df) => df
            .create_physical_plan()
            .await
            .map(|_| ())
            .expect_err(sql)
            .to_string(),
    }
}

#[tokio::test]
async fn window_table_functions_refuse_what_they_cannot_window() {
    let session = super::bids(1);
    session
        .register_batch(
            "plain",
            session.table("bid").await.unwrap().collect().await.unwrap()[0].clone(),
        )
        .unwrap();
    let error = session
        .sql("SELECT * FROM TABLE(TUMBLE(TABLE plain, DESCRIPTOR(bidtime), INTERVAL '1' MINUTE))")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`bidtime` has no watermark, so TUMBLE cannot window by it"),
        "{error}"
    );

    let error = planning_error(
        "SELECT * FROM TABLE(SESSION(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '1' MINUTE))",
    )
    .await;
    assert!(
        error.contains("SESSION windows are computed by a window aggregate"),
        "{error}"
    );

    let error = planning_error("SELECT window_start, window_end, COUNT(*) FROM TABLE(SESSION(TABLE bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end").await;
    assert!(
        error.contains("SESSION's PARTITION BY `bid.item` must be a GROUP BY key too"),
        "{error}"
    );

    let error = planning_error("SELECT window_start, window_end, COUNT(DISTINCT item) FROM TABLE(SESSION(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end").await;
    assert!(
        error.contains("DISTINCT aggregates in session windows are not supported"),
        "{error}"
    );

    let error = planning_error("SELECT * FROM TABLE(TUMBLE(TABLE bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '1' MINUTE))").await;
    assert!(
        error.contains("the table of TUMBLE takes no PARTITION BY (only SESSION does)"),
        "{error}"
    );

    let error = planning_error("SELECT * FROM TABLE(CUMULATE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '3' MINUTES, INTERVAL '10' MINUTES))").await;
    assert!(
        error.contains("the size of CUMULATE must be a whole number of steps"),
        "{error}"
    );

    let error = planning_error(
        "SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(item), INTERVAL '1' MINUTE))",
    )
    .await;
    assert!(
        error.contains("the time column of TUMBLE must be a TIMESTAMP"),
        "{error}"
    );

    let error = planning_error(
        "SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '1' MONTH))",
    )
    .await;
    assert!(
        error.contains("`SIZE` of TUMBLE must be a positive interval of days or less"),
        "{error}"
    );

    let error = planning_error(
        "SELECT * FROM TABLE(HOP(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '1' MINUTE))",
    )
    .await;
    assert!(
        error.contains("HOP takes 4 arguments (DATA, TIMECOL, SLIDE, SIZE), not 3"),
        "{error}"
    );

    let error = planning_error("SELECT window_start, window_end, MAX(window_time) FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(bidtime), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end").await;
    assert!(
        error.contains("`window_time` of a window table function can only be grouped by"),
        "{error}"
    );
}
