//! The scenarios on Arrow's fast path: whole record batches, column by column.
//!
//! [`BatchReader`] yields the stream's record batches; a scenario touches only the columns
//! it needs and passes the others on as the same shared arrays (no copy):
//! - BM1 counts zeros per numeric column over its value buffer (for a dictionary column:
//!   the zero entries of the dictionary, counted through the keys);
//! - BM2 sums string lengths from the offsets alone (last offset minus first, per batch);
//! - BM3 replaces the counter column with an incremented copy, BM4/BM4-mid insert a computed
//!   column into the batch — in Arrow the position costs nothing;
//! - BM5 rebuilds the list column's offsets and values, and shares the other three;
//! - BM6 builds each column of a batch from the fixed row (a value repeated N times).
//!
//! Output goes through [`BatchWriter::write_batch`], which checks each batch against the
//! output table's Arrow schema.

use std::io::{Read, Write};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, Float32Array, Float64Array,
    Int32Array, Int64Array, LargeBinaryArray, LargeStringArray, ListArray, PrimitiveArray,
    RecordBatch, StringArray, UInt64Array,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use shapeshift_formats::arrow::rows::{BatchReader, BatchWriter};
use shapeshift_formats::arrow::{arrow_schema, DEFAULT_BATCH_ROWS};
use shapeshift_formats::table::RowSink;
use shapeshift_types::Value;

use super::{
    extra_value, mix, JobSummary, Scenario, ScenarioError, APPENDED_ELEMENT, BM2_DATA_COLUMN,
    COUNTER_COLUMN, EXTRA_COLUMN_NAME,
};
use crate::datasets::bm6_fixed_row;

fn arrow_error(e: impl std::fmt::Display) -> ScenarioError {
    ScenarioError::new(format!("arrow: {e}"))
}

pub(super) fn run(
    scenario: Scenario,
    input: Box<dyn Read>,
    output: Box<dyn Write>,
    bm6_rows: u64,
) -> Result<JobSummary, ScenarioError> {
    let out_schema = scenario.output_schema();
    let out_arrow = Arc::new(arrow_schema(&out_schema));
    let mut writer = BatchWriter::new(std::slice::from_ref(&out_schema), output);
    let mut summary = JobSummary::default();
    if scenario == Scenario::Bm6 {
        let row = bm6_fixed_row();
        let mut left = bm6_rows as usize;
        while left > 0 {
            let n = left.min(DEFAULT_BATCH_ROWS);
            let columns = out_arrow
                .fields()
                .iter()
                .zip(&row)
                .map(|(field, value)| repeated(field.data_type(), value, n))
                .collect::<Result<Vec<_>, _>>()?;
            let batch = RecordBatch::try_new(out_arrow.clone(), columns).map_err(arrow_error)?;
            writer.write_batch(0, &batch)?;
            left -= n;
        }
        writer.finish()?;
        summary.rows_out = bm6_rows;
        summary.stat = bm6_rows;
        return Ok(summary);
    }
    let in_schema = scenario.input_schema();
    let mut reader = BatchReader::new(std::slice::from_ref(&in_schema), input);
    let mut total = 0u64;
    while let Some((_, batch)) = reader.next_batch()? {
        summary.rows_in += batch.num_rows() as u64;
        match scenario {
            Scenario::Bm1 => {
                for column in batch.columns() {
                    total += zeros(column.as_ref())?;
                }
            }
            Scenario::Bm2 => total += byte_lengths(batch.column(BM2_DATA_COLUMN).as_ref())?,
            Scenario::Bm3 | Scenario::Bm4 | Scenario::Bm4Mid => {
                let counter = batch
                    .column(COUNTER_COLUMN)
                    .as_primitive_opt::<Int64Type>()
                    .ok_or_else(|| arrow_error("the counter column is not Int64"))?;
                let mut columns = plain_columns(&batch)?;
                let mut fields = fields_of(&batch, &columns);
                match scenario.extra_position() {
                    None => {
                        let incremented: Int64Array = counter.unary(|v| v.wrapping_add(1));
                        for v in incremented.values() {
                            summary.stat = mix(summary.stat, *v as u64);
                        }
                        columns[COUNTER_COLUMN] = Arc::new(incremented);
                    }
                    Some(at) => {
                        let extra: Int64Array = counter.unary(extra_value);
                        for v in extra.values() {
                            summary.stat = mix(summary.stat, *v as u64);
                        }
                        columns.insert(at, Arc::new(extra));
                        let field = out_arrow
                            .field_with_name(EXTRA_COLUMN_NAME)
                            .map_err(arrow_error)?
                            .clone();
                        fields.insert(at, Arc::new(field));
                    }
                }
                let schema = Arc::new(Schema::new(fields));
                let batch = RecordBatch::try_new(schema, columns).map_err(arrow_error)?;
                writer.write_batch(0, &batch)?;
            }
            Scenario::Bm5 => {
                let list = batch
                    .column(1)
                    .as_list_opt::<i32>()
                    .ok_or_else(|| arrow_error("BM5 values is not a List"))?;
                let (rewritten, stat) = rewrite_lists(list, summary.stat)?;
                summary.stat = stat;
                let mut columns = plain_columns(&batch)?;
                columns[1] = Arc::new(rewritten);
                let schema = Arc::new(Schema::new(fields_of(&batch, &columns)));
                let batch = RecordBatch::try_new(schema, columns).map_err(arrow_error)?;
                writer.write_batch(0, &batch)?;
            }
            Scenario::Bm6 => unreachable!("BM6 returned above"),
        }
    }
    if matches!(scenario, Scenario::Bm1 | Scenario::Bm2) {
        let batch = RecordBatch::try_new(
            out_arrow,
            vec![
                Arc::new(UInt64Array::from(vec![summary.rows_in])),
                Arc::new(UInt64Array::from(vec![total])),
            ],
        )
        .map_err(arrow_error)?;
        writer.write_batch(0, &batch)?;
        summary.rows_out = 1;
        summary.stat = total;
    } else {
        summary.rows_out = summary.rows_in;
    }
    writer.finish()?;
    Ok(summary)
}

/// The batch's fields, typed as `columns`.
fn fields_of(batch: &RecordBatch, columns: &[ArrayRef]) -> Vec<Arc<Field>> {
    let schema = batch.schema();
    schema
        .fields()
        .iter()
        .zip(columns)
        .map(|(field, column)| {
            if field.data_type() == column.data_type() {
                field.clone()
            } else {
                Arc::new(
                    field
                        .as_ref()
                        .clone()
                        .with_data_type(column.data_type().clone()),
                )
            }
        })
        .collect()
}

/// The batch's columns with dictionary-encoded strings expanded: the writer decides itself,
/// per output stream, which columns travel as dictionaries, and the reader may hand over
/// one batch's column as a dictionary and the next one's plain.
fn plain_columns(batch: &RecordBatch) -> Result<Vec<ArrayRef>, ScenarioError> {
    batch
        .columns()
        .iter()
        .map(|column| match column.data_type() {
            DataType::Dictionary(_, value_type) => {
                let dictionary = column.as_any_dictionary();
                let keys = dictionary.normalized_keys();
                let values = dictionary.values();
                let valid = |row: usize| !column.is_null(row);
                Ok(match value_type.as_ref() {
                    DataType::Binary => {
                        let values = values.as_binary::<i32>();
                        Arc::new(
                            (0..column.len())
                                .map(|row| valid(row).then(|| values.value(keys[row])))
                                .collect::<BinaryArray>(),
                        ) as ArrayRef
                    }
                    DataType::Utf8 => {
                        let values = values.as_string::<i32>();
                        Arc::new(
                            (0..column.len())
                                .map(|row| valid(row).then(|| values.value(keys[row])))
                                .collect::<StringArray>(),
                        ) as ArrayRef
                    }
                    other => {
                        return Err(arrow_error(format!("dictionary of {other} values")));
                    }
                })
            }
            _ => Ok(column.clone()),
        })
        .collect()
}

fn count_zero_values<T: ArrowPrimitiveType>(
    array: &dyn Array,
    is_zero: impl Fn(T::Native) -> bool,
) -> u64 {
    let array = array.as_primitive::<T>();
    match array.nulls() {
        None => array.values().iter().filter(|v| is_zero(**v)).count() as u64,
        Some(_) => array.iter().flatten().filter(|v| is_zero(*v)).count() as u64,
    }
}

/// Zero values of a numeric column (nulls are not zeros).
fn zeros(array: &dyn Array) -> Result<u64, ScenarioError> {
    Ok(match array.data_type() {
        DataType::Int8 => count_zero_values::<Int8Type>(array, |v| v == 0),
        DataType::Int16 => count_zero_values::<Int16Type>(array, |v| v == 0),
        DataType::Int32 => count_zero_values::<Int32Type>(array, |v| v == 0),
        DataType::Int64 => count_zero_values::<Int64Type>(array, |v| v == 0),
        DataType::UInt8 => count_zero_values::<UInt8Type>(array, |v| v == 0),
        DataType::UInt16 => count_zero_values::<UInt16Type>(array, |v| v == 0),
        DataType::UInt32 => count_zero_values::<UInt32Type>(array, |v| v == 0),
        DataType::UInt64 => count_zero_values::<UInt64Type>(array, |v| v == 0),
        DataType::Float32 => count_zero_values::<Float32Type>(array, |v| v == 0.0),
        DataType::Float64 => count_zero_values::<Float64Type>(array, |v| v == 0.0),
        DataType::Dictionary(_, _) => {
            let dictionary = array.as_any_dictionary();
            let values = dictionary.values();
            let zero_entries: Vec<bool> = (0..values.len())
                .map(|i| zeros(values.slice(i, 1).as_ref()).map(|z| z == 1))
                .collect::<Result<_, _>>()?;
            dictionary
                .normalized_keys()
                .iter()
                .enumerate()
                .filter(|(row, key)| {
                    !array.is_null(*row) && zero_entries.get(**key).copied().unwrap_or(false)
                })
                .count() as u64
        }
        other => return Err(arrow_error(format!("BM1 column of type {other}"))),
    })
}

fn span<O: arrow_array::OffsetSizeTrait>(offsets: &OffsetBuffer<O>) -> u64 {
    // Arrow's offsets are never empty (one more than the values).
    let first = offsets.first().map_or(0, |o| o.as_usize());
    let last = offsets.last().map_or(0, |o| o.as_usize());
    (last - first) as u64
}

/// Total byte length of a string column's values (nulls have none).
fn byte_lengths(array: &dyn Array) -> Result<u64, ScenarioError> {
    let null_free = array.null_count() == 0;
    Ok(match array.data_type() {
        DataType::Binary if null_free => span(array.as_binary::<i32>().offsets()),
        DataType::Utf8 if null_free => span(array.as_string::<i32>().offsets()),
        DataType::LargeBinary if null_free => span(array.as_binary::<i64>().offsets()),
        DataType::LargeUtf8 if null_free => span(array.as_string::<i64>().offsets()),
        DataType::Binary => array
            .as_binary::<i32>()
            .iter()
            .flatten()
            .map(|s| s.len() as u64)
            .sum(),
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .flatten()
            .map(|s| s.len() as u64)
            .sum(),
        DataType::Dictionary(_, _) => {
            let dictionary = array.as_any_dictionary();
            let values = dictionary.values();
            let lengths: Vec<u64> = (0..values.len())
                .map(|i| byte_lengths(values.slice(i, 1).as_ref()))
                .collect::<Result<_, _>>()?;
            dictionary
                .normalized_keys()
                .iter()
                .enumerate()
                .filter(|(row, _)| !array.is_null(*row))
                .map(|(_, key)| lengths.get(*key).copied().unwrap_or(0))
                .sum()
        }
        other => return Err(arrow_error(format!("BM2 data column of type {other}"))),
    })
}

/// BM5's list column with every item + 1 and [`APPENDED_ELEMENT`] at the end of each list.
fn rewrite_lists(list: &ListArray, mut stat: u64) -> Result<(ListArray, u64), ScenarioError> {
    let items = list
        .values()
        .as_primitive_opt::<Float64Type>()
        .ok_or_else(|| arrow_error("BM5 list items are not Float64"))?;
    if items.null_count() > 0 {
        return Err(arrow_error("BM5 list items hold nulls"));
    }
    let old = list.value_offsets();
    let mut values = Vec::with_capacity(items.len() + list.len());
    let mut offsets = Vec::with_capacity(list.len() + 1);
    offsets.push(0i32);
    for row in 0..list.len() {
        let (start, end) = (old[row] as usize, old[row + 1] as usize);
        if !list.is_null(row) {
            for v in &items.values()[start..end] {
                let v = v + 1.0;
                stat = mix(stat, v.to_bits());
                values.push(v);
            }
            values.push(APPENDED_ELEMENT);
            stat = mix(stat, APPENDED_ELEMENT.to_bits());
        }
        let length = i32::try_from(values.len()).map_err(|_| arrow_error("list too long"))?;
        offsets.push(length);
    }
    let item_field = match list.data_type() {
        DataType::List(field) => field.clone(),
        other => return Err(arrow_error(format!("BM5 values of type {other}"))),
    };
    let rewritten = ListArray::try_new(
        item_field,
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Arc::new(Float64Array::from(values)),
        list.nulls().cloned(),
    )
    .map_err(arrow_error)?;
    Ok((rewritten, stat))
}

/// A column of `n` copies of `value`, of Arrow type `data_type`.
fn repeated(data_type: &DataType, value: &Value, n: usize) -> Result<ArrayRef, ScenarioError> {
    let mismatch = || arrow_error(format!("BM6 value {value:?} for Arrow type {data_type}"));
    Ok(match (data_type, value) {
        (DataType::Int64, Value::Int64(v)) => Arc::new(Int64Array::from_value(*v, n)),
        (DataType::Int32, Value::Int64(v)) => Arc::new(Int32Array::from_value(
            i32::try_from(*v).map_err(|_| mismatch())?,
            n,
        )),
        (DataType::UInt64, Value::Uint64(v)) => Arc::new(UInt64Array::from_value(*v, n)),
        (DataType::Float64, Value::Double(v)) => Arc::new(Float64Array::from_value(*v, n)),
        (DataType::Float32, Value::Double(v)) => Arc::new(Float32Array::from_value(*v as f32, n)),
        (DataType::Boolean, Value::Bool(v)) => Arc::new(BooleanArray::from(vec![*v; n])),
        (DataType::Binary, Value::String(s)) => {
            Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(s, n)))
        }
        (DataType::LargeBinary, Value::String(s)) => Arc::new(LargeBinaryArray::from_iter_values(
            std::iter::repeat_n(s, n),
        )),
        (DataType::Utf8 | DataType::LargeUtf8, Value::String(s)) => {
            let text = std::str::from_utf8(s).map_err(|_| mismatch())?;
            if matches!(data_type, DataType::Utf8) {
                Arc::new(StringArray::from_iter_values(std::iter::repeat_n(text, n)))
            } else {
                Arc::new(LargeStringArray::from_iter_values(std::iter::repeat_n(
                    text, n,
                )))
            }
        }
        (DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, _), Value::Uint64(v)) => {
            let v = i64::try_from(*v).map_err(|_| mismatch())?;
            Arc::new(
                PrimitiveArray::<arrow_array::types::TimestampMicrosecondType>::from_value(v, n)
                    .with_data_type(data_type.clone()),
            )
        }
        _ => return Err(mismatch()),
    })
}
