//! Columns written by older writers (checked in under `tests/data/`: `v1_*` by the
//! format-version-1 writer, one per encoding it could write; `v2_*` by the version-2 writer,
//! whose chunked blocks had a header per chunk and no frame table, at the top level and as cascaded parts;
//! `v3_*` by the version-3 writer, whose trailer had no shared dictionary fields) still open,
//! decode, `get` and `take` to the values they were written from (`golden_values.rs`) after the
//! format moved on.

mod golden_values;

use golden_values::*;
use shapeshift_columns::{Column, ColumnValue};

fn open(stem: &str) -> Column {
    let version: u16 = stem[1..2].parse().expect("stem starts with v<version>_");
    let path = format!("{}/tests/data/{stem}.sscol", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(
        &bytes[8..10],
        &version.to_le_bytes(),
        "{stem} is a version-{version} column"
    );
    Column::open(bytes).unwrap_or_else(|e| panic!("{stem}: {e}"))
}

fn check<T: ColumnValue>(stem: &str, encoding: &str, expected: &[T]) {
    let column = open(stem);
    if !encoding.is_empty() {
        assert!(
            column
                .composition()
                .iter()
                .any(|(e, _)| e.name() == encoding),
            "{stem}: {:?}",
            column.composition()
        );
    }
    let lanes = |values: &[T]| values.iter().map(|v| v.to_lane()).collect::<Vec<_>>();
    assert_eq!(
        lanes(&column.decode::<T>().unwrap()),
        lanes(expected),
        "{stem}"
    );
    // Sparse rows (each block's own take kernel) and dense ones (blocks decoded and picked).
    for step in [101, 3] {
        let rows: Vec<usize> = (0..expected.len()).step_by(step).collect();
        let taken = column.take::<T>(&rows).unwrap();
        let wanted: Vec<T> = rows.iter().map(|&r| expected[r]).collect();
        assert_eq!(lanes(&taken), lanes(&wanted), "{stem} take every {step}");
    }
    let last = expected.len() - 1;
    assert_eq!(
        column.get::<T>(last).unwrap().to_lane(),
        expected[last].to_lane()
    );
}

#[test]
fn version_1_columns_of_every_encoding_still_read() {
    for name in GOLDEN_I64 {
        check(&format!("v1_i64_{name}"), name, &golden_i64(name));
    }
    for name in GOLDEN_F64 {
        check(&format!("v1_f64_{name}"), name, &golden_f64(name));
    }
    check("v1_i32_balanced", "", &golden_mixed_i32());
}

#[test]
fn version_2_chunked_blocks_without_frame_table_still_read() {
    check(
        "v2_i64_chunked_bit_packed",
        "chunked_bit_packed",
        &golden_i64("chunked_bit_packed"),
    );
    // Run ends in chunk frames, as parts of cascaded run-length blocks.
    check(
        "v2_i32_cascaded_run_length",
        "cascaded_run_length",
        &golden_runs_i32(),
    );
}

#[test]
fn version_3_columns_without_shared_dictionary_fields_still_read() {
    check("v3_i32_balanced", "", &golden_mixed_i32());
    for name in ["cascaded_dictionary", "real_doubles"] {
        check(&format!("v3_f64_{name}"), name, &golden_f64(name));
    }
}
