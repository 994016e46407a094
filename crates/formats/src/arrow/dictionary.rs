//! Dictionary encoding of a string column when a batch is cut: the writer builds plain
//! Binary/Utf8 columns row by row and turns a low-cardinality one into a dictionary of Int32
//! keys here, in one pass over its offsets and bytes.
//!
//! The distinct values are found through a `hashbrown::HashTable` of their keys, hashed by
//! hashbrown's default hasher (foldhash, randomly seeded per encoder, so a pathological
//! column does not collide the same way every batch); each distinct value's hash is kept so
//! growing never rehashes bytes and a probe compares bytes only on an equal hash.
//!
//! Invariants: keys are assigned in order of first appearance (the dictionary's values are
//! the distinct values in that order, as arrow-rs's dictionary builder orders them); a null
//! row gets key 0 under the column's own validity; the dictionary's values are slices of
//! the column's, so a Utf8 column's dictionary is valid UTF-8 (checked again by
//! `StringArray::try_new`, over the distinct values only).

use std::hash::BuildHasher;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, BinaryArray, DictionaryArray, Int32Array, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;
use hashbrown::{DefaultHashBuilder, HashTable};

/// A dictionary array (Int32 keys) of the same values as `array`, a Binary or Utf8 array.
///
/// # Errors
/// When `array` is neither, or holds more distinct values than Int32 keys or offsets reach.
pub(super) fn encode(array: &ArrayRef) -> Result<ArrayRef, String> {
    let (offsets, bytes, utf8): (&[i32], &[u8], bool) = match array.data_type() {
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            (a.value_offsets(), a.values().as_slice(), true)
        }
        DataType::Binary => {
            let a = array.as_binary::<i32>();
            (a.value_offsets(), a.values().as_slice(), false)
        }
        other => return Err(format!("dictionary encoding of {other}")),
    };
    let nulls = array.nulls().filter(|n| n.null_count() > 0);
    let mut distinct = Distinct::new();
    let mut keys = Vec::with_capacity(array.len());
    for i in 0..array.len() {
        if nulls.is_some_and(|n| n.is_null(i)) {
            keys.push(0);
            continue;
        }
        // Arrow's offsets ascend within the values (checked when the array was made).
        let value = &bytes[offsets[i] as usize..offsets[i + 1] as usize];
        keys.push(distinct.key_of(value)?);
    }
    let value_offsets = OffsetBuffer::new(ScalarBuffer::from(distinct.offsets));
    let value_bytes = Buffer::from_vec(distinct.bytes);
    let values: ArrayRef = if utf8 {
        Arc::new(StringArray::try_new(value_offsets, value_bytes, None).map_err(|e| e.to_string())?)
    } else {
        Arc::new(BinaryArray::try_new(value_offsets, value_bytes, None).map_err(|e| e.to_string())?)
    };
    let keys = Int32Array::new(ScalarBuffer::from(keys), array.nulls().cloned());
    Ok(Arc::new(
        DictionaryArray::<Int32Type>::try_new(keys, values).map_err(|e| e.to_string())?,
    ))
}

/// The distinct values seen so far, by first appearance, and the table that finds them.
struct Distinct {
    hasher: DefaultHashBuilder,
    /// The keys of the distinct values, by their hashes.
    table: HashTable<u32>,
    /// The hash of each distinct value (by key).
    hashes: Vec<u64>,
    /// The distinct values as Arrow offsets and bytes.
    offsets: Vec<i32>,
    bytes: Vec<u8>,
}

impl Distinct {
    fn new() -> Distinct {
        Distinct {
            hasher: DefaultHashBuilder::default(),
            table: HashTable::with_capacity(64),
            hashes: Vec::new(),
            offsets: vec![0],
            bytes: Vec::new(),
        }
    }

    /// The key of `value`, added as the next key when it is new.
    #[inline]
    fn key_of(&mut self, value: &[u8]) -> Result<i32, String> {
        let hash = self.hasher.hash_one(value);
        let (hashes, offsets, bytes) = (&self.hashes, &self.offsets, &self.bytes);
        let found = self.table.find(hash, |&key| {
            let key = key as usize;
            hashes[key] == hash && &bytes[offsets[key] as usize..offsets[key + 1] as usize] == value
        });
        match found {
            Some(&key) => Ok(key as i32),
            None => self.insert(hash, value),
        }
    }

    #[cold]
    fn insert(&mut self, hash: u64, value: &[u8]) -> Result<i32, String> {
        let key = self.hashes.len();
        let id = i32::try_from(key)
            .ok()
            .filter(|k| *k < i32::MAX)
            .ok_or("more distinct values than Int32 dictionary keys")?;
        let end = i32::try_from(self.bytes.len() + value.len())
            .map_err(|_| "more than 2 GiB of distinct strings in one dictionary")?;
        self.bytes.extend_from_slice(value);
        self.offsets.push(end);
        self.hashes.push(hash);
        let hashes = &self.hashes;
        self.table
            .insert_unique(hash, id as u32, |&key| hashes[key as usize]);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::*;

    fn decoded(array: &ArrayRef) -> Vec<Option<Vec<u8>>> {
        let d = array.as_dictionary::<Int32Type>();
        let values = d.values();
        (0..d.len())
            .map(|i| {
                d.keys().is_valid(i).then(|| {
                    let k = d.keys().value(i) as usize;
                    match values.data_type() {
                        DataType::Utf8 => values.as_string::<i32>().value(k).as_bytes().to_vec(),
                        _ => values.as_binary::<i32>().value(k).to_vec(),
                    }
                })
            })
            .collect()
    }

    proptest! {
        /// Any column (few or many distinct values, nulls, empty strings, long ones) keeps
        /// its values, keys by first appearance, one dictionary entry per distinct value.
        #[test]
        fn encoding_keeps_every_value(
            rows in vec(proptest::option::of(vec(0u8..4, 0..20)), 0..300),
            utf8 in any::<bool>(),
        ) {
            let array: ArrayRef = if utf8 {
                let strings: Vec<Option<String>> = rows
                    .iter()
                    .map(|r| r.as_ref().map(|b| b.iter().map(|c| char::from(b'a' + c)).collect()))
                    .collect();
                Arc::new(StringArray::from(strings))
            } else {
                Arc::new(BinaryArray::from_iter(rows.iter().map(|r| r.as_deref())))
            };
            let encoded = encode(&array).unwrap();
            let expected: Vec<Option<Vec<u8>>> = if utf8 {
                rows.iter()
                    .map(|r| r.as_ref().map(|b| b.iter().map(|c| b'a' + c).collect()))
                    .collect()
            } else {
                rows.clone()
            };
            prop_assert_eq!(decoded(&encoded), expected.clone());
            let mut firsts: Vec<&Vec<u8>> = Vec::new();
            for v in expected.iter().flatten() {
                if !firsts.contains(&v) {
                    firsts.push(v);
                }
            }
            let d = encoded.as_dictionary::<Int32Type>();
            prop_assert_eq!(d.values().len(), firsts.len());
        }
    }

    #[test]
    fn thousands_of_distinct_values_grow_the_table() {
        let strings: Vec<String> = (0..5000).map(|i| format!("value {}", i % 3000)).collect();
        let array: ArrayRef = Arc::new(StringArray::from(strings.clone()));
        let encoded = encode(&array).unwrap();
        let d = encoded.as_dictionary::<Int32Type>();
        assert_eq!(d.values().len(), 3000);
        assert_eq!(d.keys().value(4000), 1000);
        let expected: Vec<Option<Vec<u8>>> = strings
            .iter()
            .map(|s| Some(s.as_bytes().to_vec()))
            .collect();
        assert_eq!(decoded(&encoded), expected);
    }

    #[test]
    fn other_arrays_are_refused() {
        let array: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        assert!(encode(&array).unwrap_err().contains("Int32"));
    }
}
