//! Property: every column decodes to exactly the values encoded, whole, by `get` and by
//! `take`, for every value type, distribution, block size and target.

use proptest::prelude::*;
use shapeshift_columns::{
    encode, encode_baseline, Column, ColumnValue, EncodeOptions, Encoding, Target,
};

fn check<T: ColumnValue>(values: &[T], options: &EncodeOptions) -> Column {
    let bytes = encode(values, options).unwrap();
    let column = Column::open(bytes).unwrap();
    assert_eq!(column.len(), values.len());
    let decoded = column.decode::<T>().unwrap();
    assert!(
        decoded
            .iter()
            .zip(values)
            .all(|(a, b)| a.to_lane() == b.to_lane()),
        "decode differs ({:?})",
        column.composition()
    );
    let indices: Vec<usize> = (0..values.len()).step_by(7).collect();
    let taken = column.take::<T>(&indices).unwrap();
    for (&i, v) in indices.iter().zip(&taken) {
        assert_eq!(
            v.to_lane(),
            values[i].to_lane(),
            "take at {i} ({:?})",
            column.composition()
        );
    }
    let dense: Vec<usize> = (0..values.len()).collect();
    let all = column.take::<T>(&dense).unwrap();
    assert!(all
        .iter()
        .zip(values)
        .all(|(a, b)| a.to_lane() == b.to_lane()));
    if !values.is_empty() {
        let last = values.len() - 1;
        assert_eq!(
            column.get::<T>(last).unwrap().to_lane(),
            values[last].to_lane()
        );
        assert_eq!(column.get::<T>(0).unwrap().to_lane(), values[0].to_lane());
    }
    let baseline = Column::open(encode_baseline(values)).unwrap();
    let decoded = baseline.decode::<T>().unwrap();
    assert!(decoded
        .iter()
        .zip(values)
        .all(|(a, b)| a.to_lane() == b.to_lane()));
    column
}

fn all_options() -> Vec<EncodeOptions> {
    let mut out = Vec::new();
    for target in [Target::Smaller, Target::Balanced, Target::Faster] {
        for block_size in [4096, 65536] {
            out.push(EncodeOptions::new(target).with_block_size(block_size));
        }
    }
    out
}

/// Each encoding forced alone on data it can represent, so every decoder is exercised.
#[test]
fn every_encoding_round_trips_alone() {
    let n = 10_000;
    let ints: Vec<i64> = (0..n)
        .map(|i| (i * 7919 % 1000) - 500 + if i % 97 == 0 { 1 << 40 } else { 0 })
        .collect();
    let runs: Vec<i64> = (0..n).map(|i| i / 300).collect();
    let floats: Vec<f64> = (0..n).map(|i| ((i * 37 % 10_000) as f64) / 100.0).collect();
    for encoding in Encoding::ALL {
        let options = EncodeOptions::new(Target::Smaller)
            .with_block_size(4096)
            .with_only(&[encoding]);
        for data in [&ints, &runs] {
            let column = check(data, &options);
            let used: Vec<Encoding> = column.composition().iter().map(|c| c.0).collect();
            assert!(
                used.iter()
                    .all(|&e| e == encoding || e == Encoding::Unencoded),
                "{used:?}"
            );
        }
        check(&floats, &options);
        let narrow: Vec<i32> = ints.iter().map(|&v| v as i32).collect();
        check(&narrow, &options);
        let floats32: Vec<f32> = floats.iter().map(|&v| v as f32).collect();
        check(&floats32, &options);
    }
    let alp = EncodeOptions::new(Target::Smaller).with_only(&[Encoding::Alp]);
    let column = check(&floats, &alp);
    assert_eq!(column.composition(), vec![(Encoding::Alp, 1)]);
}

/// Drifting integers get one frame per 1024 values: random access at fewer bits than one
/// frame per block (and the tail chunk of a block is shorter than 1024).
#[test]
fn chunk_frames_round_trip_and_shrink_drifting_data() {
    let drift: Vec<i64> = (0..70_001)
        .map(|i| -5_000_000 + i * 1000 + (i * 7919 % 1000))
        .collect();
    let chunked = EncodeOptions::new(Target::Smaller).with_only(&[Encoding::ChunkedBitPacked]);
    let column = check(&drift, &chunked);
    assert_eq!(column.composition(), vec![(Encoding::ChunkedBitPacked, 2)]);
    let whole = check(
        &drift,
        &EncodeOptions::new(Target::Smaller).with_only(&[Encoding::BitPacked]),
    );
    // 20 bits per value within 1024 neighbours against 26 across a 65536-value block.
    assert!(
        column.nbytes() * 5 < whole.nbytes() * 4,
        "{} vs {}",
        column.nbytes(),
        whole.nbytes()
    );
    let narrow: Vec<i32> = drift.iter().map(|&v| (v / 1000) as i32).collect();
    check(&narrow, &chunked.clone().with_block_size(4096));
}

/// Skewed decimals (prices): ALP patches the few wide digits instead of widening all of them.
#[test]
fn alp_patched_digits_round_trip_and_shrink_skewed_decimals() {
    let prices: Vec<f64> = (0..50_000u64)
        .map(|i| {
            let cents = (i * 2_654_435_761 % 100_000) as f64 / 100.0;
            if i % 61 == 0 {
                cents * 1000.0 + 0.25
            } else {
                cents
            }
        })
        .collect();
    let alp = EncodeOptions::new(Target::Smaller).with_only(&[Encoding::Alp]);
    let column = check(&prices, &alp);
    assert_eq!(column.composition(), vec![(Encoding::Alp, 1)]);
    // Unpatched, every value would need the 27 bits of the largest digits.
    assert!(
        column.nbytes() * 8 < prices.len() * 22,
        "{} bytes",
        column.nbytes()
    );
    let mut with_specials = prices.clone();
    with_specials[7] = f64::NAN;
    with_specials[61 * 3 + 1] = -0.0;
    check(&with_specials, &alp);
    let narrow: Vec<f32> = prices.iter().map(|&v| v as f32).collect();
    check(&narrow, &alp);
}

#[test]
fn empty_and_tiny_columns() {
    for options in all_options() {
        check::<i32>(&[], &options);
        check::<u64>(&[42], &options);
        check::<f64>(&[f64::NAN, -0.0, f64::INFINITY], &options);
        check::<i64>(&[i64::MIN, i64::MAX, 0, -1], &options);
    }
}

#[test]
fn special_blocks_short_circuit() {
    let zeros = vec![0i64; 70_000];
    let column = check(&zeros, &EncodeOptions::default());
    assert_eq!(column.composition(), vec![(Encoding::Zero, 2)]);
    let constant = vec![7u32; 70_000];
    let column = check(&constant, &EncodeOptions::default());
    assert_eq!(column.composition(), vec![(Encoding::Constant, 2)]);
}

fn distribution() -> impl Strategy<Value = Vec<i64>> {
    prop_oneof![
        prop::collection::vec(any::<i64>(), 0..5000),
        prop::collection::vec(-1000i64..1000, 0..9000),
        prop::collection::vec(prop_oneof![9 => Just(0i64), 1 => any::<i64>()], 0..9000),
        (any::<i64>(), prop::collection::vec(0i64..100, 0..9000)).prop_map(|(start, steps)| {
            steps
                .iter()
                .scan(start, |acc, s| {
                    *acc = acc.wrapping_add(*s);
                    Some(*acc)
                })
                .collect()
        }),
        prop::collection::vec((0i64..5, 1usize..500), 0..40).prop_map(|runs| runs
            .iter()
            .flat_map(|&(v, n)| std::iter::repeat_n(v * 1_000_003, n))
            .collect()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn integers_round_trip(values in distribution(), target in 0..3usize, small in any::<bool>()) {
        let target = [Target::Smaller, Target::Balanced, Target::Faster][target];
        let options = EncodeOptions::new(target).with_block_size(if small { 4096 } else { 16384 });
        check(&values, &options);
        let narrow: Vec<i32> = values.iter().map(|&v| v as i32).collect();
        check(&narrow, &options);
        let unsigned: Vec<u64> = values.iter().map(|&v| v as u64).collect();
        check(&unsigned, &options);
        let unsigned32: Vec<u32> = values.iter().map(|&v| v as u32).collect();
        check(&unsigned32, &options);
    }

    #[test]
    fn floats_round_trip(
        values in prop_oneof![
            prop::collection::vec(any::<f64>(), 0..5000),
            prop::collection::vec((0i64..1_000_000).prop_map(|c| c as f64 / 100.0), 0..9000),
            prop::collection::vec(prop_oneof![Just(f64::NAN), Just(-0.0), Just(1.5), (0i32..100).prop_map(f64::from)], 0..5000),
        ],
        target in 0..3usize,
    ) {
        let target = [Target::Smaller, Target::Balanced, Target::Faster][target];
        let options = EncodeOptions::new(target).with_block_size(4096);
        check(&values, &options);
        let narrow: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        check(&narrow, &options);
    }
}

/// Cascading schemes: each forced alone round-trips (whole, `get`, sparse and dense `take`,
/// which go through the parts' own take kernels) and beats its leaf counterpart where its
/// parts can use a better encoding than bit-packing.
#[test]
fn cascades_round_trip_and_pay_where_their_parts_compress() {
    let n = 140_000u64;
    // Uniform doubles in [0, 1): no decimal structure; the split leaves ~52 random bits.
    let random: Vec<f64> = (0..n)
        .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64)
        .collect();
    let all_leaves: Vec<Encoding> = Encoding::ALL
        .into_iter()
        .filter(|e| !e.cascades())
        .collect();
    let split = check(
        &random,
        &EncodeOptions::new(Target::Smaller)
            .with_only(&[&all_leaves[..], &[Encoding::RealDoubles]].concat()),
    );
    assert!(
        split.nbytes() * 8 < random.len() * 58,
        "{} bytes",
        split.nbytes()
    );
    // Alone (its parts bit-packed): still below the 64 bits that zstd leaves them at.
    let alone = check(
        &random,
        &EncodeOptions::new(Target::Smaller).with_only(&[Encoding::RealDoubles]),
    );
    assert_eq!(alone.composition(), vec![(Encoding::RealDoubles, 3)]);
    assert!(
        alone.nbytes() * 8 < random.len() * 61,
        "{} bytes",
        alone.nbytes()
    );
    // A daily schedule: the same 1,500 flight numbers in the same order every day, so the
    // dictionary codes repeat far apart (an entropy stage or LZ on the codes pays).
    let schedule: Vec<i64> = (0..n)
        .map(|i| ((i % 1500) * 2_654_435_761 % 8_500) as i64)
        .collect();
    let leaf = check(
        &schedule,
        &EncodeOptions::new(Target::Smaller).with_only(&[Encoding::Dictionary]),
    );
    let cascaded = check(
        &schedule,
        &EncodeOptions::new(Target::Smaller)
            .with_only(&[&all_leaves[..], &[Encoding::CascadedDictionary]].concat()),
    );
    assert!(
        cascaded
            .composition()
            .iter()
            .any(|&(e, blocks)| e == Encoding::CascadedDictionary && blocks >= 2),
        "{:?}",
        cascaded.composition()
    );
    assert!(
        cascaded.nbytes() * 2 < leaf.nbytes(),
        "{} vs {}",
        cascaded.nbytes(),
        leaf.nbytes()
    );
    // Few rows per block against 1,500 entries: the entries are read at the codes themselves
    // (or taken sorted), not decoded whole.
    let rows: Vec<usize> = (0..schedule.len()).step_by(997).collect();
    let wanted: Vec<i64> = rows.iter().map(|&r| schedule[r]).collect();
    assert_eq!(cascaded.take::<i64>(&rows).unwrap(), wanted);
    // Runs whose values come from a few levels: run values become a dictionary or bit-packing.
    let runs: Vec<f64> = (0..n).map(|i| ((i / 37) % 11) as f64 * 0.5).collect();
    let column = check(
        &runs,
        &EncodeOptions::new(Target::Balanced).with_only(&[Encoding::CascadedRunLength]),
    );
    assert_eq!(column.composition(), vec![(Encoding::CascadedRunLength, 3)]);
    let narrow: Vec<f32> = random.iter().map(|&v| v as f32).collect();
    check(
        &narrow,
        &EncodeOptions::new(Target::Faster).with_only(&[Encoding::RealDoubles]),
    );
    for target in [Target::Smaller, Target::Balanced, Target::Faster] {
        check(&schedule, &EncodeOptions::new(target));
        check(&random, &EncodeOptions::new(target));
    }
}

/// A ratio of two small integer columns (distance / air time of flights): ~10,000 distinct
/// doubles without decimal structure, each recurring in every block. One shared dictionary
/// stores each once where per-block dictionaries store it once per block.
#[test]
fn shared_dictionary_stores_recurring_values_once() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |bound: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 33) % bound
    };
    let distances: Vec<f64> = (0..200).map(|i| (100 + i * 13) as f64).collect();
    let ratios: Vec<f64> = (0..300_000)
        .map(|_| {
            let distance = distances[next(200) as usize];
            distance / (20 + next(60)) as f64
        })
        .collect();
    let shared_options = EncodeOptions::new(Target::Balanced);
    let shared = check(&ratios, &shared_options);
    assert!(
        shared
            .composition()
            .iter()
            .any(|&(e, blocks)| e == Encoding::SharedDictionary && blocks >= 4),
        "{:?}",
        shared.composition()
    );
    let mut per_block_options = EncodeOptions::new(Target::Balanced);
    per_block_options.allowed[Encoding::SharedDictionary.tag() as usize] = false;
    let per_block = check(&ratios, &per_block_options);
    assert!(
        per_block
            .composition()
            .iter()
            .all(|&(e, _)| e != Encoding::SharedDictionary),
        "{:?}",
        per_block.composition()
    );
    assert!(
        shared.nbytes() * 10 < per_block.nbytes() * 9,
        "shared {} vs per block {}",
        shared.nbytes(),
        per_block.nbytes()
    );
    // `faster` keeps each block's own dictionary (it stays in cache).
    let faster = check(&ratios, &EncodeOptions::new(Target::Faster));
    assert!(
        faster
            .composition()
            .iter()
            .all(|&(e, _)| e != Encoding::SharedDictionary),
        "{:?}",
        faster.composition()
    );
    // Sparse rows in every block read the codes, then only the entries they need.
    let rows: Vec<usize> = (0..ratios.len()).step_by(1009).collect();
    let taken = shared.take::<f64>(&rows).unwrap();
    assert!(rows
        .iter()
        .zip(&taken)
        .all(|(&r, v)| v.to_bits() == ratios[r].to_bits()));
}
