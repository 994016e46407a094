//! Property: hostile input never panics, hangs or over-allocates; it yields an `Error` that
//! names a byte offset. Covers truncations, bit flips and random bytes of whole columns
//! (caught by structure or checksums), and hostile *block contents* behind valid checksums
//! (`open_without_block_checksums`), which exercise every decoder's own bounds checks.

use proptest::prelude::*;
use shapeshift_columns::{encode, Column, EncodeOptions, Encoding, Error, Target};

fn sample_columns() -> Vec<Vec<u8>> {
    let n = 9000;
    let mut out = Vec::new();
    let ints: Vec<i64> = (0..n)
        .map(|i| (i * 7919 % 1000) - 500 + if i % 97 == 0 { 1 << 40 } else { 0 })
        .collect();
    let runs: Vec<i64> = (0..n).map(|i| i / 300).collect();
    let floats: Vec<f64> = (0..n).map(|i| ((i * 37 % 10_000) as f64) / 100.0).collect();
    // Drifting values (chunk frames) and skewed decimals (ALP with patched digits).
    let drift: Vec<i64> = (0..n).map(|i| i * 1000 + (i * 7919 % 1000)).collect();
    let skewed: Vec<f64> = (0..n)
        .map(|i| ((i * 37 % 5_000) as f64) / 100.0 + if i % 50 == 0 { 98_765.43 } else { 0.0 })
        .collect();
    for encoding in Encoding::ALL {
        let options = EncodeOptions::new(Target::Smaller)
            .with_block_size(4096)
            .with_only(&[encoding]);
        out.push(encode(&ints, &options).unwrap());
        out.push(encode(&runs, &options).unwrap());
        out.push(encode(&floats, &options).unwrap());
        if matches!(encoding, Encoding::ChunkedBitPacked | Encoding::Alp) {
            out.push(encode(&drift, &options).unwrap());
            out.push(encode(&skewed, &options).unwrap());
        }
    }
    // Shared dictionaries (400 values recurring in every block, spread too widely for a frame
    // of reference), with leaf and cascaded dictionaries offered per block.
    let recurring: Vec<i64> = (0..n).map(|i| (i * 7919 % 400) * 1_000_003 - 7).collect();
    let recurring_floats: Vec<f64> = (0..n).map(|i| (i * 7919 % 400) as f64 / 7.0).collect();
    for dictionary in [Encoding::Dictionary, Encoding::CascadedDictionary] {
        let options = EncodeOptions::new(Target::Smaller)
            .with_block_size(4096)
            .with_only(&[dictionary, Encoding::SharedDictionary]);
        for column in [
            encode(&recurring, &options).unwrap(),
            encode(&recurring_floats, &options).unwrap(),
        ] {
            let composition = Column::open(&column[..]).unwrap().composition();
            assert!(
                composition
                    .iter()
                    .any(|&(e, _)| e == Encoding::SharedDictionary),
                "{composition:?}"
            );
            out.push(column);
        }
    }
    out
}

/// Decodes everything every way; returns the first error. Must never panic.
fn read_all(column: &Column<Vec<u8>>) -> Result<(), Error> {
    match column.value_type() {
        shapeshift_columns::ValueType::I64 => {
            column.decode::<i64>()?;
            let rows: Vec<usize> = (0..column.len()).step_by(13).collect();
            column.take::<i64>(&rows)?;
            // Sparse enough for the random-access kernels (dense takes decode blocks).
            let rows: Vec<usize> = (0..column.len()).step_by(97).collect();
            column.take::<i64>(&rows)?;
        }
        shapeshift_columns::ValueType::F64 => {
            column.decode::<f64>()?;
            let rows: Vec<usize> = (0..column.len()).step_by(13).collect();
            column.take::<f64>(&rows)?;
            // Sparse enough for the random-access kernels (dense takes decode blocks).
            let rows: Vec<usize> = (0..column.len()).step_by(97).collect();
            column.take::<f64>(&rows)?;
        }
        _ => {}
    }
    Ok(())
}

fn assert_reports_offset(error: &Error, length: usize) {
    let offset = match error {
        Error::Truncated { offset, .. } | Error::Corrupt { offset, .. } => *offset,
        Error::Checksum { offset, .. } => *offset,
        other => panic!("unexpected error kind {other:?}"),
    };
    assert!(offset <= length, "offset {offset} beyond {length}");
    assert!(error.to_string().contains("byte"), "{error}");
}

#[test]
fn every_truncation_is_an_error() {
    for bytes in sample_columns() {
        for cut in (0..bytes.len()).step_by(7) {
            let error = Column::open(bytes[..cut].to_vec()).unwrap_err();
            assert_reports_offset(&error, bytes.len());
        }
    }
}

#[test]
fn bit_flips_are_detected() {
    for bytes in sample_columns() {
        for position in (0..bytes.len()).step_by(11) {
            let mut flipped = bytes.clone();
            flipped[position] ^= 0x10;
            let error = Column::open(flipped).unwrap_err();
            assert_reports_offset(&error, bytes.len());
        }
    }
}

#[test]
fn wrong_type_and_bad_indices_are_errors() {
    let bytes = encode(&[1i64, 2, 3], &EncodeOptions::default()).unwrap();
    let column = Column::open(bytes).unwrap();
    assert!(matches!(
        column.decode::<f64>(),
        Err(Error::TypeMismatch { .. })
    ));
    assert!(matches!(
        column.get::<i64>(3),
        Err(Error::IndexOutOfRange { .. })
    ));
    assert!(matches!(
        column.take::<i64>(&[2, 1]),
        Err(Error::UnsortedIndices { .. })
    ));
    assert!(matches!(
        encode(&[1i64], &EncodeOptions::default().with_block_size(100)),
        Err(Error::InvalidOption(_))
    ));
}

/// Byte offset where the column's data starts: the shared dictionary if any, else the
/// blocks (header 160 + 16 per block + 16 bytes of trailer).
fn data_start(bytes: &[u8]) -> usize {
    let blocks = u32::from_le_bytes(bytes[24..28].try_into().unwrap()) as usize;
    160 + 16 * blocks + 16
}

/// Byte offset where the blocks start, after the shared dictionary.
fn blocks_start(bytes: &[u8]) -> usize {
    let trailer = data_start(bytes) - 16;
    let shared = u64::from_le_bytes(bytes[trailer..trailer + 8].try_into().unwrap()) as usize;
    data_start(bytes) + shared
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000), magic in any::<bool>()) {
        let mut bytes = bytes;
        if magic && bytes.len() >= 10 {
            bytes[..8].copy_from_slice(b"SSCOLUMN");
            bytes[8] = 1;
            bytes[9] = 0;
        }
        if let Ok(column) = Column::open(bytes.clone()) {
            let _ = read_all(&column);
        }
    }

    /// Hostile block contents behind a valid metadata checksum: every decoder must bound-check.
    #[test]
    fn hostile_blocks_never_panic(
        which in 0usize..100,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let columns = sample_columns();
        let mut bytes = columns[which % columns.len()].clone();
        let start = data_start(&bytes);
        for (index, value) in edits {
            let position = start + index.index(bytes.len() - start);
            // Keep the block tags (they are checked against the table); mutate payloads.
            if bytes[position..].len() > 0 {
                bytes[position] = value;
            }
        }
        match Column::open_without_block_checksums(bytes.clone()) {
            Ok(column) => {
                if let Err(error) = read_all(&column) {
                    assert_reports_offset(&error, bytes.len());
                }
            }
            Err(error) => assert_reports_offset(&error, bytes.len()),
        }
    }
}

/// A one-block chunked column of 3000 drifting values (chunks of 1024, 1024, 952) and the
/// offset of its block (tag, then the frame table: widths, padding, references).
fn chunked_column() -> (Vec<u8>, usize) {
    let values: Vec<i64> = (0..3000).map(|i| i * 1000 + (i * 7919 % 1000)).collect();
    let options = EncodeOptions::new(Target::Faster)
        .with_block_size(4096)
        .with_only(&[Encoding::ChunkedBitPacked]);
    let bytes = encode(&values, &options).unwrap();
    let start = blocks_start(&bytes);
    assert_eq!(bytes[start], Encoding::ChunkedBitPacked.tag());
    (bytes, start)
}

/// Decode and a sparse take (the chunked kernel) of a column with hostile block contents.
fn chunked_errors(bytes: Vec<u8>) -> (Error, Error) {
    let column = Column::open_without_block_checksums(bytes).unwrap();
    let decoded = column.decode::<i64>().unwrap_err();
    let taken = column.take::<i64>(&[5, 1500, 2999]).unwrap_err();
    (decoded, taken)
}

#[test]
fn chunked_frame_table_is_checked() {
    let (bytes, start) = chunked_column();
    // A width wider than the lane.
    let mut wide = bytes.clone();
    wide[start + 2] = 65;
    for error in <[Error; 2]>::from(chunked_errors(wide)) {
        assert_reports_offset(&error, bytes.len());
        assert!(
            error.to_string().contains("exceeds the 64-bit lane"),
            "{error}"
        );
    }
    // Widths that make the chunks longer than the block.
    let mut long = bytes.clone();
    long[start + 1] = 64;
    for error in <[Error; 2]>::from(chunked_errors(long)) {
        assert_reports_offset(&error, bytes.len());
    }
}

/// A shared dictionary's entry count beyond what a writer makes (2^16, or the value count) is
/// refused by the header check, with a valid metadata checksum, before anything is allocated.
#[test]
fn oversized_shared_dictionary_is_refused() {
    let values: Vec<i64> = (0..9000)
        .map(|i| (i * 7919 % 400) * 1_000_003 - 7)
        .collect();
    let options = EncodeOptions::new(Target::Smaller)
        .with_block_size(4096)
        .with_only(&[Encoding::Dictionary, Encoding::SharedDictionary]);
    let bytes = encode(&values, &options).unwrap();
    Column::open(&bytes[..]).unwrap();
    let checksum_at = data_start(&bytes) - 4;
    for entries in [u32::MAX, 1 << 16 | 1, 9001] {
        let mut hostile = bytes.clone();
        hostile[28..32].copy_from_slice(&entries.to_le_bytes());
        let checksum = twox_hash::XxHash3_64::oneshot(&hostile[..checksum_at]) as u32;
        hostile[checksum_at..checksum_at + 4].copy_from_slice(&checksum.to_le_bytes());
        let error = Column::open(hostile).unwrap_err();
        assert!(
            error.to_string().contains("shared dictionary of"),
            "{entries}: {error}"
        );
    }
}
