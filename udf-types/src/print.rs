//! Printing in Flink's syntax; the output parses back to an equal type.

use std::fmt::{self, Display, Formatter};

use crate::model::*;

impl Display for DataType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if !self.nullable {
            f.write_str(" NOT NULL")?;
        }
        Ok(())
    }
}

impl Display for TypeKind {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            TypeKind::Boolean => f.write_str("BOOLEAN"),
            TypeKind::TinyInt => f.write_str("TINYINT"),
            TypeKind::SmallInt => f.write_str("SMALLINT"),
            TypeKind::Int => f.write_str("INT"),
            TypeKind::BigInt => f.write_str("BIGINT"),
            TypeKind::Float => f.write_str("FLOAT"),
            TypeKind::Double => f.write_str("DOUBLE"),
            TypeKind::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            TypeKind::Char { length } => write!(f, "CHAR({length})"),
            TypeKind::VarChar { length: MAX_LENGTH } => f.write_str("STRING"),
            TypeKind::VarChar { length } => write!(f, "VARCHAR({length})"),
            TypeKind::Binary { length } => write!(f, "BINARY({length})"),
            TypeKind::VarBinary { length: MAX_LENGTH } => f.write_str("BYTES"),
            TypeKind::VarBinary { length } => write!(f, "VARBINARY({length})"),
            TypeKind::Date => f.write_str("DATE"),
            TypeKind::Time { precision } => write!(f, "TIME({precision})"),
            TypeKind::Timestamp { precision } => write!(f, "TIMESTAMP({precision})"),
            TypeKind::TimestampLtz { precision } => write!(f, "TIMESTAMP_LTZ({precision})"),
            TypeKind::IntervalYearMonth(interval) => write!(f, "{interval}"),
            TypeKind::IntervalDayTime(interval) => write!(f, "{interval}"),
            TypeKind::Array(element) => write!(f, "ARRAY<{element}>"),
            TypeKind::Multiset(element) => write!(f, "MULTISET<{element}>"),
            TypeKind::Map { key, value } => write!(f, "MAP<{key}, {value}>"),
            TypeKind::Row(fields) => {
                f.write_str("ROW<")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", field)?;
                }
                f.write_str(">")
            }
            TypeKind::Raw { class, snapshot } => {
                f.write_str("RAW")?;
                if let Some(class) = class {
                    write!(f, "({}", quote(class, '\''))?;
                    if let Some(snapshot) = snapshot {
                        write!(f, ", {}", quote(snapshot, '\''))?;
                    }
                    f.write_str(")")?;
                }
                Ok(())
            }
            TypeKind::Null => f.write_str("NULL"),
        }
    }
}

impl Display for RowField {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if is_plain_identifier(&self.name) {
            write!(f, "{} {}", self.name, self.data_type)?;
        } else {
            write!(f, "{} {}", quote(&self.name, '`'), self.data_type)?;
        }
        if let Some(description) = &self.description {
            write!(f, " {}", quote(description, '\''))?;
        }
        Ok(())
    }
}

impl Display for YearMonthInterval {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let p = self.year_precision;
        match self.resolution {
            YearMonthResolution::Year => write!(f, "INTERVAL YEAR({p})"),
            YearMonthResolution::YearToMonth => write!(f, "INTERVAL YEAR({p}) TO MONTH"),
            YearMonthResolution::Month => f.write_str("INTERVAL MONTH"),
        }
    }
}

impl Display for DayTimeInterval {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        use DayTimeResolution as D;
        let (d, s) = (self.day_precision, self.fractional_precision);
        match self.resolution {
            D::Day => write!(f, "INTERVAL DAY({d})"),
            D::DayToHour => write!(f, "INTERVAL DAY({d}) TO HOUR"),
            D::DayToMinute => write!(f, "INTERVAL DAY({d}) TO MINUTE"),
            D::DayToSecond => write!(f, "INTERVAL DAY({d}) TO SECOND({s})"),
            D::Hour => f.write_str("INTERVAL HOUR"),
            D::HourToMinute => f.write_str("INTERVAL HOUR TO MINUTE"),
            D::HourToSecond => write!(f, "INTERVAL HOUR TO SECOND({s})"),
            D::Minute => f.write_str("INTERVAL MINUTE"),
            D::MinuteToSecond => write!(f, "INTERVAL MINUTE TO SECOND({s})"),
            D::Second => write!(f, "INTERVAL SECOND({s})"),
        }
    }
}

/// A name that needs no backquotes: what the tokenizer reads as one word.
fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !name.eq_ignore_ascii_case("NOT")
        && !name.eq_ignore_ascii_case("NULL")
}

fn quote(text: &str, delimiter: char) -> String {
    let doubled: String = [delimiter, delimiter].iter().collect();
    format!(
        "{delimiter}{}{delimiter}",
        text.replace(delimiter, &doubled)
    )
}
