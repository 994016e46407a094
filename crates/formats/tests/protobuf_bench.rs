//! Ad-hoc throughput figures for the Protobuf and Arrow row paths against prost and arrow-rs
//! used directly, on BM3 rows (prints; asserts only correctness).
//! Run: `cargo test --release -p shapeshift-formats --test formats protobuf_bench:: -- --ignored --nocapture`

use std::hint::black_box;
use std::io::Cursor;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Float32Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray, TimestampMicrosecondArray,
};
use prost::Message;
use shapeshift_formats::arrow::{self, arrow_schema};
use shapeshift_formats::protobuf::messages::Bm3Row;
use shapeshift_formats::protobuf::{self, StaticMessage};
use shapeshift_formats::protobuf_dynamic;
use shapeshift_formats::table::{RowPosition, RowSink, RowSource};
use shapeshift_types::{Value, ValueRef};

const ROWS: usize = 200_000;

fn bm3_rows() -> Vec<Vec<Value>> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..ROWS)
        .map(|i| {
            let r = next();
            vec![
                Value::Int64(i as i64),
                Value::Int64((r % 1_000_000) as i64),
                Value::String(format!("user{}", r % 50_000).into_bytes()),
                Value::Double((r % 10_000) as f64 / 7.0),
                Value::Bool(r % 2 == 0),
                Value::String(
                    ["RU", "US", "DE", "FR", "CN"][(r % 5) as usize]
                        .as_bytes()
                        .to_vec(),
                ),
                Value::Uint64(1_600_000_000_000_000 + r % 1_000_000_000),
                Value::Int64((r % 1000) as i64 - 500),
                Value::Double(f64::from((r % 100) as f32 / 4.0)),
                Value::String(format!("comment number {} about {}", r % 977, i).into_bytes()),
            ]
        })
        .collect()
}

fn views(row: &[Value]) -> Vec<ValueRef<'_>> {
    row.iter()
        .map(|v| match v {
            Value::Int64(x) => ValueRef::Int64(*x),
            Value::Uint64(x) => ValueRef::Uint64(*x),
            Value::Double(x) => ValueRef::Double(*x),
            Value::Bool(x) => ValueRef::Bool(*x),
            Value::String(s) => ValueRef::String(s),
            _ => ValueRef::Null,
        })
        .collect()
}

fn message(row: &[Value]) -> Bm3Row {
    let int = |v: &Value| if let Value::Int64(x) = v { *x } else { 0 };
    let bytes = |v: &Value| {
        if let Value::String(s) = v {
            s.clone()
        } else {
            Vec::new()
        }
    };
    let double = |v: &Value| if let Value::Double(x) = v { *x } else { 0.0 };
    Bm3Row {
        id: int(&row[0]),
        counter: int(&row[1]),
        user: bytes(&row[2]),
        score: Some(double(&row[3])),
        active: matches!(row[4], Value::Bool(true)),
        country: bytes(&row[5]),
        created: if let Value::Uint64(x) = row[6] { x } else { 0 },
        code: int(&row[7]) as i32,
        ratio: Some(double(&row[8]) as f32),
        comment: String::from_utf8(bytes(&row[9])).unwrap(),
    }
}

/// Sums something of every value, so reading cannot be skipped.
fn touch(values: &[ValueRef<'_>]) -> u64 {
    values
        .iter()
        .map(|v| match v {
            ValueRef::Int64(x) => *x as u64,
            ValueRef::Uint64(x) => *x,
            ValueRef::Double(x) => x.to_bits(),
            ValueRef::Bool(x) => u64::from(*x),
            ValueRef::String(s) => s.len() as u64,
            _ => 0,
        })
        .fold(0u64, u64::wrapping_add)
}

/// Best time of `runs` runs of `f` on a fresh copy of `input` (copied outside the timing).
fn best_on<T>(runs: usize, input: &[u8], mut f: impl FnMut(Vec<u8>) -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let copy = input.to_vec();
        let start = Instant::now();
        let r = f(copy);
        best = best.min(start.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.unwrap())
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.unwrap())
}

fn report(name: &str, seconds: f64, bytes: usize) {
    println!(
        "{name:<48} {:>8.1} ms  {:>7.2} Mrows/s  {:>7.1} MB/s",
        seconds * 1e3,
        ROWS as f64 / seconds / 1e6,
        bytes as f64 / seconds / 1e6
    );
}

struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
impl std::io::Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn write_with(
    sink: fn(
        &[shapeshift_types::TableSchema],
        Box<dyn std::io::Write>,
    ) -> Result<Box<dyn RowSink>, shapeshift_formats::table::FormatError>,
    rows: &[Vec<ValueRef<'_>>],
) -> Vec<u8> {
    let buffer = std::rc::Rc::new(std::cell::RefCell::new(Vec::with_capacity(64 << 20)));
    let mut sink = sink(
        &[StaticMessage::Bm3.schema()],
        Box::new(Shared(buffer.clone())),
    )
    .unwrap();
    let position = RowPosition::default();
    for row in rows {
        sink.write_row(&position, row).unwrap();
    }
    sink.finish().unwrap();
    drop(sink);
    let bytes = buffer.borrow().clone();
    bytes
}

fn read_with(
    source: fn(
        &[shapeshift_types::TableSchema],
        Box<dyn std::io::Read>,
    ) -> Result<Box<dyn RowSource>, shapeshift_formats::table::FormatError>,
    bytes: Vec<u8>,
) -> u64 {
    let mut source = source(&[StaticMessage::Bm3.schema()], Box::new(Cursor::new(bytes))).unwrap();
    let mut sum = 0u64;
    while let Some(row) = source.next_row().unwrap() {
        sum = sum.wrapping_add(touch(row.values));
    }
    sum
}

#[test]
#[ignore = "prints throughput figures; run by hand in release"]
fn bm3_protobuf_and_arrow_against_direct_use() {
    let rows = bm3_rows();
    let row_views: Vec<Vec<ValueRef<'_>>> = rows.iter().map(|r| views(r)).collect();
    println!("BM3, {ROWS} rows, best of 5");

    // Protobuf write.
    let messages: Vec<Bm3Row> = rows.iter().map(|r| message(r)).collect();
    let (t, direct) = best_of(5, || {
        let mut out = Vec::with_capacity(64 << 20);
        for m in &messages {
            out.extend_from_slice(&(m.encoded_len() as u32).to_le_bytes());
            m.encode(&mut out).unwrap();
        }
        out
    });
    report("write prost direct (prebuilt messages)", t, direct.len());
    let (t, _) = best_of(5, || {
        let mut out = Vec::with_capacity(64 << 20);
        let mut m = Bm3Row::default();
        for r in &rows {
            m = message(r).clone_from_into(m);
            out.extend_from_slice(&(m.encoded_len() as u32).to_le_bytes());
            m.encode(&mut out).unwrap();
        }
        out
    });
    report(
        "write prost direct (messages built from rows)",
        t,
        direct.len(),
    );
    let (t, ours) = best_of(5, || write_with(protobuf::sink, &row_views));
    report(
        "write shapeshift protobuf static (row views)",
        t,
        ours.len(),
    );
    let (t, dynamic) = best_of(5, || write_with(protobuf_dynamic::sink, &row_views));
    report(
        "write shapeshift protobuf dynamic (row views)",
        t,
        dynamic.len(),
    );
    assert_eq!(ours, dynamic);

    // Protobuf read.
    let (t, direct_sum) = best_of(5, || {
        let mut sum = 0u64;
        let mut pos = 0;
        let mut m = Bm3Row::default();
        while pos + 4 <= ours.len() {
            let len = u32::from_le_bytes(ours[pos..pos + 4].try_into().unwrap());
            if len >= 0xFFFF_FFFB {
                break;
            }
            let body = &ours[pos + 4..pos + 4 + len as usize];
            m.clear();
            m.merge(body).unwrap();
            sum = sum.wrapping_add(
                (m.id as u64)
                    .wrapping_add(m.counter as u64)
                    .wrapping_add(m.user.len() as u64)
                    .wrapping_add(m.score.unwrap_or_default().to_bits())
                    .wrapping_add(u64::from(m.active))
                    .wrapping_add(m.country.len() as u64)
                    .wrapping_add(m.created)
                    .wrapping_add(i64::from(m.code) as u64)
                    .wrapping_add(f64::from(m.ratio.unwrap_or_default()).to_bits())
                    .wrapping_add(m.comment.len() as u64),
            );
            pos += 4 + len as usize;
        }
        sum
    });
    report("read prost direct (merge into one message)", t, ours.len());
    let (t, sum) = best_on(5, &ours, |b| read_with(protobuf::source, b));
    report("read shapeshift protobuf static (row views)", t, ours.len());
    assert_eq!(sum, direct_sum);
    let (t, sum) = best_on(5, &ours, |b| read_with(protobuf_dynamic::source, b));
    report(
        "read shapeshift protobuf dynamic (row views)",
        t,
        ours.len(),
    );
    assert_eq!(sum, direct_sum);

    // Arrow write: arrow-rs from typed columns vs shapeshift from rows.
    let schema = StaticMessage::Bm3.schema();
    let arrow_direct = || {
        let col = |i: usize| rows.iter().map(move |r| &r[i]);
        let int = |v: &Value| if let Value::Int64(x) = v { *x } else { 0 };
        let bytes = |v: &Value| {
            if let Value::String(s) = v {
                s.clone()
            } else {
                Vec::new()
            }
        };
        let double = |v: &Value| if let Value::Double(x) = v { *x } else { 0.0 };
        let mut batches = Vec::new();
        for chunk in rows.chunks(arrow::DEFAULT_BATCH_ROWS) {
            let c = |i: usize| chunk.iter().map(move |r| &r[i]);
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from_iter_values(c(0).map(int))),
                Arc::new(Int64Array::from_iter_values(c(1).map(int))),
                Arc::new(BinaryArray::from_iter_values(c(2).map(bytes))),
                Arc::new(Float64Array::from_iter_values(c(3).map(double))),
                Arc::new(BooleanArray::from_iter(
                    c(4).map(|v| Some(matches!(v, Value::Bool(true)))),
                )),
                Arc::new(BinaryArray::from_iter_values(c(5).map(bytes))),
                Arc::new(TimestampMicrosecondArray::from_iter_values(c(6).map(|v| {
                    if let Value::Uint64(x) = v {
                        *x as i64
                    } else {
                        0
                    }
                }))),
                Arc::new(Int32Array::from_iter_values(c(7).map(|v| int(v) as i32))),
                Arc::new(Float32Array::from_iter_values(
                    c(8).map(|v| double(v) as f32),
                )),
                Arc::new(StringArray::from_iter_values(
                    c(9).map(|v| String::from_utf8(bytes(v)).unwrap()),
                )),
            ];
            batches.push(RecordBatch::try_new(Arc::new(arrow_schema(&schema)), columns).unwrap());
        }
        let _ = col;
        let mut out = Vec::with_capacity(64 << 20);
        let mut writer =
            arrow_ipc::writer::StreamWriter::try_new(&mut out, &arrow_schema(&schema)).unwrap();
        for b in &batches {
            writer.write(b).unwrap();
        }
        writer.finish().unwrap();
        drop(writer);
        out
    };
    let (t, direct) = best_of(5, arrow_direct);
    report(
        "write arrow-rs direct (typed columns, IPC)",
        t,
        direct.len(),
    );
    let (t, ours) = best_of(5, || write_with(arrow::sink, &row_views));
    report("write shapeshift arrow (row views)", t, ours.len());

    // Arrow read: arrow-rs batches touched column-wise vs shapeshift rows.
    let (t, direct_sum) = best_of(5, || {
        let reader = arrow_ipc::reader::StreamReader::try_new(Cursor::new(&direct), None).unwrap();
        let mut sum = 0u64;
        for batch in reader {
            let batch = batch.unwrap();
            for i in 0..batch.num_rows() {
                for column in batch.columns() {
                    sum = sum.wrapping_add(match column.data_type() {
                        arrow_schema::DataType::Int64 => column
                            .as_primitive::<arrow_array::types::Int64Type>()
                            .value(i)
                            as u64,
                        arrow_schema::DataType::Binary => {
                            column.as_binary::<i32>().value(i).len() as u64
                        }
                        arrow_schema::DataType::Utf8 => {
                            column.as_string::<i32>().value(i).len() as u64
                        }
                        _ => 1,
                    });
                }
            }
        }
        sum
    });
    report(
        "read arrow-rs direct (row by row over batches)",
        t,
        direct.len(),
    );
    let (t, sum) = best_on(5, &ours, |b| read_with(arrow::source, b));
    report("read shapeshift arrow (row views)", t, ours.len());
    black_box((sum, direct_sum));
    let (t, batches) = best_on(5, &ours, |b| {
        let mut reader = arrow::BatchReader::new(&[schema.clone()], Box::new(Cursor::new(b)));
        let mut n = 0;
        while let Some((_, b)) = reader.next_batch().unwrap() {
            n += b.num_rows();
        }
        n
    });
    assert_eq!(batches, ROWS);
    report(
        "read shapeshift arrow (batches, columnar path)",
        t,
        ours.len(),
    );
}

trait CloneFromInto {
    fn clone_from_into(self, target: Self) -> Self;
}
impl CloneFromInto for Bm3Row {
    fn clone_from_into(self, _target: Self) -> Self {
        self
    }
}
