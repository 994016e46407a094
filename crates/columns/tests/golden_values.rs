//! The values behind the checked-in golden columns (`tests/data/*.sscol`): deterministic
//! formulas, so the files can be checked against them forever. Shared by `golden.rs`.

/// `(file stem, forced encoding name or "" for the adaptive choice)` of every golden file.
pub const GOLDEN_I64: [&str; 13] = [
    "zero",
    "constant",
    "bit_packed",
    "byte_packed",
    "run_length",
    "delta",
    "dictionary",
    "patched_bit_packed",
    "pco",
    "unencoded",
    "lz4",
    "zstd",
    "chunked_bit_packed",
];
pub const GOLDEN_F64: [&str; 6] = [
    "alp",
    "pco",
    "zstd",
    "dictionary",
    "run_length",
    "unencoded",
];

/// 4096 + 1000 values (one full 4096-value block and a short one), shaped so that the
/// encoding `name` applies: runs of 7 over 50 levels, with an outlier every 97 values.
pub fn golden_i64(name: &str) -> Vec<i64> {
    (0..5096i64)
        .map(|i| match name {
            "zero" => 0,
            "constant" => -123_456_789,
            _ => {
                let level = (i / 7 * 31) % 50 * 3 - 40;
                let outlier = if name == "patched_bit_packed" && i % 97 == 0 {
                    1 << 40
                } else {
                    0
                };
                let drift = if name == "chunked_bit_packed" || name == "delta" {
                    i * 1000
                } else {
                    0
                };
                1_000_000 + level + outlier + drift
            }
        })
        .collect()
}

/// Decimals with two fractional digits, in runs of 7 over 50 levels.
pub fn golden_f64(_name: &str) -> Vec<f64> {
    (0..5096i64)
        .map(|i| ((i / 7 * 31) % 50 * 37) as f64 / 100.0 + 1.5)
        .collect()
}

/// An adaptive mix over every value type (for the balanced-target golden file).
pub fn golden_mixed_i32() -> Vec<i32> {
    (0..3 * 4096i32)
        .map(|i| match i / 4096 {
            0 => i % 17,
            1 => (i / 100) * 5,
            _ => (i.wrapping_mul(2_654_435_761u32 as i32)) >> 7,
        })
        .collect()
}

/// Runs of 3 over 50 levels, 70,000 values (a 65,536-value block and a short one): the run
/// ends drift by 3 per run, so the chunk frames of `chunked_bit_packed` suit them.
pub fn golden_runs_i32() -> Vec<i32> {
    (0..70_000i32).map(|i| (i / 3 * 31) % 50 * 3 - 40).collect()
}
