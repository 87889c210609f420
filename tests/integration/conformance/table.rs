//! `left_join_lateral_empty`.

use udf_core::prelude::*;

use super::{check, load, on_a_cluster, session};

/// A row with one string column `w`.
#[derive(Clone, Debug, SqlRow)]
pub(super) struct Piece {
    w: String,
}

/// Splits on ','; NULL or empty string emits nothing; empty pieces are skipped.
#[table_function(name = "Split")]
pub(super) fn split(s: Option<&str>, out: &mut Collector<Piece>) {
    for piece in s.unwrap_or_default().split(',') {
        if !piece.is_empty() {
            out.collect(Piece {
                w: piece.to_owned(),
            });
        }
    }
}

#[tokio::test]
async fn left_join_lateral_empty() {
    let case = load("left_join_lateral_empty");
    let session = session(&case);
    session.register(split).unwrap();
    check(&case, &session).await;
    check(&case, &on_a_cluster(&case, 2, |s| s.register(split)).await).await;
}
