//! The compiled codecs against the general table: same bytes, same views, and on any
//! input the compiled decoder accepts, the general table's reading of it.

use super::*;
use crate::protobuf::dynamic::field_table::{FieldTable, ReadState};
use proptest::prelude::*;
use shapeshift_types::testing::arb_value;

/// A row's views as comparable text (`NaN` equals itself there).
fn spelled(refs: &[ValueRef<'_>]) -> Vec<String> {
    refs.iter().map(|v| format!("{v:?}")).collect()
}

fn general_read(table: &FieldTable, message: &[u8]) -> Result<Vec<String>, String> {
    let mut state = ReadState::default();
    let mut arena = Vec::new();
    let mut refs = Vec::new();
    table
        .read_row(message, 0, &mut state, &mut arena, &mut refs)
        .map_err(|e| e.message)?;
    Ok(spelled(&refs))
}

fn compiled_read(codec: &MessageCodec, message: &[u8]) -> Option<Vec<String>> {
    let mut refs = Vec::new();
    let mut arena = Vec::new();
    let mut composites = Vec::new();
    if !codec.decode(message, &mut refs, &mut arena, &mut composites) {
        return None;
    }
    for (column, span) in composites {
        refs[column] = ValueRef::Composite(&arena[span]);
    }
    Some(spelled(&refs))
}

fn rows(message: StaticMessage) -> impl Strategy<Value = Vec<Value>> {
    message
        .schema()
        .columns
        .iter()
        .map(|c| arb_value(&c.ty))
        .collect::<Vec<_>>()
}

fn views(row: &[Value]) -> Option<Vec<ValueRef<'_>>> {
    row.iter()
        .map(|v| match v {
            Value::Null => Some(ValueRef::Null),
            Value::Bool(b) => Some(ValueRef::Bool(*b)),
            Value::Int64(i) => Some(ValueRef::Int64(*i)),
            Value::Uint64(u) => Some(ValueRef::Uint64(*u)),
            Value::Double(d) => Some(ValueRef::Double(*d)),
            Value::String(s) => Some(ValueRef::String(s)),
            _ => None,
        })
        .collect()
}

/// Encodes `row` both ways, checks the bytes agree and both decoders read them alike,
/// then checks every one-byte change and every truncation of the message: whatever the
/// compiled decoder accepts, the general table reads the same.
fn agree(message: StaticMessage, row: &[Value]) -> Result<(), TestCaseError> {
    let schema = message.schema();
    let codec = MessageCodec::new(message, &schema);
    let general = FieldTable::new(&schema);
    let mut expected = Vec::new();
    general
        .write_owned(row, &mut expected)
        .map_err(TestCaseError::fail)?;
    let mut compiled = vec![0xAA];
    prop_assert!(codec.encode(row, &mut compiled), "refused a valid row");
    prop_assert_eq!(&compiled[1..], &expected[..]);
    if let Some(views) = views(row) {
        let mut from_views = Vec::new();
        prop_assert!(codec.encode(&views, &mut from_views));
        prop_assert_eq!(&from_views, &expected);
    }
    let read = general_read(&general, &expected).map_err(TestCaseError::fail)?;
    prop_assert_eq!(compiled_read(&codec, &expected), Some(read));
    // The views read back (composites as the YSON the sources write) encode to the
    // same message.
    let (mut state, mut arena, mut refs) = (ReadState::default(), Vec::new(), Vec::new());
    general
        .read_row(&expected, 0, &mut state, &mut arena, &mut refs)
        .map_err(|e| TestCaseError::fail(e.message))?;
    let mut from_read_views = Vec::new();
    prop_assert!(
        codec.encode(&refs, &mut from_read_views),
        "refused read views"
    );
    prop_assert_eq!(&from_read_views, &expected);
    let mut changed = expected.clone();
    for at in 0..expected.len() {
        for byte in [
            0x00,
            0x01,
            0x7f,
            0x80,
            0xff,
            expected[at] ^ 0x08,
            expected[at] ^ 0x02,
        ] {
            changed[at] = byte;
            if let Some(fast) = compiled_read(&codec, &changed) {
                prop_assert_eq!(Ok(fast), general_read(&general, &changed));
            }
        }
        changed[at] = expected[at];
        if let Some(fast) = compiled_read(&codec, &expected[..at]) {
            prop_assert_eq!(Ok(fast), general_read(&general, &expected[..at]));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bm2_codecs_agree_with_the_general_table(row in rows(StaticMessage::Bm2)) {
        agree(StaticMessage::Bm2, &row)?;
    }

    #[test]
    fn bm3_codecs_agree_with_the_general_table(row in rows(StaticMessage::Bm3)) {
        agree(StaticMessage::Bm3, &row)?;
    }

    #[test]
    fn bm5_codecs_agree_with_the_general_table(row in rows(StaticMessage::Bm5)) {
        agree(StaticMessage::Bm5, &row)?;
    }

    #[test]
    fn random_messages_read_as_the_general_table_reads_them(
        bytes in proptest::collection::vec(any::<u8>(), 0..48),
        which in 0usize..4,
    ) {
        let message = StaticMessage::ALL[which];
        let schema = message.schema();
        let codec = MessageCodec::new(message, &schema);
        if let Some(fast) = compiled_read(&codec, &bytes) {
            prop_assert_eq!(Ok(fast), general_read(&FieldTable::new(&schema), &bytes));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4))]

    #[test]
    fn bm1_codecs_agree_with_the_general_table(row in rows(StaticMessage::Bm1)) {
        agree(StaticMessage::Bm1, &row)?;
    }
}

/// Rows whose values do not fit are left to the general table, output untouched.
#[test]
fn values_that_do_not_fit_are_refused_untouched() {
    let cases: Vec<(StaticMessage, usize, Value)> = vec![
        (StaticMessage::Bm1, 0, Value::Int64(200)),
        (StaticMessage::Bm1, 994, Value::Uint64(1 << 32)),
        (StaticMessage::Bm1, 998, Value::Double(1e300)),
        (StaticMessage::Bm1, 3, Value::Uint64(1)),
        (StaticMessage::Bm2, 0, Value::Uint64(1 << 32)),
        (StaticMessage::Bm2, 1, Value::Null),
        (StaticMessage::Bm3, 6, Value::Uint64(u64::MAX)),
        (StaticMessage::Bm3, 7, Value::Int64(1 << 40)),
        (StaticMessage::Bm3, 9, Value::String(vec![0xff, 0xfe])),
        (StaticMessage::Bm5, 0, Value::Int64(1)),
        (StaticMessage::Bm5, 1, Value::List(vec![Value::Int64(1)])),
        (
            StaticMessage::Bm5,
            2,
            Value::Tuple(vec![Value::Int64(1 << 40), Value::String(vec![])]),
        ),
        (
            StaticMessage::Bm5,
            3,
            Value::Dict(vec![(Value::Uint64(1), Value::String(vec![]))]),
        ),
    ];
    for (message, column, bad) in cases {
        let schema = message.schema();
        let codec = MessageCodec::new(message, &schema);
        // The row of an empty message: every column's default.
        let mut state = ReadState::default();
        let (mut arena, mut refs) = (Vec::new(), Vec::new());
        let general = FieldTable::new(&schema);
        general
            .read_row(&[], 0, &mut state, &mut arena, &mut refs)
            .unwrap();
        let mut row: Vec<Value> = refs
            .iter()
            .zip(&schema.columns)
            .map(|(view, c)| crate::table::value_from_ref(*view, &c.ty).unwrap())
            .collect();
        row[column] = bad;
        let mut out = vec![1, 2, 3];
        assert!(!codec.encode(&row, &mut out), "{message:?} column {column}");
        assert_eq!(out, [1, 2, 3]);
        assert!(general.write_owned(&row, &mut Vec::new()).is_err());
    }
}

/// Composite views in any form but the canonical one are left to the general table.
#[test]
fn other_yson_spellings_of_composites_are_refused_untouched() {
    let schema = StaticMessage::Bm5.schema();
    let codec = MessageCodec::new(StaticMessage::Bm5, &schema);
    let general = FieldTable::new(&schema);
    let mut list = Vec::new();
    let mut pair = Vec::new();
    let mut dict = Vec::new();
    crate::table::yson_binary::value(&mut list, &Value::List(vec![]), &schema.columns[1].ty)
        .unwrap();
    crate::table::yson_binary::value(
        &mut pair,
        &Value::Tuple(vec![Value::Int64(7), Value::String(b"x".to_vec())]),
        &schema.columns[2].ty,
    )
    .unwrap();
    crate::table::yson_binary::value(&mut dict, &Value::Dict(vec![]), &schema.columns[3].ty)
        .unwrap();
    let canonical = [
        ValueRef::Null,
        ValueRef::Composite(&list),
        ValueRef::Composite(&pair),
        ValueRef::Composite(&dict),
    ];
    let mut expected = Vec::new();
    general.write_views(&canonical, &mut expected).unwrap();
    let mut out = Vec::new();
    assert!(codec.encode(&canonical, &mut out));
    assert_eq!(out, expected);
    // Text YSON, the positional form of the struct, an int where a double goes, a
    // trailing byte: all refused by the codec.
    let others: [(usize, &[u8]); 5] = [
        (1, b"[1.5]"),
        (2, b"[\x02\x0e;\x01\x02x;]"),
        (1, b"[\x02\x02;]"),
        (2, &[pair.as_slice(), b" "].concat()),
        (3, b"[[\x02\x02;\x01\x02x;];"),
    ];
    for (column, yson) in others {
        let mut row = canonical;
        row[column] = ValueRef::Composite(yson);
        let mut out = vec![9];
        assert!(!codec.encode(&row, &mut out), "{column}: {yson:?}");
        assert_eq!(out, [9]);
    }
}

#[test]
fn varint_lengths_match_the_written_varints() {
    for v in [
        0,
        1,
        127,
        128,
        16_383,
        16_384,
        u64::from(u32::MAX),
        u64::MAX,
    ] {
        let mut out = Vec::new();
        put_varint(&mut out, v);
        assert_eq!(varint_len(v), out.len(), "{v}");
    }
}
