//! Between owned [`Value`]s and the row convention of the common interface (see the
//! [`table`](super) docs): which columns are scalars, which travel as binary YSON, and the
//! checks a borrowed value passes before a sink writes it.

use shapeshift_types::{
    check_decimal_binary, check_value, value_from_node, PrimitiveType, TableSchema, Type,
    TypeError, Value, ValueRef,
};

use super::row_refs::RefsBuffer;
use super::yson_binary;

/// How a column's values travel in a [`ValueRef`] row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ColumnKind {
    /// A primitive or decimal, or an optional of one: `Null` or the scalar.
    Scalar,
    /// `yson` or `optional<yson>`: `Null` or `Any(binary YSON)`.
    Yson,
    /// Everything else: `Null` (for an absent optional) or `Composite(binary YSON)`.
    Composite,
}

impl ColumnKind {
    pub(crate) fn of(ty: &Type) -> ColumnKind {
        match ty.untagged() {
            Type::Primitive(PrimitiveType::Yson) => ColumnKind::Yson,
            Type::Primitive(_) | Type::Decimal { .. } => ColumnKind::Scalar,
            Type::Optional(item) => match item.untagged() {
                Type::Primitive(PrimitiveType::Yson) => ColumnKind::Yson,
                Type::Primitive(PrimitiveType::Null | PrimitiveType::Void) => ColumnKind::Composite,
                Type::Primitive(_) | Type::Decimal { .. } => ColumnKind::Scalar,
                _ => ColumnKind::Composite,
            },
            _ => ColumnKind::Composite,
        }
    }
}

/// The kinds of every column of `schema`.
pub(crate) fn column_kinds(schema: &TableSchema) -> Vec<ColumnKind> {
    schema
        .columns
        .iter()
        .map(|c| ColumnKind::of(&c.ty))
        .collect()
}

/// The owned value of a borrowed one, checked against its column type `ty`.
///
/// # Errors
/// A [`TypeError`] when the value does not fit `ty` (wrong kind, out of range, invalid
/// UTF-8, malformed YSON in a composite, ...).
pub fn value_from_ref(value: ValueRef<'_>, ty: &Type) -> Result<Value, TypeError> {
    let owned = match value {
        ValueRef::Null => Value::Null,
        ValueRef::Bool(v) => Value::Bool(v),
        ValueRef::Int64(v) => Value::Int64(v),
        ValueRef::Uint64(v) => Value::Uint64(v),
        ValueRef::Double(v) => Value::Double(v),
        ValueRef::String(v) => Value::String(v.to_vec()),
        ValueRef::Composite(bytes) | ValueRef::Any(bytes) => {
            let node = crate::yson::from_slice(bytes)
                .map_err(|e| TypeError::new("", format!("composite value: {e}")))?;
            return value_from_node(&node, ty);
        }
    };
    check_value(&owned, ty)?;
    Ok(owned)
}

/// Checks a borrowed scalar (or null) against its column type without allocating;
/// composites are checked by decoding them ([`value_from_ref`]).
///
/// # Errors
/// As [`value_from_ref`].
pub(crate) fn check_ref(value: ValueRef<'_>, ty: &Type) -> Result<(), TypeError> {
    let scalar = match value {
        ValueRef::Null => Value::Null,
        ValueRef::Bool(v) => Value::Bool(v),
        ValueRef::Int64(v) => Value::Int64(v),
        ValueRef::Uint64(v) => Value::Uint64(v),
        ValueRef::Double(v) => Value::Double(v),
        ValueRef::String(bytes) => return check_string(bytes, ty),
        ValueRef::Composite(_) | ValueRef::Any(_) => {
            return value_from_ref(value, ty).map(|_| ());
        }
    };
    check_value(&scalar, ty)
}

fn check_string(bytes: &[u8], ty: &Type) -> Result<(), TypeError> {
    let ty = match ty.untagged() {
        Type::Optional(item) => item.untagged(),
        other => other,
    };
    let wrong = |what: &str| Err(TypeError::new("", what.to_owned()));
    match ty {
        Type::Primitive(PrimitiveType::String) => Ok(()),
        Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json) => {
            if std::str::from_utf8(bytes).is_ok() {
                Ok(())
            } else {
                wrong("expected UTF-8 text, found invalid UTF-8")
            }
        }
        Type::Primitive(PrimitiveType::Uuid) => {
            if bytes.len() == 16 {
                Ok(())
            } else {
                wrong("expected a uuid of 16 bytes")
            }
        }
        Type::Decimal { precision, scale } => check_decimal_binary(bytes, *precision, *scale),
        _ => wrong(&format!("a string does not fit type {ty:?}")),
    }
}

/// Borrowed rows of owned values: turns `&[Value]` into the `&[ValueRef]` convention of the
/// common interface, writing composite values as binary YSON into a reused buffer.
#[derive(Default)]
pub struct OwnedRefs {
    scratch: Vec<u8>,
    spans: Vec<(usize, usize)>,
    kinds: Vec<ColumnKind>,
    refs: RefsBuffer,
}

impl OwnedRefs {
    pub fn new() -> OwnedRefs {
        OwnedRefs::default()
    }

    /// The refs of `values`, a row of `schema`.
    ///
    /// # Errors
    /// A [`TypeError`] naming the column when a composite value does not fit its type, or
    /// when the row has the wrong number of values.
    pub fn refs<'a>(
        &'a mut self,
        values: &'a [Value],
        schema: &TableSchema,
    ) -> Result<&'a [ValueRef<'a>], TypeError> {
        if values.len() != schema.columns.len() {
            return Err(TypeError::new(
                "",
                format!(
                    "the row has {} values for {} columns",
                    values.len(),
                    schema.columns.len()
                ),
            ));
        }
        self.scratch.clear();
        self.spans.clear();
        self.kinds.clear();
        for (value, column) in values.iter().zip(&schema.columns) {
            let kind = ColumnKind::of(&column.ty);
            let start = self.scratch.len();
            if kind != ColumnKind::Scalar && !matches!(value, Value::Null) {
                yson_binary::value(&mut self.scratch, value, &column.ty)
                    .map_err(|m| TypeError::new(column.name.clone(), m))?;
            }
            self.kinds.push(kind);
            self.spans.push((start, self.scratch.len()));
        }
        let scratch = &self.scratch;
        let refs = self.refs.loan();
        for ((value, &kind), &(start, end)) in values.iter().zip(&self.kinds).zip(&self.spans) {
            refs.push(match (value, kind) {
                (Value::Null, _) => ValueRef::Null,
                (Value::Bool(v), _) => ValueRef::Bool(*v),
                (Value::Int64(v), _) => ValueRef::Int64(*v),
                (Value::Uint64(v), _) => ValueRef::Uint64(*v),
                (Value::Double(v), _) => ValueRef::Double(*v),
                (Value::String(v), ColumnKind::Scalar) => ValueRef::String(v),
                (_, ColumnKind::Yson) => ValueRef::Any(&scratch[start..end]),
                _ => ValueRef::Composite(&scratch[start..end]),
            });
        }
        Ok(refs)
    }
}
