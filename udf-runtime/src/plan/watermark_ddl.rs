//! `WATERMARK FOR ts AS ts - INTERVAL '2' SECOND` in `CREATE [EXTERNAL] TABLE`, as Flink
//! writes it. The clause is taken out of the statement (DataFusion does not know it), the
//! rest runs as usual, and the watermark is declared on the new table once its column is
//! checked.

use std::time::Duration;

use datafusion::arrow::datatypes::DataType as ArrowType;
use datafusion::common::{Result, plan_err};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer, Word};

/// A watermark declared in DDL.
#[derive(Debug, PartialEq, Eq)]
pub struct WatermarkClause {
    /// The table's name (the last part of a dotted name), which the watermark is kept by.
    pub table: String,
    /// The name as the statement wrote it (`s.events`), to look the new table up.
    pub reference: String,
    pub column: String,
    pub delay: Duration,
}

fn keyword(token: &Token, keyword: Keyword) -> bool {
    matches!(token, Token::Word(Word { keyword: k, .. }) if *k == keyword)
}

fn word(token: &Token) -> Option<&Word> {
    match token {
        Token::Word(word) => Some(word),
        _ => None,
    }
}

/// The statement without its WATERMARK clause, and the clause; `None` for a statement that
/// is not a CREATE TABLE with one.
pub fn extract(sql: &str) -> Result<Option<(String, WatermarkClause)>> {
    let Ok(tokens) = Tokenizer::new(&GenericDialect, sql).tokenize() else {
        return Ok(None);
    };
    // Significant tokens with their positions in `tokens`.
    let significant: Vec<(usize, &Token)> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t, Token::Whitespace(_)))
        .collect();
    let Some((_, first)) = significant.first() else {
        return Ok(None);
    };
    if !keyword(first, Keyword::CREATE) {
        return Ok(None);
    }
    let Some(table_at) = significant
        .iter()
        .position(|(_, t)| keyword(t, Keyword::TABLE))
    else {
        return Ok(None);
    };
    let mut name_at = table_at + 1;
    while significant.get(name_at).is_some_and(|(_, t)| {
        keyword(t, Keyword::IF) || keyword(t, Keyword::NOT) || keyword(t, Keyword::EXISTS)
    }) {
        name_at += 1;
    }
    // The table's name: the last part of a dotted name.
    let mut table = None;
    let mut reference = String::new();
    let mut at = name_at;
    while let Some((_, token)) = significant.get(at) {
        match token {
            Token::Word(word) => {
                table = Some(word.value.clone());
                reference.push_str(&token.to_string());
            }
            Token::Period => reference.push('.'),
            _ => break,
        }
        at += 1;
    }
    let Some(table) = table else {
        return Ok(None);
    };

    // The WATERMARK clauses among the table's elements (depth 1 of its parentheses).
    let mut depth = 0;
    let mut clauses = Vec::new();
    for (i, (_, token)) in significant.iter().enumerate() {
        match token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if depth == 1 && w.value.eq_ignore_ascii_case("watermark") => {
                clauses.push(i);
            }
            _ => {}
        }
    }
    let Some(&start) = clauses.first() else {
        return Ok(None);
    };
    if clauses.len() > 1 {
        return plan_err!(
            "the CREATE TABLE of `{table}` has {} WATERMARK clauses; a table has at most one",
            clauses.len()
        );
    }
    let at = |i: usize| significant.get(start + i).map(|(_, t)| *t);
    let wrong = || {
        plan_err!(
            "expected `WATERMARK FOR <column> AS <column> - INTERVAL '<n>' <unit>` in the CREATE TABLE of `{table}`"
        )
    };
    let (Some(for_token), Some(column), Some(as_token), Some(again)) = (at(1), at(2), at(3), at(4))
    else {
        return wrong();
    };
    let (Some(column), Some(again)) = (word(column), word(again)) else {
        return wrong();
    };
    if !keyword(for_token, Keyword::FOR) || !keyword(as_token, Keyword::AS) {
        return wrong();
    }
    let other_expression = || {
        plan_err!(
            "the WATERMARK of `{}` in the CREATE TABLE of `{table}` must be `{} - INTERVAL '<n>' <unit>` or `{}`: other expressions are not supported",
            column.value,
            column.value,
            column.value
        )
    };
    if !again.value.eq_ignore_ascii_case(&column.value) {
        return other_expression();
    }
    // `- INTERVAL 'n' UNIT`, or nothing (no delay).
    let (delay, end) = match at(5) {
        Some(Token::Minus) => {
            let (Some(interval), Some(Token::SingleQuotedString(amount)), Some(unit)) =
                (at(6), at(7), at(8).and_then(word))
            else {
                return wrong();
            };
            if !keyword(interval, Keyword::INTERVAL) {
                return wrong();
            }
            (interval_duration(amount, &unit.value, &table)?, start + 8)
        }
        _ => (Duration::ZERO, start + 4),
    };
    // The clause ends with the table's elements or before the next one.
    if !matches!(
        significant.get(end + 1).map(|(_, t)| *t),
        Some(Token::Comma | Token::RParen)
    ) {
        return other_expression();
    }
    // Cut the clause out, with the comma before it.
    let mut cut_from = significant[start].0;
    if start > 0 && matches!(significant[start - 1].1, Token::Comma) {
        cut_from = significant[start - 1].0;
    }
    let cut_to = significant[end].0;
    let rest: String = tokens
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < cut_from || *i > cut_to)
        .map(|(_, t)| t.to_string())
        .collect();
    Ok(Some((
        rest,
        WatermarkClause {
            table,
            reference,
            column: column.value.clone(),
            delay,
        },
    )))
}

/// Whether the table a CREATE TABLE with a WATERMARK clause made has the clause's column,
/// as a TIMESTAMP or TIMESTAMP_LTZ (Flink's rule for a rowtime attribute).
pub async fn check(context: &SessionContext, clause: &WatermarkClause) -> Result<()> {
    let table = context.table_provider(clause.reference.as_str()).await?;
    let schema = table.schema();
    let Some(field) = schema
        .fields()
        .iter()
        .find(|f| f.name().eq_ignore_ascii_case(&clause.column))
    else {
        return plan_err!(
            "the WATERMARK of the CREATE TABLE of `{}` is declared on `{}`, which is not a column of the table",
            clause.table,
            clause.column
        );
    };
    if !matches!(field.data_type(), ArrowType::Timestamp(..)) {
        return plan_err!(
            "the WATERMARK of the CREATE TABLE of `{}` is declared on `{}`, a {} column: it must be a TIMESTAMP or TIMESTAMP_LTZ",
            clause.table,
            clause.column,
            field.data_type()
        );
    }
    Ok(())
}

/// `'2' SECOND`, `'1.5' SECOND`, `'5' MINUTE`, ...
fn interval_duration(amount: &str, unit: &str, table: &str) -> Result<Duration> {
    let Ok(amount) = amount.trim().parse::<f64>() else {
        return plan_err!("`{amount}` is not a number (the watermark of `{table}`)");
    };
    let seconds = match unit.to_ascii_uppercase().as_str() {
        "MILLISECOND" | "MILLISECONDS" => amount / 1000.0,
        "SECOND" | "SECONDS" => amount,
        "MINUTE" | "MINUTES" => amount * 60.0,
        "HOUR" | "HOURS" => amount * 3600.0,
        "DAY" | "DAYS" => amount * 86_400.0,
        other => {
            return plan_err!(
                "`{other}` is not an interval unit for a watermark (SECOND, MINUTE, HOUR, DAY)"
            );
        }
    };
    match Duration::try_from_secs_f64(seconds) {
        Ok(delay) => Ok(delay),
        Err(_) => plan_err!("the watermark delay of `{table}` must not be negative"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clause_is_cut_out_and_read() {
        let (rest, clause) = extract(
            "CREATE EXTERNAL TABLE IF NOT EXISTS s.events (k VARCHAR, ts TIMESTAMP(3), \
             WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) STORED AS CSV LOCATION 'x.csv'",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            rest,
            "CREATE EXTERNAL TABLE IF NOT EXISTS s.events (k VARCHAR, ts TIMESTAMP(3)) STORED AS CSV LOCATION 'x.csv'"
        );
        assert_eq!(
            clause,
            WatermarkClause {
                table: "events".into(),
                reference: "s.events".into(),
                column: "ts".into(),
                delay: Duration::from_secs(2),
            }
        );
        let (_, clause) = extract("CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS ts)")
            .unwrap()
            .unwrap();
        assert_eq!(clause.delay, Duration::ZERO);
        assert!(extract("SELECT 1").unwrap().is_none());
        assert!(extract("CREATE TABLE t (a INT)").unwrap().is_none());
        assert!(
            extract(
                "CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS other - INTERVAL '1' SECOND)"
            )
            .is_err()
        );
    }

    #[test]
    fn declarations_flink_does_not_allow_are_errors_naming_the_clause() {
        let message = |sql: &str| extract(sql).expect_err(sql).to_string();
        let two = message(
            "CREATE TABLE t (ts TIMESTAMP(3), u TIMESTAMP(3), WATERMARK FOR ts AS ts, WATERMARK FOR u AS u)",
        );
        assert!(
            two.contains("the CREATE TABLE of `t` has 2 WATERMARK clauses"),
            "{two}"
        );
        for sql in [
            "CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS ts + INTERVAL '1' SECOND)",
            "CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND * 2)",
        ] {
            let error = message(sql);
            assert!(
                error.contains("the WATERMARK of `ts` in the CREATE TABLE of `t` must be"),
                "{sql}: {error}"
            );
        }
        // A column after the clause is fine.
        let sql =
            "CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, a INT)";
        assert!(extract(sql).is_ok(), "{sql}");
    }
}
