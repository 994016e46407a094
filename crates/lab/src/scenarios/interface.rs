//! Every scenario through the common row interface: one code path for all formats.
//!
//! Rows arrive as borrowed [`ValueRef`]s and leave through [`RowSink::write_row`]; only BM5,
//! whose list column is a composite (binary YSON through the interface), owns its values.

use std::io::{Read, Write};

use shapeshift_formats::registry::{open_sink, open_source, FormatKind};
use shapeshift_formats::table::{value_from_ref, RowPosition};
use shapeshift_types::{Value, ValueRef};

use super::column_blocks::ColumnBlock;
use super::{
    extra_value, is_zero_value, mix, stats_row, JobSummary, Scenario, ScenarioError,
    APPENDED_ELEMENT, BM2_DATA_COLUMN, COUNTER_COLUMN,
};
use crate::datasets::bm6_fixed_row;

pub(super) fn run(
    scenario: Scenario,
    format: FormatKind,
    input: Box<dyn Read>,
    output: Box<dyn Write>,
    bm6_rows: u64,
) -> Result<JobSummary, ScenarioError> {
    let out_schema = scenario.output_schema();
    let mut sink = open_sink(format, std::slice::from_ref(&out_schema), output)?;
    let position = RowPosition::default();
    let mut summary = JobSummary::default();
    if scenario == Scenario::Bm6 {
        let row = bm6_fixed_row();
        for _ in 0..bm6_rows {
            sink.write_owned_row(&position, &row)?;
        }
        sink.finish()?;
        summary.rows_out = bm6_rows;
        summary.stat = bm6_rows;
        return Ok(summary);
    }
    let in_schema = scenario.input_schema();
    let mut source = open_source(format, std::slice::from_ref(&in_schema), input)?;
    let mut scratch: Vec<ValueRef<'static>> = Vec::new();
    let mut owned: Vec<Value> = Vec::new();
    let mut total = 0u64;
    // Blocks save the per-row call where a format decodes rows in runs.
    while let Some(block) = source.next_rows()? {
        for row in 0..block.rows {
            let values = block.values_of(row);
            summary.rows_in += 1;
            match scenario {
                Scenario::Bm1 => {
                    total += values.iter().filter(|v| is_zero_value(v)).count() as u64;
                }
                Scenario::Bm2 => {
                    if let Some(ValueRef::String(data)) = values.get(BM2_DATA_COLUMN) {
                        total += data.len() as u64;
                    }
                }
                Scenario::Bm3 | Scenario::Bm4 | Scenario::Bm4Mid => {
                    let counter = match values.get(COUNTER_COLUMN) {
                        Some(ValueRef::Int64(v)) => *v,
                        other => {
                            return Err(ScenarioError::new(format!(
                                "row {}: counter is {other:?}, not an int64",
                                summary.rows_in - 1
                            )))
                        }
                    };
                    // The scratch vector outlives rows; its borrowed values are cleared before the
                    // row they borrow from goes away.
                    let mut refs = reuse(std::mem::take(&mut scratch));
                    refs.extend_from_slice(values);
                    let touched = match scenario.extra_position() {
                        None => {
                            let incremented = counter.wrapping_add(1);
                            refs[COUNTER_COLUMN] = ValueRef::Int64(incremented);
                            incremented
                        }
                        Some(at) => {
                            let extra = extra_value(counter);
                            refs.insert(at, ValueRef::Int64(extra));
                            extra
                        }
                    };
                    summary.stat = mix(summary.stat, touched as u64);
                    // Output rows go to table 0 with no system attributes (a map job's output).
                    sink.write_row(&position, &refs)?;
                    scratch = reuse(refs);
                }
                Scenario::Bm5 => {
                    owned.clear();
                    for (value, column) in values.iter().zip(&in_schema.columns) {
                        owned.push(value_from_ref(*value, &column.ty).map_err(|e| {
                            ScenarioError::new(format!(
                                "row {}, column {}: {e}",
                                summary.rows_in - 1,
                                column.name
                            ))
                        })?);
                    }
                    let Some(Value::List(items)) = owned.get_mut(1) else {
                        return Err(ScenarioError::new("BM5: column values is not a list"));
                    };
                    summary.stat = increment_list(items, summary.stat)?;
                    sink.write_owned_row(&position, &owned)?;
                }
                Scenario::Bm6 => unreachable!("BM6 returned above"),
            }
        }
    }
    if matches!(scenario, Scenario::Bm1 | Scenario::Bm2) {
        sink.write_owned_row(&position, &stats_row(summary.rows_in, total))?;
        summary.rows_out = 1;
        summary.stat = total;
    } else {
        summary.rows_out = summary.rows_in;
    }
    sink.finish()?;
    Ok(summary)
}

/// BM1's column-ordered variant: rows transposed into column blocks, zeros counted per
/// column over each full block.
pub(super) fn run_columnar(
    scenario: Scenario,
    format: FormatKind,
    input: Box<dyn Read>,
    output: Box<dyn Write>,
) -> Result<JobSummary, ScenarioError> {
    let in_schema = scenario.input_schema();
    let out_schema = scenario.output_schema();
    let mut source = open_source(format, std::slice::from_ref(&in_schema), input)?;
    let mut block = ColumnBlock::for_numeric_table(&in_schema)?;
    let mut summary = JobSummary::default();
    let mut total = 0u64;
    while let Some(rows) = source.next_rows()? {
        for row in 0..rows.rows {
            block.push_row(rows.values_of(row), summary.rows_in)?;
            summary.rows_in += 1;
            if block.is_full() {
                total += block.drain_zeros();
            }
        }
    }
    total += block.drain_zeros();
    let mut sink = open_sink(format, std::slice::from_ref(&out_schema), output)?;
    sink.write_owned_row(&RowPosition::default(), &stats_row(summary.rows_in, total))?;
    sink.finish()?;
    summary.rows_out = 1;
    summary.stat = total;
    Ok(summary)
}

/// Adds one to every element and appends [`APPENDED_ELEMENT`]; returns the updated checksum.
pub(crate) fn increment_list(items: &mut Vec<Value>, mut stat: u64) -> Result<u64, ScenarioError> {
    for item in items.iter_mut() {
        match item {
            Value::Double(v) => {
                *v += 1.0;
                stat = mix(stat, v.to_bits());
            }
            other => return Err(ScenarioError::new(format!("BM5: list item {other:?}"))),
        }
    }
    items.push(Value::Double(APPENDED_ELEMENT));
    Ok(mix(stat, APPENDED_ELEMENT.to_bits()))
}

/// An empty vector of borrowed values reusing `v`'s allocation, with any lifetime.
fn reuse<'a, 'b>(mut v: Vec<ValueRef<'a>>) -> Vec<ValueRef<'b>> {
    v.clear();
    v.into_iter().map(|_| unreachable!()).collect()
}
