//! Columns written by the format-version-1 writer (checked in under `tests/data/`, one per
//! encoding it could write) still open, decode, `get` and `take` to the values they were
//! written from (`golden_values.rs`) after the format moved on.

mod golden_values;

use golden_values::*;
use shapeshift_columns::{Column, ColumnValue};

fn open(stem: &str) -> Column {
    let path = format!("{}/tests/data/{stem}.sscol", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(
        &bytes[8..10],
        &1u16.to_le_bytes(),
        "{stem} is a version-1 column"
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
    let rows: Vec<usize> = (0..expected.len()).step_by(101).collect();
    let taken = column.take::<T>(&rows).unwrap();
    let wanted: Vec<T> = rows.iter().map(|&r| expected[r]).collect();
    assert_eq!(lanes(&taken), lanes(&wanted), "{stem} take");
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
