//! The values a YT scalar type holds, for the schema formats' serde paths (Thrift, JSON,
//! Protobuf): an integer type's range, whether a double fits a `float` column, and the serde
//! integer methods that widen every integer to the `i64`/`u64` a range checks. A leaf: it
//! imports nothing of the crate.

use shapeshift_types::{signed_range, unsigned_max, PrimitiveType};

/// The values an integer type holds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Range {
    Signed(i64, i64),
    Unsigned(u64),
}

impl Range {
    /// The range of integer (or date) type `p`; the whole of `i64` for a type without one.
    pub fn of(p: PrimitiveType) -> Range {
        match (signed_range(p), unsigned_max(p)) {
            (Some((lo, hi)), _) => Range::Signed(lo, hi),
            (_, Some(max)) => Range::Unsigned(max),
            _ => Range::Signed(i64::MIN, i64::MAX),
        }
    }

    #[inline]
    pub fn holds_signed(self, v: i64) -> bool {
        match self {
            Range::Signed(lo, hi) => lo <= v && v <= hi,
            Range::Unsigned(max) => v >= 0 && v as u64 <= max,
        }
    }

    #[inline]
    pub fn holds_unsigned(self, v: u64) -> bool {
        match self {
            Range::Signed(_, hi) => v <= hi as u64,
            Range::Unsigned(max) => v <= max,
        }
    }
}

/// Whether `v` is a value of a `float` column (`narrow`) or of a `double` one: finite
/// values beyond f32's range do not fit a `float`.
#[inline]
pub(crate) fn fits_float(v: f64, narrow: bool) -> bool {
    !narrow || !v.is_finite() || v.abs() <= f64::from(f32::MAX)
}

/// The f32 a number read for a `float` column names (rounded to nearest), `None` for a
/// finite number that rounds beyond f32's range. Text formats need the rounding: the
/// shortest spelling of `f32::MAX`, "3.4028235e38", reads as an f64 just above it.
#[inline]
pub(crate) fn read_float(v: f64) -> Option<f32> {
    let narrow = v as f32;
    (narrow.is_finite() || !v.is_finite()).then_some(narrow)
}

/// The integer methods of a schema format's `Serializer` (`i8` to `u128`): each widens its
/// value to `i64` or `u64` and hands it to the slot's `$signed` / `$unsigned` method, which
/// checks it against the column's range; 128-bit values outside both are a `mismatch`.
/// `$attr` goes on the eight narrow methods (Protobuf inlines its fast paths into the
/// caller). Expands where `self.present()`, `mismatch` and `SerdeError` are the format's own
/// (Thrift, Protobuf).
macro_rules! integers_through {
    ($signed:ident, $unsigned:ident $(, #[$attr:meta])?) => {
        $(#[$attr])?
        fn serialize_i8(self, v: i8) -> Result<(), SerdeError> {
            self.$signed(v.into())
        }

        $(#[$attr])?
        fn serialize_i16(self, v: i16) -> Result<(), SerdeError> {
            self.$signed(v.into())
        }

        $(#[$attr])?
        fn serialize_i32(self, v: i32) -> Result<(), SerdeError> {
            self.$signed(v.into())
        }

        $(#[$attr])?
        fn serialize_i64(self, v: i64) -> Result<(), SerdeError> {
            self.$signed(v)
        }

        fn serialize_i128(self, v: i128) -> Result<(), SerdeError> {
            if let Ok(small) = i64::try_from(v) {
                return self.$signed(small);
            }
            if let Ok(large) = u64::try_from(v) {
                return self.$unsigned(large);
            }
            Err(mismatch(&format!("integer {v}"), self.present()?.ty))
        }

        $(#[$attr])?
        fn serialize_u8(self, v: u8) -> Result<(), SerdeError> {
            self.$unsigned(v.into())
        }

        $(#[$attr])?
        fn serialize_u16(self, v: u16) -> Result<(), SerdeError> {
            self.$unsigned(v.into())
        }

        $(#[$attr])?
        fn serialize_u32(self, v: u32) -> Result<(), SerdeError> {
            self.$unsigned(v.into())
        }

        $(#[$attr])?
        fn serialize_u64(self, v: u64) -> Result<(), SerdeError> {
            self.$unsigned(v)
        }

        fn serialize_u128(self, v: u128) -> Result<(), SerdeError> {
            if let Ok(narrow) = u64::try_from(v) {
                return self.$unsigned(narrow);
            }
            Err(mismatch(&format!("integer {v}"), self.present()?.ty))
        }
    };
}

pub(crate) use integers_through;
