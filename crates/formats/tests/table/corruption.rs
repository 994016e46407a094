//! Bad input through the common interface: truncated, corrupted and hostile streams in every
//! format give a `FormatError` naming the format and where (byte offset or row), never a
//! panic, a hang or an allocation sized by a length read from the input.

use std::io::Cursor;

use proptest::prelude::*;
use shapeshift_formats::registry::{open_sink, open_source, FormatKind};
use shapeshift_formats::table::{FormatError, RowPosition};
use shapeshift_types::testing::arb_value;
use shapeshift_types::{ColumnSchema, Member, PrimitiveType as P, TableSchema, Type, Value};

/// Every format of the interface (each format's own tests go deeper into its framing).
const FORMATS: [FormatKind; 12] = FormatKind::ALL;

/// The formats whose every cut must be noticed (no optional end marker: a stream cut right
/// before Protobuf's, Arrow's or Avro's end marker may still read as complete by design).
const TRUNCATION_CHECKED: [FormatKind; 6] = [
    FormatKind::Yson,
    FormatKind::YsonText,
    FormatKind::Skiff,
    FormatKind::Json,
    FormatKind::Msgpack,
    FormatKind::Cbor,
];

/// Every kind of column: scalars, strings, decimals, yson, nested composites.
fn schema() -> TableSchema {
    TableSchema::new(vec![
        ColumnSchema::new("id", Type::Primitive(P::Int64)),
        ColumnSchema::new("count", Type::Primitive(P::Uint32)),
        ColumnSchema::new("name", Type::optional(Type::Primitive(P::Utf8))),
        ColumnSchema::new("blob", Type::Primitive(P::String)),
        ColumnSchema::new(
            "price",
            Type::Decimal {
                precision: 10,
                scale: 2,
            },
        ),
        ColumnSchema::new("score", Type::Primitive(P::Double)),
        ColumnSchema::new("meta", Type::Primitive(P::Yson)),
        ColumnSchema::new(
            "tags",
            Type::list(Type::Struct(vec![
                Member::new("k", Type::Primitive(P::String)),
                Member::new(
                    "v",
                    Type::optional(Type::optional(Type::Primitive(P::Int8))),
                ),
            ])),
        ),
        ColumnSchema::new(
            "by_key",
            Type::dict(
                Type::Primitive(P::Int32),
                Type::VariantTuple(vec![Type::Primitive(P::Bool), Type::Primitive(P::Utf8)]),
            ),
        ),
    ])
}

fn rows_strategy() -> impl Strategy<Value = Vec<Vec<Value>>> {
    let schema = schema();
    let row: Vec<BoxedStrategy<Value>> = schema.columns.iter().map(|c| arb_value(&c.ty)).collect();
    prop::collection::vec(row, 1..4)
}

fn encode(kind: FormatKind, rows: &[Vec<Value>]) -> Vec<u8> {
    let path = std::env::temp_dir().join(format!(
        "table_corruption_{}_{:?}.bin",
        std::process::id(),
        std::thread::current().id()
    ));
    {
        let file = std::fs::File::create(&path).unwrap();
        let mut sink = open_sink(kind, &[schema()], Box::new(file)).unwrap();
        for row in rows {
            sink.write_owned_row(&RowPosition::default(), row).unwrap();
        }
        sink.finish().unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    bytes
}

/// Reads every row; the error, if any.
fn read_all(kind: FormatKind, bytes: Vec<u8>) -> Result<usize, FormatError> {
    let mut source = open_source(kind, &[schema()], Box::new(Cursor::new(bytes)))?;
    let mut rows = 0;
    while source.next_row()?.is_some() {
        rows += 1;
    }
    Ok(rows)
}

fn check_error(
    kind: FormatKind,
    error: &FormatError,
    input_len: usize,
) -> Result<(), TestCaseError> {
    // `yson` reads both YSON kinds; protobuf falls back to its dynamic codec (named with `_`)
    // for schemas without compiled messages.
    let named = error.format.replace('_', "-");
    prop_assert!(
        kind.name().starts_with(&named) || named.starts_with(kind.name()),
        "{kind}: the error names format {:?}: {error}",
        error.format
    );
    prop_assert!(
        error.offset.is_some() || error.row.is_some(),
        "{kind}: the error says no position: {error}"
    );
    if let Some(offset) = error.offset {
        prop_assert!(
            offset <= input_len as u64,
            "{kind}: offset {offset} past the input ({input_len} bytes): {error}"
        );
    }
    prop_assert!(!error.message.is_empty());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A stream cut anywhere either ends at a row boundary (fewer rows) or fails with a
    /// positioned error.
    #[test]
    fn truncated_streams_fail_with_a_position(rows in rows_strategy()) {
        for kind in FORMATS {
            let strict = TRUNCATION_CHECKED.contains(&kind);
            let bytes = encode(kind, &rows);
            prop_assert_eq!(read_all(kind, bytes.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?, rows.len());
            for cut in 0..bytes.len() {
                match read_all(kind, bytes[..cut].to_vec()) {
                    // Only a trailing separator (YSON's `;`, JSON's newline) may go unmissed.
                    Ok(n) => prop_assert!(
                        n < rows.len() || !strict || bytes[cut..].iter().all(|b| b";\n\r\t ".contains(b)),
                        "{}: cut at {} of {} read all {} rows", kind, cut, bytes.len(), n
                    ),
                    Err(e) => check_error(kind, &e, cut)?,
                }
            }
        }
    }

    /// Changed bytes give rows or a positioned error, never a panic.
    #[test]
    fn corrupted_streams_never_panic(
        rows in rows_strategy(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        for kind in FORMATS {
            let mut bytes = encode(kind, &rows);
            for (index, byte) in &edits {
                let at = index.index(bytes.len());
                bytes[at] = *byte;
            }
            let len = bytes.len();
            if let Err(e) = read_all(kind, bytes) {
                check_error(kind, &e, len)?;
            }
        }
    }

    /// Random bytes are rejected (or read) cleanly.
    #[test]
    fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        for kind in FORMATS {
            let len = bytes.len();
            if let Err(e) = read_all(kind, bytes.clone()) {
                check_error(kind, &e, len)?;
            }
        }
    }
}

fn expect_error(kind: FormatKind, schema: TableSchema, bytes: &[u8]) -> FormatError {
    let mut source = open_source(kind, &[schema], Box::new(Cursor::new(bytes.to_vec()))).unwrap();
    loop {
        match source.next_row() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("{kind}: {bytes:?} was accepted"),
            Err(e) => return e,
        }
    }
}

fn list_schema() -> TableSchema {
    TableSchema::new(vec![ColumnSchema::new(
        "x",
        Type::list(Type::Primitive(P::Int64)),
    )])
}

/// Lengths near 2^32 in the header: refused from the bytes that are there, without
/// reserving memory for them.
#[test]
fn hostile_lengths_are_refused_without_allocating() {
    // msgpack: a row of one column holding a list that claims 2^32 - 1 items.
    let e = expect_error(
        FormatKind::Msgpack,
        list_schema(),
        &[0x91, 0xdd, 0xff, 0xff, 0xff, 0xff, 0x01],
    );
    assert_eq!(e.format, "msgpack");
    assert!(e.offset.is_some(), "{e}");
    // cbor: the same with a 2^64 - 1 item array.
    let e = expect_error(
        FormatKind::Cbor,
        list_schema(),
        &[
            0x81, 0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ],
    );
    assert_eq!(e.format, "cbor");
    assert!(e.offset.is_some(), "{e}");
    // msgpack: a string whose length runs past the end.
    let schema = TableSchema::new(vec![ColumnSchema::new("s", Type::Primitive(P::String))]);
    let e = expect_error(
        FormatKind::Msgpack,
        schema.clone(),
        &[0x91, 0xc6, 0x7f, 0xff, 0xff, 0xff, b'a'],
    );
    assert!(e.message.contains("truncated"), "{e}");
    // skiff: a string32 claiming 4 GiB.
    let e = expect_error(
        FormatKind::Skiff,
        schema.clone(),
        &[0, 0, 0xff, 0xff, 0xff, 0xff, b'a'],
    );
    assert_eq!(e.format, "skiff");
    // yson: a binary string claiming a huge length.
    let e = expect_error(
        FormatKind::Yson,
        schema,
        b"{\"s\"=\x01\xfe\xff\xff\xff\x0f;};",
    );
    assert_eq!(e.format, "yson");
    assert!(e.offset.is_some(), "{e}");
}

#[test]
fn errors_name_the_format_position_and_column() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("a", Type::Primitive(P::Int8)),
        ColumnSchema::new("b", Type::Primitive(P::Utf8)),
    ]);
    // yson: out of range for int8, in the second row.
    let e = expect_error(
        FormatKind::YsonText,
        schema.clone(),
        b"{a=1;b=\"x\"};\n{a=300;b=\"y\"};\n",
    );
    assert_eq!((e.format, e.row), ("yson", Some(1)));
    assert!(e.message.contains("\"a\""), "{e}");
    assert!(e.offset.unwrap() >= 13, "{e}");
    // json: a column the strict schema lacks.
    let e = expect_error(
        FormatKind::Json,
        schema.clone(),
        b"{\"a\":1,\"b\":\"x\"}\n{\"a\":1,\"c\":2}\n",
    );
    assert_eq!((e.format, e.row, e.offset), ("json", Some(1), Some(16)));
    assert!(e.message.contains("\"c\""), "{e}");
    // json: malformed syntax names the byte.
    let e = expect_error(
        FormatKind::Json,
        schema.clone(),
        b"{\"a\":1,\"b\":\"x\"}\n{\"a\":1 \"b\":2}\n",
    );
    assert_eq!((e.format, e.offset), ("json", Some(23)));
    // json: a code point above U+00FF is not a byte.
    let e = expect_error(
        FormatKind::Json,
        schema.clone(),
        "{\"a\":1,\"b\":\"\u{20ac}\"}".as_bytes(),
    );
    assert!(e.message.contains("U+20AC"), "{e}");
    // yson: a required column missing.
    let e = expect_error(FormatKind::Yson, schema.clone(), b"{a=1};");
    assert!(e.message.contains("\"b\""), "{e}");
    // msgpack: a row with the wrong number of columns.
    let e = expect_error(
        FormatKind::Msgpack,
        schema.clone(),
        &[0x93, 0x01, 0xa1, b'x', 0xc0],
    );
    assert_eq!((e.format, e.offset), ("msgpack", Some(0)));
    // cbor: invalid UTF-8 in a text column.
    let e = expect_error(FormatKind::Cbor, schema, &[0x82, 0x01, 0x61, 0xff]);
    assert_eq!(e.format, "cbor");
}
