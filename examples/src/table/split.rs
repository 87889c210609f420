//! `SplitFunction` from "Table Functions": splits a string at spaces into words with their
//! lengths.

use udf_core::prelude::*;

/// A word and its length (the guide's hint `ROW<word STRING, length INT>`).
#[derive(Clone, Debug, PartialEq, SqlRow)]
pub struct Word {
    pub word: String,
    pub length: i32,
}

/// Emits one row per word, as Java's `str.split(" ")` does: empty words between repeated
/// spaces are kept, trailing ones dropped.
#[table_function(name = "SplitFunction")]
pub fn split_function(s: &str, out: &mut Collector<Word>) {
    for word in java_split(s, ' ') {
        out.collect(Word {
            word: word.to_owned(),
            length: word.chars().count() as i32,
        });
    }
}

/// Java's `String.split` on a single character: trailing empty pieces are removed; an
/// empty input yields one empty piece.
pub fn java_split(s: &str, separator: char) -> impl Iterator<Item = &str> {
    let mut pieces: Vec<&str> = s.split(separator).collect();
    if !s.is_empty() {
        while pieces.last() == Some(&"") {
            pieces.pop();
        }
    }
    pieces.into_iter()
}
