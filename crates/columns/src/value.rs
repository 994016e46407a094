//! Value types a column can hold and the unsigned "lane" each is processed as.
//!
//! Every scheme works on lanes: the value's bits reinterpreted as an unsigned integer of the
//! same width (`i32`, `u32`, `f32` → `u32`; `i64`, `u64`, `f64` → `u64`). Decoders write lanes
//! straight into the caller's `[T]` because `T` and its lane have identical size, alignment and
//! every bit pattern is valid for both. Order-dependent statistics (min, max, frame of
//! reference) compare *keys*: the lane with its top bit flipped for signed integers, so that a
//! block of small negative and positive numbers has a small range; unsigned integers and float
//! bit patterns compare as plain unsigned lanes (floats get their decimal structure from ALP).

use std::fmt::Debug;
use std::hash::Hash;

/// The value type stored in a column's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ValueType {
    I32 = 1,
    I64 = 2,
    U32 = 3,
    U64 = 4,
    F32 = 5,
    F64 = 6,
}

impl ValueType {
    /// The header code of this type.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The type with header code `code`, if any.
    pub fn from_code(code: u8) -> Option<ValueType> {
        Some(match code {
            1 => ValueType::I32,
            2 => ValueType::I64,
            3 => ValueType::U32,
            4 => ValueType::U64,
            5 => ValueType::F32,
            6 => ValueType::F64,
            _ => return None,
        })
    }

    /// Lower-case Rust name of the type (`"i32"`, `"f64"`, ...), also numpy's kind + bits.
    pub fn name(self) -> &'static str {
        match self {
            ValueType::I32 => "i32",
            ValueType::I64 => "i64",
            ValueType::U32 => "u32",
            ValueType::U64 => "u64",
            ValueType::F32 => "f32",
            ValueType::F64 => "f64",
        }
    }

    /// Bytes per value.
    pub fn width(self) -> usize {
        match self {
            ValueType::I32 | ValueType::U32 | ValueType::F32 => 4,
            _ => 8,
        }
    }
}

mod sealed {
    pub trait Sealed {}
    pub trait SealedValue {}
}

/// The unsigned integer every scheme processes (`u32` or `u64`).
pub trait Lane:
    fastlanes::BitPacking
    + fastlanes::FoR
    + Copy
    + Ord
    + Eq
    + Hash
    + Default
    + Debug
    + Send
    + Sync
    + 'static
    + sealed::Sealed
{
    /// The unsigned integer value type of this width (`u32`/`u64`), for parts of a block
    /// stored as plain lanes (the low bits of split floats).
    #[doc(hidden)]
    type Unsigned: ColumnValue<Lane = Self>;
    #[doc(hidden)]
    const BITS: u32;
    #[doc(hidden)]
    const BYTES: usize;
    #[doc(hidden)]
    const TOP_BIT: Self;
    #[doc(hidden)]
    fn to_u64(self) -> u64;
    #[doc(hidden)]
    fn truncate_u64(value: u64) -> Self;
    #[doc(hidden)]
    fn wrapping_add_(self, other: Self) -> Self;
    #[doc(hidden)]
    fn wrapping_sub_(self, other: Self) -> Self;
    #[doc(hidden)]
    fn xor(self, other: Self) -> Self;
    #[doc(hidden)]
    fn bits_needed(self) -> u32;
}

macro_rules! impl_lane {
    ($t:ty) => {
        impl sealed::Sealed for $t {}
        impl Lane for $t {
            type Unsigned = $t;
            const BITS: u32 = <$t>::BITS;
            const BYTES: usize = std::mem::size_of::<$t>();
            const TOP_BIT: Self = 1 << (<$t>::BITS - 1);
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn truncate_u64(value: u64) -> Self {
                value as $t
            }
            #[inline(always)]
            fn wrapping_add_(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn wrapping_sub_(self, other: Self) -> Self {
                self.wrapping_sub(other)
            }
            #[inline(always)]
            fn xor(self, other: Self) -> Self {
                self ^ other
            }
            #[inline(always)]
            fn bits_needed(self) -> u32 {
                <$t>::BITS - self.leading_zeros()
            }
        }
    };
}
impl_lane!(u32);
impl_lane!(u64);

/// A value type a column can hold: `i32`, `i64`, `u32`, `u64`, `f32`, `f64`.
pub trait ColumnValue:
    Copy
    + Default
    + Debug
    + PartialEq
    + Send
    + Sync
    + 'static
    + pco::data_types::Number
    + sealed::SealedValue
{
    /// The unsigned integer of the same width.
    type Lane: Lane;
    /// The header code of this type.
    const VALUE_TYPE: ValueType;
    #[doc(hidden)]
    const SIGNED: bool;
    #[doc(hidden)]
    const FLOAT: bool;
    #[doc(hidden)]
    fn to_lane(self) -> Self::Lane;
    #[doc(hidden)]
    fn from_lane(lane: Self::Lane) -> Self;
    #[doc(hidden)]
    fn to_f64(self) -> f64;
    #[doc(hidden)]
    fn from_f64(value: f64) -> Self;
    /// pco's standalone decompression into `out`. Not generic, so that pco's (generic)
    /// decoder is compiled in this crate at this crate's opt-level, whichever crate calls a
    /// column's generic `decode` (docs/decisions.md, "The SLP vectoriser stays on, but not for
    /// the column kernels").
    #[doc(hidden)]
    fn pco_decompress_into(bytes: &[u8], out: &mut [Self])
        -> pco::errors::PcoResult<pco::Progress>;
}

macro_rules! impl_value {
    ($t:ty, $lane:ty, $vt:expr, $signed:expr, $float:expr, $to:expr, $from:expr) => {
        impl sealed::SealedValue for $t {}
        impl ColumnValue for $t {
            type Lane = $lane;
            const VALUE_TYPE: ValueType = $vt;
            const SIGNED: bool = $signed;
            const FLOAT: bool = $float;
            #[inline(always)]
            fn to_lane(self) -> $lane {
                ($to)(self)
            }
            #[inline(always)]
            fn from_lane(lane: $lane) -> Self {
                ($from)(lane)
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(value: f64) -> Self {
                value as $t
            }
            #[inline(never)]
            fn pco_decompress_into(
                bytes: &[u8],
                out: &mut [$t],
            ) -> pco::errors::PcoResult<pco::Progress> {
                pco::standalone::simple_decompress_into(bytes, out)
            }
        }
    };
}
impl_value!(
    i32,
    u32,
    ValueType::I32,
    true,
    false,
    |v: i32| v as u32,
    |l: u32| l as i32
);
impl_value!(
    i64,
    u64,
    ValueType::I64,
    true,
    false,
    |v: i64| v as u64,
    |l: u64| l as i64
);
impl_value!(
    u32,
    u32,
    ValueType::U32,
    false,
    false,
    |v: u32| v,
    |l: u32| l
);
impl_value!(
    u64,
    u64,
    ValueType::U64,
    false,
    false,
    |v: u64| v,
    |l: u64| l
);
impl_value!(
    f32,
    u32,
    ValueType::F32,
    false,
    true,
    |v: f32| v.to_bits(),
    f32::from_bits
);
impl_value!(
    f64,
    u64,
    ValueType::F64,
    false,
    true,
    |v: f64| v.to_bits(),
    f64::from_bits
);

/// The key that orders lanes of `T` (signed integers get their top bit flipped).
#[inline(always)]
pub(crate) fn order_key<T: ColumnValue>(lane: T::Lane) -> T::Lane {
    if T::SIGNED {
        lane.xor(T::Lane::TOP_BIT)
    } else {
        lane
    }
}

/// Views values as their lanes.
pub(crate) fn as_lanes<T: ColumnValue>(values: &[T]) -> &[T::Lane] {
    const { assert!(std::mem::size_of::<T>() == std::mem::size_of::<T::Lane>()) };
    const { assert!(std::mem::align_of::<T>() == std::mem::align_of::<T::Lane>()) };
    // SAFETY: T and T::Lane have the same size and alignment (checked above at compile time)
    // and every bit pattern is a valid value of both (plain integers and IEEE floats).
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), values.len()) }
}

/// Views an output buffer of values as lanes, so decoders write lanes in place.
pub(crate) fn as_lanes_mut<T: ColumnValue>(values: &mut [T]) -> &mut [T::Lane] {
    const { assert!(std::mem::size_of::<T>() == std::mem::size_of::<T::Lane>()) };
    const { assert!(std::mem::align_of::<T>() == std::mem::align_of::<T::Lane>()) };
    // SAFETY: as in `as_lanes`; the exclusive borrow is carried over to the result.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), values.len()) }
}
