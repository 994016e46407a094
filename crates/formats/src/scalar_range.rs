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

/// The integer methods of a schema format's `Serializer` (`i8` to `u128`): each widens its
/// value to `i64` or `u64` and hands it to the present value's `int` / `uint`, which check it
/// against the column's range; 128-bit values outside both are a `mismatch`. Expands where
/// `self.present()`, `mismatch` and `SerdeError` are the format's own (Thrift, Protobuf).
macro_rules! integers_through_present {
    () => {
        fn serialize_i8(self, v: i8) -> Result<(), SerdeError> {
            self.present()?.int(v.into())
        }

        fn serialize_i16(self, v: i16) -> Result<(), SerdeError> {
            self.present()?.int(v.into())
        }

        fn serialize_i32(self, v: i32) -> Result<(), SerdeError> {
            self.present()?.int(v.into())
        }

        fn serialize_i64(self, v: i64) -> Result<(), SerdeError> {
            self.present()?.int(v)
        }

        fn serialize_i128(self, v: i128) -> Result<(), SerdeError> {
            let body = self.present()?;
            match (i64::try_from(v), u64::try_from(v)) {
                (Ok(v), _) => body.int(v),
                (_, Ok(v)) => body.uint(v),
                _ => Err(mismatch(&format!("integer {v}"), body.ty)),
            }
        }

        fn serialize_u8(self, v: u8) -> Result<(), SerdeError> {
            self.present()?.uint(v.into())
        }

        fn serialize_u16(self, v: u16) -> Result<(), SerdeError> {
            self.present()?.uint(v.into())
        }

        fn serialize_u32(self, v: u32) -> Result<(), SerdeError> {
            self.present()?.uint(v.into())
        }

        fn serialize_u64(self, v: u64) -> Result<(), SerdeError> {
            self.present()?.uint(v)
        }

        fn serialize_u128(self, v: u128) -> Result<(), SerdeError> {
            let body = self.present()?;
            match u64::try_from(v) {
                Ok(v) => body.uint(v),
                Err(_) => Err(mismatch(&format!("integer {v}"), body.ty)),
            }
        }
    };
}

pub(crate) use integers_through_present;
