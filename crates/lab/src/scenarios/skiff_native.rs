//! The scenarios on Skiff's fast path: validated row views over the reader's buffer, and rows
//! written as raw bytes.
//!
//! - BM1/BM2 read fields in place ([`RowView::for_each_value`], [`RowView::value_ref`]).
//! - BM3 copies the row's bytes and patches the counter where the table plan says it lies
//!   (a fixed-size field of the fixed prefix): the row keeps its length, nothing is
//!   re-serialized — the study's "patch in place".
//! - BM4 copies the row's bytes and appends the new column: with the column last, the output
//!   schema's row is the input row plus eight bytes. BM4-mid cannot do that (the column lands
//!   between variable-size fields), so it re-encodes the row from its borrowed values — the
//!   study's remark that Skiff loses its edge when the column goes in the middle.
//! - BM5 re-encodes only the list; the optional string is re-spelled from its view and the
//!   struct and dict are copied as the raw bytes of their lazy fields.
//! - BM6 encodes the fixed row from borrowed values every time.
//!
//! The patch and append work on one reused buffer rather than on a
//! [`shapeshift_formats::skiff::RowBuffer`] per row (which allocates the bytes and an offset
//! table for every row); the bytes written are the same.

use std::io::{Read, Write};

use shapeshift_formats::skiff::{Codec, FieldRef, MappingOptions, SkiffError, SystemFields};
use shapeshift_types::{TableSchema, ValueRef};

use super::{
    extra_value, is_zero_value, mix, JobSummary, Scenario, ScenarioError, APPENDED_ELEMENT,
    BM2_DATA_COLUMN, COUNTER_COLUMN,
};
use crate::datasets::bm6_fixed_row;

fn skiff_error(e: SkiffError) -> ScenarioError {
    ScenarioError::new(format!("skiff: {e}"))
}

fn codec(schema: &TableSchema) -> Result<Codec, ScenarioError> {
    Codec::for_table_schemas(std::slice::from_ref(schema), &MappingOptions::default())
        .map_err(skiff_error)
}

pub(super) fn run(
    scenario: Scenario,
    input: Box<dyn Read>,
    output: Box<dyn Write>,
    bm6_rows: u64,
) -> Result<JobSummary, ScenarioError> {
    let out_codec = codec(&scenario.output_schema())?;
    let mut writer = out_codec.writer(output);
    let mut summary = JobSummary::default();
    let mut scratch: Vec<u8> = Vec::with_capacity(1024);
    let no_system = SystemFields::default();
    if scenario == Scenario::Bm6 {
        let owned = bm6_fixed_row();
        for _ in 0..bm6_rows {
            let refs: [ValueRef<'_>; 10] = std::array::from_fn(|i| borrow(&owned[i]));
            scratch.clear();
            out_codec
                .encode_row_refs(0, &refs, &no_system, &mut scratch)
                .map_err(skiff_error)?;
            writer.write_raw(&scratch).map_err(skiff_error)?;
        }
        summary.rows_out = bm6_rows;
        summary.stat = bm6_rows;
        writer.finish().map_err(skiff_error)?.flush()?;
        return Ok(summary);
    }
    let in_codec = codec(&scenario.input_schema())?;
    let mut reader = in_codec.stream_reader(input);
    let mut total = 0u64;
    let mut counter_offset: Option<usize> = None;
    let mut zero_probes: Option<Option<ZeroProbes>> = None;
    let mut refs: Vec<ValueRef<'static>> = Vec::new();
    while let Some(row) = reader.next_row().map_err(skiff_error)? {
        summary.rows_in += 1;
        match scenario {
            Scenario::Bm1 => {
                if zero_probes.is_none() {
                    zero_probes = Some(ZeroProbes::for_table(row.table()));
                }
                match &zero_probes {
                    Some(Some(probes)) => total += probes.count(row.raw()),
                    _ => row.for_each_value(|_, value| total += is_zero_value(&value) as u64),
                }
            }
            Scenario::Bm2 => {
                if let Some(ValueRef::String(data)) = row.value_ref(BM2_DATA_COLUMN) {
                    total += data.len() as u64;
                }
            }
            Scenario::Bm3 | Scenario::Bm4 => {
                let at = match counter_offset {
                    Some(at) => at,
                    None => {
                        let at =
                            row.table()
                                .fixed_column_offset(COUNTER_COLUMN)
                                .ok_or_else(|| {
                                    ScenarioError::new(
                                        "skiff: the counter is not a fixed-offset field",
                                    )
                                })?;
                        counter_offset = Some(at);
                        at
                    }
                };
                let counter = match row.value_ref(COUNTER_COLUMN) {
                    Some(ValueRef::Int64(v)) => v,
                    other => return Err(bad_counter(row.offset(), other)),
                };
                scratch.clear();
                scratch.extend_from_slice(row.raw());
                if scenario == Scenario::Bm3 {
                    let incremented = counter.wrapping_add(1);
                    scratch[at..at + 8].copy_from_slice(&incremented.to_le_bytes());
                    summary.stat = mix(summary.stat, incremented as u64);
                } else {
                    let extra = extra_value(counter);
                    scratch.extend_from_slice(&extra.to_le_bytes());
                    summary.stat = mix(summary.stat, extra as u64);
                }
                writer.write_raw(&scratch).map_err(skiff_error)?;
            }
            Scenario::Bm4Mid => {
                let at = Scenario::Bm4Mid.extra_position().unwrap_or(0);
                let mut values = reuse(std::mem::take(&mut refs));
                for column in 0..row.len() {
                    values.push(row.value_ref(column).ok_or_else(|| {
                        ScenarioError::new(format!("skiff: column {column} is not a scalar"))
                    })?);
                }
                let counter = match values.get(COUNTER_COLUMN) {
                    Some(ValueRef::Int64(v)) => *v,
                    other => return Err(bad_counter(row.offset(), other.copied())),
                };
                let extra = extra_value(counter);
                summary.stat = mix(summary.stat, extra as u64);
                values.insert(at, ValueRef::Int64(extra));
                scratch.clear();
                out_codec
                    .encode_row_refs(0, &values, &no_system, &mut scratch)
                    .map_err(skiff_error)?;
                writer.write_raw(&scratch).map_err(skiff_error)?;
                refs = reuse(values);
            }
            Scenario::Bm5 => {
                scratch.clear();
                scratch.extend_from_slice(&row.table_index().to_le_bytes());
                // optional<string> = variant8<nothing; string32>
                match row.value_ref(0) {
                    Some(ValueRef::Null) => scratch.push(0),
                    Some(ValueRef::String(s)) => {
                        scratch.push(1);
                        scratch.extend_from_slice(&(s.len() as u32).to_le_bytes());
                        scratch.extend_from_slice(s);
                    }
                    other => {
                        return Err(ScenarioError::new(format!(
                            "skiff: at byte {}: BM5 maybe is {other:?}",
                            row.offset()
                        )))
                    }
                }
                // list<double> = repeated_variant8<double>: tag 0 before each item, 0xFF after.
                let Some(FieldRef::Lazy(list)) = row.get(1) else {
                    return Err(ScenarioError::new("skiff: BM5 values is not a list field"));
                };
                for (_, item) in list.repeated() {
                    let Some(ValueRef::Double(v)) = item.as_value_ref() else {
                        return Err(ScenarioError::new(format!(
                            "skiff: at byte {}: BM5 list item is not a double",
                            row.offset()
                        )));
                    };
                    let v = v + 1.0;
                    summary.stat = mix(summary.stat, v.to_bits());
                    scratch.push(0);
                    scratch.extend_from_slice(&v.to_le_bytes());
                }
                scratch.push(0);
                scratch.extend_from_slice(&APPENDED_ELEMENT.to_le_bytes());
                summary.stat = mix(summary.stat, APPENDED_ELEMENT.to_bits());
                scratch.push(0xFF);
                for column in 2..4 {
                    match row.get(column) {
                        Some(FieldRef::Lazy(field)) => scratch.extend_from_slice(field.bytes()),
                        _ => {
                            return Err(ScenarioError::new(format!(
                                "skiff: BM5 column {column} is not a composite field"
                            )))
                        }
                    }
                }
                writer.write_raw(&scratch).map_err(skiff_error)?;
            }
            Scenario::Bm6 => unreachable!("BM6 returned above"),
        }
    }
    if matches!(scenario, Scenario::Bm1 | Scenario::Bm2) {
        let refs = [ValueRef::Uint64(summary.rows_in), ValueRef::Uint64(total)];
        writer
            .write_row_refs(0, &refs, &no_system)
            .map_err(skiff_error)?;
        summary.rows_out = 1;
        summary.stat = total;
    } else {
        summary.rows_out = summary.rows_in;
    }
    writer.finish().map_err(skiff_error)?.flush()?;
    Ok(summary)
}

/// BM1 on rows whose every column is a fixed-width number at a fixed offset: a zero is a
/// field of all-zero bytes (integers), or whose bits other than the sign are zero (doubles,
/// so -0.0 counts as `-0.0 == 0.0` does). Reads the validated row's raw bytes directly.
struct ZeroProbes {
    /// (row-relative offset, width in bytes, is a double) per column.
    fields: Vec<(usize, usize, bool)>,
    row_size: usize,
}

impl ZeroProbes {
    /// Probes for `table`, or `None` when some column is not a fixed-width number.
    fn for_table(table: &shapeshift_formats::skiff::TablePlan) -> Option<ZeroProbes> {
        use shapeshift_formats::skiff::WireType as W;
        let row_size = table.fixed_row_size()?;
        let mut fields = Vec::with_capacity(table.column_count());
        for column in 0..table.column_count() {
            let offset = table.fixed_column_offset(column)?;
            let (width, double) = match table.column_plan(column).wire_type() {
                W::Int8 | W::Uint8 => (1, false),
                W::Int16 | W::Uint16 => (2, false),
                W::Int32 | W::Uint32 => (4, false),
                W::Int64 | W::Uint64 => (8, false),
                W::Double => (8, true),
                _ => return None,
            };
            if offset + width > row_size {
                return None;
            }
            fields.push((offset, width, double));
        }
        Some(ZeroProbes { fields, row_size })
    }

    #[inline]
    fn count(&self, row: &[u8]) -> u64 {
        if row.len() != self.row_size {
            return 0; // cannot happen for a validated row of this table
        }
        let mut zeros = 0u64;
        for &(offset, width, double) in &self.fields {
            let bytes = &row[offset..offset + width];
            let bits = match width {
                1 => u64::from(bytes[0]),
                2 => u64::from(u16::from_le_bytes([bytes[0], bytes[1]])),
                4 => u64::from(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
                _ => u64::from_le_bytes(bytes.try_into().unwrap_or([1; 8])),
            };
            let bits = if double { bits << 1 } else { bits };
            zeros += (bits == 0) as u64;
        }
        zeros
    }
}

fn bad_counter(offset: u64, found: Option<ValueRef<'_>>) -> ScenarioError {
    ScenarioError::new(format!(
        "skiff: at byte {offset}: the counter is {found:?}, not an int64"
    ))
}

fn borrow(value: &shapeshift_types::Value) -> ValueRef<'_> {
    use shapeshift_types::Value;
    match value {
        Value::Null => ValueRef::Null,
        Value::Bool(v) => ValueRef::Bool(*v),
        Value::Int64(v) => ValueRef::Int64(*v),
        Value::Uint64(v) => ValueRef::Uint64(*v),
        Value::Double(v) => ValueRef::Double(*v),
        Value::String(s) => ValueRef::String(s),
        _ => ValueRef::Null,
    }
}

/// An empty vector of borrowed values reusing `v`'s allocation, with any lifetime.
fn reuse<'b>(mut v: Vec<ValueRef<'_>>) -> Vec<ValueRef<'b>> {
    v.clear();
    v.into_iter().map(|_| unreachable!()).collect()
}
