//! Byte pairs packed into one buffer, for snapshots: a state entry's keys with what its store
//! saved for each, one pair after another, each half a LEB128 length and its bytes. A vector
//! pair per key made a million-key snapshot mostly allocation; here the entry is one buffer,
//! and serde writes it as one run of bytes.

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes that serde handles as one run (a plain `Vec<u8>` goes byte by byte).
#[derive(Default, Clone, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

impl Serialize for Blob {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Blob {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BlobVisitor;

        impl<'de> Visitor<'de> for BlobVisitor {
            type Value = Blob;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("bytes")
            }

            fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Blob, E> {
                Ok(Blob(bytes.to_vec()))
            }

            fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<Blob, E> {
                Ok(Blob(bytes))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Blob, A::Error> {
                let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(byte) = seq.next_element()? {
                    bytes.push(byte);
                }
                Ok(Blob(bytes))
            }
        }

        deserializer.deserialize_byte_buf(BlobVisitor)
    }
}

/// Pairs of byte strings in one buffer.
#[derive(Serialize, Deserialize, Default)]
pub struct Pairs {
    count: u64,
    packed: Blob,
}

impl Pairs {
    pub fn push(&mut self, first: &[u8], second: &[u8]) {
        write_length(&mut self.packed.0, first.len());
        self.packed.0.extend_from_slice(first);
        write_length(&mut self.packed.0, second.len());
        self.packed.0.extend_from_slice(second);
        self.count += 1;
    }

    /// The pairs in order; an error for a buffer that does not hold `count` whole pairs.
    pub fn iter(&self) -> PairsIter<'_> {
        PairsIter {
            rest: &self.packed.0,
            left: self.count,
        }
    }
}

pub struct PairsIter<'a> {
    rest: &'a [u8],
    left: u64,
}

impl<'a> Iterator for PairsIter<'a> {
    type Item = Result<(&'a [u8], &'a [u8]), &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            // Reported once: the iterator ends after it.
            let trailing = !std::mem::take(&mut self.rest).is_empty();
            return trailing.then_some(Err("bytes follow the last pair"));
        }
        self.left -= 1;
        let mut half = || -> Result<&'a [u8], &'static str> {
            let length = read_length(&mut self.rest).ok_or("a length is cut short")?;
            if self.rest.len() < length {
                return Err("a pair is cut short");
            }
            let (bytes, rest) = self.rest.split_at(length);
            self.rest = rest;
            Ok(bytes)
        };
        let pair = half().and_then(|first| Ok((first, half()?)));
        if pair.is_err() {
            self.left = 0;
            self.rest = &[];
        }
        Some(pair)
    }
}

fn write_length(out: &mut Vec<u8>, mut length: usize) {
    loop {
        let byte = (length & 0x7f) as u8;
        length >>= 7;
        if length == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn read_length(bytes: &mut &[u8]) -> Option<usize> {
    let mut length = 0usize;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        length |= usize::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(length);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_read_back_in_order_and_a_cut_buffer_is_an_error() {
        let mut pairs = Pairs::default();
        let long = vec![7u8; 300];
        pairs.push(b"a", b"");
        pairs.push(&long, b"xyz");
        pairs.push(b"k", b"v");
        let read: Vec<_> = pairs.iter().collect::<Result<_, _>>().unwrap();
        assert_eq!(
            read,
            [
                (&b"a"[..], &b""[..]),
                (&long[..], &b"xyz"[..]),
                (b"k", b"v")
            ]
        );

        let bytes = postcard::to_stdvec(&pairs).unwrap();
        let back: Pairs = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.iter().count(), 3);
        let mut cut = back;
        cut.packed.0.truncate(cut.packed.0.len() - 1);
        assert!(cut.iter().any(|pair| pair.is_err()));
        // Bytes after the last pair: one error, then the end.
        let mut longer: Pairs = postcard::from_bytes(&bytes).unwrap();
        longer.packed.0.push(0);
        let read: Vec<_> = longer.iter().collect();
        assert_eq!(read.len(), 4);
        assert!(read[..3].iter().all(Result::is_ok) && read[3].is_err());
    }
}
