//! Arrow IPC: truncated, corrupt or mismatched input gives a FormatError naming the format
//! and the byte offset reached, never a panic.

use crate::support;

use proptest::prelude::*;
use shapeshift_formats::arrow;
use shapeshift_formats::table::FormatError;
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value};
use support::*;

fn read_count(schemas: &[TableSchema], bytes: &[u8]) -> Result<usize, FormatError> {
    read_all(arrow::rows::source, schemas, bytes.to_vec()).map(|rows| rows.len())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn truncations_are_errors_with_offsets((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let bytes = write_owned(arrow::rows::sink, &schemas, &plain_rows(rows)).unwrap();
        for cut in (0..bytes.len()).step_by(7) {
            if let Err(e) = read_count(&schemas, &bytes[..cut]) {
                prop_assert_eq!(e.format, "arrow");
                prop_assert!(e.offset.is_some_and(|o| o <= cut as u64), "{}", e);
            }
        }
    }

    #[test]
    fn flipped_bytes_never_panic((schema, rows) in schema_with_rows(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let schemas = [schema];
        let mut bytes = write_owned(arrow::rows::sink, &schemas, &plain_rows(rows)).unwrap();
        for (index, value) in flips {
            let i = index.index(bytes.len());
            bytes[i] ^= value;
        }
        if let Err(e) = read_count(&schemas, &bytes) {
            prop_assert_eq!(e.format, "arrow");
        }
    }
}

#[test]
fn a_stream_of_another_schema_is_refused() {
    let written = [TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )])];
    let expected = [TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Utf8),
    )])];
    let bytes = write_owned(
        arrow::rows::sink,
        &written,
        &plain_rows(vec![vec![Value::Int64(1)]]),
    )
    .unwrap();
    let e = read_count(&expected, &bytes).unwrap_err();
    assert!(e.message.contains("\"x\""), "{e}");
    assert!(e.offset.is_some());
}

#[test]
fn garbage_is_an_error() {
    let schemas = [TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )])];
    let e = read_count(
        &schemas,
        b"\xff\xff\xff\xff\x10\x00\x00\x00garbage garbage!",
    )
    .unwrap_err();
    assert_eq!(e.format, "arrow");
    let e = read_count(
        &schemas,
        &[0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f, 1, 2, 3],
    )
    .unwrap_err();
    assert!(e.offset.is_some(), "{e}");
}
