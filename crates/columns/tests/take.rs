//! Property: `take` (the per-scheme batched kernels and the decode-and-pick path) returns
//! exactly what decoding the whole column and indexing it returns, for every encoding forced
//! alone and for the adaptive targets, at every density of sorted rows (with repeats), through
//! every entry point (`take`, `take_into`, `take_into_uninit`, `get`); and bad requests are
//! errors, not panics.

use std::mem::MaybeUninit;

use proptest::prelude::*;
use shapeshift_columns::{encode, Column, ColumnValue, EncodeOptions, Encoding, Error, Target};

/// Data shapes that let each scheme apply: (name, values from a seed and an index).
fn shaped(shape: usize, n: usize, seed: u64) -> Vec<i64> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n as i64)
        .map(|i| {
            let r = next();
            match shape % 7 {
                0 => (r % 1000) as i64 - 500,       // narrow: bit/byte-packed
                1 => i / (1 + (seed % 300) as i64), // runs
                2 => [7i64, -3, 1 << 40, 99][(r % 4) as usize], // few distinct
                3 if r % 23 == 0 => (r >> 8) as i64, // patched exceptions
                3 => (r % 64) as i64,
                4 => i * 1000 + (r % 1000) as i64, // drifting: chunked
                5 => 0,                            // zero / constant
                _ => (r >> 1) as i64,              // wide
            }
        })
        .collect()
}

fn decimals(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let x = (i as u64).wrapping_mul(seed | 1) % 100_000;
            if x % 41 == 0 {
                f64::NAN
            } else if x % 37 == 0 {
                98_765.43 + x as f64
            } else {
                x as f64 / 100.0
            }
        })
        .collect()
}

/// Sorted rows with repeats: every row kept with probability `density` (per mille), some
/// doubled.
fn rows(n: usize, density: u32, seed: u64) -> Vec<usize> {
    let mut state = seed | 1;
    let mut out = Vec::new();
    for row in 0..n {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if (state % 1000) < density as u64 {
            out.push(row);
            if state % 7 == 0 {
                out.push(row);
            }
        }
    }
    out
}

fn same<T: ColumnValue>(a: T, b: T) -> bool {
    a.to_lane() == b.to_lane()
}

fn check_take<T: ColumnValue>(column: &Column, rows: &[usize]) {
    let decoded = column.decode::<T>().unwrap();
    let expected: Vec<T> = rows.iter().map(|&r| decoded[r]).collect();
    let taken = column.take::<T>(rows).unwrap();
    assert_eq!(taken.len(), rows.len());
    for (k, (&got, &want)) in taken.iter().zip(&expected).enumerate() {
        assert!(
            same(got, want),
            "row {} (index {k}): {got:?} vs {want:?} in {:?}",
            rows[k],
            column.composition()
        );
    }
    let mut appended = vec![T::default(); 3];
    column.take_into(rows, &mut appended).unwrap();
    assert!(appended[3..]
        .iter()
        .zip(&expected)
        .all(|(&a, &b)| same(a, b)));
    let mut uninit = vec![MaybeUninit::<T>::uninit(); rows.len()];
    let written = column.take_into_uninit(rows, &mut uninit).unwrap();
    assert!(written.iter().zip(&expected).all(|(&a, &b)| same(a, b)));
    if let Some(&row) = rows.first() {
        assert!(same(column.get::<T>(row).unwrap(), decoded[row]));
    }
}

const RANDOM_ACCESS: [Encoding; 10] = [
    Encoding::Zero,
    Encoding::Constant,
    Encoding::BitPacked,
    Encoding::BytePacked,
    Encoding::RunLength,
    Encoding::Dictionary,
    Encoding::PatchedBitPacked,
    Encoding::Unencoded,
    Encoding::Alp,
    Encoding::ChunkedBitPacked,
];

#[test]
fn every_random_access_kernel_is_exercised() {
    // Each kernel runs (sparse rows on a block of its own encoding) and agrees with decode.
    let n = 3 * 4096 + 1000;
    for encoding in RANDOM_ACCESS {
        let options = EncodeOptions::new(Target::Smaller)
            .with_block_size(4096)
            .with_only(&[encoding]);
        let column = if encoding == Encoding::Alp {
            Column::open(encode(&decimals(n, 12345), &options).unwrap()).unwrap()
        } else {
            let shape = match encoding {
                Encoding::Zero => 5,
                Encoding::RunLength => 1,
                Encoding::Dictionary => 2,
                Encoding::PatchedBitPacked => 3,
                Encoding::ChunkedBitPacked => 4,
                Encoding::Constant => 5,
                _ => 0,
            };
            Column::open(encode(&shaped(shape, n, 99), &options).unwrap()).unwrap()
        };
        let used: Vec<Encoding> = column.composition().iter().map(|&(e, _)| e).collect();
        if encoding != Encoding::Constant {
            assert!(used.contains(&encoding), "{encoding:?} not used: {used:?}");
        }
        for density in [1, 10, 50, 300, 1000] {
            if column.value_type().name() == "f64" {
                check_take::<f64>(&column, &rows(n, density, 7));
            } else {
                check_take::<i64>(&column, &rows(n, density, 7));
            }
        }
    }
}

#[test]
fn exception_merge_both_ways() {
    // Patched and ALP blocks of 2^16 values with ~4% exceptions: a handful of rows (far
    // fewer than the exceptions: the per-row binary search) and 5% of the rows (more rows
    // than a sixteenth of the exceptions: the bitmap), both against decode-then-index,
    // including rows that sit on exceptions.
    let n = 2 * 65536 + 777;
    let ints = shaped(3, n, 4242);
    let patched = EncodeOptions::new(Target::Smaller)
        .with_block_size(65536)
        .with_only(&[Encoding::PatchedBitPacked]);
    let column = Column::open(encode(&ints, &patched).unwrap()).unwrap();
    assert_eq!(column.composition(), vec![(Encoding::PatchedBitPacked, 3)]);
    let exceptions: Vec<usize> = (0..n).filter(|&i| ints[i] >= 64).collect();
    assert!(
        exceptions.len() > 2 * 16 * 6,
        "{} exceptions",
        exceptions.len()
    );
    let mut few = vec![
        3,
        exceptions[5],
        exceptions[5],
        65536 + 11,
        exceptions[200],
        n - 1,
    ];
    few.sort_unstable();
    check_take::<i64>(&column, &few);
    check_take::<i64>(&column, &rows(n, 50, 17));
    let floats = decimals(n, 777);
    let alp = EncodeOptions::new(Target::Smaller)
        .with_block_size(65536)
        .with_only(&[Encoding::Alp]);
    let column = Column::open(encode(&floats, &alp).unwrap()).unwrap();
    assert_eq!(column.composition(), vec![(Encoding::Alp, 3)]);
    let nans: Vec<usize> = (0..n).filter(|&i| floats[i].is_nan()).collect();
    let mut few = vec![nans[0], nans[1] + 1, nans[40], 70_000, nans[nans.len() - 1]];
    few.sort_unstable();
    check_take::<f64>(&column, &few);
    check_take::<f64>(&column, &rows(n, 50, 18));
}

#[test]
fn bad_requests_are_errors() {
    let values: Vec<i64> = (0..10_000).collect();
    let column = Column::open(encode(&values, &EncodeOptions::default()).unwrap()).unwrap();
    let mut out = vec![MaybeUninit::<i64>::uninit(); 2];
    assert!(matches!(
        column.take_into_uninit(&[1, 2, 3], &mut out),
        Err(Error::InvalidOption(_))
    ));
    assert!(matches!(
        column.take_into_uninit(&[5, 4], &mut out),
        Err(Error::UnsortedIndices {
            position: 1,
            index: 4,
            previous: 5
        })
    ));
    assert!(matches!(
        column.take_into_uninit(&[5, 10_000], &mut out),
        Err(Error::IndexOutOfRange { index: 10_000, .. })
    ));
    assert!(matches!(
        column.take_into_uninit::<f64>(&[1, 2], &mut [MaybeUninit::uninit(); 2]),
        Err(Error::TypeMismatch { .. })
    ));
    let mut appended = vec![1i64];
    assert!(column.take_into(&[3, 2], &mut appended).is_err());
    assert_eq!(
        appended,
        vec![1],
        "a failed take_into leaves its output unchanged"
    );
    assert!(column.take::<i64>(&[]).unwrap().is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn take_matches_decode_on_random_columns(
        shape in 0usize..7,
        n in 1usize..20_000,
        seed in any::<u64>(),
        density in 1u32..1000,
        forced in prop::option::of(0usize..RANDOM_ACCESS.len()),
        target in 0usize..3,
        block in prop::sample::select(vec![4096usize, 8192, 65536]),
    ) {
        let target = [Target::Smaller, Target::Balanced, Target::Faster][target];
        let mut options = EncodeOptions::new(target).with_block_size(block);
        if let Some(k) = forced {
            options = options.with_only(&[RANDOM_ACCESS[k]]);
        }
        let wanted = rows(n, density, seed);
        let ints = shaped(shape, n, seed);
        check_take::<i64>(&Column::open(encode(&ints, &options).unwrap()).unwrap(), &wanted);
        let narrow: Vec<i32> = ints.iter().map(|&v| v as i32).collect();
        check_take::<i32>(&Column::open(encode(&narrow, &options).unwrap()).unwrap(), &wanted);
        let unsigned: Vec<u32> = ints.iter().map(|&v| v as u32).collect();
        check_take::<u32>(&Column::open(encode(&unsigned, &options).unwrap()).unwrap(), &wanted);
        let floats = decimals(n, seed);
        check_take::<f64>(&Column::open(encode(&floats, &options).unwrap()).unwrap(), &wanted);
        let singles: Vec<f32> = floats.iter().map(|&v| v as f32).collect();
        check_take::<f32>(&Column::open(encode(&singles, &options).unwrap()).unwrap(), &wanted);
    }
}

/// Chunks of every kind a chunked block mixes: constant (width 0), drifting, full 64-bit
/// range and narrow, in an order set by `seed`.
fn mixed_chunks(n: usize, seed: u64) -> Vec<i64> {
    let mut state = seed | 1;
    (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match (i / 1024 + seed as usize) % 4 {
                0 => -42,
                1 => 1_000_000 * i as i64 + (state % 5000) as i64,
                2 => state as i64,
                _ => (state % 200) as i64 - 100,
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    // The chunked kernel (one gather over the block, a width and reference per chunk, the
    // partial last chunk from its tail) against the values written, for both lane widths,
    // sparse enough that every block uses the kernel.
    #[test]
    fn chunked_take_matches_values(
        n in 1usize..20_000,
        seed in any::<u64>(),
        density in 1u32..40,
        block in prop::sample::select(vec![4096usize, 65536]),
    ) {
        let options = EncodeOptions::new(Target::Faster)
            .with_block_size(block)
            .with_only(&[Encoding::ChunkedBitPacked]);
        let mut wanted = rows(n, density, seed);
        wanted.push(n - 1);
        let values = mixed_chunks(n, seed);
        let column = Column::open(encode(&values, &options).unwrap()).unwrap();
        if n > 2048 {
            prop_assert!(column.composition().iter().any(|&(e, _)| e == Encoding::ChunkedBitPacked));
        }
        let taken = column.take::<i64>(&wanted).unwrap();
        prop_assert!(wanted.iter().zip(&taken).all(|(&r, &t)| values[r] == t));
        let narrow: Vec<u32> = values.iter().map(|&v| (v >> 7) as u32).collect();
        let column = Column::open(encode(&narrow, &options).unwrap()).unwrap();
        let taken = column.take::<u32>(&wanted).unwrap();
        prop_assert!(wanted.iter().zip(&taken).all(|(&r, &t)| narrow[r] == t));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    // Dictionary entries in chunk frames (many distinct values that drift), taken at the
    // codes, which come in row order, not sorted: the chunked kernel in any order.
    #[test]
    fn dictionary_entries_in_chunks_taken_at_unsorted_codes(
        n in 20_000usize..70_000,
        seed in any::<u64>(),
        density in 1u32..30,
    ) {
        let mut state = seed | 1;
        let values: Vec<i64> = (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // ~3000 distinct values growing exponentially: the sorted entries are narrow
                // within 1024 neighbours, wide across the dictionary.
                (1.01f64.powi((state % 3000) as i32) * 1000.0) as i64
            })
            .collect();
        let options = |only: &[Encoding]| {
            EncodeOptions::new(Target::Smaller).with_block_size(65536).with_only(only)
        };
        let chunked = encode(
            &values,
            &options(&[Encoding::CascadedDictionary, Encoding::ChunkedBitPacked]),
        )
        .unwrap();
        let plain = encode(&values, &options(&[Encoding::CascadedDictionary])).unwrap();
        // Chunk frames took a part (the entries), so the column differs from the one without.
        prop_assert!(chunked.len() < plain.len());
        let column = Column::open(chunked).unwrap();
        let mut wanted = rows(n, density, seed);
        wanted.push(n - 1);
        let taken = column.take::<i64>(&wanted).unwrap();
        prop_assert!(wanted.iter().zip(&taken).all(|(&r, &t)| values[r] == t));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    // Cascaded run-length blocks: rows filled run by run (few runs for the rows) or located
    // and taken from the values part (many runs), against the values written.
    #[test]
    fn cascaded_runs_take_matches_values(
        n in 1usize..40_000,
        run in 1usize..3000,
        seed in any::<u64>(),
        density in 1u32..300,
    ) {
        let values: Vec<i32> = (0..n).map(|i| ((i / run) as i32).wrapping_mul(7919) ^ (seed as i32 & 0xff)).collect();
        let options = EncodeOptions::new(Target::Faster)
            .with_block_size(65536)
            .with_only(&[Encoding::CascadedRunLength]);
        let column = Column::open(encode(&values, &options).unwrap()).unwrap();
        let mut wanted = rows(n, density, seed);
        wanted.push(n - 1);
        let taken = column.take::<i32>(&wanted).unwrap();
        prop_assert!(wanted.iter().zip(&taken).all(|(&r, &t)| values[r] == t));
    }
}
