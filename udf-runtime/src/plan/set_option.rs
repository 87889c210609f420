//! Flink's form of SET, which DataFusion's parser does not take: a quoted key, or a key
//! with dashes such as `table.exec.async-scalar.timeout`.
//!
//! ```sql
//! SET 'table.exec.async-scalar.max-concurrent-operations' = '5';
//! SET table.exec.async-table.timeout = '1 min';
//! ```

/// `(key, value)` when `sql` is such a SET statement; other statements (including
/// DataFusion's own `SET datafusion.x = y`) are left to the engine.
pub fn parse(sql: &str) -> Option<(String, String)> {
    let rest = sql.trim().trim_end_matches(';').trim_end();
    let (keyword, rest) = rest.split_at_checked(3)?;
    if !keyword.eq_ignore_ascii_case("set") || !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let (key, quoted, rest) = token(rest)?;
    let flink = ["table.", "state.", "execution."];
    if !quoted && !flink.iter().any(|prefix| key.starts_with(prefix)) {
        return None;
    }
    let rest = rest.trim_start();
    let rest = if let Some(rest) = rest.strip_prefix('=') {
        rest
    } else {
        let (to, rest) = rest.split_at_checked(2)?;
        if !to.eq_ignore_ascii_case("to") {
            return None;
        }
        rest
    };
    let (value, _, rest) = token(rest.trim_start())?;
    rest.trim().is_empty().then_some((key, value))
}

/// A quoted string (`'...'` or `"..."`, doubled quotes inside) or a bare word; with whether
/// it was quoted and what follows.
fn token(text: &str) -> Option<(String, bool, &str)> {
    let quote = text.chars().next()?;
    if quote == '\'' || quote == '"' {
        let mut value = String::new();
        let mut chars = text[1..].char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == quote {
                if chars.peek().map(|(_, next)| *next) == Some(quote) {
                    chars.next();
                    value.push(quote);
                    continue;
                }
                return Some((value, true, &text[1 + i + 1..]));
            }
            value.push(c);
        }
        return None;
    }
    let end = text
        .find(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or(text.len());
    (end > 0).then(|| (text[..end].to_owned(), false, &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn pair(key: &str, value: &str) -> Option<(String, String)> {
        Some((key.to_owned(), value.to_owned()))
    }

    #[test]
    fn flink_forms() {
        assert_eq!(
            parse("SET 'table.exec.async-scalar.timeout' = '1m';"),
            pair("table.exec.async-scalar.timeout", "1m")
        );
        assert_eq!(
            parse("set table.exec.async-table.max-attempts TO 5"),
            pair("table.exec.async-table.max-attempts", "5")
        );
        assert_eq!(parse("SET 'job.name' = 'it''s'"), pair("job.name", "it's"));
    }

    #[test]
    fn other_statements_are_left_alone() {
        assert_eq!(parse("SET datafusion.execution.batch_size = 10"), None);
        assert_eq!(parse("SELECT 1"), None);
        assert_eq!(parse("SETTINGS"), None);
        assert_eq!(parse("SET 'a' = 'b' extra"), None);
    }
}
