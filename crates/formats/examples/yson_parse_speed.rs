//! Ad-hoc throughput of binary YSON list-fragment parsing (events only, nothing allocated per
//! field) and of writing; prints MB/s
//! (per second of CPU time where the OS tells it). Not a benchmark suite: the lab measures properly.
//!
//!     cargo run --release -p shapeshift-formats --example yson_parse_speed [rows]

use std::time::Instant;

use shapeshift_formats::yson::{self, Event, PullParser, Writer, YsonFormat, YsonType};

fn rows(count: usize, format: YsonFormat) -> Vec<u8> {
    let mut writer = Writer::new(Vec::new(), format, YsonType::ListFragment);
    let words: [&[u8]; 4] = [b"alpha", b"beta gamma", b"delta epsilon zeta", b"eta"];
    for i in 0..count {
        writer.begin_map().unwrap();
        writer.key(b"id").unwrap();
        writer.int64(i as i64).unwrap();
        writer.key(b"score").unwrap();
        writer.double(i as f64 * 0.37).unwrap();
        writer.key(b"name").unwrap();
        writer.string(words[i % 4]).unwrap();
        writer.key(b"count").unwrap();
        writer
            .int64((i as i64).wrapping_mul(7919) - 1_000_000)
            .unwrap();
        writer.key(b"flag").unwrap();
        writer.bool(i % 3 == 0).unwrap();
        writer.key(b"tags").unwrap();
        writer.begin_list().unwrap();
        for j in 0..(i % 4) {
            writer.string(words[j]).unwrap();
        }
        writer.end_list().unwrap();
        writer.key(b"meta").unwrap();
        writer.begin_map().unwrap();
        writer.key(b"x").unwrap();
        writer.uint64(i as u64 % 100).unwrap();
        writer.key(b"z").unwrap();
        writer.string(words[(i + 1) % 4]).unwrap();
        writer.end_map().unwrap();
        writer.end_map().unwrap();
    }
    writer.finish().unwrap()
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut parser = PullParser::from_slice(bytes, YsonType::ListFragment);
    let mut sum = 0u64;
    while let Some(event) = parser.next_event().unwrap() {
        sum = sum.wrapping_add(match event {
            Event::Int64(v) => v as u64,
            Event::Uint64(v) => v,
            Event::Double(v) => v.to_bits(),
            Event::Bool(v) => v as u64,
            Event::String(s) | Event::Key(s) => s.len() as u64,
            _ => 1,
        });
    }
    sum
}

/// Nanoseconds this thread has run on a CPU (Linux); `None` elsewhere. The machine this was
/// written on is shared, so time on CPU says more than wall time.
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Best of `runs`, in seconds: on-CPU time where available, else wall time.
fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let cpu_start = cpu_ns();
            std::hint::black_box(f());
            match (cpu_start, cpu_ns()) {
                (Some(a), Some(b)) => (b - a) as f64 / 1e9,
                _ => start.elapsed().as_secs_f64(),
            }
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    for format in [YsonFormat::Binary, YsonFormat::Text] {
        let bytes = rows(count, format);
        let mb = bytes.len() as f64 / 1e6;
        let events = best_of(5, || checksum(&bytes));
        let nodes = best_of(3, || yson::list_fragment_from_slice(&bytes).unwrap().len());
        let write = best_of(3, || rows(count, format).len());
        println!(
            "{format:?}: {count} rows, {mb:.1} MB; parse events {:.0} MB/s; parse to nodes {:.0} MB/s; write events {:.0} MB/s",
            mb / events,
            mb / nodes,
            mb / write
        );
    }
}
