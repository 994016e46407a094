//! Each scenario's output, for every format and path, against the scenario's definition
//! computed here on owned values: BM1/BM2 count what they should, BM3 increments exactly the
//! counter, BM4 adds the column at the right place, BM5 rewrites the list, BM6 writes the
//! fixed row. Plus: damaged input gives an error, never a panic.

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

use shapeshift_formats::registry::{open_sink, open_source, FormatKind};
use shapeshift_formats::table::{value_from_ref, RowPosition};
use shapeshift_lab::datasets::{bm6_fixed_row, Cardinality, Dataset};
use shapeshift_lab::scenarios::{
    has_native_path, run_job, JobPath, Scenario, APPENDED_ELEMENT, COUNTER_COLUMN,
    EXTRA_COLUMN_NAME,
};
use shapeshift_types::{TableSchema, Value};

const FORMATS: [FormatKind; 7] = [
    FormatKind::Yson,
    FormatKind::Skiff,
    FormatKind::Protobuf,
    FormatKind::ProtobufDynamic,
    FormatKind::Msgpack,
    FormatKind::Json,
    FormatKind::Arrow,
];

#[derive(Clone, Default)]
struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Serializes `rows` in `format`, or `None` when the format is not available here yet.
fn serialize(format: FormatKind, schema: &TableSchema, rows: &[Vec<Value>]) -> Option<Vec<u8>> {
    let out = SharedBuffer::default();
    let output = Box::new(out.clone());
    let mut sink = if format == FormatKind::Arrow {
        shapeshift_formats::arrow::rows::sink(std::slice::from_ref(schema), output).ok()?
    } else {
        open_sink(format, std::slice::from_ref(schema), output).ok()?
    };
    for row in rows {
        sink.write_owned_row(&RowPosition::default(), row).unwrap();
    }
    sink.finish().unwrap();
    let bytes = out.0.lock().unwrap().clone();
    Some(bytes)
}

fn deserialize(format: FormatKind, schema: &TableSchema, bytes: Vec<u8>) -> Vec<Vec<Value>> {
    let input = Box::new(Cursor::new(bytes));
    let mut source = if format == FormatKind::Arrow {
        shapeshift_formats::arrow::rows::source(std::slice::from_ref(schema), input).unwrap()
    } else {
        open_source(format, std::slice::from_ref(schema), input).unwrap()
    };
    let mut rows = Vec::new();
    while let Some(row) = source.next_row().unwrap() {
        rows.push(
            row.values
                .iter()
                .zip(&schema.columns)
                .map(|(v, c)| value_from_ref(*v, &c.ty).unwrap())
                .collect(),
        );
    }
    rows
}

fn is_zero(value: &Value) -> bool {
    matches!(value, Value::Int64(0) | Value::Uint64(0))
        || matches!(value, Value::Double(v) if *v == 0.0)
}

/// The scenario's output, from its definition.
fn expected(scenario: Scenario, input: &[Vec<Value>], bm6_rows: u64) -> Vec<Vec<Value>> {
    let stats = |total: u64| {
        vec![vec![
            Value::Uint64(input.len() as u64),
            Value::Uint64(total),
        ]]
    };
    match scenario {
        Scenario::Bm1 => stats(input.iter().flatten().filter(|v| is_zero(v)).count() as u64),
        Scenario::Bm2 => stats(
            input
                .iter()
                .map(|row| match &row[1] {
                    Value::String(s) => s.len() as u64,
                    _ => panic!("BM2 data is a string"),
                })
                .sum(),
        ),
        Scenario::Bm3 => input
            .iter()
            .map(|row| {
                let mut row = row.clone();
                if let Value::Int64(v) = &mut row[COUNTER_COLUMN] {
                    *v += 1;
                }
                row
            })
            .collect(),
        Scenario::Bm4 | Scenario::Bm4Mid => input
            .iter()
            .map(|row| {
                let Value::Int64(counter) = row[COUNTER_COLUMN] else {
                    panic!("counter is int64")
                };
                let mut row = row.clone();
                let at = if scenario == Scenario::Bm4 {
                    row.len()
                } else {
                    5
                };
                row.insert(at, Value::Int64(counter * 2));
                row
            })
            .collect(),
        Scenario::Bm5 => input
            .iter()
            .map(|row| {
                let mut row = row.clone();
                let Value::List(items) = &mut row[1] else {
                    panic!("values is a list")
                };
                for item in items.iter_mut() {
                    let Value::Double(v) = item else {
                        panic!("double")
                    };
                    *v += 1.0;
                }
                items.push(Value::Double(APPENDED_ELEMENT));
                row
            })
            .collect(),
        Scenario::Bm6 => (0..bm6_rows).map(|_| bm6_fixed_row()).collect(),
    }
}

/// The paths `format` can run in this build (Arrow's common-interface entry may be missing).
fn paths(format: FormatKind) -> Vec<JobPath> {
    let schema = Dataset::Bm2.schema();
    let mut paths = Vec::new();
    if open_sink(format, std::slice::from_ref(&schema), Box::new(Vec::new())).is_ok() {
        paths.push(JobPath::Interface);
    }
    if has_native_path(format) {
        paths.push(JobPath::Native);
    }
    paths
}

fn check(scenario: Scenario, cardinality: Cardinality) {
    check_rows(scenario, cardinality, 23);
}

fn check_rows(scenario: Scenario, cardinality: Cardinality, rows: usize) {
    let bm6_rows = 7;
    let input = match scenario.input() {
        Some(dataset) => dataset.rows(rows, 11, cardinality),
        None => Vec::new(),
    };
    let want = expected(scenario, &input, bm6_rows);
    let mut stats = Vec::new();
    for format in FORMATS {
        let Some(bytes) = serialize(format, &scenario.input_schema(), &input) else {
            continue; // the format is not reachable through the interface in this build
        };
        for path in paths(format) {
            let out = SharedBuffer::default();
            let summary = run_job(
                scenario,
                format,
                path,
                Box::new(Cursor::new(bytes.clone())),
                Box::new(out.clone()),
                bm6_rows,
            )
            .unwrap_or_else(|e| panic!("{} {format} {path:?}: {e}", scenario.name()));
            let written = out.0.lock().unwrap().clone();
            let got = deserialize(format, &scenario.output_schema(), written);
            assert_eq!(got, want, "{} {format} {path:?}", scenario.name());
            assert_eq!(summary.rows_in, input.len() as u64);
            assert_eq!(summary.rows_out, want.len() as u64);
            stats.push((format, path, summary.stat));
        }
    }
    assert!(
        stats.len() >= 9,
        "at least YSON, Skiff, Protobuf x2 paths, dynamic, msgpack, json"
    );
    let first = stats[0].2;
    for (format, path, stat) in &stats {
        assert_eq!(
            *stat,
            first,
            "{} {format} {path:?} statistic",
            scenario.name()
        );
    }
}

#[test]
fn bm1_counts_zeros_in_every_format() {
    check(Scenario::Bm1, Cardinality::High);
    check(Scenario::Bm1, Cardinality::Low);
}

#[test]
fn bm2_sums_data_lengths_in_every_format() {
    check(Scenario::Bm2, Cardinality::High);
}

#[test]
fn bm3_increments_exactly_the_counter_in_every_format() {
    check(Scenario::Bm3, Cardinality::High);
    check(Scenario::Bm3, Cardinality::Low);
}

#[test]
fn bm4_adds_the_column_last_in_every_format() {
    check(Scenario::Bm4, Cardinality::High);
}

#[test]
fn bm4_mid_adds_the_column_in_the_middle_in_every_format() {
    check(Scenario::Bm4Mid, Cardinality::High);
    let schema = Scenario::Bm4Mid.output_schema();
    assert_eq!(schema.columns[5].name, EXTRA_COLUMN_NAME);
    assert_eq!(schema.columns.len(), 11);
    assert_eq!(
        Scenario::Bm4.output_schema().columns[10].name,
        EXTRA_COLUMN_NAME
    );
}

#[test]
fn bm5_rewrites_the_list_in_every_format() {
    check(Scenario::Bm5, Cardinality::High);
}

#[test]
fn bm6_writes_the_fixed_row_in_every_format() {
    check(Scenario::Bm6, Cardinality::High);
}

#[test]
fn many_batches_and_dictionaries_keep_the_rows() {
    // More rows than one Arrow batch (8192), low cardinality so string columns become
    // dictionaries in the first batch.
    check_rows(Scenario::Bm3, Cardinality::Low, 9000);
    check_rows(Scenario::Bm4Mid, Cardinality::Low, 9000);
    check_rows(Scenario::Bm2, Cardinality::Low, 9000);
}

#[test]
fn formats_without_a_fast_path_refuse_the_native_path() {
    for format in [
        FormatKind::ProtobufDynamic,
        FormatKind::Msgpack,
        FormatKind::Json,
    ] {
        let error = run_job(
            Scenario::Bm6,
            format,
            JobPath::Native,
            Box::new(Cursor::new(Vec::new())),
            Box::new(SharedBuffer::default()),
            1,
        )
        .unwrap_err();
        assert!(error.message.contains("no fast path"), "{error}");
    }
}

#[test]
fn damaged_input_gives_an_error_never_a_panic() {
    for scenario in [
        Scenario::Bm1,
        Scenario::Bm3,
        Scenario::Bm4Mid,
        Scenario::Bm5,
    ] {
        let dataset = scenario.input().unwrap_or(Dataset::Bm3);
        let rows = dataset.rows(
            if dataset == Dataset::Bm1 { 3 } else { 12 },
            5,
            Cardinality::High,
        );
        for format in [
            FormatKind::Yson,
            FormatKind::Skiff,
            FormatKind::Protobuf,
            FormatKind::Arrow,
        ] {
            let bytes = serialize(format, &dataset.schema(), &rows).unwrap();
            let cuts = [1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 3];
            for path in paths(format) {
                let mut errors = 0;
                for &cut in &cuts {
                    let damaged = bytes[..cut].to_vec();
                    let result = run_job(
                        scenario,
                        format,
                        path,
                        Box::new(Cursor::new(damaged)),
                        Box::new(SharedBuffer::default()),
                        0,
                    );
                    if let Err(error) = result {
                        assert!(!error.message.is_empty());
                        errors += 1;
                    }
                }
                // Cutting mid-row must be noticed at least for most cuts.
                assert!(
                    errors >= 2,
                    "{} {format} {path:?}: {errors} errors",
                    scenario.name()
                );
                // Flipped bytes: an error or a result, never a panic.
                for at in (0..bytes.len()).step_by(bytes.len() / 17 + 1) {
                    let mut flipped = bytes.clone();
                    flipped[at] ^= 0xA5;
                    let _ = run_job(
                        scenario,
                        format,
                        path,
                        Box::new(Cursor::new(flipped)),
                        Box::new(SharedBuffer::default()),
                        0,
                    );
                }
            }
        }
    }
}

/// BM1-columnar: the same statistic and output as BM1 in every format through the
/// interface (rows transposed into column blocks) and on Arrow's batches; rows spanning
/// more than one block; row formats refuse a columnar fast path.
#[test]
fn bm1_columnar_counts_what_bm1_counts_in_every_format() {
    use shapeshift_lab::scenarios::{has_columnar_native_path, run_columnar_job};
    for (rows, cardinality) in [(23, Cardinality::High), (8200, Cardinality::Low)] {
        let input = Dataset::Bm1.rows(rows, 17, cardinality);
        let want = expected(Scenario::Bm1, &input, 0);
        let mut stats = Vec::new();
        for format in FORMATS {
            let Some(bytes) = serialize(format, &Dataset::Bm1.schema(), &input) else {
                continue;
            };
            let row_logic = run_job(
                Scenario::Bm1,
                format,
                JobPath::Interface,
                Box::new(Cursor::new(bytes.clone())),
                Box::new(SharedBuffer::default()),
                0,
            )
            .unwrap();
            for path in [JobPath::Interface, JobPath::Native] {
                let out = SharedBuffer::default();
                let result = run_columnar_job(
                    Scenario::Bm1,
                    format,
                    path,
                    Box::new(Cursor::new(bytes.clone())),
                    Box::new(out.clone()),
                );
                if path == JobPath::Native && !has_columnar_native_path(format) {
                    let error = result.unwrap_err();
                    assert!(error.message.contains("no columnar fast path"), "{error}");
                    continue;
                }
                let summary = result.unwrap_or_else(|e| panic!("{format} {path:?}: {e}"));
                let written = out.0.lock().unwrap().clone();
                let got = deserialize(format, &Scenario::Bm1.output_schema(), written);
                assert_eq!(got, want, "{format} {path:?}");
                assert_eq!(summary.stat, row_logic.stat, "{format} {path:?}");
                assert_eq!(summary.rows_in, rows as u64);
                stats.push(summary.stat);
            }
        }
        assert!(stats.len() >= 6, "{stats:?}");
        assert!(stats.windows(2).all(|w| w[0] == w[1]), "{stats:?}");
    }
}

#[test]
fn only_bm1_has_a_columnar_variant() {
    use shapeshift_lab::scenarios::{has_columnar_variant, run_columnar_job};
    for scenario in Scenario::ALL {
        assert_eq!(has_columnar_variant(scenario), scenario == Scenario::Bm1);
    }
    let error = run_columnar_job(
        Scenario::Bm3,
        FormatKind::Yson,
        JobPath::Interface,
        Box::new(Cursor::new(Vec::new())),
        Box::new(SharedBuffer::default()),
    )
    .unwrap_err();
    assert!(
        error.message.contains("no column-ordered variant"),
        "{error}"
    );
}

#[test]
fn damaged_input_to_the_columnar_variant_gives_an_error_never_a_panic() {
    use shapeshift_lab::scenarios::run_columnar_job;
    let rows = Dataset::Bm1.rows(3, 5, Cardinality::High);
    for format in [
        FormatKind::Yson,
        FormatKind::Skiff,
        FormatKind::Protobuf,
        FormatKind::Arrow,
    ] {
        let bytes = serialize(format, &Dataset::Bm1.schema(), &rows).unwrap();
        for path in [JobPath::Interface, JobPath::Native] {
            if path == JobPath::Native && format != FormatKind::Arrow {
                continue;
            }
            let mut errors = 0;
            for cut in [1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 3] {
                let result = run_columnar_job(
                    Scenario::Bm1,
                    format,
                    path,
                    Box::new(Cursor::new(bytes[..cut].to_vec())),
                    Box::new(SharedBuffer::default()),
                );
                if let Err(error) = result {
                    assert!(!error.message.is_empty());
                    errors += 1;
                }
            }
            assert!(errors >= 2, "{format} {path:?}: {errors} errors");
            for at in (0..bytes.len()).step_by(bytes.len() / 17 + 1) {
                let mut flipped = bytes.clone();
                flipped[at] ^= 0xA5;
                let _ = run_columnar_job(
                    Scenario::Bm1,
                    format,
                    path,
                    Box::new(Cursor::new(flipped)),
                    Box::new(SharedBuffer::default()),
                );
            }
        }
    }
}
