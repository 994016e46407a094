//! Full decode against `take` of 0.1% / 1% / 10% of the rows, per column and summed, for the
//! three targets: the crate's side of the lab's take goal (take of 1% of the rows at least 10x
//! faster than a full decode), without Python in between.
//!
//! Run: `cargo run --release -p shapeshift-columns --example take_bench [DIR [NAME_PART [TARGET]]]`.
//! `DIR` holds raw little-endian columns named `<name>.<i32|i64|u32|u64|f32|f64>` (the lab's
//! columns can be dumped with numpy's `tofile`); without it, a few synthetic columns are
//! generated. Each figure is the fastest of `REPEAT` runs (the machine is shared;
//! interference only adds time). Decode allocates its output like `Column::decode`; take
//! returns a fresh `Vec` like `Column::take`.

use std::time::{Duration, Instant};

use shapeshift_columns::{encode, Column, ColumnValue, EncodeOptions, Lane, Target};

const REPEAT: usize = 9;
const FRACTIONS: [f64; 3] = [0.001, 0.01, 0.1];
const TARGETS: [Target; 3] = [Target::Smaller, Target::Balanced, Target::Faster];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn fastest(mut run: impl FnMut()) -> Duration {
    // `REPEAT` runs, or as many as the environment's TAKE_BENCH_REPEAT (for profiling).
    let repeat = std::env::var("TAKE_BENCH_REPEAT")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(REPEAT);
    (0..repeat)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .min()
        .expect("REPEAT > 0")
}

/// Sorted distinct rows, about `fraction` of `n`, chosen uniformly.
fn rows(n: usize, fraction: f64, rng: &mut Rng) -> Vec<usize> {
    let wanted = ((n as f64 * fraction) as usize).max(1);
    let mut picked: Vec<usize> = (0..wanted * 11 / 10)
        .map(|_| (rng.next() % n as u64) as usize)
        .collect();
    picked.sort_unstable();
    picked.dedup();
    picked.truncate(wanted);
    picked
}

struct Figures {
    bytes: usize,
    decode: f64,
    takes: Vec<f64>,
    composition: String,
}

fn measure<T: ColumnValue>(values: &[T], target: Target, rng: &mut Rng) -> Figures {
    let bytes = encode(values, &EncodeOptions::new(target)).expect("encode");
    let column = Column::open(bytes).expect("open");
    // TAKE_BENCH_PROFILE=FRACTION: only takes of that fraction, for ~3 s (under `perf record`).
    if let Some(fraction) = std::env::var("TAKE_BENCH_PROFILE")
        .ok()
        .and_then(|f| f.parse::<f64>().ok())
    {
        let rows = rows(values.len(), fraction, rng);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(3) {
            std::hint::black_box(column.take::<T>(&rows).expect("take"));
        }
    }
    let decode = fastest(|| {
        std::hint::black_box(column.decode::<T>().expect("decode"));
    });
    let takes = FRACTIONS
        .iter()
        .map(|&f| {
            let rows = rows(values.len(), f, rng);
            let taken = column.take::<T>(&rows).expect("take");
            let same = |a: &T, b: &T| T::to_lane(*a) == T::to_lane(*b);
            assert!(
                rows.iter().zip(&taken).all(|(&r, t)| same(&values[r], t)),
                "take differs"
            );
            fastest(|| {
                std::hint::black_box(column.take::<T>(&rows).expect("take"));
            })
            .as_secs_f64()
        })
        .collect();
    let composition = column
        .composition()
        .iter()
        .map(|(e, n)| format!("{}:{n}", e.name()))
        .collect::<Vec<_>>()
        .join(",");
    Figures {
        bytes: column.nbytes(),
        decode: decode.as_secs_f64(),
        takes,
        composition,
    }
}

fn load<T: ColumnValue>(bytes: &[u8]) -> Vec<T> {
    let width = std::mem::size_of::<T>();
    bytes
        .chunks_exact(width)
        .map(|chunk| {
            let mut word = [0u8; 8];
            word[..width].copy_from_slice(chunk);
            T::from_lane(T::Lane::truncate_u64(u64::from_le_bytes(word)))
        })
        .collect()
}

enum Data {
    I32(Vec<i32>),
    I64(Vec<i64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

fn synthetic() -> Vec<(String, Data)> {
    let mut rng = Rng(0x5eed);
    let n = 1 << 20;
    let uniform: Vec<i64> = (0..n).map(|_| (rng.next() % 1_000_000) as i64).collect();
    let mut t = 1_700_000_000_000i64;
    let timestamps: Vec<i64> = (0..n)
        .map(|_| {
            t += (rng.next() % 2000) as i64;
            t
        })
        .collect();
    let low_card: Vec<i64> = (0..n)
        .map(|_| ((rng.next() % 16) as i64) * 576_460_752_303_423_487)
        .collect();
    let runs: Vec<i32> = (0..n).map(|i| (i / 1000) as i32 * 7).collect();
    let prices: Vec<f64> = (0..n)
        .map(|_| (rng.next() % 100_000) as f64 / 100.0)
        .collect();
    vec![
        ("uniform_i64".into(), Data::I64(uniform)),
        ("timestamps_ms".into(), Data::I64(timestamps)),
        ("low_card_i64".into(), Data::I64(low_card)),
        ("long_runs_i32".into(), Data::I32(runs)),
        ("prices_f64".into(), Data::F64(prices)),
    ]
}

fn from_dir(dir: &str) -> Vec<(String, Data)> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read the column directory")
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .filter_map(|path| {
            let name = path.file_stem()?.to_str()?.to_string();
            let bytes = std::fs::read(&path).expect("read a column file");
            let data = match path.extension()?.to_str()? {
                "i32" => Data::I32(load(&bytes)),
                "i64" => Data::I64(load(&bytes)),
                "u32" => Data::U32(load(&bytes)),
                "u64" => Data::U64(load(&bytes)),
                "f32" => Data::F32(load(&bytes)),
                "f64" => Data::F64(load(&bytes)),
                _ => return None,
            };
            Some((name, data))
        })
        .collect()
}

fn main() {
    let columns = match std::env::args().nth(1) {
        Some(dir) => from_dir(&dir),
        None => synthetic(),
    };
    // Optional second argument: only columns whose name contains it.
    let only = std::env::args().nth(2).unwrap_or_default();
    let columns: Vec<_> = columns
        .into_iter()
        .filter(|(name, _)| name.contains(&only))
        .collect();
    // Optional third argument: only this target.
    let only_target = std::env::args().nth(3).unwrap_or_default();
    let mut rng = Rng(2026);
    let mut totals = vec![(0usize, 0.0f64, vec![0.0f64; FRACTIONS.len()]); TARGETS.len()];
    println!("column            target    bytes      decode_us  take.1%_us take1%_us take10%_us dec/take1%  composition");
    for (name, data) in &columns {
        for (t, &target) in TARGETS.iter().enumerate() {
            if !only_target.is_empty() && target.name() != only_target {
                continue;
            }
            let figures = match data {
                Data::I32(v) => measure(v, target, &mut rng),
                Data::I64(v) => measure(v, target, &mut rng),
                Data::U32(v) => measure(v, target, &mut rng),
                Data::U64(v) => measure(v, target, &mut rng),
                Data::F32(v) => measure(v, target, &mut rng),
                Data::F64(v) => measure(v, target, &mut rng),
            };
            println!(
                "{name:<17} {:<9} {:>10} {:>10.1} {:>10.1} {:>9.1} {:>10.1} {:>9.1}x  {}",
                target.name(),
                figures.bytes,
                figures.decode * 1e6,
                figures.takes[0] * 1e6,
                figures.takes[1] * 1e6,
                figures.takes[2] * 1e6,
                figures.decode / figures.takes[1],
                figures.composition
            );
            totals[t].0 += figures.bytes;
            totals[t].1 += figures.decode;
            for (sum, take) in totals[t].2.iter_mut().zip(&figures.takes) {
                *sum += take;
            }
        }
    }
    for (t, target) in TARGETS.iter().enumerate() {
        let (bytes, decode, takes) = &totals[t];
        println!(
            "TOTAL {:<9} bytes {bytes} decode {:.1} us take 0.1% {:.1} us 1% {:.1} us 10% {:.1} us decode/take1% {:.2}x",
            target.name(),
            decode * 1e6,
            takes[0] * 1e6,
            takes[1] * 1e6,
            takes[2] * 1e6,
            decode / takes[1]
        );
    }
}
