//! Where one value of a row scanned in place lives: scalars by value, bytes as a span of the
//! input (borrowed as they are) or of a per-row scratch (decoded or transcoded there). The
//! in-place readers (YSON's and JSON's scans) fill cells, then lend them as [`ValueRef`]s.

use shapeshift_types::ValueRef;

/// Bytes of a value: in the input, or in the row's scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) in_scratch: bool,
}

impl Span {
    #[inline(always)]
    pub(crate) fn in_input(start: usize, end: usize) -> Span {
        Span {
            start,
            end,
            in_scratch: false,
        }
    }

    #[inline(always)]
    pub(crate) fn in_scratch(start: usize, end: usize) -> Span {
        Span {
            start,
            end,
            in_scratch: true,
        }
    }

    #[inline(always)]
    pub(crate) fn bytes<'a>(self, input: &'a [u8], scratch: &'a [u8]) -> &'a [u8] {
        let bytes = if self.in_scratch { scratch } else { input };
        &bytes[self.start..self.end]
    }
}

/// Where one value of a scanned row lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Cell {
    Null,
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(Span),
    /// Binary YSON of a composite value.
    Composite(Span),
    /// Binary YSON of a `yson` value.
    Any(Span),
}

impl Cell {
    #[inline(always)]
    pub(crate) fn to_ref<'a>(self, input: &'a [u8], scratch: &'a [u8]) -> ValueRef<'a> {
        match self {
            Cell::Null => ValueRef::Null,
            Cell::Bool(v) => ValueRef::Bool(v),
            Cell::Int64(v) => ValueRef::Int64(v),
            Cell::Uint64(v) => ValueRef::Uint64(v),
            Cell::Double(v) => ValueRef::Double(v),
            Cell::String(span) => ValueRef::String(span.bytes(input, scratch)),
            Cell::Composite(span) => ValueRef::Composite(span.bytes(input, scratch)),
            Cell::Any(span) => ValueRef::Any(span.bytes(input, scratch)),
        }
    }
}
