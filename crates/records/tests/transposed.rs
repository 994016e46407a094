//! Files array_record 0.8.6 wrote with `transpose:true` (Riegeli transposed chunks) read
//! back byte for byte, by every read path. The golden files and the records array_record
//! reads from them come from `python/tools/gen_transposed_records.py`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use shapeshift_records::{Error, Reader, SequentialReader};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/transposed")
}

/// Every golden case: (name, file, the records array_record reads from it).
fn golden_cases() -> Vec<(String, PathBuf, Vec<Vec<u8>>)> {
    let mut cases: Vec<_> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "array_record"))
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let expected = unframe(&std::fs::read(path.with_extension("records")).unwrap());
            (name, path, expected)
        })
        .collect();
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    cases
}

/// Records stored as a 4-byte little-endian length and the bytes.
fn unframe(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut records = Vec::new();
    while !bytes.is_empty() {
        let len = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
        records.push(bytes[4..4 + len].to_vec());
        bytes = &bytes[4 + len..];
    }
    records
}

#[test]
fn the_golden_set_covers_every_compression_kind_and_group_size() {
    let names: Vec<String> = golden_cases().into_iter().map(|(name, ..)| name).collect();
    for compression in ["zstd", "brotli", "snappy", "none"] {
        for kind in ["proto", "nonproto", "mixed"] {
            for group_size in [1, 16] {
                let name = format!("{kind}_{compression}_g{group_size}");
                assert!(names.contains(&name), "golden case {name} is missing");
            }
        }
    }
    assert!(names.contains(&"proto_none_spanning".to_string()));
}

#[test]
fn every_golden_file_is_transposed_and_reads_as_array_record_reads_it() {
    for (name, path, expected) in golden_cases() {
        let reader = Reader::open(&path).unwrap();
        assert!(reader.info().transposed, "{name}: not a transposed file");
        assert_eq!(reader.num_records(), expected.len() as u64, "{name}");
        for (index, record) in expected.iter().enumerate() {
            assert_eq!(
                &reader.read(index as u64).unwrap(),
                record,
                "{name}: read({index})"
            );
        }
        assert_eq!(
            reader.read_all().unwrap().to_vecs(),
            expected,
            "{name}: read_all"
        );
        let (begin, end) = (3, expected.len() as u64 - 2);
        let range = reader.read_range(begin, end).unwrap().to_vecs();
        assert_eq!(range, expected[3..end as usize], "{name}: read_range");
        let indices = [expected.len() as u64 - 1, 0, 7, 7, 2];
        let batch = reader.read_batch(&indices).unwrap();
        for (position, &index) in indices.iter().enumerate() {
            assert_eq!(
                batch.get(position),
                expected[index as usize],
                "{name}: batch"
            );
        }
    }
}

#[test]
fn prepared_batches_and_read_into_give_the_same_records() {
    for (name, path, expected) in golden_cases() {
        let reader = Reader::open(&path).unwrap();
        let indices: Vec<u64> = (0..expected.len() as u64).rev().step_by(3).collect();
        let prepared = reader.prepare_batch(&indices).unwrap();
        let mut records: Vec<Vec<u8>> = (0..prepared.len())
            .map(|position| vec![0xAA; prepared.record_len(position)])
            .collect();
        let mut outputs: Vec<&mut [u8]> = records.iter_mut().map(Vec::as_mut_slice).collect();
        prepared.fill(&mut outputs).unwrap();
        for (record, &index) in records.iter().zip(&indices) {
            assert_eq!(
                record, &expected[index as usize],
                "{name}: prepared {index}"
            );
        }
        for (index, record) in expected.iter().enumerate() {
            let mut out = vec![0u8; record.len()];
            reader.read_into(index as u64, &mut out).unwrap();
            assert_eq!(&out, record, "{name}: read_into({index})");
        }
    }
}

#[test]
fn sequential_reading_gives_every_record_in_order() {
    for (name, path, expected) in golden_cases() {
        let mut records = SequentialReader::new(Arc::new(Reader::open(&path).unwrap()));
        let mut read = Vec::new();
        while let Some(record) = records.next_record() {
            read.push(record.unwrap().to_vec());
        }
        assert_eq!(read, expected, "{name}: sequential");
        records.seek(5).unwrap();
        assert_eq!(
            records.next_record().unwrap().unwrap(),
            expected[5],
            "{name}: seek"
        );
    }
}

#[test]
fn a_damaged_transposed_chunk_is_reported_with_its_place() {
    let path = data_dir().join("proto_zstd_g16.array_record");
    let mut bytes = std::fs::read(&path).unwrap();
    // The first chunk starts after the 64-byte signature chunk; its data after a 40-byte
    // header. A changed data byte breaks the chunk's hash; a truncated file its footer.
    bytes[64 + 40 + 20] ^= 0x55;
    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged.array_record");
    std::fs::write(&damaged, &bytes).unwrap();
    let reader = Reader::open(&damaged).unwrap();
    match reader.read(0) {
        Err(Error::Corrupt { offset, what, .. }) => {
            assert_eq!(offset, 64 + 40, "{what}");
            assert!(
                what.contains("hash") && what.contains("chunk at byte 64"),
                "{what}"
            );
        }
        other => panic!("expected a corrupt chunk, got {other:?}"),
    }
    // Records of the healthy second chunk still read.
    assert!(reader.read(20).is_ok());
}
