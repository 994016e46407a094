//! The row streams of the common interface for both Protobuf formats: a table schema
//! compiled to a per-field table, read straight into borrowed views and written straight
//! from values, in YT's framing.
//!
//! # Reading
//! A row message is decoded in one pass into the row's [`ValueRef`]s: column `i` is field
//! `i + 1`, so the field number indexes the [`FieldTable`] directly. Scalars (integers,
//! floats, bools, strings, and optionals of them) become views at once — strings borrow the
//! message bytes, nothing is copied — and are checked by the column's compiled
//! [`ColumnCheck`] (ranges of narrow integers and dates, UTF-8, uuid length). Composite
//! columns are decoded through their [`Plan`] into a reused owned value and written as
//! binary YSON into the row's arena after the message is read, because protobuf merges
//! repeated occurrences of a field (a list's elements may be spread over the message).
//!
//! Invariants of the view row while a message is read:
//! - `refs.len()` is the number of columns placed so far; fields arriving in order (the
//!   common case: every writer writes them so) are pushed, a field past the end first pads
//!   the gap with the columns' missing values, an earlier field overwrites its slot (the
//!   last occurrence of a scalar wins, as in protobuf).
//! - A composite column's slot holds a placeholder until the message ends; `stamps` tells
//!   whether the column's owned value belongs to this row (then it is merged into) or to an
//!   earlier one (then it is reset first).
//! - Every view borrows the message, the arena or the table (missing composite values are
//!   precomputed YSON), all of which outlive the loan of the row (see
//!   [`RefsBuffer`](crate::table::row_refs::RefsBuffer)).
//!
//! # Writing
//! Scalars are checked by the same compiled rules and written as proto3 does (zeros, false
//! and empty strings left out, except floats and doubles, so `-0.0` survives, and except the
//! item of an optional, whose presence is the point); composite values go through their
//! [`Plan`]. Borrowed composite views are parsed from binary YSON first.

use std::ops::Range;

use shapeshift_types::{check_value, PrimitiveType, TableSchema, Type, Value, ValueRef};

use super::plan::{expect_wire, Plan};
use super::to_yson::Shape;
use crate::protobuf::wire::{self, put_tag, put_varint, Cursor, WireError};
use crate::table::row_arena::owned_value;
use crate::table::values::{signed_bounds, unsigned_bound, ColumnCheck, ColumnKind};
use crate::table::yson_binary;

/// How one field is read and written.
#[derive(Clone, Debug)]
enum FieldCodec {
    /// Varint, viewed as `Int64`.
    Signed,
    /// Varint, viewed as `Uint64`.
    Unsigned,
    /// Fixed32 float, viewed as `Double`.
    Float,
    /// Fixed64, viewed as `Double`.
    Double,
    /// Varint, viewed as `Bool`.
    Bool,
    /// Length-delimited bytes, viewed as `String` borrowing the message.
    Bytes,
    /// Anything else: through the plan and an owned value; viewed as YSON.
    Composite(Plan),
    /// `null`/`void` columns have no field.
    NoField,
}

/// What a column reads as when its field is absent from the message.
#[derive(Clone, Debug)]
enum Missing {
    View(ValueRef<'static>),
    /// Binary YSON of the plan's default value.
    Yson {
        bytes: Box<[u8]>,
        any: bool,
    },
    /// The default does not fit the column (a uuid, a decimal, a variant of such).
    Error(String),
}

/// What a scalar column admits, checked inline on the hot paths; `General` goes through
/// [`ColumnCheck`] (uuid, decimals, null columns), whose errors every path reports.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rule {
    Signed { lo: i64, hi: i64 },
    Unsigned { hi: u64 },
    Float,
    Double,
    Bool,
    Bytes,
    Utf8,
    General,
}

impl Rule {
    fn of(codec: &FieldCodec, ty: &Type) -> Rule {
        let scalar = match ty.untagged() {
            Type::Optional(item) => item.untagged(),
            other => other,
        };
        match (codec, scalar) {
            (FieldCodec::Signed, Type::Primitive(_)) => {
                let (lo, hi) = signed_bounds(scalar);
                Rule::Signed { lo, hi }
            }
            (FieldCodec::Unsigned, Type::Primitive(_)) => Rule::Unsigned {
                hi: unsigned_bound(scalar),
            },
            (FieldCodec::Float, _) => Rule::Float,
            (FieldCodec::Double, _) => Rule::Double,
            (FieldCodec::Bool, _) => Rule::Bool,
            (FieldCodec::Bytes, Type::Primitive(PrimitiveType::String)) => Rule::Bytes,
            (FieldCodec::Bytes, Type::Primitive(PrimitiveType::Utf8 | PrimitiveType::Json)) => {
                Rule::Utf8
            }
            _ => Rule::General,
        }
    }
}

/// One column of the field table.
#[derive(Clone, Debug)]
struct Column {
    codec: FieldCodec,
    rule: Rule,
    /// The field's tag for its wire type, as varint bytes.
    tag: [u8; 5],
    tag_len: u8,
    /// The wire type a scalar field must have.
    wire_type: u8,
    /// Written even when the value is the default (an optional's item).
    always: bool,
    check: ColumnCheck,
    missing: Missing,
    ty: Type,
    name: String,
    field: u32,
    /// The transcoder of a composite column.
    shape: Option<Shape>,
}

/// A table schema compiled for reading and writing rows (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct FieldTable {
    columns: Vec<Column>,
}

impl FieldTable {
    pub(crate) fn new(schema: &TableSchema) -> FieldTable {
        let columns = schema
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| Column::new(i as u32 + 1, c.name.clone(), &c.ty))
            .collect();
        FieldTable { columns }
    }

    /// Decodes `message` (at input offset `base`) into `refs`; composite values go into
    /// `state` and then `arena`.
    pub(crate) fn read_row<'a>(
        &'a self,
        message: &'a [u8],
        base: u64,
        state: &mut ReadState,
        arena: &'a mut Vec<u8>,
        refs: &mut Vec<ValueRef<'a>>,
    ) -> Result<(), WireError> {
        state.row += 1;
        state.present.clear();
        state.deferred.clear();
        arena.clear();
        if state.stamps.len() < self.columns.len() {
            state.stamps.resize(self.columns.len(), 0);
        }
        let mut cursor = Cursor::new(message, base);
        while !cursor.at_end() {
            let field_start = cursor.pos;
            let (field, wire_type) = cursor.tag()?;
            let index = field as usize - 1;
            let Some(column) = self.columns.get(index) else {
                cursor.skip(wire_type)?;
                continue;
            };
            let view = match &column.codec {
                FieldCodec::Composite(_) => {
                    // Transcoded at once from its run of occurrences (the common case); a
                    // field that occurs again later, or whose run fails, is transcoded
                    // after the loop from all its occurrences (which decides).
                    if state.stamps[index] != state.row {
                        state.stamps[index] = state.row;
                        let start = arena.len();
                        let run = match &column.shape {
                            Some(shape) => shape.emit_run(&cursor, wire_type, field, arena),
                            None => Ok(cursor.pos),
                        };
                        match run {
                            Ok(end) => {
                                cursor.pos = end;
                                state.present.push((index, start..arena.len(), false));
                            }
                            Err(_) => {
                                arena.truncate(start);
                                cursor.skip(wire_type)?;
                                state.present.push((index, 0..0, true));
                            }
                        }
                    } else {
                        cursor.skip(wire_type)?;
                        if let Some(entry) = state.present.iter_mut().find(|p| p.0 == index) {
                            entry.2 = true;
                        }
                    }
                    ValueRef::Null
                }
                codec => {
                    if wire_type != column.wire_type {
                        expect_wire(&cursor, wire_type, column.wire_type)?;
                    }
                    let view = match codec {
                        FieldCodec::Signed => ValueRef::Int64(cursor.varint()? as i64),
                        FieldCodec::Unsigned => ValueRef::Uint64(cursor.varint()?),
                        FieldCodec::Double => ValueRef::Double(f64::from_bits(cursor.fixed64()?)),
                        FieldCodec::Float => {
                            ValueRef::Double(f64::from(f32::from_bits(cursor.fixed32()?)))
                        }
                        FieldCodec::Bool => ValueRef::Bool(cursor.varint()? != 0),
                        FieldCodec::Bytes => ValueRef::String(cursor.len_delimited()?.bytes),
                        FieldCodec::NoField => {
                            cursor.pos = field_start;
                            return Err(cursor.error(format!(
                                "field {field} for column {:?} of a null type",
                                column.name
                            )));
                        }
                        FieldCodec::Composite(_) => unreachable!("matched above"),
                    };
                    if !column.admits(view) {
                        if let Err(e) = column.check.write(view, &column.ty) {
                            cursor.pos = field_start;
                            return Err(cursor.error(format!("column {:?}: {e}", column.name)));
                        }
                    }
                    view
                }
            };
            match index.cmp(&refs.len()) {
                std::cmp::Ordering::Equal => refs.push(view),
                std::cmp::Ordering::Less => {
                    // Out of order (rare): marked, so a deferred missing check sees it.
                    state.stamps[index] = state.row;
                    refs[index] = view;
                }
                std::cmp::Ordering::Greater => {
                    self.push_missing(refs, index, base, Some(&mut state.deferred))?;
                    refs.push(view);
                }
            }
        }
        self.push_missing(refs, self.columns.len(), base, None)?;
        // Columns skipped over whose absence would be an error: set later, or missing.
        for &index in &state.deferred {
            if state.stamps[index] != state.row {
                let column = &self.columns[index];
                if let Missing::Error(e) = &column.missing {
                    return Err(WireError {
                        offset: base,
                        message: format!("column {:?}: missing field: {e}", column.name),
                    });
                }
            }
        }
        if state.present.is_empty() {
            return Ok(());
        }
        // Composite values that were not one run: transcoded from all their occurrences.
        let whole = Cursor::new(message, base);
        for (index, span, scattered) in &mut state.present {
            if !*scattered {
                continue;
            }
            let column = &self.columns[*index];
            let start = arena.len();
            if let Some(shape) = &column.shape {
                shape
                    .emit_field(&whole, column.field, arena)
                    .map_err(|e| WireError {
                        offset: e.offset,
                        message: format!("column {:?}: {}", column.name, e.message),
                    })?;
            }
            *span = start..arena.len();
        }
        let arena: &'a Vec<u8> = arena;
        for (index, span, _) in &state.present {
            refs[*index] = if ColumnKind::of(&self.columns[*index].ty) == ColumnKind::Yson {
                ValueRef::Any(&arena[span.clone()])
            } else {
                ValueRef::Composite(&arena[span.clone()])
            };
        }
        Ok(())
    }

    /// Pads `refs` with the missing values of columns `refs.len()..end`.
    #[inline]
    fn push_missing<'a>(
        &'a self,
        refs: &mut Vec<ValueRef<'a>>,
        end: usize,
        base: u64,
        mut deferred: Option<&mut Vec<usize>>,
    ) -> Result<(), WireError> {
        for (index, column) in self.columns.iter().enumerate().take(end).skip(refs.len()) {
            refs.push(match &column.missing {
                Missing::View(view) => *view,
                Missing::Yson { bytes, any: false } => ValueRef::Composite(bytes),
                Missing::Yson { bytes, any: true } => ValueRef::Any(bytes),
                // A field may still come later (out of order): decided after the message.
                Missing::Error(_) if deferred.is_some() => {
                    if let Some(deferred) = deferred.as_mut() {
                        deferred.push(index);
                    }
                    ValueRef::Null
                }
                Missing::Error(e) => {
                    return Err(WireError {
                        offset: base,
                        message: format!("column {:?}: missing field: {e}", column.name),
                    })
                }
            });
        }
        Ok(())
    }

    fn width_error(&self, found: usize) -> String {
        format!(
            "row has {found} values, the schema {} columns",
            self.columns.len()
        )
    }

    /// Appends the message of a row of owned values (schema order) to `out`.
    ///
    /// # Errors
    /// A message naming the column whose value does not fit it.
    pub(crate) fn write_owned(&self, values: &[Value], out: &mut Vec<u8>) -> Result<(), String> {
        if values.len() != self.columns.len() {
            return Err(self.width_error(values.len()));
        }
        out.reserve(self.columns.len() * 10);
        for (value, column) in values.iter().zip(&self.columns) {
            if !column.write_owned_fast(value, out) {
                column.write_slow(value, out)?;
            }
        }
        Ok(())
    }

    /// Appends the message of a row of views (schema order) to `out`.
    ///
    /// # Errors
    /// A message naming the column whose value does not fit it.
    pub(crate) fn write_views(
        &self,
        values: &[ValueRef<'_>],
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        if values.len() != self.columns.len() {
            return Err(self.width_error(values.len()));
        }
        out.reserve(self.columns.len() * 10);
        for (view, column) in values.iter().zip(&self.columns) {
            if column.admits(*view) && !matches!(column.codec, FieldCodec::Composite(_)) {
                column.put_scalar(*view, out);
                continue;
            }
            match (&column.codec, view) {
                (FieldCodec::Composite(_), _) | (_, ValueRef::Composite(_) | ValueRef::Any(_)) => {
                    let value = owned_value(view, &column.ty, "")
                        .map_err(|e| format!("column {:?}: {}", column.name, e.message))?;
                    column.write_slow(&value, out)?;
                }
                _ => column.write_scalar(*view, out)?,
            }
        }
        Ok(())
    }
}

impl Column {
    fn new(field: u32, name: String, ty: &Type) -> Column {
        let plan = Plan::compile(ty);
        // Optionals of scalars are the scalar's field with presence.
        let (scalar_plan, optional) = match plan.unchecked() {
            Plan::Optional {
                item,
                item_nullable: false,
                wrapped: false,
            } => (item.unchecked(), true),
            other => (other, false),
        };
        let codec = match scalar_plan {
            Plan::Signed => FieldCodec::Signed,
            Plan::Unsigned => FieldCodec::Unsigned,
            Plan::Float => FieldCodec::Float,
            Plan::Double => FieldCodec::Double,
            Plan::Bool => FieldCodec::Bool,
            Plan::Bytes => FieldCodec::Bytes,
            Plan::Null => FieldCodec::NoField,
            _ => FieldCodec::Composite(plan.clone()),
        };
        let check = ColumnCheck::new(ty);
        let missing = if optional {
            Missing::View(ValueRef::Null)
        } else {
            let view = match codec {
                FieldCodec::Signed => Some(ValueRef::Int64(0)),
                FieldCodec::Unsigned => Some(ValueRef::Uint64(0)),
                FieldCodec::Float | FieldCodec::Double => Some(ValueRef::Double(0.0)),
                FieldCodec::Bool => Some(ValueRef::Bool(false)),
                FieldCodec::Bytes => Some(ValueRef::String(b"")),
                FieldCodec::NoField => Some(ValueRef::Null),
                FieldCodec::Composite(_) => None,
            };
            match view {
                Some(view) => match check.write(view, ty) {
                    Ok(()) => Missing::View(view),
                    Err(e) => Missing::Error(e.to_string()),
                },
                None => {
                    let value = plan.default_value();
                    let mut bytes = Vec::new();
                    match check_value(&value, ty)
                        .map_err(|e| e.to_string())
                        .and_then(|()| match value {
                            Value::Null => Ok(()),
                            _ => yson_binary::value(&mut bytes, &value, ty),
                        }) {
                        Ok(()) if matches!(value, Value::Null) => Missing::View(ValueRef::Null),
                        Ok(()) => Missing::Yson {
                            bytes: bytes.into_boxed_slice(),
                            any: ColumnKind::of(ty) == ColumnKind::Yson,
                        },
                        Err(e) => Missing::Error(e),
                    }
                }
            }
        };
        let wire_type = match codec {
            FieldCodec::Float => wire::FIXED32,
            FieldCodec::Double => wire::FIXED64,
            FieldCodec::Bytes => wire::LEN,
            _ => wire::VARINT,
        };
        let mut tag_bytes = Vec::new();
        put_tag(&mut tag_bytes, field, wire_type);
        let mut tag = [0u8; 5];
        tag[..tag_bytes.len()].copy_from_slice(&tag_bytes);
        Column {
            shape: matches!(codec, FieldCodec::Composite(_)).then(|| Shape::compile(ty)),
            rule: Rule::of(&codec, ty),
            tag,
            tag_len: tag_bytes.len() as u8,
            codec,
            wire_type,
            always: optional,
            check,
            missing,
            ty: ty.clone(),
            name,
            field,
        }
    }

    /// Whether the rule alone accepts `view` (false does not mean refused: see `check`).
    #[inline(always)]
    fn admits(&self, view: ValueRef<'_>) -> bool {
        match (self.rule, view) {
            (Rule::Signed { lo, hi }, ValueRef::Int64(v)) => lo <= v && v <= hi,
            (Rule::Unsigned { hi }, ValueRef::Uint64(v)) => v <= hi,
            (Rule::Double, ValueRef::Double(_)) | (Rule::Bool, ValueRef::Bool(_)) => true,
            (Rule::Float, ValueRef::Double(v)) => !(v.is_finite() && v.abs() > f64::from(f32::MAX)),
            (Rule::Bytes, ValueRef::String(_)) => true,
            (Rule::Utf8, ValueRef::String(s)) => crate::utf8::text(s).is_ok(),
            _ => false,
        }
    }

    #[inline(always)]
    fn put_tag(&self, out: &mut Vec<u8>) {
        // Pushes, not a variable-length copy (which would call memcpy).
        out.push(self.tag[0]);
        for &byte in &self.tag[1..usize::from(self.tag_len)] {
            out.push(byte);
        }
    }

    /// Writes a scalar the rule admitted (proto3's defaults left out, see the module docs).
    #[inline(always)]
    fn put_scalar(&self, view: ValueRef<'_>, out: &mut Vec<u8>) {
        match view {
            ValueRef::Int64(v) => {
                if v != 0 || self.always {
                    self.put_tag(out);
                    put_varint(out, v as u64);
                }
            }
            ValueRef::Uint64(v) => {
                if v != 0 || self.always {
                    self.put_tag(out);
                    put_varint(out, v);
                }
            }
            ValueRef::Double(v) => {
                self.put_tag(out);
                if self.rule == Rule::Float {
                    out.extend_from_slice(&(v as f32).to_le_bytes());
                } else {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            ValueRef::Bool(v) => {
                if v || self.always {
                    self.put_tag(out);
                    out.push(u8::from(v));
                }
            }
            ValueRef::String(s) => {
                if !s.is_empty() || self.always {
                    self.put_tag(out);
                    put_varint(out, s.len() as u64);
                    out.extend_from_slice(s);
                }
            }
            ValueRef::Null | ValueRef::Composite(_) | ValueRef::Any(_) => {}
        }
    }

    /// The owned-value fast path: `false` when the value needs [`Column::write_slow`].
    #[inline(always)]
    fn write_owned_fast(&self, value: &Value, out: &mut Vec<u8>) -> bool {
        let view = match value {
            Value::Int64(v) => ValueRef::Int64(*v),
            Value::Uint64(v) => ValueRef::Uint64(*v),
            Value::Double(v) => ValueRef::Double(*v),
            Value::Bool(v) => ValueRef::Bool(*v),
            Value::String(s) => ValueRef::String(s),
            _ => return false,
        };
        if !self.admits(view) {
            return false;
        }
        self.put_scalar(view, out);
        true
    }

    /// A scalar view the rule did not admit: checked by the general check, then written.
    fn write_scalar(&self, view: ValueRef<'_>, out: &mut Vec<u8>) -> Result<(), String> {
        if let Err(e) = self.check.write(view, &self.ty) {
            return Err(format!("column {:?}: {e}", self.name));
        }
        match (&self.codec, view) {
            (_, ValueRef::Null) => {}
            (FieldCodec::Signed, ValueRef::Int64(_))
            | (FieldCodec::Unsigned, ValueRef::Uint64(_))
            | (FieldCodec::Double | FieldCodec::Float, ValueRef::Double(_))
            | (FieldCodec::Bool, ValueRef::Bool(_))
            | (FieldCodec::Bytes, ValueRef::String(_)) => self.put_scalar(view, out),
            (_, other) => {
                return Err(format!(
                    "column {:?}: {other:?} does not fit type {}",
                    self.name, self.ty
                ))
            }
        }
        Ok(())
    }

    /// Any owned value: scalars by the general check, composites by `check_value` and
    /// their plan.
    #[cold]
    fn write_slow(&self, value: &Value, out: &mut Vec<u8>) -> Result<(), String> {
        let plan = match &self.codec {
            FieldCodec::Composite(plan) => plan,
            _ => {
                let view = match value {
                    Value::Null => ValueRef::Null,
                    Value::Int64(v) => ValueRef::Int64(*v),
                    Value::Uint64(v) => ValueRef::Uint64(*v),
                    Value::Double(v) => ValueRef::Double(*v),
                    Value::Bool(v) => ValueRef::Bool(*v),
                    Value::String(s) => ValueRef::String(s),
                    other => {
                        return Err(format!(
                            "column {:?}: {other:?} does not fit type {}",
                            self.name, self.ty
                        ))
                    }
                };
                return self.write_scalar(view, out);
            }
        };
        // The plan checks every scalar it writes (`Plan::Checked`) and the shape as it goes.
        plan.encode(value, self.field, false, out)
            .map_err(|e| format!("column {:?}: {e}", self.name))
    }
}

/// Per-stream scratch of the reader: owned composite values and which belong to this row.
#[derive(Default)]
pub(crate) struct ReadState {
    row: u64,
    stamps: Vec<u64>,
    /// Composite columns of this row: column, YSON span in the arena, whether it must be
    /// transcoded again from all its occurrences.
    present: Vec<(usize, Range<usize>, bool)>,
    /// Columns skipped over whose absence is an error, checked when the message ends.
    deferred: Vec<usize>,
}
