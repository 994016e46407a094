//! Queries over every format give what the same query gives over Parquet of the same rows;
//! projection; errors that name the table, file and problem.

use std::fs::File;
use std::path::{Path, PathBuf};

use shapeshift_engine::datafusion::arrow::array::RecordBatch;
use shapeshift_engine::datafusion::arrow::util::pretty::pretty_format_batches;
use shapeshift_engine::datafusion::parquet::arrow::ArrowWriter;
use shapeshift_engine::{write_results, Engine, EngineError, TableFormat, TableSource};
use shapeshift_formats::arrow::rows::rows_to_batch;
use shapeshift_formats::registry::{open_sink, FormatKind};
use shapeshift_formats::table::RowPosition;
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

const COLOURS: [&str; 5] = ["red", "green", "blue", "white", "black"];

/// The study's columns, plus an optional double and a list (composite values).
fn study_schema() -> TableSchema {
    TableSchema::new(vec![
        ColumnSchema::new("object_id", Type::Primitive(P::Int64)),
        ColumnSchema::new("guid", Type::Primitive(P::Utf8)),
        ColumnSchema::new("uni_id", Type::Primitive(P::Int64)),
        ColumnSchema::new("intercept_at", Type::Primitive(P::Timestamp64)),
        ColumnSchema::new("day", Type::Primitive(P::Int8)),
        ColumnSchema::new("month", Type::Primitive(P::Int8)),
        ColumnSchema::new("colour", Type::Primitive(P::Utf8)),
        ColumnSchema::new("score", Type::optional(Type::Primitive(P::Double))),
        ColumnSchema::new("tags", Type::list(Type::Primitive(P::Int64))),
    ])
}

/// Deterministic rows (a small LCG: the values only need to vary).
fn study_rows(count: u64) -> Vec<Vec<Value>> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    (0..count)
        .map(|i| {
            let r = next();
            vec![
                Value::Int64(i as i64),
                Value::String(format!("{:08x}-{:04x}", r, i % 0xffff).into_bytes()),
                Value::Int64((r % 1000) as i64),
                Value::Int64(1_700_000_000_000_000 + (r % 1_000_000) as i64),
                Value::Int64((r % 31 + 1) as i64),
                Value::Int64((r / 31 % 12 + 1) as i64),
                Value::String(COLOURS[(r % 5) as usize].as_bytes().to_vec()),
                if r % 7 == 0 {
                    Value::Null
                } else {
                    Value::Double((r % 10_000) as f64 / 8.0)
                },
                Value::List((0..r % 3).map(|k| Value::Int64(k as i64)).collect()),
            ]
        })
        .collect()
}

fn write_rows(path: &Path, kind: FormatKind, schema: &TableSchema, rows: &[Vec<Value>]) {
    let file = File::create(path).unwrap();
    let mut sink = open_sink(kind, std::slice::from_ref(schema), Box::new(file)).unwrap();
    for row in rows {
        sink.write_owned_row(&RowPosition::default(), row).unwrap();
    }
    sink.finish().unwrap();
}

fn write_parquet(path: &Path, schema: &TableSchema, rows: &[Vec<Value>]) {
    let batch = rows_to_batch(schema, rows).unwrap();
    let mut writer =
        ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

fn text(batches: &[RecordBatch]) -> String {
    pretty_format_batches(batches).unwrap().to_string()
}

fn query(engine: &Engine, sql: &str) -> String {
    let (_, batches) = engine.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    text(&batches)
}

fn source(name: &str, path: &Path, format: Option<TableFormat>) -> TableSource {
    TableSource {
        name: name.to_owned(),
        location: path.display().to_string(),
        format,
        schema: None,
    }
}

const QUERIES: [&str; 4] = [
    // The study's Q1.
    "SELECT day, month, colour, count(*) AS n FROM t GROUP BY day, month, colour \
     ORDER BY month, day, colour",
    // A projection of three of nine columns.
    "SELECT object_id, guid, score FROM t WHERE score > 100 ORDER BY object_id LIMIT 50",
    // Every column, composite and time ones too.
    "SELECT * FROM t ORDER BY object_id",
    "SELECT count(*) AS n, sum(uni_id) AS s, max(intercept_at) AS m FROM t",
];

/// The same rows in each row format give the same answers as Parquet.
#[test]
fn every_row_format_answers_as_parquet_does() {
    let dir = tempfile::tempdir().unwrap();
    let schema = study_schema();
    let rows = study_rows(3000);
    let parquet = dir.path().join("rows.parquet");
    write_parquet(&parquet, &schema, &rows);
    let reference = Engine::new().unwrap();
    reference.register(&source("t", &parquet, None)).unwrap();
    let expected: Vec<String> = QUERIES.iter().map(|q| query(&reference, q)).collect();
    assert!(expected[0].contains("| n "), "{}", expected[0]);
    for kind in FormatKind::ALL {
        if kind == FormatKind::Protobuf {
            continue; // compiled messages of the lab's tables only; protobuf-dynamic instead
        }
        let path = dir.path().join(format!("rows.{}", kind.name()));
        write_rows(&path, kind, &schema, &rows);
        let engine = Engine::new().unwrap();
        engine
            .register(&TableSource {
                schema: Some(schema.clone()),
                ..source("t", &path, Some(TableFormat::Rows(kind)))
            })
            .unwrap();
        for (sql, want) in QUERIES.iter().zip(&expected) {
            assert_eq!(&query(&engine, sql), want, "{kind}: {sql}");
        }
    }
}

/// Arrow streams and Avro files carry their schema: no schema file needed.
#[test]
fn self_describing_formats_need_no_schema() {
    let dir = tempfile::tempdir().unwrap();
    let schema = study_schema();
    let rows = study_rows(500);
    let engine = Engine::new().unwrap();
    for (name, kind) in [("a", FormatKind::Arrow), ("v", FormatKind::Avro)] {
        let path = dir.path().join(format!("rows.{}", kind.name()));
        write_rows(&path, kind, &schema, &rows);
        engine.register(&source(name, &path, None)).unwrap();
    }
    let a = query(
        &engine,
        "SELECT colour, count(*) FROM a GROUP BY colour ORDER BY colour",
    );
    let v = query(
        &engine,
        "SELECT colour, count(*) FROM v GROUP BY colour ORDER BY colour",
    );
    assert_eq!(a, v);
    assert!(a.contains("red"), "{a}");
}

/// A glob registers several files as one table (one partition each).
#[test]
fn a_glob_is_one_table_of_all_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let schema = study_schema();
    let rows = study_rows(900);
    for (i, part) in rows.chunks(300).enumerate() {
        write_rows(
            &dir.path().join(format!("part-{i}.skiff")),
            FormatKind::Skiff,
            &schema,
            part,
        );
    }
    let engine = Engine::new().unwrap();
    engine
        .register(&TableSource {
            name: "t".into(),
            location: format!("{}/part-*.skiff", dir.path().display()),
            format: None,
            schema: Some(schema),
        })
        .unwrap();
    let counted = query(&engine, "SELECT count(*) AS n, max(object_id) AS m FROM t");
    assert!(counted.contains("| 900 | 899 |"), "{counted}");
}

/// A table keeps its files mapped between queries, but a file rewritten since is read anew.
#[test]
fn a_file_rewritten_between_queries_is_read_anew() {
    let dir = tempfile::tempdir().unwrap();
    let schema = study_schema();
    let engine = Engine::new().unwrap();
    for (name, kind) in [("s", FormatKind::Skiff), ("a", FormatKind::Arrow)] {
        let path = dir.path().join(format!("rows.{}", kind.name()));
        write_rows(&path, kind, &schema, &study_rows(100));
        engine
            .register(&TableSource {
                schema: Some(schema.clone()),
                ..source(name, &path, Some(TableFormat::Rows(kind)))
            })
            .unwrap();
        let sql = format!("SELECT count(*) AS n, max(object_id) AS m FROM {name}");
        assert!(query(&engine, &sql).contains("| 100 | 99 |"));
        assert!(query(&engine, &sql).contains("| 100 | 99 |"));
        write_rows(&path, kind, &schema, &study_rows(250));
        let again = query(&engine, &sql);
        assert!(again.contains("| 250 | 249 |"), "{kind}: {again}");
    }
}

/// Results written in each output format read back to the same answer.
#[test]
fn results_written_in_each_format_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let schema = study_schema();
    let parquet = dir.path().join("rows.parquet");
    write_parquet(&parquet, &schema, &study_rows(400));
    let engine = Engine::new().unwrap();
    engine.register(&source("t", &parquet, None)).unwrap();
    let sql = "SELECT colour, count(*) AS n, min(guid) AS g FROM t GROUP BY colour ORDER BY colour";
    let (result_schema, batches) = engine.query(sql).unwrap();
    let want = text(&batches);
    let outputs = [
        ("out.parquet", TableFormat::Parquet),
        ("out.arrow", TableFormat::ArrowFile),
        ("out.csv", TableFormat::Csv),
        ("out.jsonl", TableFormat::JsonLines),
        ("out.arrows", TableFormat::Rows(FormatKind::Arrow)),
        ("out.skiff", TableFormat::Rows(FormatKind::Skiff)),
        ("out.msgpack", TableFormat::Rows(FormatKind::Msgpack)),
        ("out.yson", TableFormat::Rows(FormatKind::Yson)),
        (
            "msgpack.records",
            TableFormat::RecordRows(FormatKind::Msgpack),
        ),
        ("skiff.records", TableFormat::RecordRows(FormatKind::Skiff)),
    ];
    for (i, (file, format)) in outputs.into_iter().enumerate() {
        let path = dir.path().join(file);
        write_results(&result_schema, &batches, &path, format).unwrap();
        let name = format!("r{i}");
        let result_table = TableSchema::new(vec![
            ColumnSchema::new("colour", Type::Primitive(P::Utf8)),
            ColumnSchema::new("n", Type::Primitive(P::Int64)),
            ColumnSchema::new("g", Type::optional(Type::Primitive(P::Utf8))),
        ]);
        let needs_schema = matches!(format, TableFormat::Rows(k) if k != FormatKind::Arrow)
            || matches!(format, TableFormat::RecordRows(_));
        engine
            .register(&TableSource {
                schema: needs_schema.then_some(result_table),
                ..source(&name, &path, Some(format))
            })
            .unwrap();
        let back = query(&engine, &format!("SELECT * FROM {name} ORDER BY colour"));
        assert_eq!(back, want, "{format}");
    }
}

/// ArrayRecord files are tables of `index` and `record`.
#[test]
fn record_files_are_tables_of_binary_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.array_record");
    let mut writer = shapeshift_records::Writer::create(&path, "").unwrap();
    for i in 0..1000u32 {
        writer.write(format!("record {i}").as_bytes()).unwrap();
    }
    writer.close().unwrap();
    let engine = Engine::new().unwrap();
    engine.register(&source("r", &path, None)).unwrap();
    let got = query(
        &engine,
        "SELECT index, arrow_cast(record, 'Utf8') AS text FROM r WHERE index IN (0, 999) ORDER BY index",
    );
    assert!(got.contains("| 0     | record 0   |"), "{got}");
    assert!(got.contains("| 999   | record 999 |"), "{got}");
    let count = query(&engine, "SELECT count(*) AS n FROM r");
    assert!(count.contains("| 1000 |"), "{count}");
}

/// Record files of one row per record, in any row format, give the answers Parquet gives
/// (every column type of the study's schema, projections, aggregates); a record that does
/// not hold exactly one row is an error naming the record.
#[test]
fn record_files_of_rows_are_tables_of_their_columns() {
    let dir = tempfile::tempdir().unwrap();
    let schema = study_schema();
    let rows = study_rows(700);
    let parquet = dir.path().join("rows.parquet");
    write_parquet(&parquet, &schema, &rows);
    let reference = Engine::new().unwrap();
    reference.register(&source("t", &parquet, None)).unwrap();
    for kind in [FormatKind::Msgpack, FormatKind::Yson, FormatKind::Protobuf] {
        let kind = if kind == FormatKind::Protobuf {
            FormatKind::ProtobufDynamic
        } else {
            kind
        };
        let path = dir.path().join(format!("rows-{}.records", kind.name()));
        let mut writer = shapeshift_records::Writer::create(&path, "group_size:16").unwrap();
        for row in &rows {
            let one = dir.path().join("one-row");
            write_rows(&one, kind, &schema, std::slice::from_ref(row));
            writer.write(&std::fs::read(&one).unwrap()).unwrap();
        }
        writer.close().unwrap();
        let engine = Engine::new().unwrap();
        engine
            .register(&TableSource {
                schema: Some(schema.clone()),
                ..source("t", &path, Some(TableFormat::RecordRows(kind)))
            })
            .unwrap();
        for sql in QUERIES {
            assert_eq!(query(&engine, sql), query(&reference, sql), "{kind}: {sql}");
        }
    }
    let two_rows = dir.path().join("two.records");
    let mut writer = shapeshift_records::Writer::create(&two_rows, "").unwrap();
    let one = dir.path().join("one-row");
    write_rows(&one, FormatKind::Msgpack, &schema, &rows[..1]);
    writer.write(&std::fs::read(&one).unwrap()).unwrap();
    write_rows(&one, FormatKind::Msgpack, &schema, &rows[..2]);
    writer.write(&std::fs::read(&one).unwrap()).unwrap();
    writer.close().unwrap();
    let engine = Engine::new().unwrap();
    engine
        .register(&TableSource {
            schema: Some(schema.clone()),
            ..source(
                "t",
                &two_rows,
                Some(TableFormat::RecordRows(FormatKind::Msgpack)),
            )
        })
        .unwrap();
    let error = engine.query("SELECT * FROM t").unwrap_err().to_string();
    assert!(
        error.contains("record 1") && error.contains("holds 2 rows"),
        "{error}"
    );
    let no_schema = engine.register(&source(
        "u",
        &two_rows,
        Some(TableFormat::RecordRows(FormatKind::Msgpack)),
    ));
    assert!(table_error(no_schema).contains("need a YT schema"));
}

fn table_error(result: Result<(), EngineError>) -> String {
    match result {
        Err(e @ EngineError::Table { .. }) => e.to_string(),
        other => panic!("expected a table error, got {other:?}"),
    }
}

#[test]
fn errors_name_the_table_file_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::new().unwrap();
    let missing = dir.path().join("missing.parquet");
    let message = table_error(engine.register(&source("m", &missing, None)));
    assert!(
        message.contains("table m") && message.contains("missing.parquet"),
        "{message}"
    );

    let message = table_error(engine.register(&TableSource {
        location: format!("{}/*.skiff", dir.path().display()),
        ..source("g", &missing, None)
    }));
    assert!(message.contains("no file matches"), "{message}");

    // A row format that does not describe itself needs a schema.
    let skiff = dir.path().join("rows.skiff");
    write_rows(&skiff, FormatKind::Skiff, &study_schema(), &study_rows(10));
    let message = table_error(engine.register(&source("s", &skiff, None)));
    assert!(
        message.contains("skiff does not describe its rows"),
        "{message}"
    );

    // The wrong schema: rows that do not decode name the file, format and row.
    let msgpack = dir.path().join("rows.msgpack");
    write_rows(
        &msgpack,
        FormatKind::Msgpack,
        &study_schema(),
        &study_rows(10),
    );
    let wrong = TableSchema::new(vec![
        ColumnSchema::new("object_id", Type::Primitive(P::Utf8)),
        ColumnSchema::new("guid", Type::Primitive(P::Utf8)),
    ]);
    engine
        .register(&TableSource {
            schema: Some(wrong),
            ..source("w", &msgpack, None)
        })
        .unwrap();
    let message = engine
        .query("SELECT * FROM w")
        .expect_err("rows of another schema")
        .to_string();
    assert!(
        message.contains("rows.msgpack") && message.contains("msgpack") && message.contains("row"),
        "{message}"
    );

    // Bad SQL and unknown tables come back as query errors, with DataFusion's words.
    let message = engine.query("SELEC 1").expect_err("bad SQL").to_string();
    assert!(message.contains("SELEC"), "{message}");
    let message = engine
        .query("SELECT * FROM nowhere")
        .expect_err("no table")
        .to_string();
    assert!(message.contains("nowhere"), "{message}");
}

#[test]
fn formats_are_told_from_names_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let schema = study_schema();
    let rows = study_rows(5);
    let arrow: PathBuf = dir.path().join("noext");
    write_rows(&arrow, FormatKind::Arrow, &schema, &rows);
    assert_eq!(
        TableFormat::detect(&arrow, false).unwrap(),
        TableFormat::Rows(FormatKind::Arrow)
    );
    let parquet = dir.path().join("p");
    write_parquet(&parquet, &schema, &rows);
    assert_eq!(
        TableFormat::detect(&parquet, false).unwrap(),
        TableFormat::Parquet
    );
    let skiff = dir.path().join("s");
    write_rows(&skiff, FormatKind::Skiff, &schema, &rows);
    let message = TableFormat::detect(&skiff, true).expect_err("skiff has no signature");
    assert!(message.contains(":FORMAT"), "{message}");
    assert_eq!(
        TableFormat::from_name("thrift-compact"),
        Some(TableFormat::Rows(FormatKind::ThriftCompact))
    );
    assert_eq!(
        TableFormat::from_name("ndjson"),
        Some(TableFormat::JsonLines)
    );
    assert_eq!(TableFormat::from_name("nope"), None);
    let record_rows = TableFormat::from_name("Records+MsgPack").unwrap();
    assert_eq!(record_rows, TableFormat::RecordRows(FormatKind::Msgpack));
    assert_eq!(record_rows.to_string(), "records+msgpack");
    assert_eq!(TableFormat::from_name("records+nope"), None);
}

/// `spark_hash` gives Spark's `hash`: `hash(1)` is -559580957 in Spark; the other values come
/// from the lab's numpy Murmur3, itself checked against Spark's `F.hash` by the Python tests
/// (which also compare this function with Spark directly when Java is present).
#[test]
fn spark_hash_is_sparks_hash() {
    let engine = Engine::new().unwrap();
    let cell = |sql: &str| {
        let (_, batches) = engine.query(sql).unwrap();
        let column = batches[0].column(0);
        let ints = column
            .as_any()
            .downcast_ref::<shapeshift_engine::datafusion::arrow::array::Int32Array>()
            .expect("spark_hash returns int32");
        ints.value(0)
    };
    assert_eq!(
        cell("SELECT spark_hash(arrow_cast(1, 'Int32'))"),
        -559580957
    );
    assert_eq!(
        cell("SELECT spark_hash(arrow_cast(-7, 'Int32'))"),
        -1618159745
    );
    assert_eq!(
        cell("SELECT spark_hash(arrow_cast(1, 'Int64'))"),
        -1712319331
    );
    assert_eq!(
        cell("SELECT spark_hash(arrow_cast(-1234567890123, 'Int64'))"),
        1482864047
    );
    for (text, hash) in [
        ("", 142593372),
        ("a", 1485273170),
        ("ab", -97053317),
        ("abc", 1322437556),
        ("abcd", -396302900),
        ("abcde", 814637928),
        ("été!", -1491032970),
        ("Spark", 228093765),
    ] {
        assert_eq!(
            cell(&format!("SELECT spark_hash('{text}')")),
            hash,
            "{text:?}"
        );
    }
    // Chained: each argument seeded with the hash so far; a null leaves it unchanged.
    let chained = "SELECT spark_hash(arrow_cast(1, 'Int64'), 'abc', arrow_cast(3, 'Int32'))";
    assert_eq!(cell(chained), 1931487859);
    let with_null =
        "SELECT spark_hash(arrow_cast(1, 'Int64'), NULL, 'abc', arrow_cast(3, 'Int32'))";
    assert_eq!(cell(with_null), 1931487859);
    let refused = engine
        .query("SELECT spark_hash(arrow_cast(1, 'Decimal128(10, 2)'))")
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("spark_hash") && refused.contains("Decimal128"),
        "{refused}"
    );
}

/// `count(*)` by few groups runs in the engine's dense counter (`FewGroupsCountExec`) and
/// answers as DataFusion's hash aggregation does (`sum(1)`, which the rule leaves alone):
/// integer and string keys, strings longer than a string view's 12 inline bytes, null keys,
/// and many groups, where the counter hands the rest of its input to the hash aggregation.
#[test]
fn counts_by_few_groups_agree_with_the_hash_aggregation() {
    use shapeshift_engine::datafusion::arrow::array::{Int32Array, StringArray};
    use shapeshift_engine::datafusion::arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let schema = study_schema();
    write_parquet(&path, &schema, &study_rows(100_000));
    let engine = Engine::new().unwrap();
    engine.register(&source("t", &path, None)).unwrap();
    let agree = |keys: &str, table: &str, dense: bool| {
        let counted =
            format!("SELECT {keys}, count(*) AS n FROM {table} GROUP BY {keys} ORDER BY {keys}");
        let summed =
            format!("SELECT {keys}, sum(1) AS n FROM {table} GROUP BY {keys} ORDER BY {keys}");
        let plan = query(&engine, &format!("EXPLAIN {counted}"));
        assert_eq!(plan.contains("FewGroupsCountExec"), dense, "{plan}");
        assert!(!query(&engine, &format!("EXPLAIN {summed}")).contains("FewGroupsCountExec"));
        assert_eq!(query(&engine, &counted), query(&engine, &summed), "{keys}");
    };
    // The study's Q1 keys, then guids, strings of 13 bytes: not inline in a view.
    agree("day, month, colour", "t", true);
    agree(
        "colour, guid",
        "(SELECT colour, guid FROM t WHERE uni_id < 50)",
        true,
    );
    // 100,000 distinct ids: more groups than the dense counter holds.
    agree("object_id", "t", true);
    // A float key is not counted densely.
    agree("score", "t", false);

    // Null keys (a group of their own), from a table in memory.
    let arrow_schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int32, true),
        Field::new("s", DataType::Utf8, true),
    ]));
    let keys: Int32Array = (0..5000)
        .map(|i| (i % 7 != 0).then_some(i % 11 - 5))
        .collect();
    let strings: StringArray = (0..5000)
        .map(|i| (i % 5 != 0).then(|| format!("value number {}", i % 3)))
        .collect();
    let batch = RecordBatch::try_new(
        Arc::clone(&arrow_schema),
        vec![Arc::new(keys), Arc::new(strings)],
    )
    .unwrap();
    engine
        .register_batches("nulls", arrow_schema, vec![batch])
        .unwrap();
    agree("k, s", "nulls", true);
    let with_nulls = query(
        &engine,
        "SELECT k, s, count(*) AS n FROM nulls GROUP BY k, s ORDER BY k NULLS FIRST, s NULLS FIRST LIMIT 1",
    );
    assert!(with_nulls.contains("|   |   |"), "{with_nulls}");
}
