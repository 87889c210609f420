//! A short text form of a serializable value, for error messages that show the accumulator
//! a failed call had: `{sum: 12.5, count: 3}`, `[1, 2]`, `Some("a")`. Values whose text
//! would be longer than a limit are not shown (the message names what it can without them).

use std::fmt::{self, Write};

use serde::ser::{self, Serialize};

/// `value` as short text, or `None` if it is longer than `limit` characters or cannot be
/// written.
pub fn describe<T: Serialize + ?Sized>(value: &T, limit: usize) -> Option<String> {
    let mut writer = Writer {
        out: String::new(),
        limit,
    };
    value.serialize(&mut writer).ok()?;
    Some(writer.out)
}

struct Writer {
    out: String,
    limit: usize,
}

/// Why writing stopped: the text grew past the limit, or the value reported an error.
#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not described")
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<M: fmt::Display>(_message: M) -> Self {
        Stop
    }
}

impl Writer {
    fn push(&mut self, text: impl fmt::Display) -> Result<(), Stop> {
        write!(self.out, "{text}").map_err(|_| Stop)?;
        if self.out.chars().count() > self.limit {
            return Err(Stop);
        }
        Ok(())
    }
}

/// A sequence, tuple, map or struct being written: whether an item came yet.
struct Items<'a> {
    writer: &'a mut Writer,
    first: bool,
    close: &'static str,
}

impl Items<'_> {
    fn separator(&mut self) -> Result<(), Stop> {
        if !std::mem::take(&mut self.first) {
            self.writer.push(", ")?;
        }
        Ok(())
    }

    fn end(self) -> Result<(), Stop> {
        self.writer.push(self.close)
    }
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Items<'a>;
    type SerializeTuple = Items<'a>;
    type SerializeTupleStruct = Items<'a>;
    type SerializeTupleVariant = Items<'a>;
    type SerializeMap = Items<'a>;
    type SerializeStruct = Items<'a>;
    type SerializeStructVariant = Items<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Stop> {
        self.push(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Stop> {
        self.push(format_args!("{v:?}"))
    }
    fn serialize_str(self, v: &str) -> Result<(), Stop> {
        // Checked before formatting, so a huge string is not copied to be refused.
        if v.len() > self.limit {
            return Err(Stop);
        }
        self.push(format_args!("{v:?}"))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Stop> {
        if v.len() > self.limit {
            return Err(Stop);
        }
        self.push(format_args!("{v:?}"))
    }
    fn serialize_none(self) -> Result<(), Stop> {
        self.push("None")
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Stop> {
        self.push("Some(")?;
        value.serialize(&mut *self)?;
        self.push(")")
    }
    fn serialize_unit(self) -> Result<(), Stop> {
        self.push("()")
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<(), Stop> {
        self.push(name)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Stop> {
        self.push(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.push(format_args!("{variant}("))?;
        value.serialize(&mut *self)?;
        self.push(")")
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Items<'a>, Stop> {
        self.push("[")?;
        Ok(Items {
            writer: self,
            first: true,
            close: "]",
        })
    }
    fn serialize_tuple(self, _len: usize) -> Result<Items<'a>, Stop> {
        self.push("(")?;
        Ok(Items {
            writer: self,
            first: true,
            close: ")",
        })
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Items<'a>, Stop> {
        self.serialize_tuple(len)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Items<'a>, Stop> {
        self.push(format_args!("{variant}("))?;
        Ok(Items {
            writer: self,
            first: true,
            close: ")",
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Items<'a>, Stop> {
        self.push("{")?;
        Ok(Items {
            writer: self,
            first: true,
            close: "}",
        })
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Items<'a>, Stop> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Items<'a>, Stop> {
        self.push(format_args!("{variant} {{"))?;
        Ok(Items {
            writer: self,
            first: true,
            close: "}",
        })
    }
}

impl ser::SerializeSeq for Items<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.separator()?;
        value.serialize(&mut *self.writer)
    }
    fn end(self) -> Result<(), Stop> {
        Items::end(self)
    }
}

/// Tuples write like sequences, in parentheses (the serializer chose the closing one).
macro_rules! like_a_sequence {
    ($($serialize:ident :: $method:ident),*) => {$(
        impl ser::$serialize for Items<'_> {
            type Ok = ();
            type Error = Stop;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
                ser::SerializeSeq::serialize_element(self, value)
            }
            fn end(self) -> Result<(), Stop> {
                Items::end(self)
            }
        }
    )*};
}

like_a_sequence!(
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Items<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Stop> {
        self.separator()?;
        key.serialize(&mut *self.writer)?;
        self.writer.push(": ")
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        value.serialize(&mut *self.writer)
    }
    fn end(self) -> Result<(), Stop> {
        Items::end(self)
    }
}

impl ser::SerializeStruct for Items<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.separator()?;
        self.writer.push(format_args!("{key}: "))?;
        value.serialize(&mut *self.writer)
    }
    fn end(self) -> Result<(), Stop> {
        Items::end(self)
    }
}

impl ser::SerializeStructVariant for Items<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<(), Stop> {
        Items::end(self)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::describe;

    #[derive(Serialize)]
    struct Acc {
        sum: f64,
        count: i64,
        last: Option<String>,
        seen: Vec<i32>,
    }

    #[derive(Serialize)]
    enum Mode {
        Idle,
        Counting(u8),
        Window { from: i64, to: i64 },
    }

    #[test]
    fn values_read_like_rust() {
        let acc = Acc {
            sum: 12.5,
            count: 3,
            last: Some("a\"b".into()),
            seen: vec![1, 2],
        };
        assert_eq!(
            describe(&acc, 200).as_deref(),
            Some(r#"{sum: 12.5, count: 3, last: Some("a\"b"), seen: [1, 2]}"#)
        );
        assert_eq!(describe(&Mode::Idle, 200).as_deref(), Some("Idle"));
        assert_eq!(
            describe(&Mode::Counting(4), 200).as_deref(),
            Some("Counting(4)")
        );
        assert_eq!(
            describe(&Mode::Window { from: 1, to: 2 }, 200).as_deref(),
            Some("Window {from: 1, to: 2}")
        );
        let map = BTreeMap::from([("k", (1, 'x'))]);
        assert_eq!(describe(&map, 200).as_deref(), Some(r#"{"k": (1, 'x')}"#));
    }

    #[test]
    fn long_values_are_not_described() {
        assert_eq!(describe(&vec![0u8; 1000], 200), None);
        assert_eq!(describe(&"x".repeat(10_000), 200), None);
        assert!(describe(&vec![7; 10], 200).is_some());
    }
}
