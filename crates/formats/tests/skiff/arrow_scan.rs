//! Skiff rows scanned straight into Arrow (`ArrowScan`, the query engine's path) give the
//! arrays the row interface's batches hold, for every flat column type the scan covers,
//! optional or not, in any projection; cut-off or corrupted input gives an error at an
//! offset inside the input, never a panic, and a cut at a row's end gives the rows before.

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use shapeshift_formats::arrow::arrow_schema;
use shapeshift_formats::arrow::rows::rows_to_batch;
use shapeshift_formats::registry::{open_sink, FormatKind};
use shapeshift_formats::skiff::ArrowScan;
use shapeshift_formats::table::{FormatError, RowPosition};
use shapeshift_types::testing::arb_value;
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

/// The primitive types the scan covers (every one but yson, uuid, null and void).
const COVERED: [P; 20] = [
    P::Int8,
    P::Int16,
    P::Int32,
    P::Int64,
    P::Uint8,
    P::Uint16,
    P::Uint32,
    P::Uint64,
    P::Float,
    P::Double,
    P::Bool,
    P::String,
    P::Utf8,
    P::Json,
    P::Date,
    P::Datetime,
    P::Timestamp,
    P::Interval,
    P::Date32,
    P::Timestamp64,
];

fn arb_column_type() -> impl Strategy<Value = Type> {
    (select(COVERED.to_vec()), any::<bool>()).prop_map(|(p, optional)| {
        let ty = Type::Primitive(p);
        if optional {
            Type::optional(ty)
        } else {
            ty
        }
    })
}

/// A flat table, rows of it, and a projection (a subset of its columns, in any order).
fn arb_case() -> impl Strategy<Value = (TableSchema, Vec<Vec<Value>>, Vec<usize>)> {
    prop::collection::vec(arb_column_type(), 1..7)
        .prop_flat_map(|types| {
            let row = types.iter().map(arb_value).collect::<Vec<_>>();
            let count = types.len();
            (
                Just(types),
                prop::collection::vec(row, 0..40),
                subsequence((0..count).collect::<Vec<_>>(), 0..=count).prop_shuffle(),
            )
        })
        .prop_map(|(types, rows, projection)| {
            let columns = types
                .into_iter()
                .enumerate()
                .map(|(i, ty)| ColumnSchema::new(format!("c{i}"), ty))
                .collect();
            (TableSchema::new(columns), rows, projection)
        })
}

fn skiff_bytes(table: &TableSchema, rows: &[Vec<Value>]) -> Vec<u8> {
    let out = shapeshift_formats::table::SharedOutput::default();
    let mut sink = open_sink(
        FormatKind::Skiff,
        std::slice::from_ref(table),
        Box::new(out.clone()),
    )
    .expect("a Skiff sink");
    for row in rows {
        sink.write_owned_row(&RowPosition::default(), row)
            .expect("a row of the schema");
    }
    sink.finish().expect("finish");
    out.take()
}

/// Every batch of the scan, `max_rows` rows at most each, or the first error.
fn scan_all(
    scan: &ArrowScan,
    data: &Buffer,
    max_rows: usize,
) -> Result<Vec<RecordBatch>, FormatError> {
    let (mut offset, mut rows, mut batches) = (0usize, 0u64, Vec::new());
    while let Some(batch) = scan.read_batch(data, &mut offset, rows, max_rows)? {
        assert!(batch.num_rows() > 0 && batch.num_rows() <= max_rows);
        rows += batch.num_rows() as u64;
        batches.push(batch);
    }
    assert_eq!(offset, data.len(), "a whole scan ends at the input's end");
    Ok(batches)
}

/// The row interface's column as the scan builds it: strings and binaries as views.
fn as_views(column: &ArrayRef) -> ArrayRef {
    let to = match column.data_type() {
        DataType::Utf8 => DataType::Utf8View,
        DataType::Binary => DataType::BinaryView,
        _ => return column.clone(),
    };
    arrow_cast::cast(column, &to).expect("strings cast to views")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn the_scan_builds_the_row_interfaces_arrays(
        (table, rows, projection) in arb_case(),
        max_rows in 1usize..17,
    ) {
        let data = Buffer::from_vec(skiff_bytes(&table, &rows));
        let scan = ArrowScan::new(&table, &arrow_schema(&table), &projection)
            .expect("a Skiff schema")
            .expect("every covered flat table has a scan");
        let batches = scan_all(&scan, &data, max_rows).expect("valid rows scan");
        let got = arrow_select::concat::concat_batches(scan.schema(), &batches)
            .expect("batches of one schema");
        prop_assert_eq!(got.num_rows(), rows.len());
        let expected = rows_to_batch(&table, &rows).expect("rows of the schema");
        for (out, &column) in projection.iter().enumerate() {
            let want = as_views(expected.column(column));
            let have = got.column(out);
            prop_assert_eq!(have.data_type(), want.data_type(), "column {}", column);
            prop_assert_eq!(have.to_data(), want.to_data(), "column {}", column);
        }
    }

    #[test]
    fn cut_or_corrupt_input_is_an_error_inside_it_never_a_panic(
        (table, rows, projection) in arb_case(),
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let bytes = skiff_bytes(&table, &rows);
        prop_assume!(!bytes.is_empty());
        let scan = ArrowScan::new(&table, &arrow_schema(&table), &projection).expect("a schema").expect("a scan");
        // Row ends: where a cut leaves whole rows only.
        let mut ends = vec![0usize];
        for i in 1..=rows.len() {
            ends.push(skiff_bytes(&table, &rows[..i]).len());
        }
        let cut = cut.index(bytes.len());
        let cut_data = Buffer::from_vec(bytes[..cut].to_vec());
        match scan_all(&scan, &cut_data, 7) {
            Ok(batches) => {
                let whole = ends.iter().position(|&e| e == cut);
                prop_assert!(whole.is_some(), "a cut inside a row at {} was read", cut);
                let read: usize = batches.iter().map(|b| b.num_rows()).sum();
                prop_assert_eq!(Some(read), whole);
            }
            Err(error) => {
                prop_assert!(!ends.contains(&cut), "a cut at a row's end failed: {}", error);
                prop_assert!(error.offset.is_some_and(|o| o <= cut as u64), "{}", error);
                prop_assert!(error.row.is_some(), "{}", error);
            }
        }
        let mut corrupt = bytes.clone();
        for (at, byte) in flips {
            let at = at.index(corrupt.len());
            corrupt[at] = byte;
        }
        let corrupt = Buffer::from_vec(corrupt);
        let (mut offset, mut read) = (0usize, 0u64);
        loop {
            match scan.read_batch(&corrupt, &mut offset, read, 5) {
                Ok(Some(batch)) => read += batch.num_rows() as u64,
                Ok(None) => break,
                Err(error) => {
                    prop_assert!(error.offset.is_some_and(|o| o <= corrupt.len() as u64));
                    break;
                }
            }
        }
    }
}

#[test]
fn a_row_of_another_table_is_refused_with_its_offset_and_row() {
    let table = TableSchema::new(vec![ColumnSchema::new("a", Type::Primitive(P::Int64))]);
    let mut bytes = skiff_bytes(&table, &[vec![Value::Int64(1)], vec![Value::Int64(2)]]);
    bytes[10] = 1; // the second row's table index
    let scan = ArrowScan::new(&table, &arrow_schema(&table), &[0])
        .unwrap()
        .unwrap();
    let error = scan_all(&scan, &Buffer::from_vec(bytes), 100).unwrap_err();
    assert_eq!((error.offset, error.row), (Some(10), Some(1)));
    assert!(error.message.contains("table 1"), "{}", error.message);
}

#[test]
fn invalid_utf8_in_a_read_column_is_an_error_and_in_a_skipped_one_is_not_looked_at() {
    let table = TableSchema::new(vec![
        ColumnSchema::new("text", Type::Primitive(P::Utf8)),
        ColumnSchema::new("n", Type::Primitive(P::Int64)),
    ]);
    let mut bytes = skiff_bytes(
        &table,
        &[vec![Value::String(b"ok".to_vec()), Value::Int64(7)]],
    );
    bytes[6] = 0xFF; // the first byte of "ok": 2 bytes of table index, 4 of length
    let data = Buffer::from_vec(bytes);
    let read_text = ArrowScan::new(&table, &arrow_schema(&table), &[0, 1])
        .unwrap()
        .unwrap();
    let error = scan_all(&read_text, &data, 10).unwrap_err();
    assert!(
        error.message.contains("\"text\"") && error.message.contains("UTF-8"),
        "{error}"
    );
    assert_eq!(error.offset, Some(6));
    let skip_text = ArrowScan::new(&table, &arrow_schema(&table), &[1])
        .unwrap()
        .unwrap();
    let batches = scan_all(&skip_text, &data, 10).unwrap();
    assert_eq!(batches[0].num_rows(), 1);
}

#[test]
fn tables_the_scan_does_not_cover_have_none() {
    for ty in [
        Type::Primitive(P::Yson),
        Type::list(Type::Primitive(P::Int64)),
        Type::optional(Type::optional(Type::Primitive(P::Int64))),
        Type::Decimal {
            precision: 10,
            scale: 2,
        },
        Type::Primitive(P::Uuid),
    ] {
        let table = TableSchema::new(vec![ColumnSchema::new("c", ty.clone())]);
        assert!(
            ArrowScan::new(&table, &arrow_schema(&table), &[0])
                .unwrap()
                .is_none(),
            "{ty:?}"
        );
    }
}
