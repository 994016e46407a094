//! Avro: every value of random deep schemas survives rows -> container file / datum stream
//! -> rows; files are plain Avro, checked against the apache-avro crate both ways.

use crate::support;

use apache_avro::types::Value as AvroValue;
use proptest::prelude::*;
use shapeshift_formats::avro::{self, avro_schema, RowCodec};
use shapeshift_formats::table::RowPosition;
use shapeshift_types::testing::arb_schema;
use shapeshift_types::{ColumnSchema, PrimitiveType, TableSchema, Type, Value};
use support::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn container_rows_round_trip((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let rows = plain_rows(rows);
        let bytes = write_owned(avro::rows::sink, &schemas, &rows).unwrap();
        prop_assert_eq!(&read_all(avro::rows::source, &schemas, bytes.clone()).unwrap(), &rows);
        let again = copy_through_views(avro::rows::source, avro::rows::sink, &schemas, bytes.clone()).unwrap();
        prop_assert_eq!(again, bytes.clone());
        // The reference implementation reads the file: schema and every block.
        let reader = apache_avro::Reader::new(std::io::Cursor::new(bytes)).unwrap();
        let read: Vec<_> = reader.collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(format!("apache-avro: {e}")))?;
        prop_assert_eq!(read.len(), rows.len());
    }

    #[test]
    fn containers_describe_their_tables((schema, rows) in schema_with_rows()) {
        let schemas = [schema];
        let count = rows.len() as u64;
        let bytes = write_owned(avro::rows::sink, &schemas, &plain_rows(rows)).unwrap();
        let tables = avro::container_tables(&bytes).unwrap();
        prop_assert_eq!(tables, vec![(0, schemas[0].clone(), count)]);
    }

    #[test]
    fn datum_rows_round_trip((schema, rows) in schema_with_rows()) {
        let codec = RowCodec::new(&schema);
        let mut total = 0;
        for row in &rows {
            let mut datum = Vec::new();
            codec.encode_row(row, &mut datum).unwrap();
            total += datum.len();
            prop_assert_eq!(&codec.decode_row(&datum).unwrap(), row);
        }
        let schemas = [schema];
        let rows = plain_rows(rows);
        let bytes = write_owned(avro::rows::datum_sink, &schemas, &rows).unwrap();
        prop_assert_eq!(bytes.len(), total);
        if total > 0 || rows.is_empty() {
            prop_assert_eq!(&read_all(avro::rows::datum_source, &schemas, bytes.clone()).unwrap(), &rows);
            // A prepared codec reads bytes in memory in place, and opens again and again.
            let prepared = avro::rows::PreparedDatums::new(&schemas).unwrap();
            for _ in 0..2 {
                let mut source = prepared.open_source(bytes.clone());
                let mut read = Vec::new();
                while let Some(row) = source.next_row().unwrap() {
                    let values = row.values.iter().zip(&schemas[0].columns).map(|(v, c)| owned(v, &c.ty)).collect();
                    read.push((row.position, values));
                }
                prop_assert_eq!(&read, &rows);
            }
        }
    }

    #[test]
    fn schemas_of_any_names_are_valid_avro(schema in arb_schema()) {
        let text = avro_schema(&schema);
        prop_assert!(apache_avro::Schema::parse_str(&text).is_ok(), "{}", text);
    }
}

#[test]
fn positions_and_table_switches_survive() {
    let a = TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::Primitive(PrimitiveType::Int64),
    )]);
    let b = TableSchema::new(vec![ColumnSchema::new(
        "s",
        Type::Primitive(PrimitiveType::Utf8),
    )]);
    let schemas = [a, b];
    let at = |table_index, row_index, range_index, key_switch| RowPosition {
        table_index,
        row_index,
        range_index,
        key_switch,
    };
    let rows = vec![
        (at(0, None, None, false), vec![Value::Int64(1)]),
        (at(1, None, None, false), vec![Value::String(b"x".to_vec())]),
        (
            at(1, Some(5), Some(1), true),
            vec![Value::String(b"y".to_vec())],
        ),
        (
            at(1, Some(6), Some(1), false),
            vec![Value::String(b"z".to_vec())],
        ),
        (at(0, None, None, false), vec![Value::Int64(2)]),
    ];
    let bytes = write_owned(avro::rows::sink, &schemas, &rows).unwrap();
    assert_eq!(
        read_all(avro::rows::source, &schemas, bytes.clone()).unwrap(),
        rows
    );
    // The first container alone is a standard file.
    let second = bytes
        .windows(4)
        .skip(1)
        .position(|w| w == b"Obj\x01")
        .unwrap()
        + 1;
    let reader = apache_avro::Reader::new(std::io::Cursor::new(bytes[..second].to_vec())).unwrap();
    let values: Vec<AvroValue> = reader.map(Result::unwrap).collect();
    assert_eq!(
        values,
        vec![AvroValue::Record(vec![("x".into(), AvroValue::Long(1))])]
    );
}

#[test]
fn dict_order_and_duplicates_are_kept() {
    let schema = TableSchema::new(vec![ColumnSchema::new(
        "d",
        Type::dict(
            Type::Primitive(PrimitiveType::Utf8),
            Type::Primitive(PrimitiveType::Int64),
        ),
    )]);
    assert!(avro_schema(&schema).contains("\"map\""));
    let row = vec![Value::Dict(vec![
        (Value::String(b"b".to_vec()), Value::Int64(1)),
        (Value::String(b"a".to_vec()), Value::Int64(2)),
        (Value::String(b"b".to_vec()), Value::Int64(3)),
    ])];
    let schemas = [schema];
    let rows = plain_rows(vec![row]);
    let bytes = write_owned(avro::rows::sink, &schemas, &rows).unwrap();
    assert_eq!(read_all(avro::rows::source, &schemas, bytes).unwrap(), rows);
}

#[test]
fn files_written_by_apache_avro_are_read() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("id", Type::Primitive(PrimitiveType::Int64)),
        ColumnSchema::new("name", Type::optional(Type::Primitive(PrimitiveType::Utf8))),
        ColumnSchema::new("scores", Type::list(Type::Primitive(PrimitiveType::Double))),
        ColumnSchema::new("when", Type::Primitive(PrimitiveType::Timestamp)),
    ]);
    let avro = apache_avro::Schema::parse_str(&avro_schema(&schema)).unwrap();
    let mut writer = apache_avro::Writer::new(&avro, Vec::new());
    let mut expected = Vec::new();
    for i in 0..300i64 {
        let name = if i % 3 == 0 {
            AvroValue::Union(0, Box::new(AvroValue::Null))
        } else {
            AvroValue::Union(1, Box::new(AvroValue::String(format!("n{i}"))))
        };
        writer
            .append(AvroValue::Record(vec![
                ("id".into(), AvroValue::Long(i)),
                ("name".into(), name),
                (
                    "scores".into(),
                    AvroValue::Array(vec![AvroValue::Double(i as f64 / 2.0)]),
                ),
                ("when".into(), AvroValue::TimestampMicros(i * 1_000_000)),
            ]))
            .unwrap();
        expected.push((
            RowPosition::default(),
            vec![
                Value::Int64(i),
                if i % 3 == 0 {
                    Value::Null
                } else {
                    Value::String(format!("n{i}").into_bytes())
                },
                Value::List(vec![Value::Double(i as f64 / 2.0)]),
                Value::Uint64(i as u64 * 1_000_000),
            ],
        ));
    }
    let bytes = writer.into_inner().unwrap();
    assert_eq!(
        read_all(avro::rows::source, &[schema], bytes).unwrap(),
        expected
    );
}
