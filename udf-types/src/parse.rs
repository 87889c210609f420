//! Parser for Flink's data type syntax (`DECIMAL(12, 3)`, `ARRAY<INT NOT NULL>`,
//! `ROW<s STRING, t TIMESTAMP_LTZ(3)>`, `INTERVAL DAY(2) TO SECOND(3)`, ...).

use std::fmt;
use std::str::FromStr;

use crate::model::*;

/// A syntax error, with the byte range of the offending text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    /// Byte offset of the offending token in the input.
    pub offset: usize,
    /// Byte length of the offending token (at least 1 for display).
    pub len: usize,
}

impl ParseError {
    /// The input with a caret line under the offending token, for error messages.
    pub fn pointer(&self, input: &str) -> String {
        let start = input[..self.offset.min(input.len())].chars().count();
        let width = input
            .get(self.offset..(self.offset + self.len).min(input.len()))
            .map_or(1, |s| s.chars().count().max(1));
        format!("{input}\n{}{}", " ".repeat(start), "^".repeat(width))
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at offset {})", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

impl FromStr for DataType {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

/// Parses one data type; the whole input must be consumed.
pub fn parse(input: &str) -> Result<DataType, ParseError> {
    let tokens = tokenize(input)?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        input_len: input.len(),
        depth: 0,
    };
    let ty = parser.data_type()?;
    match parser.peek() {
        None => Ok(ty),
        Some(token) => Err(parser.error_at(token, "unexpected text after the data type")),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Quoted(String),
    Str(String),
    Int(u64),
    Sym(char),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    offset: usize,
    len: usize,
}

fn tokenize(input: &str) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let bytes = input.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = input[i..].chars().next().expect("in bounds");
        let start = i;
        if c.is_whitespace() {
            i += c.len_utf8();
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
            {
                i += 1;
            }
            tokens.push(Token {
                tok: Tok::Word(input[start..i].to_owned()),
                offset: start,
                len: i - start,
            });
        } else if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let value = input[start..i].parse::<u64>().map_err(|_| ParseError {
                message: "number is too large".into(),
                offset: start,
                len: i - start,
            })?;
            tokens.push(Token {
                tok: Tok::Int(value),
                offset: start,
                len: i - start,
            });
        } else if c == '`' || c == '\'' {
            // `identifier` or 'string'; the delimiter is escaped by doubling it.
            let mut text = String::new();
            i += 1;
            loop {
                let Some(next) = input[i..].chars().next() else {
                    return Err(ParseError {
                        message: format!(
                            "unterminated {}",
                            if c == '`' {
                                "quoted identifier"
                            } else {
                                "string literal"
                            }
                        ),
                        offset: start,
                        len: i - start,
                    });
                };
                i += next.len_utf8();
                if next == c {
                    if input[i..].starts_with(c) {
                        text.push(c);
                        i += 1;
                    } else {
                        break;
                    }
                } else {
                    text.push(next);
                }
            }
            tokens.push(Token {
                tok: if c == '`' {
                    Tok::Quoted(text)
                } else {
                    Tok::Str(text)
                },
                offset: start,
                len: i - start,
            });
        } else if "<>(),".contains(c) {
            i += 1;
            tokens.push(Token {
                tok: Tok::Sym(c),
                offset: start,
                len: 1,
            });
        } else {
            return Err(ParseError {
                message: format!("unexpected character `{c}`"),
                offset: start,
                len: c.len_utf8(),
            });
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    input_len: usize,
    /// Collection and row levels open around the type being parsed.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        token
    }

    fn error_at(&self, token: &Token, message: impl Into<String>) -> ParseError {
        ParseError {
            message: message.into(),
            offset: token.offset,
            len: token.len,
        }
    }

    fn error_here(&self, message: impl Into<String>) -> ParseError {
        match self.peek() {
            Some(token) => self.error_at(token, message),
            None => ParseError {
                message: format!("{}, found the end of the type", message.into()),
                offset: self.input_len,
                len: 1,
            },
        }
    }

    fn peek_keyword(&self, keyword: &str) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Word(w), .. }) if w.eq_ignore_ascii_case(keyword))
    }

    fn keyword(&mut self, keyword: &str) -> bool {
        let found = self.peek_keyword(keyword);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<(), ParseError> {
        if self.keyword(keyword) {
            Ok(())
        } else {
            Err(self.error_here(format!("expected `{keyword}`")))
        }
    }

    fn symbol(&mut self, c: char) -> bool {
        let found = matches!(self.peek(), Some(Token { tok: Tok::Sym(s), .. }) if *s == c);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect_symbol(&mut self, c: char) -> Result<(), ParseError> {
        if self.symbol(c) {
            Ok(())
        } else {
            Err(self.error_here(format!("expected `{c}`")))
        }
    }

    /// `(n)` with `lo <= n <= hi`, if present.
    fn optional_precision(
        &mut self,
        what: &str,
        lo: u64,
        hi: u64,
    ) -> Result<Option<u64>, ParseError> {
        if !self.symbol('(') {
            return Ok(None);
        }
        let value = self.bounded_int(what, lo, hi)?;
        self.expect_symbol(')')?;
        Ok(Some(value))
    }

    fn bounded_int(&mut self, what: &str, lo: u64, hi: u64) -> Result<u64, ParseError> {
        match self.next() {
            Some(
                token @ Token {
                    tok: Tok::Int(v), ..
                },
            ) => {
                if v < lo || v > hi {
                    Err(self.error_at(
                        &token,
                        format!("{what} must be between {lo} and {hi}, found {v}"),
                    ))
                } else {
                    Ok(v)
                }
            }
            _ => {
                self.pos -= 1;
                Err(self.error_here(format!("expected the {what} (an integer)")))
            }
        }
    }

    fn data_type(&mut self) -> Result<DataType, ParseError> {
        // Nested types recurse here directly, not through `kind` (whose frame is large): the
        // stack a level takes stays small.
        let nested = ["ARRAY", "MULTISET", "MAP", "ROW"]
            .into_iter()
            .find(|keyword| self.peek_keyword(keyword));
        let kind = match nested {
            Some(keyword) => {
                let token = self.next().expect("peeked");
                self.enter(&token)?;
                let kind = self.nested(keyword)?;
                self.leave();
                kind
            }
            None => self.kind()?,
        };
        let mut ty = DataType::from(kind);
        ty.nullable = self.nullability()?;
        // Postfix collection syntax: `INT ARRAY`, `INT NOT NULL MULTISET`. Each one nests
        // the type so far a level deeper.
        let mut postfix = 0;
        while let Some(token) = self.peek().cloned() {
            if self.keyword("ARRAY") {
                ty = DataType::new(TypeKind::Array(Box::new(ty)), true);
            } else if self.keyword("MULTISET") {
                ty = DataType::new(TypeKind::Multiset(Box::new(ty)), true);
            } else {
                break;
            }
            postfix += 1;
            if self.depth + postfix > MAX_NESTING {
                return Err(self.too_deep(&token));
            }
            ty.nullable = self.nullability()?;
        }
        Ok(ty)
    }

    /// Enters the ARRAY, MULTISET, MAP or ROW that `token` opens (left with [`Self::leave`]).
    fn enter(&mut self, token: &Token) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.too_deep(token));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn too_deep(&self, token: &Token) -> ParseError {
        self.error_at(
            token,
            format!("the data type nests deeper than {MAX_NESTING} levels of ARRAY, MULTISET, MAP and ROW"),
        )
    }

    fn nullability(&mut self) -> Result<bool, ParseError> {
        if self.keyword("NOT") {
            self.expect_keyword("NULL")?;
            Ok(false)
        } else {
            // An explicit `NULL` suffix means nullable, the default.
            self.keyword("NULL");
            Ok(true)
        }
    }

    fn kind(&mut self) -> Result<TypeKind, ParseError> {
        let Some(token) = self.next() else {
            return Err(self.error_here("expected a data type"));
        };
        let Tok::Word(word) = &token.tok else {
            return Err(self.error_at(&token, "expected a data type"));
        };
        let kind = match word.to_ascii_uppercase().as_str() {
            "BOOLEAN" => TypeKind::Boolean,
            "TINYINT" => TypeKind::TinyInt,
            "SMALLINT" => TypeKind::SmallInt,
            "INT" | "INTEGER" => TypeKind::Int,
            "BIGINT" => TypeKind::BigInt,
            "FLOAT" => TypeKind::Float,
            "DOUBLE" => {
                self.keyword("PRECISION");
                TypeKind::Double
            }
            "DECIMAL" | "DEC" | "NUMERIC" => {
                let (mut precision, mut scale) = (10u64, 0u64);
                if self.symbol('(') {
                    precision =
                        self.bounded_int("decimal precision", 1, MAX_DECIMAL_PRECISION as u64)?;
                    if self.symbol(',') {
                        scale = self.bounded_int("decimal scale", 0, precision)?;
                    }
                    self.expect_symbol(')')?;
                }
                TypeKind::Decimal {
                    precision: precision as u8,
                    scale: scale as u8,
                }
            }
            "CHAR" | "CHARACTER" => {
                let varying = self.keyword("VARYING");
                let length = self
                    .optional_precision("length", 1, MAX_LENGTH as u64)?
                    .unwrap_or(1) as u32;
                if varying {
                    TypeKind::VarChar { length }
                } else {
                    TypeKind::Char { length }
                }
            }
            "VARCHAR" => TypeKind::VarChar {
                length: self
                    .optional_precision("length", 1, MAX_LENGTH as u64)?
                    .unwrap_or(1) as u32,
            },
            "STRING" => TypeKind::VarChar { length: MAX_LENGTH },
            "BINARY" => {
                let varying = self.keyword("VARYING");
                let length = self
                    .optional_precision("length", 1, MAX_LENGTH as u64)?
                    .unwrap_or(1) as u32;
                if varying {
                    TypeKind::VarBinary { length }
                } else {
                    TypeKind::Binary { length }
                }
            }
            "VARBINARY" => TypeKind::VarBinary {
                length: self
                    .optional_precision("length", 1, MAX_LENGTH as u64)?
                    .unwrap_or(1) as u32,
            },
            "BYTES" => TypeKind::VarBinary { length: MAX_LENGTH },
            "DATE" => TypeKind::Date,
            "TIME" => {
                let precision = self.time_precision(0)?;
                if self.keyword("WITHOUT") {
                    self.expect_keyword("TIME")?;
                    self.expect_keyword("ZONE")?;
                }
                TypeKind::Time { precision }
            }
            "TIMESTAMP" => {
                let precision = self.time_precision(6)?;
                if self.keyword("WITHOUT") {
                    self.expect_keyword("TIME")?;
                    self.expect_keyword("ZONE")?;
                    TypeKind::Timestamp { precision }
                } else if self.peek_keyword("WITH") {
                    let with = self.next().expect("peeked");
                    if !self.keyword("LOCAL") {
                        return Err(self.error_at(
                            &with,
                            "TIMESTAMP WITH TIME ZONE is not supported; use TIMESTAMP WITH LOCAL TIME ZONE (TIMESTAMP_LTZ)",
                        ));
                    }
                    self.expect_keyword("TIME")?;
                    self.expect_keyword("ZONE")?;
                    TypeKind::TimestampLtz { precision }
                } else {
                    TypeKind::Timestamp { precision }
                }
            }
            "TIMESTAMP_LTZ" => TypeKind::TimestampLtz {
                precision: self.time_precision(6)?,
            },
            "INTERVAL" => self.interval()?,
            "RAW" => {
                let (mut class, mut snapshot) = (None, None);
                if self.symbol('(') {
                    class = Some(self.string_literal("the type name")?);
                    if self.symbol(',') {
                        snapshot = Some(self.string_literal("the serializer snapshot")?);
                    }
                    self.expect_symbol(')')?;
                }
                TypeKind::Raw { class, snapshot }
            }
            "NULL" => TypeKind::Null,
            _ => return Err(self.error_at(&token, format!("unknown data type `{word}`"))),
        };
        Ok(kind)
    }

    /// The part after the keyword of a nested type.
    fn nested(&mut self, keyword: &str) -> Result<TypeKind, ParseError> {
        if keyword == "ROW" {
            return self.row();
        }
        self.expect_symbol('<')?;
        let first = self.data_type()?;
        let kind = match keyword {
            "ARRAY" => TypeKind::Array(Box::new(first)),
            "MULTISET" => TypeKind::Multiset(Box::new(first)),
            _ => {
                self.expect_symbol(',')?;
                let value = self.data_type()?;
                TypeKind::Map {
                    key: Box::new(first),
                    value: Box::new(value),
                }
            }
        };
        self.expect_symbol('>')?;
        Ok(kind)
    }

    fn time_precision(&mut self, default: u8) -> Result<u8, ParseError> {
        Ok(self
            .optional_precision("precision", 0, MAX_TIME_PRECISION as u64)?
            .map_or(default, |p| p as u8))
    }

    fn string_literal(&mut self, what: &str) -> Result<String, ParseError> {
        match self.next() {
            Some(Token {
                tok: Tok::Str(s), ..
            }) => Ok(s),
            _ => {
                self.pos -= 1;
                Err(self.error_here(format!("expected {what} as a string literal")))
            }
        }
    }

    fn row(&mut self) -> Result<TypeKind, ParseError> {
        let close = if self.symbol('<') {
            '>'
        } else if self.symbol('(') {
            ')'
        } else {
            return Err(self.error_here("expected `<` or `(` after ROW"));
        };
        let mut fields: Vec<RowField> = Vec::new();
        // Names seen so far, so that a wide row is checked in linear time.
        let mut names = std::collections::HashSet::new();
        if !self.symbol(close) {
            loop {
                let name_token = self.next();
                let name = match &name_token {
                    Some(Token {
                        tok: Tok::Word(w) | Tok::Quoted(w),
                        ..
                    }) => w.clone(),
                    _ => {
                        self.pos -= 1;
                        return Err(self.error_here("expected a field name"));
                    }
                };
                if !names.insert(name.clone()) {
                    let token = name_token.expect("matched above");
                    return Err(self.error_at(&token, format!("duplicate field name `{name}`")));
                }
                let data_type = self.data_type()?;
                let description = match self.peek() {
                    Some(Token {
                        tok: Tok::Str(s), ..
                    }) => {
                        let s = s.clone();
                        self.pos += 1;
                        Some(s)
                    }
                    _ => None,
                };
                fields.push(RowField {
                    name,
                    data_type,
                    description,
                });
                if self.symbol(close) {
                    break;
                }
                if !self.symbol(',') {
                    return Err(self.error_here(format!("expected `,` or `{close}`")));
                }
            }
        }
        Ok(TypeKind::Row(fields))
    }

    fn interval(&mut self) -> Result<TypeKind, ParseError> {
        use DayTimeResolution as D;
        use YearMonthResolution as Y;
        let Some(token) = self.next() else {
            return Err(self.error_here("expected an interval qualifier such as `DAY TO SECOND`"));
        };
        let Tok::Word(word) = &token.tok else {
            return Err(self.error_at(
                &token,
                "expected an interval qualifier such as `DAY TO SECOND`",
            ));
        };
        let first = word.to_ascii_uppercase();
        let kind = match first.as_str() {
            "YEAR" => {
                let year_precision = self
                    .optional_precision("year precision", 1, 4)?
                    .map_or(DEFAULT_YEAR_PRECISION, |p| p as u8);
                let resolution = if self.keyword("TO") {
                    self.expect_keyword("MONTH")?;
                    Y::YearToMonth
                } else {
                    Y::Year
                };
                TypeKind::IntervalYearMonth(YearMonthInterval {
                    resolution,
                    year_precision,
                })
            }
            "MONTH" => TypeKind::IntervalYearMonth(YearMonthInterval {
                resolution: Y::Month,
                year_precision: DEFAULT_YEAR_PRECISION,
            }),
            "DAY" | "HOUR" | "MINUTE" | "SECOND" => {
                let mut day_precision = DEFAULT_DAY_PRECISION;
                let mut fractional_precision = DEFAULT_FRACTIONAL_PRECISION;
                if first == "DAY" {
                    day_precision = self
                        .optional_precision("day precision", 1, 6)?
                        .map_or(DEFAULT_DAY_PRECISION, |p| p as u8);
                } else if first == "SECOND" {
                    fractional_precision = self.fractional()?;
                }
                let end = if first != "SECOND" && self.keyword("TO") {
                    let end_token = self.next();
                    let end = match &end_token {
                        Some(Token {
                            tok: Tok::Word(w), ..
                        }) => w.to_ascii_uppercase(),
                        _ => String::new(),
                    };
                    let order = ["DAY", "HOUR", "MINUTE", "SECOND"];
                    let start_index = order.iter().position(|o| *o == first).expect("listed");
                    match order.iter().position(|o| *o == end) {
                        Some(end_index) if end_index > start_index => {}
                        _ => {
                            self.pos -= 1;
                            return Err(self.error_here(format!(
                                "expected a field after {first} in `{first} TO ...`"
                            )));
                        }
                    }
                    if end == "SECOND" {
                        fractional_precision = self.fractional()?;
                    }
                    Some(end)
                } else {
                    None
                };
                let resolution = match (first.as_str(), end.as_deref()) {
                    ("DAY", None) => D::Day,
                    ("DAY", Some("HOUR")) => D::DayToHour,
                    ("DAY", Some("MINUTE")) => D::DayToMinute,
                    ("DAY", Some(_)) => D::DayToSecond,
                    ("HOUR", None) => D::Hour,
                    ("HOUR", Some("MINUTE")) => D::HourToMinute,
                    ("HOUR", Some(_)) => D::HourToSecond,
                    ("MINUTE", None) => D::Minute,
                    ("MINUTE", Some(_)) => D::MinuteToSecond,
                    _ => D::Second,
                };
                TypeKind::IntervalDayTime(DayTimeInterval {
                    resolution,
                    day_precision,
                    fractional_precision,
                })
            }
            _ => return Err(self.error_at(&token, format!("unknown interval qualifier `{word}`"))),
        };
        Ok(kind)
    }

    fn fractional(&mut self) -> Result<u8, ParseError> {
        Ok(self
            .optional_precision("fractional precision", 0, 9)?
            .map_or(DEFAULT_FRACTIONAL_PRECISION, |p| p as u8))
    }
}
