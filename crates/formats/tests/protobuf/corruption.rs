//! Protobuf: truncated, corrupt and hostile input gives a FormatError naming the format and
//! the byte offset, never a panic.

use crate::support;

use proptest::prelude::*;
use shapeshift_formats::protobuf::{self, StaticMessage};
use shapeshift_types::testing::arb_value;
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value};
use support::*;

fn read_prefix(
    source: SourceFn,
    schemas: &[TableSchema],
    bytes: &[u8],
) -> Result<usize, shapeshift_formats::table::FormatError> {
    let mut source = source(schemas, Box::new(std::io::Cursor::new(bytes.to_vec())))?;
    let mut rows = 0;
    while source.next_row()?.is_some() {
        rows += 1;
    }
    Ok(rows)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_truncation_is_an_error_or_a_shorter_stream((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let bytes = write_owned(protobuf::rows::dynamic_sink, &schemas, &plain_rows(rows)).unwrap();
        for cut in 0..bytes.len() {
            match read_prefix(protobuf::rows::dynamic_source, &schemas, &bytes[..cut]) {
                Ok(_) => {}
                Err(e) => {
                    prop_assert_eq!(e.format, "protobuf-dynamic");
                    prop_assert!(e.offset.is_some());
                    prop_assert!(e.offset.unwrap() <= cut as u64, "{e}");
                }
            }
        }
    }

    #[test]
    fn flipped_bytes_never_panic((schema, rows) in schema_with_rows(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let schemas = [schema];
        let mut bytes = write_owned(protobuf::rows::dynamic_sink, &schemas, &plain_rows(rows)).unwrap();
        if bytes.is_empty() { return Ok(()); }
        for (index, value) in flips {
            let i = index.index(bytes.len());
            bytes[i] ^= value;
        }
        let _ = read_prefix(protobuf::rows::dynamic_source, &schemas, &bytes);
    }

    #[test]
    fn static_bm5_survives_flips(rows in rows_of(&StaticMessage::Bm5.schema(), 1..4), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let schemas = [StaticMessage::Bm5.schema()];
        let mut bytes = write_owned(protobuf::rows::sink, &schemas, &plain_rows(rows)).unwrap();
        for (index, value) in flips {
            let i = index.index(bytes.len());
            bytes[i] ^= value;
        }
        if let Err(e) = read_prefix(protobuf::rows::source, &schemas, &bytes) {
            prop_assert_eq!(e.format, "protobuf");
            prop_assert!(e.offset.is_some());
        }
    }

    #[test]
    fn random_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64), column in shapeshift_types::testing::arb_type(3)) {
        let schemas = [TableSchema::new(vec![ColumnSchema::new("c", column)])];
        let _ = read_prefix(protobuf::rows::dynamic_source, &schemas, &bytes);
        let _ = arb_value; // the strategies module is linked for the helpers
    }
}

fn int8_schema() -> [TableSchema; 1] {
    [TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int8),
    )])]
}

#[test]
fn hostile_length_allocates_nothing_and_names_the_offset() {
    // A frame claiming 100 MiB with 3 bytes behind it.
    let mut bytes = (100u32 << 20).to_le_bytes().to_vec();
    bytes.extend_from_slice(&[8, 1, 2]);
    let e = read_prefix(protobuf::rows::dynamic_source, &int8_schema(), &bytes).unwrap_err();
    assert_eq!(e.offset, Some(7));
    assert!(
        e.to_string().starts_with("protobuf-dynamic: at byte 7"),
        "{e}"
    );
    // A length past the limit is an unknown marker.
    let e = read_prefix(
        protobuf::rows::dynamic_source,
        &int8_schema(),
        &0xFFFF_FFF0u32.to_le_bytes(),
    )
    .unwrap_err();
    assert_eq!(e.offset, Some(0));
}

#[test]
fn out_of_range_and_wrong_wire_types_are_errors() {
    // field 1 = 300 does not fit int8.
    let bytes = [3, 0, 0, 0, 0x08, 0xAC, 0x02];
    let e = read_prefix(protobuf::rows::dynamic_source, &int8_schema(), &bytes).unwrap_err();
    assert!(e.message.contains("\"x\""), "{e}");
    // field 1 with wire type 2.
    let bytes = [3, 0, 0, 0, 0x0A, 0x01, 0x00];
    let e = read_prefix(protobuf::rows::dynamic_source, &int8_schema(), &bytes).unwrap_err();
    assert_eq!(e.offset, Some(5), "{e}");
    assert!(e.message.contains("wire type"), "{e}");
    // A table index past the schemas.
    let bytes = [0xFF, 0xFF, 0xFF, 0xFF, 5, 0, 0, 0];
    let e = read_prefix(protobuf::rows::dynamic_source, &int8_schema(), &bytes).unwrap_err();
    assert!(e.message.contains("table index 5"), "{e}");
    // A value that does not fit is refused by the sink.
    let e = write_owned(
        protobuf::rows::dynamic_sink,
        &int8_schema(),
        &plain_rows(vec![vec![Value::Int64(1000)]]),
    )
    .unwrap_err();
    assert_eq!(e.format, "protobuf-dynamic");
}
