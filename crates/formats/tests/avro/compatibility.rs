//! Avro object container block codecs (deflate, snappy, zstandard): our files read by
//! apache-avro value for value, apache-avro's files read by us, every codec round-trips
//! random deep schemas, and corrupt compressed blocks are positioned errors.

use crate::support;

use apache_avro::types::Value as AvroValue;
use apache_avro::{Codec, DeflateSettings, ZstandardSettings};
use proptest::prelude::*;
use shapeshift_formats::avro::{self, avro_schema, BlockCodec};
use shapeshift_formats::table::SharedOutput;
use shapeshift_formats::table::{FormatError, RowPosition, RowSink};
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value};
use support::*;

const CODECS: [BlockCodec; 4] = [
    BlockCodec::Null,
    BlockCodec::DEFLATE,
    BlockCodec::Snappy,
    BlockCodec::ZSTANDARD,
];

fn apache_codec(codec: BlockCodec) -> Codec {
    match codec {
        BlockCodec::Null => Codec::Null,
        BlockCodec::Deflate { .. } => Codec::Deflate(DeflateSettings::default()),
        BlockCodec::Snappy => Codec::Snappy,
        BlockCodec::Zstandard { .. } => Codec::Zstandard(ZstandardSettings::default()),
    }
}

fn sink_for(
    codec: BlockCodec,
) -> impl Fn(&[TableSchema], Box<dyn std::io::Write>) -> Result<Box<dyn RowSink>, FormatError> {
    move |schemas, output| avro::rows::sink_with_codec(schemas, output, codec)
}

fn write_with(codec: BlockCodec, schemas: &[TableSchema], rows: &[Row]) -> Vec<u8> {
    let buffer = SharedOutput::default();
    let mut sink = sink_for(codec)(schemas, Box::new(buffer.clone())).unwrap();
    for (position, values) in rows {
        sink.write_owned_row(position, values).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    let bytes = buffer.take();
    bytes
}

fn table() -> TableSchema {
    TableSchema::new(vec![
        ColumnSchema::new("id", Type::Primitive(PrimitiveType::Int64)),
        ColumnSchema::new("name", Type::optional(Type::Primitive(PrimitiveType::Utf8))),
        ColumnSchema::new("scores", Type::list(Type::Primitive(PrimitiveType::Double))),
    ])
}

fn apache_record(i: i64) -> AvroValue {
    let name = if i % 3 == 0 {
        AvroValue::Union(0, Box::new(AvroValue::Null))
    } else {
        AvroValue::Union(1, Box::new(AvroValue::String(format!("name {i}"))))
    };
    AvroValue::Record(vec![
        ("id".into(), AvroValue::Long(i)),
        ("name".into(), name),
        (
            "scores".into(),
            AvroValue::Array(
                (0..i % 5)
                    .map(|k| AvroValue::Double(k as f64 / 4.0))
                    .collect(),
            ),
        ),
    ])
}

fn our_row(i: i64) -> Row {
    (
        RowPosition::default(),
        vec![
            Value::Int64(i),
            if i % 3 == 0 {
                Value::Null
            } else {
                Value::String(format!("name {i}").into_bytes())
            },
            Value::List((0..i % 5).map(|k| Value::Double(k as f64 / 4.0)).collect()),
        ],
    )
}

/// Enough rows for several 64 KiB blocks.
const ROWS: i64 = 5000;

#[test]
fn apache_avro_reads_our_compressed_files_value_for_value() {
    let schemas = [table()];
    let rows: Vec<Row> = (0..ROWS).map(our_row).collect();
    for codec in CODECS {
        let bytes = write_with(codec, &schemas, &rows);
        let reader = apache_avro::Reader::new(bytes.as_slice()).unwrap();
        let read: Vec<AvroValue> = reader.collect::<Result<_, _>>().unwrap();
        let expected: Vec<AvroValue> = (0..ROWS).map(apache_record).collect();
        assert_eq!(read, expected, "{codec:?}");
        // Compression does shrink these blocks.
        if codec != BlockCodec::Null {
            let plain = write_with(BlockCodec::Null, &schemas, &rows);
            assert!(
                bytes.len() < plain.len(),
                "{codec:?}: {} >= {}",
                bytes.len(),
                plain.len()
            );
        }
    }
}

#[test]
fn we_read_apache_avro_compressed_files() {
    let schema = table();
    let avro = apache_avro::Schema::parse_str(&avro_schema(&schema)).unwrap();
    for codec in CODECS {
        let mut writer = apache_avro::Writer::with_codec(&avro, Vec::new(), apache_codec(codec));
        for i in 0..ROWS {
            writer.append(apache_record(i)).unwrap();
        }
        let bytes = writer.into_inner().unwrap();
        let rows = read_all(avro::rows::source, std::slice::from_ref(&schema), bytes).unwrap();
        let expected: Vec<Row> = (0..ROWS).map(our_row).collect();
        assert_eq!(rows, expected, "{codec:?}");
    }
}

#[test]
fn table_switches_keep_the_codec() {
    let a = TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )]);
    let b = TableSchema::new(vec![ColumnSchema::new(
        "s",
        Type::Primitive(PrimitiveType::String),
    )]);
    let schemas = [a, b];
    let mut rows = Vec::new();
    for i in 0..300i64 {
        let table_index = (i / 100 % 2) as usize;
        let position = RowPosition {
            table_index,
            ..RowPosition::default()
        };
        let values = if table_index == 0 {
            vec![Value::Int64(i)]
        } else {
            vec![Value::String(format!("s{i}").into_bytes())]
        };
        rows.push((position, values));
    }
    for codec in CODECS {
        let bytes = write_with(codec, &schemas, &rows);
        assert_eq!(
            read_all(avro::rows::source, &schemas, bytes).unwrap(),
            rows,
            "{codec:?}"
        );
    }
}

#[test]
fn corrupt_compressed_blocks_are_positioned_errors() {
    let schemas = [table()];
    let rows: Vec<Row> = (0..ROWS).map(our_row).collect();
    for codec in [
        BlockCodec::DEFLATE,
        BlockCodec::Snappy,
        BlockCodec::ZSTANDARD,
    ] {
        let bytes = write_with(codec, &schemas, &rows);
        // Every cut is an error with an offset within the input (or a clean stop at a
        // container boundary, which only the whole file has here).
        for cut in (0..bytes.len()).step_by(bytes.len() / 97 + 1) {
            match read_all(avro::rows::source, &schemas, bytes[..cut].to_vec()) {
                Err(e) => {
                    assert_eq!(e.format, "avro");
                    assert!(e.offset.is_some_and(|o| o <= cut as u64), "{codec:?}: {e}");
                }
                Ok(read) => assert!(read.len() < rows.len() || cut == bytes.len()),
            }
        }
        // Flipped bytes inside compressed blocks: an error naming the codec or a
        // decoding problem, never a panic or wrong rows passing silently as the same rows.
        for at in [bytes.len() / 3, bytes.len() / 2, bytes.len() * 2 / 3] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x5A;
            match read_all(avro::rows::source, &schemas, bad) {
                Err(e) => assert_eq!(e.format, "avro"),
                Ok(read) => assert_ne!(read, rows, "{codec:?}: a flip at {at} went unnoticed"),
            }
        }
    }
}

#[test]
fn unknown_codecs_are_refused_by_name() {
    let schemas = [table()];
    let bytes = write_with(BlockCodec::Null, &schemas, &[our_row(1)]);
    // The metadata value after the key `avro.codec` and its one-byte length.
    let key = b"avro.codec";
    let at = bytes.windows(key.len()).position(|w| w == key).unwrap() + key.len() + 1;
    assert_eq!(&bytes[at..at + 4], b"null");
    let mut bad = bytes.clone();
    bad[at..at + 4].copy_from_slice(b"lzma");
    let e = read_all(avro::rows::source, &schemas, bad).unwrap_err();
    assert!(e.message.contains("lzma"), "{e}");
    assert!(e.offset.is_some());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_codec_round_trips_random_schemas((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let rows = plain_rows(rows);
        for codec in CODECS {
            let bytes = write_with(codec, &schemas, &rows);
            prop_assert_eq!(&read_all(avro::rows::source, &schemas, bytes.clone()).unwrap(), &rows);
            let reader = apache_avro::Reader::new(bytes.as_slice()).unwrap();
            let count = reader.count();
            prop_assert_eq!(count, rows.len());
        }
    }
}
