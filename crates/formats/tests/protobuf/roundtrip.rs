//! Protobuf (static and dynamic): every value of random deep schemas survives
//! rows -> bytes -> rows; static and dynamic codecs read each other and write the same bytes.

use crate::support;

use proptest::prelude::*;
use shapeshift_formats::protobuf::dynamic::{proto_schema, RowCodec};
use shapeshift_formats::protobuf::messages::{Bm1Row, Bm2Row, Bm3Row, Bm5Row};
use shapeshift_formats::protobuf::{self, LabMessage, StaticMessage};
use shapeshift_formats::table::RowPosition;
use shapeshift_types::testing::arb_schema;
use shapeshift_types::{PrimitiveType, TableSchema, Type, Value};
use support::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn dynamic_rows_round_trip((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let rows = plain_rows(rows);
        let bytes = write_owned(protobuf::rows::dynamic_sink, &schemas, &rows).unwrap();
        let back = read_all(protobuf::rows::dynamic_source, &schemas, bytes.clone()).unwrap();
        prop_assert_eq!(&back, &rows);
        // Writing the views read back gives the same bytes.
        let again = copy_through_views(protobuf::rows::dynamic_source, protobuf::rows::dynamic_sink, &schemas, bytes.clone()).unwrap();
        prop_assert_eq!(again, bytes);
    }

    #[test]
    fn dynamic_codec_round_trips_single_messages((schema, rows) in schema_with_rows()) {
        let codec = RowCodec::new(&schema);
        for row in rows {
            let mut message = Vec::new();
            codec.encode_row(&row, &mut message).unwrap();
            prop_assert_eq!(codec.decode_row(&message).unwrap(), row);
        }
    }

    #[test]
    fn arbitrary_names_and_flags_round_trip(schema in arb_schema()) {
        // Names of any UTF-8 do not matter to the wire layout: only field numbers do.
        let rows: Vec<Vec<Value>> = Vec::new();
        let schemas = [schema];
        let bytes = write_owned(protobuf::rows::dynamic_sink, &schemas, &plain_rows(rows)).unwrap();
        prop_assert_eq!(read_all(protobuf::rows::dynamic_source, &schemas, bytes).unwrap(), vec![]);
        let text = proto_schema(&schemas[0], "Row");
        prop_assert!(text.starts_with("syntax = \"proto3\";"));
    }

    #[test]
    fn static_messages_round_trip_and_match_dynamic_bytes(
        (which, rows) in proptest::sample::select(StaticMessage::ALL.to_vec())
            .prop_flat_map(|which| (Just(which), rows_of(&which.schema(), 0..5)))
    ) {
        let schemas = [which.schema()];
        let rows = plain_rows(rows);
        let static_bytes = write_owned(protobuf::rows::sink, &schemas, &rows).unwrap();
        let dynamic_bytes = write_owned(protobuf::rows::dynamic_sink, &schemas, &rows).unwrap();
        // The compiled messages follow the dynamic layout rules byte for byte.
        prop_assert_eq!(&static_bytes, &dynamic_bytes);
        prop_assert_eq!(&read_all(protobuf::rows::source, &schemas, static_bytes.clone()).unwrap(), &rows);
        prop_assert_eq!(&read_all(protobuf::rows::dynamic_source, &schemas, static_bytes.clone()).unwrap(), &rows);
        let again = copy_through_views(protobuf::rows::source, protobuf::rows::sink, &schemas, static_bytes.clone()).unwrap();
        prop_assert_eq!(again, static_bytes);
    }
}

/// The frames prost writes for `rows` (u32 LE length, message; end marker).
fn prost_frames<M: LabMessage>(rows: &[Vec<Value>]) -> Vec<u8> {
    let mut out = Vec::new();
    for row in rows {
        let message = M::from_row(row).unwrap();
        out.extend_from_slice(&(message.encoded_len() as u32).to_le_bytes());
        message.encode(&mut out).unwrap();
    }
    out.extend_from_slice(&0xFFFF_FFFBu32.to_le_bytes());
    out
}

/// prost decodes every frame of `bytes` as `M` and visits the same scalar columns the
/// interface reads.
fn prost_reads<M: LabMessage>(bytes: &[u8], rows: &[Vec<Value>]) -> Result<(), TestCaseError> {
    let mut pos = 0;
    for row in rows {
        let len = u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        let message = M::decode(&bytes[pos + 4..pos + 4 + len]).unwrap();
        pos += 4 + len;
        let mut columns = Vec::new();
        message.visit_columns(|v| columns.push(format!("{v:?}")), |_| {});
        prop_assert_eq!(columns.len(), row.len());
        for (seen, value) in columns.iter().zip(row) {
            let expected = match value {
                Value::Null => "Null".to_owned(),
                Value::Int64(v) => format!("Int64({v})"),
                Value::Uint64(v) => format!("Uint64({v})"),
                Value::Double(v) => format!("Double({v:?})"),
                Value::Bool(v) => format!("Bool({v})"),
                Value::String(s) => format!("String({s:?})"),
                _ => "Composite([])".to_owned(),
            };
            prop_assert_eq!(seen, &expected);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The interface writes exactly prost's bytes for the compiled messages, and reads
    /// prost's bytes back to the rows.
    #[test]
    fn static_rows_are_prost_messages(
        (which, rows) in proptest::sample::select(StaticMessage::ALL.to_vec())
            .prop_flat_map(|which| (Just(which), rows_of(&which.schema(), 0..5)))
    ) {
        let schemas = [which.schema()];
        let positioned = plain_rows(rows.clone());
        let ours = write_owned(protobuf::rows::sink, &schemas, &positioned).unwrap();
        let prost_bytes = match which {
            StaticMessage::Bm1 => prost_frames::<Bm1Row>(&rows),
            StaticMessage::Bm2 => prost_frames::<Bm2Row>(&rows),
            StaticMessage::Bm3 => prost_frames::<Bm3Row>(&rows),
            StaticMessage::Bm5 => prost_frames::<Bm5Row>(&rows),
        };
        prop_assert_eq!(&ours, &prost_bytes);
        prop_assert_eq!(&read_all(protobuf::rows::source, &schemas, prost_bytes.clone()).unwrap(), &positioned);
        match which {
            StaticMessage::Bm1 => prost_reads::<Bm1Row>(&ours, &rows)?,
            StaticMessage::Bm2 => prost_reads::<Bm2Row>(&ours, &rows)?,
            StaticMessage::Bm3 => prost_reads::<Bm3Row>(&ours, &rows)?,
            StaticMessage::Bm5 => prost_reads::<Bm5Row>(&ours, &rows)?,
        }
    }
}

fn read_varint(bytes: &[u8], pos: &mut usize) -> u64 {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let byte = bytes[*pos];
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            break;
        }
    }
    value
}

/// The top-level fields of a message: (field number, the field's bytes, tag included).
fn fields_of(message: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let mut fields = Vec::new();
    let mut pos = 0;
    while pos < message.len() {
        let start = pos;
        let tag = read_varint(message, &mut pos);
        match tag & 7 {
            0 => {
                read_varint(message, &mut pos);
            }
            1 => pos += 8,
            5 => pos += 4,
            2 => {
                let len = read_varint(message, &mut pos) as usize;
                pos += len;
            }
            other => panic!("wire type {other}"),
        }
        fields.push((tag >> 3, message[start..pos].to_vec()));
    }
    fields
}

/// Rewrites every frame's message with `reorder` applied to its top-level fields.
fn reframe(bytes: &[u8], reorder: impl Fn(Vec<(u64, Vec<u8>)>) -> Vec<(u64, Vec<u8>)>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos + 4 <= bytes.len() {
        let head = u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap());
        pos += 4;
        if head >= 0xFFFF_FFFB {
            out.extend_from_slice(&head.to_le_bytes());
            continue;
        }
        let message = &bytes[pos..pos + head as usize];
        pos += head as usize;
        let body: Vec<u8> = reorder(fields_of(message))
            .into_iter()
            .flat_map(|(_, b)| b)
            .collect();
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Readers do not depend on the writer's field order: fields in reverse column order,
    /// and repeated fields split into interleaved runs, read as the same rows (the
    /// occurrences of one field keep their order, so lists keep theirs).
    #[test]
    fn field_order_and_split_runs_do_not_matter((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let rows = plain_rows(rows);
        let bytes = write_owned(protobuf::rows::dynamic_sink, &schemas, &rows).unwrap();
        let reversed = reframe(&bytes, |mut fields| {
            fields.sort_by_key(|(number, _)| std::cmp::Reverse(*number));
            fields
        });
        prop_assert_eq!(&read_all(protobuf::rows::dynamic_source, &schemas, reversed).unwrap(), &rows);
        let interleaved = reframe(&bytes, |fields| {
            // Round-robin over the fields' occurrences: a list's elements end up in runs
            // of one, between other fields.
            let mut groups: Vec<Vec<(u64, Vec<u8>)>> = Vec::new();
            for field in fields {
                match groups.iter_mut().find(|g| g[0].0 == field.0) {
                    Some(group) => group.push(field),
                    None => groups.push(vec![field]),
                }
            }
            let mut out = Vec::new();
            let longest = groups.iter().map(Vec::len).max().unwrap_or(0);
            for i in 0..longest {
                for group in &groups {
                    if let Some(field) = group.get(i) {
                        out.push(field.clone());
                    }
                }
            }
            out
        });
        prop_assert_eq!(&read_all(protobuf::rows::dynamic_source, &schemas, interleaved).unwrap(), &rows);
    }
}

#[test]
fn lab_schemas_select_their_compiled_messages() {
    for which in StaticMessage::ALL {
        assert_eq!(StaticMessage::for_schema(&which.schema()), Some(which));
    }
    let other = TableSchema::new(vec![shapeshift_types::ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )]);
    assert_eq!(StaticMessage::for_schema(&other), None);
}

#[test]
fn positions_survive_the_framing() {
    let a = TableSchema::new(vec![shapeshift_types::ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )]);
    let b = StaticMessage::Bm2.schema();
    let schemas = [a, b];
    let at = |table_index, row_index, range_index, key_switch| RowPosition {
        table_index,
        row_index,
        range_index,
        key_switch,
    };
    let rows = vec![
        (at(0, None, None, false), vec![Value::Int64(1)]),
        (at(0, Some(10), Some(2), false), vec![Value::Int64(2)]),
        (at(0, Some(11), Some(2), true), vec![Value::Int64(3)]),
        (
            at(1, Some(0), None, false),
            vec![Value::Uint64(7), Value::String(b"x".to_vec())],
        ),
        (
            at(1, Some(5), Some(1), false),
            vec![Value::Uint64(8), Value::String(Vec::new())],
        ),
        (at(0, None, None, false), vec![Value::Int64(-4)]),
    ];
    for (sink, source) in [
        (
            protobuf::rows::dynamic_sink as SinkFn,
            protobuf::rows::dynamic_source as SourceFn,
        ),
        (
            protobuf::rows::sink as SinkFn,
            protobuf::rows::source as SourceFn,
        ),
    ] {
        let bytes = write_owned(sink, &schemas, &rows).unwrap();
        assert_eq!(read_all(source, &schemas, bytes).unwrap(), rows);
    }
}

#[test]
fn framing_matches_the_reference_layout() {
    let schema = TableSchema::new(vec![shapeshift_types::ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )]);
    let schemas = [schema.clone(), schema];
    let rows = vec![(
        RowPosition {
            table_index: 1,
            row_index: Some(3),
            range_index: Some(2),
            key_switch: true,
        },
        vec![Value::Int64(150)],
    )];
    let bytes = write_owned(protobuf::rows::dynamic_sink, &schemas, &rows).unwrap();
    let mut expected = Vec::new();
    expected.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0]); // table 1
    expected.extend_from_slice(&[0xFD, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0]); // range 2
    expected.extend_from_slice(&[0xFC, 0xFF, 0xFF, 0xFF, 3, 0, 0, 0, 0, 0, 0, 0]); // row 3
    expected.extend_from_slice(&[0xFE, 0xFF, 0xFF, 0xFF]); // key switch
    expected.extend_from_slice(&[3, 0, 0, 0, 0x08, 0x96, 0x01]); // field 1 = 150
    expected.extend_from_slice(&[0xFB, 0xFF, 0xFF, 0xFF]); // end of stream
    assert_eq!(bytes, expected);
}

#[test]
fn proto_schema_spells_the_layout() {
    let schema = TableSchema::new(vec![
        shapeshift_types::ColumnSchema::new("id", Type::Primitive(PrimitiveType::Int64)),
        shapeshift_types::ColumnSchema::new(
            "maybe",
            Type::optional(Type::Primitive(PrimitiveType::Utf8)),
        ),
        shapeshift_types::ColumnSchema::new(
            "tags",
            Type::list(Type::optional(Type::Primitive(PrimitiveType::String))),
        ),
        shapeshift_types::ColumnSchema::new("nothing", Type::Primitive(PrimitiveType::Null)),
    ]);
    let text = proto_schema(&schema, "Row");
    assert!(text.contains("  int64 id = 1;"), "{text}");
    assert!(text.contains("  optional string maybe = 2;"), "{text}");
    assert!(text.contains("  repeated Row_1 tags = 3;"), "{text}");
    assert!(text.contains("reserved 4;"), "{text}");
    assert!(
        text.contains("message Row_1 {\n  optional bytes value = 1;\n}"),
        "{text}"
    );
}
