//! Java's `hashCode` for the values the examples hash, so results match the Java examples.

use udf_core::Value;

/// `String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code units, wrapping.
pub fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32))
}

/// `Object.hashCode()` of the boxed Java value that stands for `value`.
pub fn hash_code(value: &Value) -> i32 {
    match value {
        Value::Null => 0,
        Value::Boolean(b) => {
            if *b {
                1231
            } else {
                1237
            }
        }
        Value::TinyInt(v) => *v as i32,
        Value::SmallInt(v) => *v as i32,
        Value::Int(v) => *v,
        Value::BigInt(v) => (*v ^ ((*v as u64) >> 32) as i64) as i32,
        Value::Float(v) => v.to_bits() as i32,
        Value::Double(v) => {
            let bits = v.to_bits();
            (bits ^ (bits >> 32)) as i32
        }
        Value::String(s) => string_hash(s),
        // `List.hashCode()`: 31*h + element, starting at 1.
        Value::Array(items) => items.iter().fold(1i32, |h, item| {
            h.wrapping_mul(31).wrapping_add(hash_code(item))
        }),
        other => string_hash(&other.to_string()),
    }
}

/// Flink's `Row.toString()` of an inserted row: `+I[a, 1]` (NULL prints as `null`).
pub fn row_string(row: &udf_core::Row) -> String {
    let fields: Vec<String> = row
        .values()
        .iter()
        .map(|v| match v {
            Value::Null => "null".to_owned(),
            other => other.to_string(),
        })
        .collect();
    format!("+I[{}]", fields.join(", "))
}
