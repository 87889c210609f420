//! Strings (`&str`, `String`) and bytes (`&[u8]`, `Vec<u8>`).
//!
//! Readers accept every Arrow layout of the type (`Utf8`, `LargeUtf8`, `Utf8View`, and the
//! binary counterparts) so the engine never has to cast a column just to call a function.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BinaryBuilder, BinaryViewArray, FixedSizeBinaryArray,
    LargeBinaryArray, LargeStringArray, StringArray, StringBuilder, StringViewArray,
};

use super::{
    ArgReader, ArgValue, ResultValue, SqlType, ValueBuilder, unexpected_array, unexpected_type,
};
use crate::Error;
use crate::types::{DataType, RootSet};

pub enum StrReader<'a> {
    Utf8(&'a StringArray),
    LargeUtf8(&'a LargeStringArray),
    Utf8View(&'a StringViewArray),
}

impl<'a> StrReader<'a> {
    pub fn new<T: ?Sized>(array: &'a dyn Array) -> Result<Self, Error> {
        let any = array.as_any();
        if let Some(a) = any.downcast_ref::<StringArray>() {
            Ok(StrReader::Utf8(a))
        } else if let Some(a) = any.downcast_ref::<StringViewArray>() {
            Ok(StrReader::Utf8View(a))
        } else if let Some(a) = any.downcast_ref::<LargeStringArray>() {
            Ok(StrReader::LargeUtf8(a))
        } else {
            Err(unexpected_array::<T>(array))
        }
    }

    #[inline]
    pub fn str(&self, index: usize) -> &'a str {
        match self {
            StrReader::Utf8(a) => a.value(index),
            StrReader::LargeUtf8(a) => a.value(index),
            StrReader::Utf8View(a) => a.value(index),
        }
    }
}

impl SqlType for &str {
    const ROOTS: RootSet = RootSet::CHARACTER;

    fn data_type() -> DataType {
        DataType::string().not_null()
    }
}

impl<'a> ArgValue<'a> for &'a str {
    type Reader = StrReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        StrReader::new::<&str>(array)
    }
}

impl<'a> ArgReader<'a> for StrReader<'a> {
    type Value = &'a str;

    #[inline]
    fn get(&self, index: usize) -> Result<&'a str, Error> {
        Ok(self.str(index))
    }
}

impl SqlType for String {
    const ROOTS: RootSet = RootSet::CHARACTER;

    fn data_type() -> DataType {
        DataType::string().not_null()
    }
}

pub struct StringReader<'a>(StrReader<'a>);

impl<'a> ArgValue<'a> for String {
    type Reader = StringReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        StrReader::new::<String>(array).map(StringReader)
    }
}

impl<'a> ArgReader<'a> for StringReader<'a> {
    type Value = String;

    #[inline]
    fn get(&self, index: usize) -> Result<String, Error> {
        Ok(self.0.str(index).to_owned())
    }
}

/// Builds a `Utf8` array from `&str` or `String` results.
pub struct StrBuilder(StringBuilder);

impl StrBuilder {
    pub fn new<T: ?Sized>(data_type: &DataType, capacity: usize) -> Result<Self, Error> {
        if !RootSet::CHARACTER.contains(data_type.root()) {
            return Err(unexpected_type::<T>(data_type));
        }
        Ok(StrBuilder(StringBuilder::with_capacity(
            capacity,
            capacity * 8,
        )))
    }

    #[inline]
    pub fn append_str(&mut self, value: &str) {
        self.0.append_value(value)
    }

    /// Appends one value formatted in place, without a `String` of its own. A `Display`
    /// implementation that fails is an error (the value's bytes written so far would
    /// otherwise start the next value, so the caller must not go on).
    #[inline]
    pub fn append_fmt(&mut self, value: std::fmt::Arguments<'_>) -> Result<(), Error> {
        // A value without arguments is one piece: no formatting machinery for it.
        if let Some(text) = value.as_str() {
            self.0.append_value(text);
            return Ok(());
        }
        std::fmt::Write::write_fmt(&mut self.0, value)
            .map_err(|_| Error::msg("a `Display` implementation failed while formatting a row"))?;
        self.0.append_value("");
        Ok(())
    }

    #[inline]
    pub fn append_null(&mut self) {
        self.0.append_null()
    }

    pub fn finish_array(&mut self) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

impl ResultValue for &str {
    type Builder = StrBuilder;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        StrBuilder::new::<&str>(data_type, capacity)
    }
}

impl ResultValue for String {
    type Builder = StrBuilder;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        StrBuilder::new::<String>(data_type, capacity)
    }
}

impl<'a> ValueBuilder<&'a str> for StrBuilder {
    #[inline]
    fn append(&mut self, value: &'a str) -> Result<(), Error> {
        self.0.append_value(value);
        Ok(())
    }

    fn append_null(&mut self) {
        self.0.append_null()
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        Ok(Arc::new(self.0.finish()))
    }
}

impl ValueBuilder<String> for StrBuilder {
    #[inline]
    fn append(&mut self, value: String) -> Result<(), Error> {
        self.0.append_value(value);
        Ok(())
    }

    fn append_null(&mut self) {
        self.0.append_null()
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        Ok(Arc::new(self.0.finish()))
    }
}

pub enum BinaryReader<'a> {
    Binary(&'a BinaryArray),
    LargeBinary(&'a LargeBinaryArray),
    BinaryView(&'a BinaryViewArray),
    Fixed(&'a FixedSizeBinaryArray),
}

impl<'a> BinaryReader<'a> {
    pub fn new<T: ?Sized>(array: &'a dyn Array) -> Result<Self, Error> {
        let any = array.as_any();
        if let Some(a) = any.downcast_ref::<BinaryArray>() {
            Ok(BinaryReader::Binary(a))
        } else if let Some(a) = any.downcast_ref::<BinaryViewArray>() {
            Ok(BinaryReader::BinaryView(a))
        } else if let Some(a) = any.downcast_ref::<LargeBinaryArray>() {
            Ok(BinaryReader::LargeBinary(a))
        } else if let Some(a) = any.downcast_ref::<FixedSizeBinaryArray>() {
            Ok(BinaryReader::Fixed(a))
        } else {
            Err(unexpected_array::<T>(array))
        }
    }

    #[inline]
    pub fn bytes(&self, index: usize) -> &'a [u8] {
        match self {
            BinaryReader::Binary(a) => a.value(index),
            BinaryReader::LargeBinary(a) => a.value(index),
            BinaryReader::BinaryView(a) => a.value(index),
            BinaryReader::Fixed(a) => a.value(index),
        }
    }
}

impl SqlType for &[u8] {
    const ROOTS: RootSet = RootSet::BINARY;

    fn data_type() -> DataType {
        DataType::bytes().not_null()
    }
}

impl<'a> ArgValue<'a> for &'a [u8] {
    type Reader = BinaryReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        BinaryReader::new::<&[u8]>(array)
    }
}

impl<'a> ArgReader<'a> for BinaryReader<'a> {
    type Value = &'a [u8];

    #[inline]
    fn get(&self, index: usize) -> Result<&'a [u8], Error> {
        Ok(self.bytes(index))
    }
}

impl SqlType for Vec<u8> {
    const ROOTS: RootSet = RootSet::BINARY;

    fn data_type() -> DataType {
        DataType::bytes().not_null()
    }
}

pub struct BytesReader<'a>(BinaryReader<'a>);

impl<'a> ArgValue<'a> for Vec<u8> {
    type Reader = BytesReader<'a>;

    fn reader(array: &'a dyn Array) -> Result<Self::Reader, Error> {
        BinaryReader::new::<Vec<u8>>(array).map(BytesReader)
    }
}

impl<'a> ArgReader<'a> for BytesReader<'a> {
    type Value = Vec<u8>;

    #[inline]
    fn get(&self, index: usize) -> Result<Vec<u8>, Error> {
        Ok(self.0.bytes(index).to_vec())
    }
}

/// Builds a `Binary` array from `&[u8]` or `Vec<u8>` results.
pub struct BytesBuilder(BinaryBuilder);

impl BytesBuilder {
    pub fn new<T: ?Sized>(data_type: &DataType, capacity: usize) -> Result<Self, Error> {
        if !RootSet::BINARY.contains(data_type.root()) {
            return Err(unexpected_type::<T>(data_type));
        }
        Ok(BytesBuilder(BinaryBuilder::with_capacity(
            capacity,
            capacity * 8,
        )))
    }

    #[inline]
    pub fn append_bytes(&mut self, value: &[u8]) {
        self.0.append_value(value)
    }

    #[inline]
    pub fn append_null(&mut self) {
        self.0.append_null()
    }

    pub fn finish_array(&mut self) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

impl ResultValue for &[u8] {
    type Builder = BytesBuilder;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        BytesBuilder::new::<&[u8]>(data_type, capacity)
    }
}

impl ResultValue for Vec<u8> {
    type Builder = BytesBuilder;

    fn builder(data_type: &DataType, capacity: usize) -> Result<Self::Builder, Error> {
        BytesBuilder::new::<Vec<u8>>(data_type, capacity)
    }
}

impl<'a> ValueBuilder<&'a [u8]> for BytesBuilder {
    #[inline]
    fn append(&mut self, value: &'a [u8]) -> Result<(), Error> {
        self.0.append_value(value);
        Ok(())
    }

    fn append_null(&mut self) {
        self.0.append_null()
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        Ok(Arc::new(self.0.finish()))
    }
}

impl ValueBuilder<Vec<u8>> for BytesBuilder {
    #[inline]
    fn append(&mut self, value: Vec<u8>) -> Result<(), Error> {
        self.0.append_value(value);
        Ok(())
    }

    fn append_null(&mut self) {
        self.0.append_null()
    }

    fn finish(&mut self) -> Result<ArrayRef, Error> {
        Ok(Arc::new(self.0.finish()))
    }
}
