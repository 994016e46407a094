//! Ad-hoc figures for the MessagePack and CBOR row sources (not a test of speed: it prints,
//! asserts only that both sides read the same rows). The interface's `next_row` over a
//! `Box<dyn Read>` against the format's `ItemReader` over the slice (no schema, no checks),
//! on tables shaped like the lab's BM1/BM2/BM3/BM5, best wall time of alternating runs.
//! Run: `cargo test --release -p shapeshift-formats --test formats tree_codec_bench:: -- --ignored --nocapture`

use shapeshift_formats::table::SharedOutput;
use std::io::Cursor;
use std::rc::Rc;

use shapeshift_formats::table::{open_sink, open_source, FormatKind, RowPosition};
use shapeshift_formats::{cbor, msgpack};
use shapeshift_types::{
    ColumnSchema, Member, PrimitiveType as P, TableSchema, Type, Value, ValueRef,
};

/// Nanoseconds since the first call. The best of many alternating runs is taken: on a
/// shared machine the fastest run is the one least disturbed by the other tenants.
fn now_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

/// A cheap deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn text(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| b'a' + (self.next() % 26) as u8).collect()
    }
}

fn table(name: &str, rows: usize) -> (TableSchema, Vec<Vec<Value>>) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let p = Type::Primitive;
    match name {
        "BM1" => {
            let kinds = [P::Int8, P::Int32, P::Int64, P::Uint16, P::Uint64, P::Double];
            let schema = TableSchema::new(
                (0..1000)
                    .map(|i| ColumnSchema::new(format!("c{i}"), p(kinds[i % kinds.len()])))
                    .collect(),
            );
            let values = (0..rows)
                .map(|_| {
                    (0..1000)
                        .map(|i| {
                            let v = rng.next() % 100;
                            match kinds[i % kinds.len()] {
                                P::Double => Value::Double(v as f64 / 3.0),
                                P::Uint16 | P::Uint64 => Value::Uint64(v),
                                _ => Value::Int64(v as i64 - 50),
                            }
                        })
                        .collect()
                })
                .collect();
            (schema, values)
        }
        "BM2" => {
            let schema = TableSchema::new(vec![
                ColumnSchema::new("id", p(P::Uint32)),
                ColumnSchema::new("data", p(P::String)),
            ]);
            let values = (0..rows)
                .map(|i| {
                    let len = 20 + (rng.next() % 80) as usize;
                    vec![Value::Uint64(i as u64), Value::String(rng.text(len))]
                })
                .collect();
            (schema, values)
        }
        "BM3" => {
            let schema = TableSchema::new(vec![
                ColumnSchema::new("id", p(P::Int64)),
                ColumnSchema::new("counter", p(P::Int64)),
                ColumnSchema::new("user", p(P::String)),
                ColumnSchema::new("score", p(P::Double)),
                ColumnSchema::new("active", p(P::Bool)),
                ColumnSchema::new("country", p(P::String)),
                ColumnSchema::new("created", p(P::Timestamp)),
                ColumnSchema::new("code", p(P::Int32)),
                ColumnSchema::new("ratio", p(P::Float)),
                ColumnSchema::new("comment", p(P::Utf8)),
            ]);
            let values = (0..rows)
                .map(|i| {
                    vec![
                        Value::Int64(i as i64),
                        Value::Int64((rng.next() % 100_000) as i64),
                        Value::String(rng.text(10)),
                        Value::Double((rng.next() % 1000) as f64 / 7.0),
                        Value::Bool(rng.next() % 2 == 0),
                        Value::String(rng.text(2)),
                        Value::Uint64(1_700_000_000_000_000 + rng.next() % 1_000_000),
                        Value::Int64((rng.next() % 1000) as i64 - 500),
                        Value::Double(0.375),
                        Value::String(rng.text(40)),
                    ]
                })
                .collect();
            (schema, values)
        }
        _ => {
            let schema = TableSchema::new(vec![
                ColumnSchema::new("maybe", Type::optional(p(P::String))),
                ColumnSchema::new("values", Type::list(p(P::Double))),
                ColumnSchema::new(
                    "pair",
                    Type::Struct(vec![
                        Member::new("foo", p(P::Int32)),
                        Member::new("bar", p(P::String)),
                    ]),
                ),
                ColumnSchema::new("dict", Type::dict(p(P::Int64), p(P::String))),
            ]);
            let values = (0..rows)
                .map(|_| {
                    let maybe = if rng.next() % 3 == 0 {
                        Value::Null
                    } else {
                        Value::String(rng.text(12))
                    };
                    let list = (0..rng.next() % 8)
                        .map(|_| Value::Double((rng.next() % 1000) as f64 / 3.0))
                        .collect();
                    let pair = Value::Tuple(vec![
                        Value::Int64((rng.next() % 1000) as i64),
                        Value::String(rng.text(8)),
                    ]);
                    let dict = (0..rng.next() % 4)
                        .map(|_| {
                            (
                                Value::Int64((rng.next() % 1000) as i64),
                                Value::String(rng.text(6)),
                            )
                        })
                        .collect();
                    vec![maybe, Value::List(list), pair, Value::Dict(dict)]
                })
                .collect();
            (schema, values)
        }
    }
}

/// The same fold of a value both sides apply (strings by length, composites counted).
fn touch(sum: &mut u64, value: ValueRef<'_>) {
    *sum = sum.wrapping_mul(31).wrapping_add(match value {
        ValueRef::Null => 1,
        ValueRef::Bool(v) => u64::from(v),
        ValueRef::Int64(v) => v as u64,
        ValueRef::Uint64(v) => v,
        ValueRef::Double(v) => v.to_bits(),
        ValueRef::String(v) => v.len() as u64,
        ValueRef::Composite(_) | ValueRef::Any(_) => 7,
    });
}

fn interface_read(kind: FormatKind, schema: &TableSchema, bytes: &Rc<[u8]>) -> (usize, u64) {
    let mut source = open_source(
        kind,
        std::slice::from_ref(schema),
        Box::new(Cursor::new(bytes.clone())),
    )
    .unwrap();
    let (mut rows, mut sum) = (0, 0);
    while let Some(row) = source.next_row().unwrap() {
        for value in row.values {
            touch(&mut sum, *value);
        }
        rows += 1;
    }
    (rows, sum)
}

/// Items one by one: a top-level array is a row, its items the column values; items inside
/// composite values are walked (into the same fold, so nothing is skipped).
fn own_read(kind: FormatKind, bytes: &[u8]) -> (usize, u64) {
    fn walk<'a>(
        item: msgpack::Item<'a>,
        next: &mut impl FnMut() -> Option<msgpack::Item<'a>>,
        inner: &mut u64,
    ) {
        use msgpack::Item;
        let children = match item {
            Item::Array(n) => n,
            Item::Map(n) => n * 2,
            Item::Bool(v) => return touch(inner, ValueRef::Bool(v)),
            Item::Int(v) => return touch(inner, ValueRef::Int64(v)),
            Item::Uint(v) => return touch(inner, ValueRef::Uint64(v)),
            Item::Double(v) => return touch(inner, ValueRef::Double(v)),
            Item::Bytes(v) | Item::Text(v) => return touch(inner, ValueRef::String(v)),
            _ => return,
        };
        for _ in 0..children {
            let child = next().unwrap();
            walk(child, next, inner);
        }
    }
    let mut msgpack_items = msgpack::ItemReader::new(bytes);
    let mut cbor_items = cbor::ItemReader::new(bytes);
    let mut next = || match kind {
        FormatKind::Msgpack => msgpack_items.next_item().unwrap(),
        _ => cbor_items.next_item().unwrap(),
    };
    let (mut rows, mut sum, mut inner) = (0, 0, 0);
    while let Some(item) = next() {
        let msgpack::Item::Array(n) = item else {
            panic!("a control record")
        };
        for _ in 0..n {
            use msgpack::Item;
            let value = match next().unwrap() {
                Item::Nil => ValueRef::Null,
                Item::Bool(v) => ValueRef::Bool(v),
                Item::Int(v) => ValueRef::Int64(v),
                Item::Uint(v) => ValueRef::Uint64(v),
                Item::Double(v) => ValueRef::Double(v),
                Item::Bytes(v) | Item::Text(v) => ValueRef::String(v),
                composite => {
                    walk(composite, &mut next, &mut inner);
                    ValueRef::Composite(&[])
                }
            };
            touch(&mut sum, value);
        }
        rows += 1;
    }
    std::hint::black_box(inner);
    (rows, sum)
}

#[test]
#[ignore = "throughput figures; run with --ignored --nocapture in release"]
fn interface_against_item_reader() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(9);
    let only = std::env::var("TABLE").unwrap_or_default();
    for (name, rows) in [
        ("BM1", 1600),
        ("BM2", 80_000),
        ("BM3", 80_000),
        ("BM5", 60_000),
    ] {
        if !only.is_empty() && only != name {
            continue;
        }
        let (schema, values) = table(name, rows);
        for kind in [FormatKind::Msgpack, FormatKind::Cbor] {
            let buffer = SharedOutput::default();
            let mut sink = open_sink(
                kind,
                std::slice::from_ref(&schema),
                Box::new(buffer.clone()),
            )
            .unwrap();
            for row in &values {
                sink.write_owned_row(&RowPosition::default(), row).unwrap();
            }
            sink.finish().unwrap();
            drop(sink);
            let bytes: Rc<[u8]> = buffer.take().into();
            let interface = interface_read(kind, &schema, &bytes);
            assert_eq!(interface.0, rows);
            if name != "BM5" {
                // Composite columns fold differently (the own walk folds their items apart).
                assert_eq!(interface, own_read(kind, &bytes));
            }
            let (mut best_interface, mut best_own) = (u64::MAX, u64::MAX);
            for _ in 0..runs {
                let t = now_ns();
                std::hint::black_box(interface_read(kind, &schema, &bytes));
                best_interface = best_interface.min(now_ns() - t);
                let t = now_ns();
                std::hint::black_box(own_read(kind, &bytes));
                best_own = best_own.min(now_ns() - t);
            }
            println!(
                "{name} {:8} {:>8} bytes  interface {:7.2} ms  own {:7.2} ms  ({:+.0}%)  {:.1} vs {:.1} ns/row",
                kind.name(),
                bytes.len(),
                best_interface as f64 / 1e6,
                best_own as f64 / 1e6,
                (best_interface as f64 / best_own as f64 - 1.0) * 100.0,
                best_interface as f64 / rows as f64,
                best_own as f64 / rows as f64,
            );
        }
    }
}
