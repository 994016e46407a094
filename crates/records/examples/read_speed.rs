//! Prints read throughput of a records file from Rust (no Python):
//! `cargo run --release -p shapeshift-records --example read_speed -- FILE [REPEAT]`.

use std::time::Instant;

use shapeshift_records::{Reader, ReaderOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: read_speed FILE [REPEAT]")?;
    let repeat: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(3);
    for options in ["max_parallelism:1", ""] {
        let reader = Reader::open_with_options(&path, ReaderOptions::parse(options)?)?;
        let count = reader.num_records();
        // A fixed pseudo-random permutation.
        let mut indices: Vec<u64> = (0..count).collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for i in (1..indices.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            indices.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let label = if options.is_empty() {
            "all cores"
        } else {
            "one thread"
        };
        let best = |f: &dyn Fn() -> usize| {
            (0..repeat)
                .map(|_| {
                    let start = Instant::now();
                    let bytes = f();
                    (start.elapsed().as_secs_f64(), bytes)
                })
                .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a })
        };
        let (batch, _) = best(&|| reader.read_batch(&indices).map(|b| b.len()).unwrap_or(0));
        let (all, _) = best(&|| reader.read_all().map(|b| b.len()).unwrap_or(0));
        let (single, _) = best(&|| {
            indices
                .iter()
                .take(20_000)
                .map(|&i| reader.read(i).map(|r| r.len()).unwrap_or(0))
                .sum()
        });
        println!(
            "{label:10}: batch {:>10.0} rec/s  read_all {:>10.0} rec/s  single {:>10.0} rec/s",
            count as f64 / batch,
            count as f64 / all,
            20_000f64.min(count as f64) / single
        );
    }
    Ok(())
}
