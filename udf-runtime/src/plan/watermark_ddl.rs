//! `WATERMARK FOR ts AS ts - INTERVAL '2' SECOND` in `CREATE [EXTERNAL] TABLE`, as Flink
//! writes it. The clause is taken out of the statement (DataFusion does not know it), the
//! rest runs as usual, and the watermark is declared on the new table.

use std::time::Duration;

use datafusion::common::{Result, plan_err};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer, Word};

/// A watermark declared in DDL.
#[derive(Debug, PartialEq, Eq)]
pub struct WatermarkClause {
    pub table: String,
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
    let mut at = name_at;
    while let Some((_, token)) = significant.get(at) {
        match token {
            Token::Word(word) => table = Some(word.value.clone()),
            Token::Period => {}
            _ => break,
        }
        at += 1;
    }
    let Some(table) = table else {
        return Ok(None);
    };

    let mut depth = 0;
    let mut clause = None;
    for (i, (_, token)) in significant.iter().enumerate() {
        match token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if depth == 1 && w.value.eq_ignore_ascii_case("watermark") => {
                clause = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(start) = clause else {
        return Ok(None);
    };
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
    if !again.value.eq_ignore_ascii_case(&column.value) {
        return plan_err!(
            "the watermark of `{}` must be `{} - INTERVAL ...`: other expressions are not supported",
            column.value,
            column.value
        );
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
            column: column.value.clone(),
            delay,
        },
    )))
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
}
