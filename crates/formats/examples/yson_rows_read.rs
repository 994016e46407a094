//! Ad-hoc A/B of binary YSON reads: the row interface (`next_rows` over a `Cursor`, every
//! value touched) against the pull parser's events over the slice (the lab's own-API
//! baseline, `format_bench.rs`), on a table written by `shapeshift generate`. For profiling
//! (`perf record`, `valgrind --tool=callgrind`); the lab measures properly.
//!
//!     shapeshift generate --dataset BM3 --rows 80000 --schema-out bm3.schema > bm3.yson
//!     cargo run --release -p shapeshift-formats --example yson_rows_read -- bm3.schema bm3.yson [repeat] [both|rows|events]

use std::io::Cursor;
use std::rc::Rc;
use std::time::Instant;

use shapeshift_formats::table::{open_source, FormatKind};
use shapeshift_formats::yson::{self, Event, PullParser, YsonType};
use shapeshift_types::{TableSchema, ValueRef};

/// A checksum of the values, so that nothing can be skipped.
#[derive(Default)]
struct Touch(u64);

impl Touch {
    #[inline(always)]
    fn value(&mut self, value: ValueRef<'_>) {
        self.0 = self.0.wrapping_add(match value {
            ValueRef::Int64(v) => v as u64,
            ValueRef::Uint64(v) => v,
            ValueRef::Double(v) => v.to_bits(),
            ValueRef::Bool(v) => u64::from(v),
            ValueRef::String(s) => s.len() as u64,
            ValueRef::Any(_) | ValueRef::Composite(_) => 1,
            ValueRef::Null => 0,
        });
    }
}

fn rows(schema: &TableSchema, bytes: &Rc<[u8]>) -> (usize, u64) {
    let mut source = open_source(
        FormatKind::Yson,
        std::slice::from_ref(schema),
        Box::new(Cursor::new(bytes.clone())),
    )
    .expect("open");
    let mut touch = Touch::default();
    let mut rows = 0;
    while let Some(block) = source.next_rows().expect("read") {
        for value in block.values {
            touch.value(*value);
        }
        rows += block.rows;
    }
    (rows, touch.0)
}

fn events(bytes: &[u8]) -> (usize, u64) {
    let mut parser = PullParser::from_slice(bytes, YsonType::ListFragment);
    let mut touch = Touch::default();
    let mut rows = 0;
    let mut depth = 0usize;
    while let Some(event) = parser.next_event().expect("parse") {
        match event {
            Event::BeginList | Event::BeginMap | Event::BeginAttributes => {
                depth += 1;
                if depth == 1 {
                    rows += usize::from(event == Event::BeginMap);
                } else if depth == 2 {
                    touch.value(ValueRef::Composite(&[]));
                }
            }
            Event::EndList | Event::EndMap | Event::EndAttributes => depth -= 1,
            Event::Int64(v) => touch.value(ValueRef::Int64(v)),
            Event::Uint64(v) => touch.value(ValueRef::Uint64(v)),
            Event::Double(v) => touch.value(ValueRef::Double(v)),
            Event::Bool(v) => touch.value(ValueRef::Bool(v)),
            Event::String(v) => touch.value(ValueRef::String(v)),
            _ => {}
        }
    }
    (rows, touch.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let schema_text = std::fs::read(&args[1]).expect("schema file");
    let schema = TableSchema::from_node(&yson::from_slice(&schema_text).expect("schema yson"))
        .expect("schema");
    let bytes: Rc<[u8]> = std::fs::read(&args[2]).expect("table file").into();
    let repeat: usize = args.get(3).map_or(5, |r| r.parse().expect("repeat"));
    let which = args.get(4).map_or("both", String::as_str);
    let mut times = (Vec::new(), Vec::new());
    for _ in 0..repeat {
        if which != "events" {
            let start = Instant::now();
            std::hint::black_box(rows(&schema, &bytes));
            times.0.push(start.elapsed().as_secs_f64() * 1e3);
        }
        if which != "rows" {
            let start = Instant::now();
            std::hint::black_box(events(&bytes));
            times.1.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!(
        "rows {:.2} ms  events {:.2} ms  (rows, checksum: {:?} / events {:?})",
        median(&mut times.0),
        median(&mut times.1),
        rows(&schema, &bytes),
        events(&bytes)
    );
}
