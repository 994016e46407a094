//! Measures the decode cost of every scheme and prints the `DECODE_NS_PER_VALUE` table of
//! `src/cost_table.rs`. Run: `cargo run --release -p shapeshift-columns --example calibrate`.
//! Each scheme is forced alone (`EncodeOptions::with_only`) on 1M values shaped for it;
//! the figure is the best of 9 full decodes. Wrappers (lz4, zstd) are reported as the extra
//! cost over decoding the same data unencoded.

use std::time::Instant;

use shapeshift_columns::{encode, Column, ColumnValue, EncodeOptions, Encoding, Target};

const N: usize = 1 << 20;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn data(encoding: Encoding, rng: &mut Rng) -> Vec<i64> {
    (0..N as i64)
        .map(|i| {
            let r = rng.next();
            match encoding {
                Encoding::Zero => 0,
                Encoding::Constant => 7,
                Encoding::RunLength => i / 100,
                Encoding::Delta => i * 50 + (r % 50) as i64,
                Encoding::Dictionary => ((r % 50) as i64) * 1_000_000_007 % 2_000_000_000,
                Encoding::PatchedBitPacked => {
                    if r % 50 == 0 {
                        (r >> 20) as i64 & 0x3fff_ffff
                    } else {
                        (r % 256) as i64
                    }
                }
                // pco is chosen where it beats bit-packing: skewed data with many bins, which
                // decodes much slower than uniform data (one bin); exponential, mean 1000.
                Encoding::Pco => {
                    (-((((r >> 11) as f64) + 1.0) / (1u64 << 53) as f64).ln() * 1000.0) as i64
                }
                Encoding::ChunkedBitPacked => i * 1000 + (r % 1000) as i64,
                Encoding::Lz4 | Encoding::Zstd => ((r % 64) as i64) * 1_000_000_007 % 2_000_000_000,
                _ => (r % 4096) as i64,
            }
        })
        .collect()
}

fn decode_ns<T: ColumnValue>(values: &[T], encoding: Encoding) -> f64 {
    let options = EncodeOptions::new(Target::Smaller).with_only(&[encoding]);
    let column = Column::open(encode(values, &options).unwrap()).unwrap();
    let used = column.composition();
    assert!(
        used.iter().all(|&(e, _)| e == encoding),
        "{encoding:?} not applied: {used:?}"
    );
    let mut out = vec![T::default(); values.len()];
    let mut best = f64::INFINITY;
    for _ in 0..9 {
        let start = Instant::now();
        column.decode_into(&mut out).unwrap();
        best = best.min(start.elapsed().as_secs_f64());
    }
    best * 1e9 / values.len() as f64
}

fn measure(encoding: Encoding, rng: &mut Rng) -> [f64; 2] {
    if encoding == Encoding::Alp {
        let prices: Vec<f64> = (0..N)
            .map(|_| (rng.next() % 100_000) as f64 / 100.0)
            .collect();
        let narrow: Vec<f32> = prices.iter().map(|&p| p as f32).collect();
        return [decode_ns(&narrow, encoding), decode_ns(&prices, encoding)];
    }
    let wide = data(encoding, rng);
    let narrow: Vec<i32> = wide.iter().map(|&v| v as i32).collect();
    let mut cost = [decode_ns(&narrow, encoding), decode_ns(&wide, encoding)];
    if matches!(encoding, Encoding::Lz4 | Encoding::Zstd) {
        cost[0] = (cost[0] - decode_ns(&narrow, Encoding::Unencoded)).max(0.01);
        cost[1] = (cost[1] - decode_ns(&wide, Encoding::Unencoded)).max(0.01);
    }
    cost
}

fn main() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    println!("pub(crate) const DECODE_NS_PER_VALUE: [[f64; 2]; ENCODING_COUNT] = [");
    for encoding in Encoding::ALL {
        let [narrow, wide] = measure(encoding, &mut rng);
        println!("    [{narrow:.3}, {wide:.3}], // {}", encoding.name());
    }
    println!("];");
    // Run-length decode pays per run as well as per value: runs of 4 against runs of 100.
    let short: Vec<i64> = (0..N as i64).map(|i| (i / 4) * 37 % 100_000).collect();
    let long: Vec<i64> = (0..N as i64).map(|i| (i / 100) * 37 % 100_000).collect();
    let (short_ns, long_ns) = (
        decode_ns(&short, Encoding::RunLength),
        decode_ns(&long, Encoding::RunLength),
    );
    let per_run = ((short_ns - long_ns) / (1.0 / 4.0 - 1.0 / 100.0)).max(0.0);
    println!("pub(crate) const RUN_LENGTH_NS_PER_RUN: f64 = {per_run:.3};");
}
