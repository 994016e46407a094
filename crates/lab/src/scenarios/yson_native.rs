//! The scenarios on YSON's fast path: the pull parser's events in, the event writer out.
//!
//! No row is ever materialized: a row is the events between a top-level `BeginMap` and its
//! `EndMap`, copied to the writer one by one, with the scenario's change made on the fly (the
//! counter's value replaced, a key/value pair inserted, list items rewritten). Control records
//! (`<row_index=..>#` and the like, an attribute map followed by an entity at the top level)
//! are skipped: a map job's output carries none. The depth is tracked here, from the events,
//! because an event borrows the parser.

use std::io::{BufWriter, Read, Write};

use shapeshift_formats::yson::{Event, PullParser, ReadSource, Writer, YsonFormat, YsonType};
use shapeshift_types::Value;

use super::{
    extra_value, mix, JobSummary, Scenario, ScenarioError, APPENDED_ELEMENT, EXTRA_COLUMN_NAME,
};
use crate::datasets::{bm6_fixed_row, Dataset};

type Parser = PullParser<ReadSource<Box<dyn Read>>>;
type Out = Writer<BufWriter<Box<dyn Write>>>;

fn yson_error(e: shapeshift_formats::yson::YsonError) -> ScenarioError {
    ScenarioError::new(format!("yson: {e}"))
}

pub(super) fn run(
    scenario: Scenario,
    input: Box<dyn Read>,
    output: Box<dyn Write>,
    bm6_rows: u64,
) -> Result<JobSummary, ScenarioError> {
    let mut out: Out = Writer::new(
        BufWriter::with_capacity(1 << 16, output),
        YsonFormat::Binary,
        YsonType::ListFragment,
    );
    let mut summary = JobSummary::default();
    if scenario == Scenario::Bm6 {
        write_bm6(&mut out, bm6_rows)?;
        summary.rows_out = bm6_rows;
        summary.stat = bm6_rows;
        finish(out)?;
        return Ok(summary);
    }
    let mut parser: Parser = PullParser::from_reader(input, YsonType::ListFragment);
    match scenario {
        Scenario::Bm1 | Scenario::Bm2 => {
            let total = if scenario == Scenario::Bm1 {
                count_zeros(&mut parser, &mut summary)?
            } else {
                sum_string_lengths(&mut parser, &mut summary, b"data")?
            };
            out.begin_map()?;
            out.key(b"rows")?;
            out.uint64(summary.rows_in)?;
            out.key(b"total")?;
            out.uint64(total)?;
            out.end_map()?;
            summary.rows_out = 1;
            summary.stat = total;
        }
        Scenario::Bm3 | Scenario::Bm4 | Scenario::Bm4Mid | Scenario::Bm5 => {
            copy_rows(&mut parser, &mut out, scenario, &mut summary)?;
            summary.rows_out = summary.rows_in;
        }
        Scenario::Bm6 => unreachable!("BM6 returned above"),
    }
    finish(out).map(|()| summary)
}

fn finish(out: Out) -> Result<(), ScenarioError> {
    let mut sink = out.finish()?;
    sink.flush()?;
    Ok(())
}

/// Skips the rest of a top-level control record after its `BeginAttributes`.
fn skip_control(parser: &mut Parser) -> Result<(), ScenarioError> {
    let mut depth = 1usize;
    while depth > 0 {
        match parser.next_event().map_err(yson_error)? {
            Some(Event::BeginAttributes | Event::BeginMap | Event::BeginList) => depth += 1,
            Some(Event::EndAttributes | Event::EndMap | Event::EndList) => depth -= 1,
            Some(_) => {}
            None => {
                return Err(ScenarioError::new(
                    "yson: stream ends inside a control record",
                ))
            }
        }
    }
    // The entity (or value) the attributes belong to.
    let offset = parser.offset();
    match parser.next_event().map_err(yson_error)? {
        Some(Event::Entity) => Ok(()),
        other => Err(ScenarioError::new(format!(
            "yson: after byte {offset}: a control record must be an entity, found {other:?}"
        ))),
    }
}

fn unexpected_top(parser: &Parser, what: &str) -> ScenarioError {
    ScenarioError::new(format!(
        "yson: at byte {}: a table row must be a map, found {what}",
        parser.offset()
    ))
}

/// BM1: every scalar of every row that equals zero.
fn count_zeros(parser: &mut Parser, summary: &mut JobSummary) -> Result<u64, ScenarioError> {
    let mut zeros = 0u64;
    let mut depth = 0usize;
    loop {
        let event = match parser.next_event().map_err(yson_error)? {
            Some(event) => event,
            None => return Ok(zeros),
        };
        match event {
            Event::Int64(v) => zeros += (v == 0) as u64,
            Event::Uint64(v) => zeros += (v == 0) as u64,
            Event::Double(v) => zeros += (v == 0.0) as u64,
            Event::BeginMap => {
                if depth == 0 {
                    summary.rows_in += 1;
                }
                depth += 1;
            }
            Event::BeginList => depth += 1,
            Event::EndMap | Event::EndList => depth -= 1,
            Event::BeginAttributes if depth == 0 => skip_control(parser)?,
            Event::BeginAttributes => depth += 1,
            Event::EndAttributes => depth -= 1,
            _ if depth == 0 => return Err(unexpected_top(parser, "a scalar")),
            _ => {}
        }
    }
}

/// BM2: the byte lengths of the strings under top-level key `key`.
fn sum_string_lengths(
    parser: &mut Parser,
    summary: &mut JobSummary,
    key: &[u8],
) -> Result<u64, ScenarioError> {
    let mut total = 0u64;
    let mut depth = 0usize;
    let mut wanted = false;
    loop {
        let event = match parser.next_event().map_err(yson_error)? {
            Some(event) => event,
            None => return Ok(total),
        };
        match event {
            Event::Key(k) if depth == 1 => wanted = k == key,
            Event::String(s) if wanted => {
                total += s.len() as u64;
                wanted = false;
            }
            Event::BeginMap => {
                if depth == 0 {
                    summary.rows_in += 1;
                }
                depth += 1;
                wanted = false;
            }
            Event::BeginList => {
                depth += 1;
                wanted = false;
            }
            Event::EndMap | Event::EndList => depth -= 1,
            Event::BeginAttributes if depth == 0 => skip_control(parser)?,
            Event::BeginAttributes => depth += 1,
            Event::EndAttributes => depth -= 1,
            _ if depth == 0 => return Err(unexpected_top(parser, "a scalar")),
            _ => wanted = false,
        }
    }
}

/// What the next value event is, after a top-level key of the row.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pending {
    Nothing,
    /// BM3's counter: write it plus one.
    Counter,
    /// BM4's counter: copy it, and insert the extra column after it (end) or at its place.
    CounterForExtra,
    /// BM5's list: rewrite its items.
    List,
}

/// BM3, BM4, BM4-mid and BM5: copies each row's events, changing what the scenario changes.
fn copy_rows(
    parser: &mut Parser,
    out: &mut Out,
    scenario: Scenario,
    summary: &mut JobSummary,
) -> Result<(), ScenarioError> {
    let counter_key: &[u8] = b"counter";
    let extra_position = scenario.extra_position();
    let columns = Dataset::Bm3.schema().columns;
    let insert_before: Option<&[u8]> = match extra_position {
        Some(at) if at < columns.len() => Some(columns[at].name.as_bytes()),
        _ => None,
    };
    let mut depth = 0usize;
    let mut pending = Pending::Nothing;
    let mut in_list = false;
    // BM4: the extra value of the current row, once its counter was read.
    let mut extra: Option<i64> = None;
    let mut extra_written = false;
    loop {
        let event = match parser.next_event().map_err(yson_error)? {
            Some(event) => event,
            None => return Ok(()),
        };
        if in_list {
            // BM5's list items: doubles, incremented; the list's end gets one more.
            match event {
                Event::Double(v) => {
                    let v = v + 1.0;
                    summary.stat = mix(summary.stat, v.to_bits());
                    out.double(v)?;
                }
                Event::EndList => {
                    out.double(APPENDED_ELEMENT)?;
                    summary.stat = mix(summary.stat, APPENDED_ELEMENT.to_bits());
                    out.end_list()?;
                    in_list = false;
                    depth -= 1;
                }
                other => {
                    return Err(ScenarioError::new(format!(
                        "yson: row {}: BM5 list item {other:?} is not a double",
                        summary.rows_in.saturating_sub(1)
                    )))
                }
            }
            continue;
        }
        match event {
            Event::Key(k) if depth == 1 => {
                if let (Some(before), Some(value)) = (insert_before, extra) {
                    if !extra_written && k == before {
                        out.key(EXTRA_COLUMN_NAME.as_bytes())?;
                        out.int64(value)?;
                        extra_written = true;
                    }
                }
                pending = match scenario {
                    Scenario::Bm3 if k == counter_key => Pending::Counter,
                    Scenario::Bm4 | Scenario::Bm4Mid if k == counter_key => {
                        Pending::CounterForExtra
                    }
                    Scenario::Bm5 if k == b"values" => Pending::List,
                    _ => Pending::Nothing,
                };
                out.key(k)?;
            }
            Event::Int64(v) if depth == 1 && pending == Pending::Counter => {
                let v = v.wrapping_add(1);
                summary.stat = mix(summary.stat, v as u64);
                out.int64(v)?;
                pending = Pending::Nothing;
            }
            Event::Int64(v) if depth == 1 && pending == Pending::CounterForExtra => {
                let value = extra_value(v);
                summary.stat = mix(summary.stat, value as u64);
                extra = Some(value);
                out.int64(v)?;
                pending = Pending::Nothing;
            }
            Event::BeginList if depth == 1 && pending == Pending::List => {
                out.begin_list()?;
                depth += 1;
                in_list = true;
                pending = Pending::Nothing;
            }
            Event::BeginMap => {
                if depth == 0 {
                    summary.rows_in += 1;
                    extra = None;
                    extra_written = false;
                }
                depth += 1;
                out.begin_map()?;
            }
            Event::EndMap => {
                depth -= 1;
                if depth == 0 && extra_position.is_some() {
                    match extra {
                        Some(value) if !extra_written => {
                            out.key(EXTRA_COLUMN_NAME.as_bytes())?;
                            out.int64(value)?;
                        }
                        Some(_) => {}
                        None => {
                            return Err(ScenarioError::new(format!(
                                "yson: at byte {}: row {} has no int64 counter",
                                parser.offset(),
                                summary.rows_in - 1
                            )))
                        }
                    }
                }
                out.end_map()?;
            }
            Event::BeginAttributes if depth == 0 => skip_control(parser)?,
            other => {
                if depth == 0 {
                    return Err(unexpected_top(parser, "a scalar or list"));
                }
                match other {
                    Event::BeginList | Event::BeginAttributes => depth += 1,
                    Event::EndList | Event::EndAttributes => depth -= 1,
                    _ => {}
                }
                if depth == 1 && !matches!(other, Event::Key(_)) {
                    pending = Pending::Nothing;
                }
                copy_event(out, other)?;
            }
        }
    }
}

fn copy_event(out: &mut Out, event: Event<'_>) -> std::io::Result<()> {
    match event {
        Event::BeginList => out.begin_list(),
        Event::EndList => out.end_list(),
        Event::BeginMap => out.begin_map(),
        Event::EndMap => out.end_map(),
        Event::BeginAttributes => out.begin_attributes(),
        Event::EndAttributes => out.end_attributes(),
        Event::Key(k) => out.key(k),
        Event::Entity => out.entity(),
        Event::Bool(v) => out.bool(v),
        Event::Int64(v) => out.int64(v),
        Event::Uint64(v) => out.uint64(v),
        Event::Double(v) => out.double(v),
        Event::String(s) => out.string(s),
    }
}

/// BM6: the fixed row, built as events `rows` times.
fn write_bm6(out: &mut Out, rows: u64) -> Result<(), ScenarioError> {
    let row = bm6_fixed_row();
    let columns = Dataset::Bm3.schema().columns;
    for _ in 0..rows {
        out.begin_map()?;
        for (value, column) in row.iter().zip(&columns) {
            out.key(column.name.as_bytes())?;
            match value {
                Value::Int64(v) => out.int64(*v)?,
                Value::Uint64(v) => out.uint64(*v)?,
                Value::Double(v) => out.double(*v)?,
                Value::Bool(v) => out.bool(*v)?,
                Value::String(s) => out.string(s)?,
                other => {
                    return Err(ScenarioError::new(format!(
                        "BM6 fixed row holds {other:?}, not a scalar"
                    )))
                }
            }
        }
        out.end_map()?;
    }
    Ok(())
}
