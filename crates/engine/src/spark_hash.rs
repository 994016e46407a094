//! `spark_hash(col, ...)`: Apache Spark's SQL `hash`, so that a query grouping by it here groups
//! rows exactly as Spark does (the DataFusion Comet vs Spark study's Q2).
//!
//! Spark's `hash` is Murmur3 x86 32-bit, seed 42, chained over the arguments: each argument is
//! hashed with the previous argument's hash as its seed, and a null leaves the hash unchanged.
//! Per type, as Spark's `Murmur3HashFunction` and `Murmur3_x86_32` do it:
//! - int8/16/32, date, boolean (1 or 0): `hashInt`, one 4-byte block, length 4;
//! - int64, timestamp (as Spark holds it, microseconds), double (its IEEE bits, -0.0 as 0.0,
//!   every NaN as the canonical one): `hashLong`, low word then high word, length 8;
//! - float: `hashInt` of its bits (same normalisations);
//! - strings and binaries: `hashUnsafeBytes`, 4-byte little-endian blocks, then *each
//!   remaining byte mixed as a whole block* (sign-extended): Spark's own variant, which differs
//!   from reference Murmur3 on lengths that are not multiples of 4.
//!
//! DataFusion 55 and its `datafusion-spark` crate have no such function (that crate has
//! xxhash64, crc32 and the SHA family), hence this one. Types Spark hashes in other ways
//! (decimals, nested types) are refused with their name rather than hashed differently.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int32Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimeUnit, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// Spark's seed for `hash`.
pub const SPARK_HASH_SEED: u32 = 42;

/// The `spark_hash` function, ready to register.
pub fn spark_hash_udf() -> ScalarUDF {
    ScalarUDF::new_from_impl(SparkHash {
        signature: Signature::variadic_any(Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct SparkHash {
    signature: Signature,
}

impl ScalarUDFImpl for SparkHash {
    fn name(&self) -> &str {
        "spark_hash"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        if arg_types.is_empty() {
            return plan_err!("spark_hash needs at least one argument");
        }
        for data_type in arg_types {
            if !hashable(data_type) {
                return plan_err!("spark_hash: Spark's hash of {data_type} is not supported here");
            }
        }
        Ok(DataType::Int32)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let mut hashes = vec![SPARK_HASH_SEED; args.number_rows];
        for arg in &args.args {
            let array = arg.to_array(args.number_rows)?;
            hash_into(&array, &mut hashes)?;
        }
        let signed: Int32Array = hashes.into_iter().map(|h| h as i32).collect();
        Ok(ColumnarValue::Array(Arc::new(signed)))
    }
}

fn hashable(data_type: &DataType) -> bool {
    match data_type {
        DataType::Dictionary(_, values) => hashable(values),
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Float32
        | DataType::Float64
        | DataType::Date32
        | DataType::Timestamp(_, _)
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => true,
        _ => false,
    }
}

/// Folds one argument column into the running hashes (a null leaves its row's hash as is).
fn hash_into(array: &ArrayRef, hashes: &mut [u32]) -> Result<()> {
    match array.data_type() {
        DataType::Null => {}
        DataType::Dictionary(_, values) => {
            let plain = cast(array, values)?;
            hash_into(&plain, hashes)?;
        }
        DataType::Boolean => {
            let a = array.as_boolean();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_int(a.value(row) as u32, h)
            });
        }
        DataType::Int8 => {
            let a = array.as_primitive::<Int8Type>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_int(a[row] as i32 as u32, h)
            });
        }
        DataType::Int16 => {
            let a = array.as_primitive::<Int16Type>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_int(a[row] as i32 as u32, h)
            });
        }
        DataType::Int32 => {
            let a = array.as_primitive::<Int32Type>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| hash_int(a[row] as u32, h));
        }
        DataType::Date32 => {
            let a = array.as_primitive::<Date32Type>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| hash_int(a[row] as u32, h));
        }
        DataType::Int64 => {
            let a = array.as_primitive::<Int64Type>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_long(a[row] as u64, h)
            });
        }
        // Spark keeps microseconds: other units are scaled (nanoseconds truncated) per row,
        // without a converted copy of the column.
        DataType::Timestamp(TimeUnit::Second, _) => {
            let a = array.as_primitive::<TimestampSecondType>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_long(a[row].wrapping_mul(1_000_000) as u64, h)
            });
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            let a = array.as_primitive::<TimestampMillisecondType>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_long(a[row].wrapping_mul(1_000) as u64, h)
            });
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            let a = array.as_primitive::<TimestampMicrosecondType>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_long(a[row] as u64, h)
            });
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            let a = array.as_primitive::<TimestampNanosecondType>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_long(a[row].div_euclid(1_000) as u64, h)
            });
        }
        DataType::Float32 => {
            let a = array.as_primitive::<Float32Type>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_int(float_bits(a[row]), h)
            });
        }
        DataType::Float64 => {
            let a = array.as_primitive::<Float64Type>().values();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_long(double_bits(a[row]), h)
            });
        }
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_bytes(a.value(row).as_bytes(), h)
            });
        }
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_bytes(a.value(row).as_bytes(), h)
            });
        }
        DataType::Utf8View => {
            let a = array.as_string_view();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_bytes(a.value(row).as_bytes(), h)
            });
        }
        DataType::Binary => {
            let a = array.as_binary::<i32>();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_bytes(a.value(row), h)
            });
        }
        DataType::LargeBinary => {
            let a = array.as_binary::<i64>();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_bytes(a.value(row), h)
            });
        }
        DataType::BinaryView => {
            let a = array.as_binary_view();
            fold_rows(array.as_ref(), hashes, &|row, h| {
                hash_bytes(a.value(row), h)
            });
        }
        other => return exec_err!("spark_hash: Spark's hash of {other} is not supported here"),
    }
    Ok(())
}

/// `hashes[row] = hash_row(row, hashes[row])` for every non-null row. Generic so that each
/// type's closure is inlined into its own loop (the null check leaves the loop when there are
/// no nulls).
#[inline]
fn fold_rows<F: Fn(usize, u32) -> u32>(array: &dyn Array, hashes: &mut [u32], hash_row: &F) {
    if array.null_count() == 0 {
        for (row, h) in hashes.iter_mut().enumerate() {
            *h = hash_row(row, *h);
        }
    } else {
        for (row, h) in hashes.iter_mut().enumerate() {
            if array.is_valid(row) {
                *h = hash_row(row, *h);
            }
        }
    }
}

/// Java's `floatToIntBits` after Spark's normalisation of -0.0.
fn float_bits(value: f32) -> u32 {
    if value == 0.0 {
        0
    } else if value.is_nan() {
        0x7fc0_0000
    } else {
        value.to_bits()
    }
}

/// Java's `doubleToLongBits` after Spark's normalisation of -0.0.
fn double_bits(value: f64) -> u64 {
    if value == 0.0 {
        0
    } else if value.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        value.to_bits()
    }
}

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline]
fn mix_k1(k1: u32) -> u32 {
    k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline]
fn mix_h1(h1: u32, k1: u32) -> u32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

#[inline]
fn fmix(h1: u32, length: u32) -> u32 {
    let mut h = h1 ^ length;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Spark's `Murmur3_x86_32.hashInt`.
pub fn hash_int(value: u32, seed: u32) -> u32 {
    fmix(mix_h1(seed, mix_k1(value)), 4)
}

/// Spark's `Murmur3_x86_32.hashLong`.
pub fn hash_long(value: u64, seed: u32) -> u32 {
    let h1 = mix_h1(seed, mix_k1(value as u32));
    fmix(mix_h1(h1, mix_k1((value >> 32) as u32)), 8)
}

/// Spark's `Murmur3_x86_32.hashUnsafeBytes` (its tail: one mixed block per remaining byte).
pub fn hash_bytes(bytes: &[u8], seed: u32) -> u32 {
    let mut blocks = bytes.chunks_exact(4);
    let mut h1 = seed;
    for block in &mut blocks {
        h1 = mix_h1(h1, mix_k1(u32::from_le_bytes(block.try_into().unwrap())));
    }
    for &byte in blocks.remainder() {
        h1 = mix_h1(h1, mix_k1(byte as i8 as i32 as u32));
    }
    fmix(h1, bytes.len() as u32)
}
