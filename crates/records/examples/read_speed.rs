//! Prints read throughput of a records file from Rust (no Python):
//! `cargo run --release -p shapeshift-records --example read_speed -- FILE [REPEAT [OPTIONS...]]`.

use std::time::Instant;

use shapeshift_records::{Reader, ReaderOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: read_speed FILE [REPEAT]")?;
    let repeat: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(3);
    // More reader option strings to compare may follow (e.g. "readahead_buffer_size:4M").
    let extra: Vec<String> = args.collect();
    let mut all_options = vec!["max_parallelism:1".to_string(), String::new()];
    all_options.extend(extra);
    for options in &all_options {
        let options = options.as_str();
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
        let label = match options {
            "" => "all cores",
            "max_parallelism:1" => "one thread",
            other => other,
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
        let reader = std::sync::Arc::new(reader);
        let cpu_before = process_cpu_seconds();
        let (sequential, _) = best(&|| {
            let mut sequential = shapeshift_records::SequentialReader::new(reader.clone());
            let mut bytes = 0;
            while let Some(record) = sequential.next_record() {
                bytes += record.map(|r| r.len()).unwrap_or(0);
            }
            bytes
        });
        let sequential_cpu = (process_cpu_seconds() - cpu_before) / repeat as f64;
        println!(
            "{label:10}: batch {:>10.0} rec/s  read_all {:>10.0} rec/s  single {:>10.0} rec/s  \
             sequential {:>10.0} rec/s ({:.1} ms CPU per pass, all threads)",
            count as f64 / batch,
            count as f64 / all,
            20_000f64.min(count as f64) / single,
            count as f64 / sequential,
            sequential_cpu * 1e3
        );
    }
    Ok(())
}

/// CPU time of the whole process (every thread), from `getrusage`.
fn process_cpu_seconds() -> f64 {
    // SAFETY: `getrusage` fills the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
