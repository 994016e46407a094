//! The values a YT scalar type holds, for the schema formats' serde paths (Thrift, JSON):
//! an integer type's range and whether a double fits a `float` column. A leaf: it imports
//! nothing of the crate.

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
