//! Arrow IPC streams in memory decoded in some columns only (`ProjectedReader`, the query
//! engine's path) give exactly those columns of the batches the whole-stream reader gives,
//! dictionaries included, for random deep schemas and any projection; cut-off or corrupted
//! input gives an error at an offset inside the input, never a panic.

use crate::support;

use arrow_buffer::Buffer;
use proptest::prelude::*;
use proptest::sample::subsequence;
use shapeshift_formats::arrow;
use shapeshift_formats::arrow::rows::{BatchReader, BatchWriter, ProjectedReader};
use shapeshift_formats::table::{FormatError, RowSink};
use shapeshift_types::TableSchema;
use support::*;

fn small_batches(
    schemas: &[TableSchema],
    output: Box<dyn std::io::Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(
        BatchWriter::new(schemas, output).with_batch_rows(2),
    ))
}

fn projected_batches(
    schemas: &[TableSchema],
    bytes: Vec<u8>,
    projection: &[usize],
) -> Result<Vec<arrow_array::RecordBatch>, FormatError> {
    let mut reader = ProjectedReader::new(schemas, Buffer::from_vec(bytes), projection);
    let mut batches = Vec::new();
    while let Some((table_index, batch)) = reader.next_batch()? {
        assert_eq!(table_index, 0);
        batches.push(batch);
    }
    Ok(batches)
}

fn arb_projected(
) -> impl Strategy<Value = (TableSchema, Vec<Vec<shapeshift_types::Value>>, Vec<usize>)> {
    schema_with_rows().prop_flat_map(|(schema, rows)| {
        let count = schema.columns.len();
        (
            Just(schema),
            Just(rows),
            subsequence((0..count).collect::<Vec<_>>(), 0..=count).prop_shuffle(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn projected_batches_are_the_whole_batches_columns((schema, rows, projection) in arb_projected()) {
        let schemas = [schema];
        for sink in [arrow::rows::sink as SinkFn, small_batches as SinkFn] {
            let bytes = write_owned(sink, &schemas, &plain_rows(rows.clone())).unwrap();
            let mut whole = BatchReader::new(&schemas, Box::new(std::io::Cursor::new(bytes.clone())));
            let projected = projected_batches(&schemas, bytes, &projection).unwrap();
            let mut count = 0;
            while let Some((_, batch)) = whole.next_batch().unwrap() {
                let got = &projected[count];
                prop_assert_eq!(got.num_rows(), batch.num_rows());
                prop_assert_eq!(got.num_columns(), projection.len());
                for (out, &column) in projection.iter().enumerate() {
                    let name = &schemas[0].columns[column].name;
                    prop_assert_eq!(got.schema_ref().field(out).name(), name);
                    let want = batch.column_by_name(name).unwrap();
                    prop_assert_eq!(got.column(out).to_data(), want.to_data());
                }
                count += 1;
            }
            prop_assert_eq!(count, projected.len());
        }
    }

    #[test]
    fn cut_or_corrupt_streams_are_errors_inside_them(
        (schema, rows, projection) in arb_projected(),
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let schemas = [schema];
        let bytes = write_owned(small_batches, &schemas, &plain_rows(rows)).unwrap();
        let cut = cut.index(bytes.len());
        if let Err(error) = projected_batches(&schemas, bytes[..cut].to_vec(), &projection) {
            prop_assert!(error.offset.is_some_and(|o| o <= cut as u64), "{}", error);
        }
        let mut corrupt = bytes.clone();
        for (at, byte) in flips {
            let at = at.index(corrupt.len());
            corrupt[at] = byte;
        }
        if let Err(error) = projected_batches(&schemas, corrupt, &projection) {
            prop_assert!(error.offset.is_some_and(|o| o <= bytes.len() as u64), "{}", error);
        }
    }
}

#[test]
fn a_cut_inside_a_message_says_where_the_message_starts() {
    use shapeshift_types::{ColumnSchema, PrimitiveType as P, Type, Value};
    let schemas = [TableSchema::new(vec![ColumnSchema::new(
        "n",
        Type::Primitive(P::Int64),
    )])];
    let rows = plain_rows((0..10).map(|i| vec![Value::Int64(i)]).collect());
    let bytes = write_owned(arrow::rows::sink, &schemas, &rows).unwrap();
    let error = projected_batches(&schemas, bytes[..bytes.len() - 20].to_vec(), &[0]).unwrap_err();
    assert!(
        error.message.contains("input ends inside a message body"),
        "{error}"
    );
    assert!(
        error
            .offset
            .is_some_and(|o| o > 0 && o < bytes.len() as u64 - 20),
        "{error}"
    );
}
