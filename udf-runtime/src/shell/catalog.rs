//! The catalog statements the shell answers itself: `SHOW [USER] FUNCTIONS`, `DESCRIBE
//! FUNCTION f` (also `DESC FUNCTION f`) and `\df [f]`, from what the session's catalog knows of
//! the user's functions.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::{DataFusionError, Result};

use crate::Session;
use crate::session::catalog::FunctionInfo;

/// A catalog statement.
#[derive(Debug, PartialEq, Eq)]
pub enum CatalogStatement {
    ShowFunctions,
    Describe(String),
}

impl CatalogStatement {
    /// `statement` if it is one the shell answers (case and spacing as SQL allows).
    pub fn parse(statement: &str) -> Option<Self> {
        let words: Vec<&str> = statement.split_whitespace().collect();
        let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
        let upper: Vec<&str> = upper.iter().map(String::as_str).collect();
        match upper.as_slice() {
            ["SHOW", "FUNCTIONS"] | ["SHOW", "USER", "FUNCTIONS"] => {
                Some(CatalogStatement::ShowFunctions)
            }
            ["DESCRIBE" | "DESC", "FUNCTION", _] => {
                Some(CatalogStatement::Describe(unquote(words[2])))
            }
            _ => None,
        }
    }

    /// The answer, as a table.
    pub fn answer(&self, session: &Session) -> Result<RecordBatch> {
        match self {
            CatalogStatement::ShowFunctions => {
                let functions = session.functions();
                table(
                    ["function name", "kind"],
                    functions
                        .iter()
                        .map(|f| [f.name.clone(), f.kind.to_string()])
                        .collect(),
                )
            }
            CatalogStatement::Describe(name) => {
                let wanted = crate::session::catalog::normalize(name);
                let function = session
                    .functions()
                    .into_iter()
                    .find(|f| f.name == wanted || f.name == *name)
                    .ok_or_else(|| {
                        DataFusionError::Plan(format!(
                            "no function `{name}` is registered (SHOW FUNCTIONS lists them)"
                        ))
                    })?;
                table(["info name", "info value"], describe(&function))
            }
        }
    }
}

/// A function's properties, a row each.
fn describe(function: &FunctionInfo) -> Vec<[String; 2]> {
    let mut rows = vec![
        ["name".to_owned(), function.name.clone()],
        ["kind".to_owned(), function.kind.to_string()],
    ];
    for signature in &function.signatures {
        rows.push(["signature".to_owned(), signature.clone()]);
    }
    rows.push([
        "deterministic".to_owned(),
        function.deterministic.to_string(),
    ]);
    rows.push([
        "constant folding".to_owned(),
        function.constant_folding.to_string(),
    ]);
    let mut capabilities = Vec::new();
    if function.capabilities.retract {
        capabilities.push("retract");
    }
    if function.capabilities.merge {
        capabilities.push("merge");
    }
    if !capabilities.is_empty() {
        rows.push(["capabilities".to_owned(), capabilities.join(", ")]);
    }
    for state in &function.state {
        rows.push(["state".to_owned(), state.clone()]);
    }
    if let Some(description) = &function.description {
        rows.push(["description".to_owned(), description.clone()]);
    }
    rows
}

fn table(headers: [&str; 2], rows: Vec<[String; 2]>) -> Result<RecordBatch> {
    let schema = Arc::new(Schema::new(
        headers
            .iter()
            .map(|h| Field::new(*h, DataType::Utf8, false))
            .collect::<Vec<_>>(),
    ));
    let columns: Vec<ArrayRef> = (0..2)
        .map(|i| Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r[i]))) as ArrayRef)
        .collect();
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// A name without its quotes.
fn unquote(name: &str) -> String {
    let trimmed = name.trim_end_matches(';');
    for quote in ['`', '"'] {
        if let Some(inner) = trimmed
            .strip_prefix(quote)
            .and_then(|n| n.strip_suffix(quote))
        {
            return inner.to_owned();
        }
    }
    trimmed.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_statements_parse_in_any_case() {
        assert_eq!(
            CatalogStatement::parse("show  functions"),
            Some(CatalogStatement::ShowFunctions)
        );
        assert_eq!(
            CatalogStatement::parse("SHOW USER FUNCTIONS"),
            Some(CatalogStatement::ShowFunctions)
        );
        assert_eq!(
            CatalogStatement::parse("desc function `MyFn`"),
            Some(CatalogStatement::Describe("MyFn".to_owned()))
        );
        assert_eq!(CatalogStatement::parse("SELECT 1"), None);
        assert_eq!(CatalogStatement::parse("SHOW TABLES"), None);
    }
}
