//! Damaged files: every single-byte change of a small file either reads back the original
//! records or fails with an error; never wrong data, never a panic.

use std::path::Path;

use shapeshift_records::{Error, Reader, Writer};

fn write(path: &Path, options: &str, records: &[Vec<u8>]) {
    let mut writer = Writer::create(path, options).unwrap();
    for record in records {
        writer.write(record).unwrap();
    }
    writer.close().unwrap();
}

fn sample() -> Vec<Vec<u8>> {
    (0..12u32)
        .map(|i| format!("record number {i} {}", "x".repeat(i as usize * 3)).into_bytes())
        .collect()
}

/// Every readable record must be the original; errors are fine.
fn check_reads(path: &Path, original: &[Vec<u8>]) {
    let Ok(reader) = Reader::open(path) else {
        return;
    };
    assert_eq!(
        reader.num_records(),
        original.len() as u64,
        "index changed yet accepted"
    );
    for (index, record) in original.iter().enumerate() {
        if let Ok(read) = reader.read(index as u64) {
            assert_eq!(&read, record, "record {index} returned wrong data");
        }
    }
    if let Ok(all) = reader.read_all() {
        assert_eq!(all.to_vecs(), original);
    }
    if let Ok(batch) = reader.read_batch(&[11, 0, 5]) {
        assert_eq!(batch.get(0), original[11].as_slice());
    }
    if let Ok(records) = read_prepared(&reader, &[11, 0, 5, 0]) {
        let expected: Vec<Vec<u8>> = [11, 0, 5, 0].iter().map(|&i| original[i].clone()).collect();
        assert_eq!(records, expected, "prepared batch returned wrong data");
    }
    if let Ok(records) = read_pipelined(&reader, &[0, 11, 5, 11]) {
        let expected: Vec<Vec<u8>> = [0, 11, 5, 11]
            .iter()
            .map(|&i| original[i].clone())
            .collect();
        assert_eq!(records, expected, "pipelined batch returned wrong data");
    }
}

/// The two-phase batch read (prepare, then fill caller buffers).
fn read_prepared(reader: &Reader, indices: &[u64]) -> Result<Vec<Vec<u8>>, Error> {
    let prepared = reader.prepare_batch(indices)?;
    let mut records: Vec<Vec<u8>> = (0..prepared.len())
        .map(|position| vec![0xAA; prepared.record_len(position)])
        .collect();
    let mut outputs: Vec<&mut [u8]> = records.iter_mut().map(Vec::as_mut_slice).collect();
    prepared.fill(&mut outputs)?;
    Ok(records)
}

/// The two-phase batch read with buffers handed out piece by piece.
fn read_pipelined(reader: &Reader, indices: &[u64]) -> Result<Vec<Vec<u8>>, Error> {
    let prepared = reader.prepare_batch(indices)?;
    let mut records: Vec<Vec<u8>> = (0..prepared.len())
        .map(|position| vec![0xAA; prepared.record_len(position)])
        .collect();
    let mut unclaimed: Vec<Option<&mut [u8]>> = records
        .iter_mut()
        .map(|record| Some(record.as_mut_slice()))
        .collect();
    prepared.fill_pipelined(|positions, buffers| {
        for &position in positions {
            buffers.push(unclaimed[position as usize].take().expect("asked once"));
        }
        Ok::<(), Error>(())
    })?;
    drop(unclaimed);
    Ok(records)
}

/// The meaningful part of the file: everything before the final padding, and the
/// postscript block's first bytes.
fn interesting_offsets(bytes: &[u8]) -> Vec<usize> {
    let postscript = bytes.len() - 65536;
    let last_nonzero = bytes[..postscript]
        .iter()
        .rposition(|&b| b != 0)
        .unwrap_or(0);
    (0..=last_nonzero + 64)
        .chain(postscript..postscript + 200)
        .collect()
}

#[test]
fn flipping_any_byte_never_yields_wrong_records() {
    let dir = tempfile::tempdir().unwrap();
    let original = sample();
    for options in [
        "group_size:1,uncompressed",
        "group_size:4,zstd:3",
        "group_size:1,snappy",
        "group_size:5,brotli:3",
    ] {
        let path = dir.path().join("file.array_record");
        write(&path, options, &original);
        let bytes = std::fs::read(&path).unwrap();
        let damaged = dir.path().join("damaged.array_record");
        for offset in interesting_offsets(&bytes) {
            for flip in [0x01u8, 0x80] {
                let mut copy = bytes.clone();
                copy[offset] ^= flip;
                std::fs::write(&damaged, &copy).unwrap();
                check_reads(&damaged, &original);
            }
        }
    }
}

#[test]
fn a_corrupt_chunk_does_not_stop_reads_of_healthy_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file.array_record");
    let original = sample();
    write(&path, "group_size:1,zstd:3", &original);
    let mut bytes = std::fs::read(&path).unwrap();
    // Record 0's chunk starts at byte 64; damage its data.
    bytes[64 + 40 + 3] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let reader = Reader::open(&path).unwrap();
    let error = reader.read(0).unwrap_err();
    assert!(matches!(error, Error::Corrupt { .. }));
    let message = error.to_string();
    assert!(
        message.contains("file.array_record") && message.contains("at byte"),
        "{message}"
    );
    for (index, record) in original.iter().enumerate().skip(1) {
        assert_eq!(&reader.read(index as u64).unwrap(), record);
    }
    assert!(reader.read_all().is_err());
    // The two-phase batch: the damaged chunk fails the batch that needs it, with its offset.
    let error = read_prepared(&reader, &[3, 0, 5]).unwrap_err();
    assert!(error.to_string().contains("at byte"), "{error}");
    assert_eq!(
        read_prepared(&reader, &[5, 3, 5]).unwrap(),
        vec![
            original[5].clone(),
            original[3].clone(),
            original[5].clone()
        ]
    );
}

#[test]
fn truncation_and_wrong_magic_are_reported_with_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file.array_record");
    write(&path, "group_size:2", &sample());
    let bytes = std::fs::read(&path).unwrap();
    for cut in [0usize, 10, 64, 1000, 65536, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let error = Reader::open(&path).err().expect("truncated file must fail");
        assert!(error.to_string().contains("at byte"), "{error}");
    }
    let mut wrong = bytes.clone();
    wrong[0] ^= 1;
    std::fs::write(&path, &wrong).unwrap();
    let message = Reader::open(&path).err().unwrap().to_string();
    assert!(message.contains("wrong magic"), "{message}");
    let missing = Reader::open(dir.path().join("missing")).err().unwrap();
    assert!(matches!(missing, Error::Io { .. }));
}

#[test]
fn random_garbage_is_rejected_without_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage");
    let mut state = 0x1234_5678_9abc_def0u64;
    for length in [65536usize, 131072] {
        let bytes: Vec<u8> = (0..length)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        std::fs::write(&path, &bytes).unwrap();
        assert!(Reader::open(&path).is_err());
    }
}

#[test]
fn sequential_read_ahead_surfaces_a_damaged_chunk_only_when_reached() {
    use std::sync::Arc;

    use shapeshift_records::{ReaderOptions, SequentialReader};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file.array_record");
    let original: Vec<Vec<u8>> = (0..400u32)
        .map(|i| format!("record {i} ").into_bytes().repeat(30))
        .collect();
    write(&path, "group_size:10,zstd:3", &original);
    // Damage the data of the chunk holding records 300..310 (found through the index).
    let reader = Reader::open(&path).unwrap();
    let victim = {
        let bytes = std::fs::read(&path).unwrap();
        let good = reader.read_range(0, 400).unwrap().to_vecs();
        assert_eq!(good, original);
        let mut bytes = bytes;
        // The chunk of record 300: its data begins 40 bytes after its header; find it by
        // flipping bytes of the data section until exactly that chunk fails.
        let mut chosen = None;
        for offset in (64..bytes.len() - 65536).step_by(97) {
            bytes[offset] ^= 0x55;
            std::fs::write(&path, &bytes).unwrap();
            let damaged = Reader::open(&path).unwrap();
            let fails: Vec<u64> = (0..40u64)
                .filter(|chunk| damaged.read(chunk * 10).is_err())
                .collect();
            bytes[offset] ^= 0x55;
            if fails == [30] {
                chosen = Some(offset);
                break;
            }
        }
        let offset = chosen.expect("a byte inside chunk 30's data");
        bytes[offset] ^= 0x55;
        std::fs::write(&path, &bytes).unwrap();
        offset
    };
    for options in ["readahead_buffer_size:2k", ""] {
        let reader = Arc::new(
            Reader::open_with_options(&path, ReaderOptions::parse(options).unwrap()).unwrap(),
        );
        let mut sequential = SequentialReader::new(reader);
        for (index, record) in original.iter().enumerate().take(300) {
            let read = sequential.next_record().unwrap();
            let read = read.unwrap_or_else(|error| panic!("record {index} ({options}): {error}"));
            assert_eq!(read, record.as_slice(), "record {index}");
        }
        let error = sequential.next_record().unwrap().unwrap_err();
        assert!(
            error.to_string().contains("at byte"),
            "{error} (damage at {victim})"
        );
        // Past the damaged chunk, reading goes on.
        sequential.seek(310).unwrap();
        assert_eq!(
            sequential.next_record().unwrap().unwrap(),
            original[310].as_slice()
        );
    }
}

/// Chunks larger than a block: their data is verified in place (hashed across block
/// headers) and, when uncompressed, their records are copied straight from the blocks.
/// Damage anywhere near a block edge, in the chunk headers and sizes sections, or at
/// sampled places inside the data never yields wrong records.
#[test]
fn flipping_bytes_of_chunks_spanning_blocks_never_yields_wrong_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    // Incompressible records of 5..30 KB: chunks of 8 records span two to four blocks,
    // compressed or not.
    let original: Vec<Vec<u8>> = (0..20usize)
        .map(|i| {
            (0..5000 + i * 1300)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect()
        })
        .collect();
    for options in ["group_size:8,uncompressed", "group_size:8,zstd:3"] {
        let path = dir.path().join("file.array_record");
        write(&path, options, &original);
        let bytes = std::fs::read(&path).unwrap();
        let reader = Reader::open(&path).unwrap();
        assert_eq!(reader.read_all().unwrap().to_vecs(), original, "{options}");
        let indices: Vec<u64> = (0..original.len() as u64).rev().collect();
        let expected: Vec<Vec<u8>> = original.iter().rev().cloned().collect();
        assert_eq!(read_pipelined(&reader, &indices).unwrap(), expected);
        let postscript = bytes.len() - 65536;
        let mut offsets: Vec<usize> = (0..postscript).step_by(331).collect();
        // The signature, the first chunk's header and sizes section.
        offsets.extend(0..700);
        for edge in (65536..postscript).step_by(65536) {
            offsets.extend(edge - 48..edge + 96);
        }
        for offset in offsets {
            let mut copy = bytes.clone();
            copy[offset] ^= 0x41;
            let damaged = dir.path().join("damaged.array_record");
            std::fs::write(&damaged, &copy).unwrap();
            let Ok(reader) = Reader::open(&damaged) else {
                continue;
            };
            if let Ok(all) = reader.read_all() {
                assert_eq!(all.to_vecs(), original, "{options}: byte {offset}");
            }
            if let Ok(records) = read_prepared(&reader, &indices) {
                assert_eq!(records, expected, "{options}: byte {offset}");
            }
            if let Ok(records) = read_pipelined(&reader, &[19, 0, 9, 0]) {
                let want: Vec<Vec<u8>> =
                    [19, 0, 9, 0].iter().map(|&i| original[i].clone()).collect();
                assert_eq!(records, want, "{options}: byte {offset}");
            }
        }
    }
}
