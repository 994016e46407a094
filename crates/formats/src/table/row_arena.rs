//! Between owned values and the common interface's borrowed row views, for the formats whose
//! decoders build values (Protobuf, Arrow, Avro; Thrift pushes its scalars as it reads them
//! and its composite values as values).
//!
//! Invariants:
//! - A [`RowArena`] owns every byte a row view points into: strings are copied into one
//!   arena, composite values are written there as binary YSON (named struct form, YT's
//!   default). Views are built only by [`RowArena::views`], which borrows the buffer, so
//!   the arena cannot change while a view lives.
//! - [`owned_value`] is the inverse direction for sinks: a view of a column becomes the owned
//!   [`Value`] of the column's type, checked against it.

use std::ops::Range;

use shapeshift_types::{value_from_node, Type, Value, ValueRef};

use crate::table::FormatError;
use crate::yson;

/// Where one column's view comes from.
#[derive(Clone, Debug)]
enum Slot {
    Null,
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(Range<usize>),
    Composite(Range<usize>),
    Any(Range<usize>),
}

/// One decoded row: its values in an arena, viewed as [`ValueRef`]s.
#[derive(Debug, Default)]
pub(crate) struct RowArena {
    arena: Vec<u8>,
    slots: Vec<Slot>,
    /// Views into `arena`, valid only while `self` is borrowed (see [`RowArena::views`]).
    views: Vec<ValueRef<'static>>,
}

impl RowArena {
    pub(crate) fn clear(&mut self) {
        self.views.clear();
        self.slots.clear();
        self.arena.clear();
    }

    pub(crate) fn push_null(&mut self) {
        self.slots.push(Slot::Null);
    }

    pub(crate) fn push_bool(&mut self, v: bool) {
        self.slots.push(Slot::Bool(v));
    }

    pub(crate) fn push_int64(&mut self, v: i64) {
        self.slots.push(Slot::Int64(v));
    }

    pub(crate) fn push_uint64(&mut self, v: u64) {
        self.slots.push(Slot::Uint64(v));
    }

    pub(crate) fn push_double(&mut self, v: f64) {
        self.slots.push(Slot::Double(v));
    }

    pub(crate) fn push_string(&mut self, bytes: &[u8]) {
        let range = self.copy_in(bytes);
        self.slots.push(Slot::String(range));
    }

    /// Pushes a view as it is (its bytes copied into the arena), for a decoder that reads
    /// a column's value as a view and checks it by the column's compiled rule.
    pub(crate) fn push_ref(&mut self, value: ValueRef<'_>) {
        let slot = match value {
            ValueRef::Null => Slot::Null,
            ValueRef::Bool(v) => Slot::Bool(v),
            ValueRef::Int64(v) => Slot::Int64(v),
            ValueRef::Uint64(v) => Slot::Uint64(v),
            ValueRef::Double(v) => Slot::Double(v),
            ValueRef::String(v) => Slot::String(self.copy_in(v)),
            ValueRef::Composite(v) => Slot::Composite(self.copy_in(v)),
            ValueRef::Any(v) => Slot::Any(self.copy_in(v)),
        };
        self.slots.push(slot);
    }

    /// `bytes` appended to the arena: where they are.
    #[inline]
    fn copy_in(&mut self, bytes: &[u8]) -> std::ops::Range<usize> {
        let start = self.arena.len();
        self.arena.extend_from_slice(bytes);
        start..self.arena.len()
    }

    /// Pushes an owned value of a column of type `ty`: scalars as themselves, composite
    /// values and `yson` values as binary YSON.
    ///
    /// # Errors
    /// When `value` is not a value of `ty` (a decoder produced a wrong shape).
    pub(crate) fn push_value(
        &mut self,
        value: &Value,
        ty: &Type,
        format: &'static str,
    ) -> Result<(), FormatError> {
        match value {
            Value::Null => self.push_null(),
            Value::Bool(v) => self.push_bool(*v),
            Value::Int64(v) => self.push_int64(*v),
            Value::Uint64(v) => self.push_uint64(*v),
            Value::Double(v) => self.push_double(*v),
            Value::String(s) => self.push_string(s),
            Value::Any(_)
            | Value::Some(_)
            | Value::List(_)
            | Value::Tuple(_)
            | Value::Variant(..)
            | Value::Dict(_) => {
                // The type checker's errors (those `value_to_node` reports), then the bytes
                // written straight from the value (no node tree; the same bytes).
                let fail = |message: String| FormatError {
                    format,
                    offset: None,
                    row: None,
                    message: format!("decoded value does not fit its column: {message}"),
                };
                shapeshift_types::check_value(value, ty).map_err(|e| fail(e.to_string()))?;
                let start = self.arena.len();
                if let Err(e) = crate::table::yson_binary::value(&mut self.arena, value, ty) {
                    self.arena.truncate(start);
                    return Err(fail(e));
                }
                let range = start..self.arena.len();
                self.slots.push(if matches!(value, Value::Any(_)) {
                    Slot::Any(range)
                } else {
                    Slot::Composite(range)
                });
            }
        }
        Ok(())
    }

    /// The row's views, one per pushed value.
    pub(crate) fn views(&mut self) -> &[ValueRef<'_>] {
        self.views.clear();
        for slot in &self.slots {
            let view: ValueRef<'_> = match slot {
                Slot::Null => ValueRef::Null,
                Slot::Bool(v) => ValueRef::Bool(*v),
                Slot::Int64(v) => ValueRef::Int64(*v),
                Slot::Uint64(v) => ValueRef::Uint64(*v),
                Slot::Double(v) => ValueRef::Double(*v),
                Slot::String(r) => ValueRef::String(&self.arena[r.clone()]),
                Slot::Composite(r) => ValueRef::Composite(&self.arena[r.clone()]),
                Slot::Any(r) => ValueRef::Any(&self.arena[r.clone()]),
            };
            // SAFETY: the view borrows `self.arena`. It is stored with a widened lifetime but
            // only ever handed out through the slice returned here, whose lifetime is tied
            // to this `&mut self` borrow; the arena is modified only through `&mut self`
            // (after that borrow ends), and `views` is cleared before any reuse.
            // `ValueRef` has no destructor, so stale entries are never dereferenced.
            let view = unsafe { std::mem::transmute::<ValueRef<'_>, ValueRef<'static>>(view) };
            self.views.push(view);
        }
        &self.views
    }
}

/// The owned value of a column of type `ty` from its view, checked against the type.
///
/// # Errors
/// When the view is not a value of `ty` (wrong kind, malformed YSON, out of range).
pub(crate) fn owned_value(
    view: &ValueRef<'_>,
    ty: &Type,
    format: &'static str,
) -> Result<Value, FormatError> {
    let error = |message: String| FormatError {
        format,
        offset: None,
        row: None,
        message,
    };
    let value = match view {
        ValueRef::Null => Value::Null,
        ValueRef::Bool(v) => Value::Bool(*v),
        ValueRef::Int64(v) => Value::Int64(*v),
        ValueRef::Uint64(v) => Value::Uint64(*v),
        ValueRef::Double(v) => Value::Double(*v),
        ValueRef::String(s) => Value::String(s.to_vec()),
        ValueRef::Composite(bytes) | ValueRef::Any(bytes) => {
            let node = yson::from_slice(bytes)
                .map_err(|e| error(format!("malformed YSON of a composite value: {e}")))?;
            return value_from_node(&node, ty).map_err(|e| error(e.to_string()));
        }
    };
    shapeshift_types::check_value(&value, ty).map_err(|e| error(e.to_string()))?;
    Ok(value)
}

/// Checks that an owned row has one value per column and that each fits its column.
///
/// # Errors
/// The first value that does not fit, naming its column.
pub(crate) fn check_row(
    values: &[Value],
    schema: &shapeshift_types::TableSchema,
    format: &'static str,
) -> Result<(), FormatError> {
    if values.len() != schema.columns.len() {
        return Err(FormatError {
            format,
            offset: None,
            row: None,
            message: format!(
                "row has {} values, the schema {} columns",
                values.len(),
                schema.columns.len()
            ),
        });
    }
    for (value, column) in values.iter().zip(&schema.columns) {
        shapeshift_types::check_value(value, &column.ty).map_err(|e| FormatError {
            format,
            offset: None,
            row: None,
            message: format!("column {:?}: {e}", column.name),
        })?;
    }
    Ok(())
}
