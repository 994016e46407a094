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

/// The owned values of a row of refs of `schema` (composite values decoded), each checked
/// against its column: for sinks that encode from owned values.
///
/// # Errors
/// A [`FormatError`](super::FormatError) of `format` in row `row` naming the column whose
/// value does not fit, or saying the row has the wrong number of values.
pub(crate) fn owned_row(
    format: &'static str,
    schema: &TableSchema,
    values: &[ValueRef<'_>],
    row: u64,
) -> Result<Vec<Value>, super::FormatError> {
    if values.len() != schema.columns.len() {
        return Err(super::FormatError::new(
            format,
            format!(
                "the schema has {} columns, the row has {} values",
                schema.columns.len(),
                values.len()
            ),
        )
        .in_row(row));
    }
    values
        .iter()
        .zip(&schema.columns)
        .map(|(v, c)| {
            value_from_ref(*v, &c.ty).map_err(|e| {
                super::FormatError::new(format, format!("column \"{}\": {e}", c.name)).in_row(row)
            })
        })
        .collect()
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

/// What a scalar column admits, compiled once per schema so a row's scalars are checked by a
/// comparison or two instead of a walk of the column type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ScalarRule {
    /// A signed integer type: `Int64` within `lo..=hi`.
    Signed {
        lo: i64,
        hi: i64,
    },
    /// An unsigned integer type: `Uint64` up to `hi`.
    Unsigned {
        hi: u64,
    },
    Double,
    /// `float`: a double whose finite magnitude fits an `f32`.
    Float,
    Bool,
    /// `string`: any bytes.
    Bytes,
    /// `utf8`, `json`: valid UTF-8.
    Utf8,
    /// `uuid`: 16 bytes.
    Uuid,
    /// Decimals, `null`/`void` and composite columns: the general check.
    General,
}

/// A column's kind and scalar check, compiled once per table schema (see [`ScalarRule`]).
///
/// Every accepted value is one [`check_ref`] accepts (the rules are derived from the same
/// `check_value` bounds); everything else goes through [`check_ref`] itself, so errors read
/// the same whichever path found them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColumnCheck {
    pub(crate) kind: ColumnKind,
    pub(crate) nullable: bool,
    rule: ScalarRule,
}

impl ColumnCheck {
    pub(crate) fn new(ty: &Type) -> ColumnCheck {
        let kind = ColumnKind::of(ty);
        let scalar = match ty.untagged() {
            Type::Optional(item) => item.untagged(),
            other => other,
        };
        let rule = match (kind, scalar) {
            (ColumnKind::Scalar, Type::Primitive(p)) => ScalarRule::of(*p, scalar),
            _ => ScalarRule::General,
        };
        ColumnCheck {
            kind,
            nullable: ty.is_nullable(),
            rule,
        }
    }

    /// Checks a value a reader found for this column, with YT's integer leniency (a
    /// non-negative signed integer for an unsigned column and an in-range unsigned one for a
    /// signed column); returns the value as the row carries it.
    ///
    /// # Errors
    /// [`check_ref`]'s error when the value does not fit `ty`.
    #[inline]
    pub(crate) fn read<'a>(
        &self,
        value: ValueRef<'a>,
        ty: &Type,
    ) -> Result<ValueRef<'a>, TypeError> {
        let value = match (self.rule, value) {
            (ScalarRule::Unsigned { .. }, ValueRef::Int64(v)) if v >= 0 => {
                ValueRef::Uint64(v as u64)
            }
            (ScalarRule::Signed { .. }, ValueRef::Uint64(v)) if v <= i64::MAX as u64 => {
                ValueRef::Int64(v as i64)
            }
            _ => value,
        };
        self.write(value, ty).map(|()| value)
    }

    /// Checks a value a sink is given for this column (no leniency: the row convention says
    /// which scalar each column holds).
    ///
    /// # Errors
    /// [`check_ref`]'s error when the value does not fit `ty`.
    #[inline]
    pub(crate) fn write(&self, value: ValueRef<'_>, ty: &Type) -> Result<(), TypeError> {
        let fits = match (self.rule, value) {
            (_, ValueRef::Null) => self.nullable && self.kind == ColumnKind::Scalar,
            (ScalarRule::Signed { lo, hi }, ValueRef::Int64(v)) => lo <= v && v <= hi,
            (ScalarRule::Unsigned { hi }, ValueRef::Uint64(v)) => v <= hi,
            (ScalarRule::Double, ValueRef::Double(_)) | (ScalarRule::Bool, ValueRef::Bool(_)) => {
                true
            }
            (ScalarRule::Float, ValueRef::Double(v)) => {
                !(v.is_finite() && v.abs() > f64::from(f32::MAX))
            }
            (ScalarRule::Bytes, ValueRef::String(_)) => true,
            // core's check, not `crate::utf8::text`: that inlined here made JSON's row scan
            // (which inlines this method) 8% slower on BM1.
            (ScalarRule::Utf8, ValueRef::String(v)) => std::str::from_utf8(v).is_ok(),
            (ScalarRule::Uuid, ValueRef::String(v)) => v.len() == 16,
            _ => false,
        };
        if fits {
            Ok(())
        } else {
            check_ref(value, ty)
        }
    }

    /// The compiled scalar rule, for readers that inline a copy of it in their own hot loop
    /// (the YSON row scan) rather than compile the column type again.
    #[inline]
    pub(crate) fn rule(&self) -> ScalarRule {
        self.rule
    }

    /// The column holds text (`utf8`, `json`, or an optional of one): its strings are UTF-8
    /// once checked.
    #[inline]
    pub(crate) fn is_text(&self) -> bool {
        self.rule == ScalarRule::Utf8
    }

    /// [`ColumnCheck::write`] for an owned value: scalars by the compiled rule, composite
    /// values by `check_value`.
    ///
    /// # Errors
    /// `check_value`'s error when the value does not fit `ty`.
    #[inline]
    pub(crate) fn write_owned(&self, value: &Value, ty: &Type) -> Result<(), TypeError> {
        match scalar_ref(value) {
            Some(scalar) if self.kind == ColumnKind::Scalar => self.write(scalar, ty),
            _ => check_value(value, ty),
        }
    }
}

/// The borrowed form of an owned scalar or null; `None` for composite values.
#[inline]
pub(crate) fn scalar_ref(value: &Value) -> Option<ValueRef<'_>> {
    Some(match value {
        Value::Null => ValueRef::Null,
        Value::Bool(v) => ValueRef::Bool(*v),
        Value::Int64(v) => ValueRef::Int64(*v),
        Value::Uint64(v) => ValueRef::Uint64(*v),
        Value::Double(v) => ValueRef::Double(*v),
        Value::String(v) => ValueRef::String(v),
        _ => return None,
    })
}

impl ScalarRule {
    fn of(p: PrimitiveType, ty: &Type) -> ScalarRule {
        use PrimitiveType as P;
        let accepts = |value: Value| check_value(&value, ty).is_ok();
        match p {
            P::Bool => ScalarRule::Bool,
            P::Double => ScalarRule::Double,
            P::Float => ScalarRule::Float,
            P::String => ScalarRule::Bytes,
            P::Utf8 | P::Json => ScalarRule::Utf8,
            P::Uuid => ScalarRule::Uuid,
            _ if accepts(Value::Int64(0)) => {
                let (lo, hi) = signed_bounds(ty);
                ScalarRule::Signed { lo, hi }
            }
            _ if accepts(Value::Uint64(0)) => ScalarRule::Unsigned {
                hi: unsigned_bound(ty),
            },
            _ => ScalarRule::General,
        }
    }
}

/// The `Int64` range `check_value` accepts for `ty`, as `(lo, hi)`.
///
/// The bounds are check_value's own, found by bisection, so a compiled check can never accept
/// what the general check refuses, nor refuse what it accepts.
/// Each type's bounds are bisected once per process and remembered: the bisection makes
/// ~128 `check_value` calls whose refusals format error messages, which made opening a source
/// or sink (once per `dumps`/`loads` call from Python) cost up to hundreds of microseconds.
pub(crate) fn signed_bounds(ty: &Type) -> (i64, i64) {
    static KNOWN: BoundsCache<(i64, i64)> = BoundsCache::new();
    KNOWN.get_or_find(ty, || {
        let accepts = |value: Value| check_value(&value, ty).is_ok();
        let hi = bisect_u64(|v| v <= i64::MAX as u64 && accepts(Value::Int64(v as i64)));
        // `v as i64` of 2^63 is i64::MIN, its own negation.
        let below =
            bisect_u64(|v| v <= 1 << 63 && accepts(Value::Int64((v as i64).wrapping_neg())));
        ((below as i64).wrapping_neg(), hi as i64)
    })
}

/// The largest `Uint64` `check_value` accepts for `ty` (found and remembered as
/// [`signed_bounds`]).
pub(crate) fn unsigned_bound(ty: &Type) -> u64 {
    static KNOWN: BoundsCache<u64> = BoundsCache::new();
    KNOWN.get_or_find(ty, || {
        bisect_u64(|v| check_value(&Value::Uint64(v), ty).is_ok())
    })
}

/// Bounds found per type, shared by every thread; at most [`BoundsCache::LIMIT`] types are
/// kept (beyond that they are found again each time), so hostile schemas cannot grow it.
/// Looked up each time a sink or source compiles its schema (every one-row `dumps`), hence
/// hashbrown's hasher rather than SipHash over the whole type tree.
struct BoundsCache<B>(std::sync::Mutex<Option<hashbrown::HashMap<Type, B>>>);

impl<B: Copy> BoundsCache<B> {
    const LIMIT: usize = 1024;

    const fn new() -> Self {
        BoundsCache(std::sync::Mutex::new(None))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<hashbrown::HashMap<Type, B>>> {
        // A panic elsewhere cannot leave a half-written entry: inserts are single calls.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get_or_find(&self, ty: &Type, find: impl FnOnce() -> B) -> B {
        if let Some(bounds) = self.lock().as_ref().and_then(|known| known.get(ty)) {
            return *bounds;
        }
        let bounds = find();
        let mut known = self.lock();
        let known = known.get_or_insert_with(Default::default);
        if known.len() < Self::LIMIT {
            known.insert(ty.clone(), bounds);
        }
        bounds
    }
}

/// The largest `v` with `fits(v)`, for a `fits` true at 0 and true on a prefix of `u64`.
fn bisect_u64(fits: impl Fn(u64) -> bool) -> u64 {
    if fits(u64::MAX) {
        return u64::MAX;
    }
    // Invariant: fits(good), !fits(bad).
    let (mut good, mut bad) = (0u64, u64::MAX);
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if fits(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    good
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_rules_agree_with_check_value_at_the_bounds() {
        use PrimitiveType as P;
        for p in [
            P::Int8,
            P::Int16,
            P::Int32,
            P::Int64,
            P::Uint8,
            P::Uint16,
            P::Uint32,
            P::Uint64,
            P::Date,
            P::Datetime,
            P::Timestamp,
            P::Interval,
            P::Date32,
            P::Datetime64,
            P::Timestamp64,
            P::Interval64,
            P::Float,
            P::Double,
            P::Bool,
            P::String,
            P::Utf8,
            P::Uuid,
            P::Json,
            P::Null,
            P::Void,
        ] {
            for ty in [Type::Primitive(p), Type::optional(Type::Primitive(p))] {
                let check = ColumnCheck::new(&ty);
                let mut probes = vec![
                    ValueRef::Null,
                    ValueRef::Bool(true),
                    ValueRef::Double(1e300),
                    ValueRef::Double(f64::NAN),
                    ValueRef::Double(0.5),
                    ValueRef::String(b"\xff"),
                    ValueRef::String(b"0123456789abcdef"),
                    ValueRef::String(b"ok"),
                ];
                for bound in [
                    0u64,
                    1,
                    127,
                    128,
                    255,
                    256,
                    65535,
                    65536,
                    u32::MAX as u64,
                    u32::MAX as u64 + 1,
                    49673,
                    49674,
                    4291747200,
                    4291747199,
                    4291747200000000,
                    4291747199999999,
                    i64::MAX as u64,
                    u64::MAX,
                ] {
                    for delta in [0u64, 1] {
                        let v = bound.wrapping_sub(delta);
                        probes.push(ValueRef::Uint64(v));
                        probes.push(ValueRef::Int64(v as i64));
                        probes.push(ValueRef::Int64((v as i64).wrapping_neg()));
                    }
                }
                match check.rule {
                    ScalarRule::Signed { lo, hi } => {
                        for v in [lo, hi, lo.wrapping_sub(1), hi.wrapping_add(1)] {
                            probes.push(ValueRef::Int64(v));
                        }
                    }
                    ScalarRule::Unsigned { hi } => {
                        probes.push(ValueRef::Uint64(hi));
                        probes.push(ValueRef::Uint64(hi.wrapping_add(1)));
                    }
                    _ => {}
                }
                for probe in probes {
                    assert_eq!(
                        check.write(probe, &ty).is_ok(),
                        check_ref(probe, &ty).is_ok(),
                        "{ty:?} {probe:?}"
                    );
                }
            }
        }
    }
}

/// A scalar value, borrowed from a [`Value`] or a [`ValueRef`]: what sinks write a primitive
/// from, whichever kind of row they were given.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scalar<'a> {
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    String(&'a [u8]),
}

impl<'a> Scalar<'a> {
    /// The scalar of an owned value; `None` for null, composites and `yson`.
    pub(crate) fn of(value: &'a Value) -> Option<Scalar<'a>> {
        Some(match value {
            Value::Bool(v) => Scalar::Bool(*v),
            Value::Int64(v) => Scalar::Int64(*v),
            Value::Uint64(v) => Scalar::Uint64(*v),
            Value::Double(v) => Scalar::Double(*v),
            Value::String(bytes) => Scalar::String(bytes),
            _ => return None,
        })
    }

    /// The scalar of a borrowed value; `None` for null, composites and `yson`.
    pub(crate) fn of_ref(value: ValueRef<'a>) -> Option<Scalar<'a>> {
        Some(match value {
            ValueRef::Bool(v) => Scalar::Bool(v),
            ValueRef::Int64(v) => Scalar::Int64(v),
            ValueRef::Uint64(v) => Scalar::Uint64(v),
            ValueRef::Double(v) => Scalar::Double(v),
            ValueRef::String(bytes) => Scalar::String(bytes),
            _ => return None,
        })
    }

    /// The scalar's kind, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Scalar::Bool(_) => "bool",
            Scalar::Int64(_) => "int64",
            Scalar::Uint64(_) => "uint64",
            Scalar::Double(_) => "double",
            Scalar::String(_) => "string",
        }
    }

    /// The scalar as messages show it.
    pub(crate) fn show(&self) -> String {
        match self {
            Scalar::Bool(v) => v.to_string(),
            Scalar::Int64(v) => v.to_string(),
            Scalar::Uint64(v) => v.to_string(),
            Scalar::Double(v) => v.to_string(),
            Scalar::String(v) => format!("{:?}", String::from_utf8_lossy(v)),
        }
    }
}
