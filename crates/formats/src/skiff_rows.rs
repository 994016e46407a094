//! Skiff table streams through the common interface ([`crate::table`]).
//!
//! The Skiff schema of each table is the one YT uses for its table schema
//! ([`skiff_schema_for_table`](crate::skiff::skiff_schema_for_table)); with system columns the
//! rows carry `$key_switch`, `$row_index` and `$range_index`, which are the row's
//! [`RowPosition`] (the table index is every Skiff row's first field). Without them a sink
//! refuses a position it cannot write (a row or range index, a key switch) rather than drop it.
//! A non-strict table's `$other_columns` field carries the row's other columns (see
//! `table::other_columns`): an empty map when it has none; a strict table has no such field,
//! so its sink refuses other columns, naming the first.
//!
//! Reading borrows scalars and strings from the reader's buffer; composite fields (and wide
//! integers, decimals) are decoded and re-encoded as binary YSON into one per-row scratch
//! buffer.

use std::io::{Read, Write};

use shapeshift_types::{TableSchema, Type, Value, ValueRef};

use crate::skiff::{
    Codec, FieldRef, MappingOptions, RowWriter, SkiffError, StreamReader, SystemFields,
};
use crate::table::other_columns;
use crate::table::row_refs::RefsBuffer;
use crate::table::values::{owned_row, ColumnKind};
use crate::table::yson_binary;
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource};

const FORMAT: &str = "skiff";

#[cold]
fn skiff_error(error: SkiffError) -> FormatError {
    let message = match &error.column {
        Some(column) => format!("column \"{column}\": {}", error.message),
        None => error.message.clone(),
    };
    FormatError {
        format: FORMAT,
        offset: error.offset,
        row: error.row,
        message,
    }
}

fn codec(schemas: &[TableSchema], system_columns: bool) -> Result<Codec, FormatError> {
    let options = MappingOptions {
        key_switch: system_columns,
        row_index: system_columns,
        range_index: system_columns,
        ..MappingOptions::default()
    };
    Codec::for_table_schemas(schemas, &options).map_err(skiff_error)
}

/// A Skiff row reader over `input`.
///
/// # Errors
/// A mapping error when a table schema cannot be expressed in Skiff.
pub(crate) fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
    system_columns: bool,
) -> Result<Box<dyn RowSource>, FormatError> {
    let codec = codec(schemas, system_columns)?;
    let all_borrowed: Vec<bool> = (0..schemas.len())
        .map(|t| {
            codec.table(t).is_some_and(|plan| {
                (0..plan.column_count()).all(|c| plan.column_plan(c).borrowable)
            })
        })
        .collect();
    Ok(Box::new(SkiffRowSource {
        every_table_borrowed: all_borrowed.iter().all(|&b| b),
        all_borrowed,
        reader: codec.stream_reader(input),
        schemas: schemas.to_vec(),
        kinds: schemas
            .iter()
            .map(crate::table::values::column_kinds)
            .collect(),
        scratch: Vec::new(),
        spans: Vec::new(),
        others: Vec::new(),
        refs: RefsBuffer::default(),
    }))
}

struct SkiffRowSource {
    /// Every table's columns read as borrowed values: rows take [`SkiffRowSource::next_borrowed_row`].
    every_table_borrowed: bool,
    /// Per table: every column reads as a borrowed value (no composites, decimals or wide
    /// integers), so a row needs no scratch.
    all_borrowed: Vec<bool>,
    reader: StreamReader<Box<dyn Read>>,
    schemas: Vec<TableSchema>,
    kinds: Vec<Vec<ColumnKind>>,
    scratch: Vec<u8>,
    /// The scratch spans of the row's lazy fields, in column order.
    spans: Vec<(usize, usize, LazyKind)>,
    /// The row's `$other_columns`, checked, as a binary YSON map (empty: none).
    others: Vec<u8>,
    refs: RefsBuffer,
}

#[derive(Clone, Copy)]
enum LazyKind {
    Null,
    Int64(i64),
    Uint64(u64),
    String,
    Any,
    Composite,
}

impl RowSource for SkiffRowSource {
    #[inline]
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if self.every_table_borrowed {
            return self.next_borrowed_row();
        }
        Ok(self.read::<false>()?.map(|(row, _)| row))
    }

    fn next_row_with_other_columns(
        &mut self,
    ) -> Result<Option<(RowRef<'_>, Option<&[u8]>)>, FormatError> {
        self.read::<true>()
    }
}

/// A boxed Skiff error as the interface's error (cold: the hot path only moves the box).
#[cold]
#[inline(never)]
fn boxed_skiff_error(error: Box<SkiffError>) -> FormatError {
    skiff_error(*error)
}

impl SkiffRowSource {
    /// The next row when every table is borrowable: [`SkiffRowSource::read`] without the
    /// scratch pass and without the `(row, others)` pair, whose reshuffling into the
    /// returned `Option<RowRef>` cost a store-forwarding stall per row (perf annotate).
    #[inline(always)]
    fn next_borrowed_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if !self.reader.advance().map_err(boxed_skiff_error)? {
            return Ok(None);
        }
        let view = self.reader.current_row();
        let refs = self.refs.loan();
        refs.reserve(view.len());
        view.for_each_value(|_, value| refs.push(value));
        Ok(Some(RowRef {
            position: RowPosition {
                table_index: usize::from(view.table_index()),
                row_index: view.row_index(),
                range_index: view.range_index(),
                key_switch: view.key_switch(),
            },
            values: refs,
        }))
    }

    /// The next row, and its other columns when `WITH_OTHERS` (else they are not looked at).
    ///
    /// The row is scanned in place in the stream reader's buffer ([`StreamReader::advance`]
    /// answers in registers).
    fn read<const WITH_OTHERS: bool>(
        &mut self,
    ) -> Result<Option<(RowRef<'_>, Option<&[u8]>)>, FormatError> {
        let rows = self.reader.rows_read();
        if !self.reader.advance().map_err(boxed_skiff_error)? {
            return Ok(None);
        }
        let view = self.reader.current_row();
        let table = usize::from(view.table_index());
        let position = RowPosition {
            table_index: table,
            row_index: view.row_index(),
            range_index: view.range_index(),
            key_switch: view.key_switch(),
        };
        self.others.clear();
        if WITH_OTHERS {
            if let Some(bytes) = view.other_columns().filter(|b| *b != b"{}") {
                other_columns::normalize(bytes, &self.schemas[table], table, &mut self.others)
                    .map_err(|m| FormatError::new(FORMAT, m).at(view.offset()).in_row(rows))?;
            }
        }
        let others = (!self.others.is_empty()).then_some(self.others.as_slice());
        if self.all_borrowed[table] {
            let refs = self.refs.loan();
            refs.reserve(view.len());
            view.for_each_value(|_, value| refs.push(value));
            return Ok(Some((
                RowRef {
                    position,
                    values: refs,
                },
                others,
            )));
        }
        // First pass: lazy fields into the scratch. Composites are walked in place and
        // written as binary YSON (no value tree); decimals and wide integers are decoded.
        self.scratch.clear();
        self.spans.clear();
        for (column, field) in view.fields().enumerate() {
            let FieldRef::Lazy(lazy) = field else {
                continue;
            };
            let spec = &self.schemas[table].columns[column];
            let kind = self.kinds[table][column];
            let fail = |m: String| {
                FormatError::new(FORMAT, format!("column \"{}\": {m}", spec.name))
                    .at(view.offset())
                    .in_row(rows)
            };
            let start = self.scratch.len();
            let lazy_kind = if kind == ColumnKind::Scalar {
                match lazy
                    .to_value()
                    .map_err(|e| skiff_error(e).at(view.offset()).in_row(rows))?
                {
                    Value::Null => LazyKind::Null,
                    Value::Int64(v) => LazyKind::Int64(v),
                    Value::Uint64(v) => LazyKind::Uint64(v),
                    Value::String(bytes) => {
                        self.scratch.extend_from_slice(&bytes);
                        LazyKind::String
                    }
                    other => {
                        return Err(fail(format!(
                            "unexpected value {other:?} of a scalar column"
                        )))
                    }
                }
            } else if matches!(lazy.variant(), Some((0, _))) && spec.ty.is_nullable() {
                // An absent optional: the common row's null.
                LazyKind::Null
            } else {
                transcode(field, &spec.ty, &mut self.scratch).map_err(fail)?;
                if kind == ColumnKind::Yson {
                    LazyKind::Any
                } else {
                    LazyKind::Composite
                }
            };
            self.spans.push((start, self.scratch.len(), lazy_kind));
        }
        // Second pass: the refs, borrowed from the row or the scratch.
        let scratch = &self.scratch;
        let mut lazy = self.spans.iter();
        let refs = self.refs.loan();
        refs.extend(view.fields().map(|field| match field {
            FieldRef::Value(value) => value,
            FieldRef::Lazy(_) => match lazy.next() {
                Some(&(_, _, LazyKind::Null)) | None => ValueRef::Null,
                Some(&(_, _, LazyKind::Int64(v))) => ValueRef::Int64(v),
                Some(&(_, _, LazyKind::Uint64(v))) => ValueRef::Uint64(v),
                Some(&(start, end, LazyKind::String)) => ValueRef::String(&scratch[start..end]),
                Some(&(start, end, LazyKind::Any)) => ValueRef::Any(&scratch[start..end]),
                Some(&(start, end, LazyKind::Composite)) => {
                    ValueRef::Composite(&scratch[start..end])
                }
            },
        }));
        Ok(Some((
            RowRef {
                position,
                values: refs,
            },
            others,
        )))
    }
}

/// Writes a field of type `ty` as binary YSON, walking its Skiff bytes in place.
fn transcode(field: FieldRef<'_>, ty: &Type, out: &mut Vec<u8>) -> Result<(), String> {
    let lazy = match field {
        FieldRef::Value(value) => {
            match value {
                ValueRef::Null => out.push(b'#'),
                ValueRef::Bool(v) => yson_binary::boolean(out, v),
                ValueRef::Int64(v) => yson_binary::int64(out, v),
                ValueRef::Uint64(v) => yson_binary::uint64(out, v),
                ValueRef::Double(v) => yson_binary::double(out, v),
                ValueRef::String(v) => yson_binary::string(out, v),
                // yson32 payloads may be text YSON: re-spelled as binary.
                ValueRef::Any(bytes) | ValueRef::Composite(bytes) => {
                    let node =
                        crate::yson::from_slice(bytes).map_err(|e| format!("yson value: {e}"))?;
                    yson_binary::node(out, &node);
                }
            }
            return Ok(());
        }
        FieldRef::Lazy(lazy) => lazy,
    };
    let shape = |what: &str| format!("the skiff field does not have the shape of {what}");
    match ty.untagged() {
        Type::Optional(item) => {
            let (tag, child) = lazy.variant().ok_or_else(|| shape("an optional"))?;
            if tag == 0 {
                out.push(b'#');
            } else if item.is_nullable() {
                out.push(b'[');
                transcode(child, item, out)?;
                out.extend_from_slice(b";]");
            } else {
                transcode(child, item, out)?;
            }
        }
        Type::List(item) => {
            out.push(b'[');
            for (_, child) in lazy.repeated() {
                transcode(child, item, out)?;
                out.push(b';');
            }
            out.push(b']');
        }
        Type::Dict { key, value } => {
            out.push(b'[');
            for (_, pair) in lazy.repeated() {
                let FieldRef::Lazy(pair) = pair else {
                    return Err(shape("a dict entry"));
                };
                let mut fields = pair.tuple_fields();
                let (Some(k), Some(v)) = (fields.next(), fields.next()) else {
                    return Err(shape("a dict entry"));
                };
                out.push(b'[');
                transcode(k, key, out)?;
                out.push(b';');
                transcode(v, value, out)?;
                out.extend_from_slice(b";];");
            }
            out.push(b']');
        }
        Type::Struct(members) => {
            out.push(b'{');
            let mut fields = lazy.tuple_fields();
            for member in members {
                let child = fields.next().ok_or_else(|| shape("a struct"))?;
                yson_binary::string(out, member.name.as_bytes());
                out.push(b'=');
                transcode(child, &member.ty, out)?;
                out.push(b';');
            }
            out.push(b'}');
        }
        Type::Tuple(elements) => {
            out.push(b'[');
            let mut fields = lazy.tuple_fields();
            for element in elements {
                let child = fields.next().ok_or_else(|| shape("a tuple"))?;
                transcode(child, element, out)?;
                out.push(b';');
            }
            out.push(b']');
        }
        Type::VariantStruct(members) => {
            let (tag, child) = lazy.variant().ok_or_else(|| shape("a variant"))?;
            let member = members
                .get(usize::from(tag))
                .ok_or_else(|| shape("a variant"))?;
            out.push(b'[');
            yson_binary::string(out, member.name.as_bytes());
            out.push(b';');
            transcode(child, &member.ty, out)?;
            out.extend_from_slice(b";]");
        }
        Type::VariantTuple(elements) => {
            let (tag, child) = lazy.variant().ok_or_else(|| shape("a variant"))?;
            let element = elements
                .get(usize::from(tag))
                .ok_or_else(|| shape("a variant"))?;
            out.push(b'[');
            yson_binary::int64(out, i64::from(tag));
            out.push(b';');
            transcode(child, element, out)?;
            out.extend_from_slice(b";]");
        }
        // Decimals, wide integers and anything else read whole: a scalar at most.
        _ => {
            let value = lazy.to_value().map_err(|e| e.to_string())?;
            yson_binary::value(out, &value, ty)?;
        }
    }
    Ok(())
}

/// A Skiff row writer into `output`.
///
/// # Errors
/// A mapping error when a table schema cannot be expressed in Skiff.
pub(crate) fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
    system_columns: bool,
) -> Result<Box<dyn RowSink>, FormatError> {
    let codec = codec(schemas, system_columns)?;
    let other_columns = (0..schemas.len())
        .map(|t| codec.table(t).is_some_and(|plan| plan.has_other_columns()))
        .collect();
    Ok(Box::new(SkiffRowSink {
        other_columns,
        writer: Some(codec.writer(output)),
        schemas: schemas.to_vec(),
        system_columns,
        rows: 0,
    }))
}

struct SkiffRowSink {
    /// Per table: its Skiff schema has `$other_columns`.
    other_columns: Vec<bool>,
    writer: Option<RowWriter<Box<dyn Write>>>,
    schemas: Vec<TableSchema>,
    system_columns: bool,
    rows: u64,
}

impl SkiffRowSink {
    fn system(&self, position: &RowPosition) -> Result<(u16, SystemFields), FormatError> {
        let table = u16::try_from(position.table_index)
            .ok()
            .filter(|&t| usize::from(t) < self.schemas.len())
            .ok_or_else(|| {
                FormatError::new(
                    FORMAT,
                    format!(
                        "table index {} is out of range: {} table schemas",
                        position.table_index,
                        self.schemas.len()
                    ),
                )
                .in_row(self.rows)
            })?;
        if !self.system_columns
            && (position.row_index.is_some()
                || position.range_index.is_some()
                || position.key_switch)
        {
            return Err(FormatError::new(
                FORMAT,
                "the row has a row index, range index or key switch, which skiff carries only in \
                 system columns (--system-columns)",
            )
            .in_row(self.rows));
        }
        Ok((
            table,
            SystemFields {
                key_switch: position.key_switch,
                row_index: position.row_index,
                range_index: position.range_index,
                ..SystemFields::default()
            },
        ))
    }

    /// The owned values of a row of refs (composite values decoded), checked.
    fn owned_values(
        &self,
        table: usize,
        values: &[ValueRef<'_>],
    ) -> Result<Vec<Value>, FormatError> {
        owned_row(FORMAT, &self.schemas[table], values, self.rows)
    }

    fn writer(&mut self) -> Result<&mut RowWriter<Box<dyn Write>>, FormatError> {
        self.writer
            .as_mut()
            .ok_or_else(|| FormatError::new(FORMAT, "the stream is finished"))
    }
}

impl RowSink for SkiffRowSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let (table, system) = self.system(position)?;
        if values.iter().any(|v| matches!(v, ValueRef::Composite(_))) {
            let owned = self.owned_values(usize::from(table), values)?;
            return self.write_owned_row(position, &owned);
        }
        self.writer()?
            .write_row_refs(table, values, &system)
            .map_err(skiff_error)?;
        self.rows += 1;
        Ok(())
    }

    fn write_row_with_other_columns(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
        other_columns: Option<&[u8]>,
    ) -> Result<(), FormatError> {
        let Some(bytes) = other_columns else {
            return self.write_row(position, values);
        };
        let (table, mut system) = self.system(position)?;
        let rows = self.rows;
        if !self.other_columns[usize::from(table)] {
            return other_columns::refuse(FORMAT, bytes)
                .map_err(|e| e.in_row(rows))
                .and_then(|()| self.write_row(position, values));
        }
        let mut others = Vec::new();
        other_columns::normalize(
            bytes,
            &self.schemas[usize::from(table)],
            usize::from(table),
            &mut others,
        )
        .map_err(|m| FormatError::new(FORMAT, m).in_row(rows))?;
        if others.is_empty() {
            return self.write_row(position, values);
        }
        system.other_columns = Some(others);
        if values.iter().any(|v| matches!(v, ValueRef::Composite(_))) {
            let owned = self.owned_values(usize::from(table), values)?;
            self.writer()?
                .write_row(table, &owned, &system)
                .map_err(skiff_error)?;
        } else {
            self.writer()?
                .write_row_refs(table, values, &system)
                .map_err(skiff_error)?;
        }
        self.rows += 1;
        Ok(())
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let (table, system) = self.system(position)?;
        self.writer()?
            .write_row(table, values, &system)
            .map_err(skiff_error)?;
        self.rows += 1;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        if let Some(writer) = self.writer.take() {
            let mut output = writer.finish().map_err(skiff_error)?;
            output.flush().map_err(|e| FormatError::io(FORMAT, &e))?;
        }
        Ok(())
    }
}
