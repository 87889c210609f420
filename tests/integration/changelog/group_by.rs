//! The updating GROUP BY (rules 36 and 37 of `docs/semantics.md`), with its groups in memory
//! and on disk (the smallest memory budget, so groups move out and back in between batches).

use super::{Change, changelog_table, fed_output, session};

/// A changelog with updates, deletes, NULLs, a delete of a group that is not there and a
/// group created again after it emptied.
const CHANGES: [Change; 12] = [
    ("+I", "a", Some(5)),
    ("+I", "a", Some(3)),
    ("+I", "b", Some(7)),
    ("-U", "a", Some(5)),
    ("+U", "a", Some(9)),
    ("-D", "b", Some(7)),
    ("+I", "a", None),
    ("-D", "a", Some(3)),
    ("-D", "a", Some(9)),
    ("-D", "c", Some(1)),
    ("-D", "a", None),
    ("+I", "b", Some(2)),
];

const BUILT_INS: &str = "SELECT k, COUNT(*) AS n, COUNT(v) AS nv, SUM(v) AS s, AVG(v) AS m, MIN(v) AS lo, MAX(v) AS hi FROM t GROUP BY k";

/// Worked out by hand from Flink's rules (AVG is a DOUBLE, printed without `.0`): SUM, AVG, MIN and MAX are NULL once a group has
/// no values; MIN and MAX find the next value when theirs is taken back; `-D c` finds no
/// group and is dropped; `b` starts over after its `-D`.
fn built_ins_expected() -> Vec<&'static str> {
    vec![
        "a 1 1 5 5 5 5 +I",
        "a 1 1 5 5 5 5 -U",
        "a 2 2 8 4 3 5 +U",
        "b 1 1 7 7 7 7 +I",
        "a 2 2 8 4 3 5 -U",
        "a 1 1 3 3 3 3 +U",
        "a 1 1 3 3 3 3 -U",
        "a 2 2 12 6 3 9 +U",
        "b 1 1 7 7 7 7 -D",
        "a 2 2 12 6 3 9 -U",
        "a 3 2 12 6 3 9 +U",
        "a 3 2 12 6 3 9 -U",
        "a 2 1 9 9 9 9 +U",
        "a 2 1 9 9 9 9 -U",
        "a 1 0 NULL NULL NULL NULL +U",
        "a 1 0 NULL NULL NULL NULL -D",
        "b 1 1 2 2 2 2 +I",
    ]
}

crate::on_both_backends! {
    async fn built_in_aggregates_retract_over_a_changelog() {
        let expected = built_ins_expected();
        for rows_per_batch in [1, 2, 5, CHANGES.len()] {
            let session = session(1);
            let feed = changelog_table(&session);
            let output = fed_output(&session, feed, BUILT_INS, &CHANGES, true, rows_per_batch).await;
            assert_eq!(output, expected, "{rows_per_batch} rows per batch");
        }
    }

    /// Over two partitions the groups' changelogs interleave freely, but each group's stays in
    /// order.
    async fn each_groups_changelog_keeps_its_order_over_partitions() {
        let session = session(2);
        let feed = changelog_table(&session);
        let output = fed_output(&session, feed, BUILT_INS, &CHANGES, true, 3).await;
        for key in ["a ", "b "] {
            let of_key = |rows: &[String]| -> Vec<String> {
                rows.iter()
                    .filter(|r| r.starts_with(key))
                    .cloned()
                    .collect()
            };
            let expected: Vec<String> = built_ins_expected().iter().map(|r| r.to_string()).collect();
            assert_eq!(of_key(&output), of_key(&expected), "group {key}");
        }
    }

    /// FILTER skips rows for its call only; the group's row count, which decides `+I` and
    /// `-D`, counts every row.
    async fn filter_applies_to_its_call_over_a_changelog() {
        let changes: [Change; 4] = [
            ("+I", "a", Some(1)),
            ("+I", "a", Some(10)),
            ("-D", "a", Some(10)),
            ("-D", "a", Some(1)),
        ];
        let session = session(1);
        let feed = changelog_table(&session);
        let sql = "SELECT k, SUM(v) FILTER (WHERE v > 5) AS big, COUNT(*) AS n FROM t GROUP BY k";
        let output = fed_output(&session, feed, sql, &changes, true, 4).await;
        assert_eq!(
            output,
            [
                "a NULL 1 +I",
                "a NULL 1 -U",
                "a 10 2 +U",
                "a 10 2 -U",
                "a NULL 1 +U",
                "a NULL 1 -D",
            ]
        );
    }

    /// Without GROUP BY keys the whole stream is one group.
    async fn a_global_aggregate_over_a_stream_updates_one_row() {
        let rows: [Change; 3] = [
            ("+I", "a", Some(1)),
            ("+I", "b", Some(1)),
            ("+I", "c", Some(4)),
        ];
        let session = session(2);
        let feed = session.register_feed("t", super::super::schema()).unwrap();
        let output = fed_output(&session, feed, "SELECT SUM(v) AS s FROM t", &rows, false, 2).await;
        // Every row changes the sum: `+I` for the first, then `-U` old / `+U` new.
        assert_eq!(output, ["1 +I", "1 -U", "2 +U", "2 -U", "6 +U"]);
    }

    /// A projection and a filter over the updating GROUP BY keep each row's kind.
    async fn projections_and_filters_over_a_changelog_keep_row_kinds() {
        let rows: [Change; 4] = [
            ("+I", "a", Some(1)),
            ("+I", "b", Some(5)),
            ("+I", "a", Some(4)),
            ("+I", "b", Some(0)),
        ];
        let session = session(1);
        let feed = session.register_feed("t", super::super::schema()).unwrap();
        let sql = "SELECT s * 10 AS tens FROM (SELECT k, SUM(v) AS s FROM t GROUP BY k) WHERE s >= 5";
        let output = fed_output(&session, feed, sql, &rows, false, 4).await;
        // Flink filters each changelog row on its own: a's `-U 1` is dropped, its `+U 5` kept;
        // b's `-U 5` / `+U 5` pair is not emitted at all (SUM did not change).
        assert_eq!(output, ["50 +I", "50 +U"]);
    }

    /// DISTINCT counts a value once per group while any row holds it: the call sees it come
    /// with its first row and go with its last (Flink's distinct views).
    async fn distinct_calls_see_a_value_come_and_go() {
        let changes: [Change; 6] = [
            ("+I", "a", Some(1)),
            ("+I", "a", Some(1)),
            ("+I", "a", Some(2)),
            ("-D", "a", Some(1)),
            ("-D", "a", Some(1)),
            ("+I", "a", Some(3)),
        ];
        let sql =
            "SELECT k, COUNT(DISTINCT v) AS d, SUM(DISTINCT v) AS s, COUNT(*) AS n FROM t GROUP BY k";
        for rows_per_batch in [1, 6] {
            let session = session(1);
            let feed = changelog_table(&session);
            let output = fed_output(&session, feed, sql, &changes, true, rows_per_batch).await;
            assert_eq!(
                output,
                [
                    "a 1 1 1 +I",
                    "a 1 1 1 -U",
                    "a 1 1 2 +U",
                    "a 1 1 2 -U",
                    "a 2 3 3 +U",
                    "a 2 3 3 -U",
                    "a 2 3 2 +U",
                    "a 2 3 2 -U",
                    "a 1 2 1 +U",
                    "a 1 2 1 -U",
                    "a 2 5 2 +U",
                ],
                "{rows_per_batch} rows per batch"
            );
        }
    }
}
