//! The interface's JSON reader: its in-place scan must give exactly what the row reader gives
//! (the same rows, positions, other columns and errors) on any stream, whole or damaged, and
//! reading by blocks exactly what reading row by row gives.

use crate::table::SharedOutput;
use proptest::prelude::*;
use shapeshift_types::{
    ColumnSchema, Member, Node, NodeValue, PrimitiveType, TableSchema, Type, Value,
};

use super::{JsonSource, JsonTables};
use crate::table::{FormatError, RowPosition, RowSource};

fn arb_type() -> impl Strategy<Value = Type> {
    let p = Type::Primitive;
    prop_oneof![
        Just(p(PrimitiveType::Int64)),
        Just(p(PrimitiveType::Int8)),
        Just(p(PrimitiveType::Uint8)),
        Just(p(PrimitiveType::Uint64)),
        Just(p(PrimitiveType::Double)),
        Just(p(PrimitiveType::Float)),
        Just(p(PrimitiveType::Bool)),
        Just(p(PrimitiveType::String)),
        Just(p(PrimitiveType::Utf8)),
        Just(p(PrimitiveType::Date)),
        Just(Type::optional(p(PrimitiveType::String))),
        Just(Type::optional(p(PrimitiveType::Int64))),
        Just(Type::list(p(PrimitiveType::Double))),
        Just(Type::Struct(vec![
            Member::new("a", p(PrimitiveType::Int32)),
            Member::new("$b", Type::optional(p(PrimitiveType::String))),
        ])),
        Just(Type::dict(
            p(PrimitiveType::String),
            p(PrimitiveType::Int64)
        )),
        // Nested composites (the scan transcodes them straight to YSON): structs in lists,
        // optional structs, lists of optionals, tuples, narrow and float members, and a
        // member the transcoding leaves to the row reader (a date).
        Just(Type::list(Type::Struct(vec![
            Member::new("u", p(PrimitiveType::Utf8)),
            Member::new("t", Type::optional(p(PrimitiveType::Utf8))),
            Member::new("w", p(PrimitiveType::Uint8)),
            Member::new("l", Type::list(Type::optional(p(PrimitiveType::Float)))),
        ]))),
        Just(Type::optional(Type::Struct(vec![
            Member::new("s", p(PrimitiveType::String)),
            Member::new(
                "p",
                Type::Tuple(vec![p(PrimitiveType::Int8), p(PrimitiveType::Bool)])
            ),
            Member::new("e", Type::Struct(vec![])),
        ]))),
        Just(Type::Struct(vec![
            Member::new("d", p(PrimitiveType::Date)),
            Member::new("x", p(PrimitiveType::Double)),
        ])),
        Just(Type::optional(p(PrimitiveType::Yson))),
    ]
}

fn arb_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "[a-z ]{0,12}".prop_map(String::into_bytes),
        // Escapes and bytes above ASCII (written as their code points).
        proptest::collection::vec(any::<u8>(), 0..8),
    ]
}

fn arb_value(ty: &Type) -> BoxedStrategy<Value> {
    use PrimitiveType as P;
    match ty {
        Type::Primitive(P::Int64) => any::<i64>().prop_map(Value::Int64).boxed(),
        Type::Primitive(P::Int32) => any::<i32>().prop_map(|v| Value::Int64(v.into())).boxed(),
        Type::Primitive(P::Int8) => any::<i8>().prop_map(|v| Value::Int64(v.into())).boxed(),
        Type::Primitive(P::Uint8) => any::<u8>().prop_map(|v| Value::Uint64(v.into())).boxed(),
        Type::Primitive(P::Uint64) => any::<u64>().prop_map(Value::Uint64).boxed(),
        Type::Primitive(P::Date) => (0u64..49673).prop_map(Value::Uint64).boxed(),
        Type::Primitive(P::Double) => prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0)
        ]
        .prop_map(Value::Double)
        .boxed(),
        Type::Primitive(P::Float) => any::<f32>().prop_map(|v| Value::Double(v.into())).boxed(),
        Type::Primitive(P::Bool) => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::Primitive(P::String) => arb_bytes().prop_map(Value::String).boxed(),
        Type::Primitive(P::Utf8) => "[a-zé\"\\\\]{0,10}"
            .prop_map(|s| Value::String(s.into_bytes()))
            .boxed(),
        Type::Primitive(P::Yson) => prop_oneof![
            Just(Node::new(NodeValue::Entity)),
            any::<u64>().prop_map(|v| Node::new(NodeValue::Uint64(v))),
            "[a-z$]{0,4}".prop_map(|s| Node::new(NodeValue::Map(vec![(
                s.into_bytes(),
                Node::new(NodeValue::Int64(1))
            )]))),
        ]
        .prop_map(Value::Any)
        .boxed(),
        Type::Optional(item) => prop_oneof![Just(Value::Null), arb_value(item)].boxed(),
        Type::List(item) => proptest::collection::vec(arb_value(item), 0..4)
            .prop_map(Value::List)
            .boxed(),
        Type::Struct(members) => {
            let members: Vec<_> = members.iter().map(|m| arb_value(&m.ty)).collect();
            members.prop_map(Value::Tuple).boxed()
        }
        Type::Tuple(elements) => {
            let elements: Vec<_> = elements.iter().map(arb_value).collect();
            elements.prop_map(Value::Tuple).boxed()
        }
        Type::Dict { key, value } => {
            proptest::collection::vec((arb_value(key), arb_value(value)), 0..3)
                .prop_map(Value::Dict)
                .boxed()
        }
        other => unreachable!("no values for {other:?}"),
    }
}

type Case = (Vec<TableSchema>, Vec<(RowPosition, Vec<Value>)>);

/// Two tables of the same columns (one strict, one not), rows in both with row indexes,
/// range indexes and key switches now and then.
fn arb_case() -> impl Strategy<Value = Case> {
    proptest::collection::vec(arb_type(), 1..6).prop_flat_map(|types| {
        let columns: Vec<_> = types
            .iter()
            .enumerate()
            .map(|(i, ty)| {
                ColumnSchema::new(
                    if i == 2 {
                        "$c2".to_owned()
                    } else {
                        format!("c{i}")
                    },
                    ty.clone(),
                )
            })
            .collect();
        let strict = TableSchema::new(columns.clone());
        let mut loose = TableSchema::new(columns);
        loose.strict = false;
        let row: Vec<_> = types.iter().map(arb_value).collect();
        let position = (
            0..2usize,
            proptest::option::weighted(0.2, 0..1000i64),
            proptest::option::weighted(0.1, 0..3i64),
            proptest::bool::weighted(0.1),
        )
            .prop_map(
                |(table_index, row_index, range_index, key_switch)| RowPosition {
                    table_index,
                    row_index,
                    range_index,
                    key_switch,
                },
            );
        let rows = proptest::collection::vec((position, row), 0..12);
        (Just(vec![strict, loose]), rows)
    })
}

fn write(schemas: &[TableSchema], rows: &[(RowPosition, Vec<Value>)]) -> Vec<u8> {
    let out = SharedOutput::default();
    let mut sink = JsonTables::compile(schemas).sink(Box::new(out.clone()));
    for (position, values) in rows {
        sink.write_owned_row(position, values).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    out.take()
}

/// A read row: its position, its values' debug spelling and its other columns.
type ReadRow = (RowPosition, String);

/// Every row up to the end or the first error; with `blocks_every`, every read but each
/// `every`-th is a block (and other columns are left out, as blocks leave them out).
fn read(
    schemas: &[TableSchema],
    bytes: &[u8],
    scan_rows: bool,
    blocks_every: Option<usize>,
) -> (Vec<ReadRow>, Option<FormatError>) {
    let mut source = JsonSource::new(&JsonTables::compile(schemas), bytes.to_vec());
    source.scan_rows = scan_rows;
    let mut rows = Vec::new();
    for turn in 1.. {
        let by_block = blocks_every.is_some_and(|every| turn % every != 0);
        if by_block {
            match source.next_rows() {
                Ok(Some(block)) => {
                    for row in block.iter() {
                        rows.push((row.position, format!("{:?} None", row.values)));
                    }
                }
                Ok(None) => return (rows, None),
                Err(e) => return (rows, Some(e)),
            }
        } else {
            match source.next_row_with_other_columns() {
                Ok(Some((row, others))) => {
                    // Blocks leave other columns out: compare those only row by row.
                    let others = if blocks_every.is_some() { None } else { others };
                    rows.push((row.position, format!("{:?} {others:?}", row.values)));
                }
                Ok(None) => return (rows, None),
                Err(e) => return (rows, Some(e)),
            }
        }
    }
    unreachable!()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_scan_reads_what_the_row_reader_reads((schemas, rows) in arb_case()) {
        let bytes = write(&schemas, &rows);
        let scanned = read(&schemas, &bytes, true, None);
        let parsed = read(&schemas, &bytes, false, None);
        prop_assert!(scanned.1.is_none(), "{:?}", scanned.1);
        prop_assert_eq!(&scanned.0, &parsed.0);
        prop_assert_eq!(scanned.0.len(), rows.len());
    }

    #[test]
    fn damaged_streams_read_the_same_through_the_scan(
        (schemas, rows) in arb_case(),
        damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        other_column in any::<bool>(),
    ) {
        let mut bytes = write(&schemas, &rows);
        if other_column {
            // A column outside the schema (kept for the loose table, an error for the
            // strict one), and keys out of order.
            let text = String::from_utf8_lossy(&bytes).replace("{\"c0\":", "{\"zz\":[1,{\"$$q\":2}],\"c0\":");
            bytes = text.into_bytes();
        }
        for (at, byte) in damage {
            if !bytes.is_empty() {
                let at = at.index(bytes.len());
                bytes[at] = byte;
            }
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        let scanned = read(&schemas, &bytes, true, None);
        let parsed = read(&schemas, &bytes, false, None);
        prop_assert_eq!(&scanned.0, &parsed.0);
        prop_assert_eq!(scanned.1, parsed.1);
    }

    #[test]
    fn blocks_give_the_rows_and_positions_of_row_by_row_reads(
        (schemas, rows) in arb_case(),
        every in 2usize..5,
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = write(&schemas, &rows);
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        // `Some(1)`: row by row, other columns left out.
        let by_rows = read(&schemas, &bytes, true, Some(1));
        let by_blocks = read(&schemas, &bytes, true, Some(every));
        let only_blocks = read(&schemas, &bytes, true, Some(usize::MAX));
        prop_assert_eq!(&by_rows.0, &by_blocks.0);
        prop_assert_eq!(&by_rows.1, &by_blocks.1);
        prop_assert_eq!(&by_rows.0, &only_blocks.0);
        prop_assert_eq!(&by_rows.1, &only_blocks.1);
    }
}
