//! Property: any records written with any supported options read back identically.

use proptest::prelude::*;
use std::sync::Arc;

use shapeshift_records::{PreparedBatch, Reader, ReaderOptions, SequentialReader, Writer};

/// Decodes a prepared batch into freshly allocated buffers (poisoned with 0xAA first, so a
/// byte left unwritten shows).
fn fill(prepared: &PreparedBatch<'_>) -> Vec<Vec<u8>> {
    let mut records: Vec<Vec<u8>> = (0..prepared.len())
        .map(|position| vec![0xAA; prepared.record_len(position)])
        .collect();
    let mut outputs: Vec<&mut [u8]> = records.iter_mut().map(Vec::as_mut_slice).collect();
    prepared.fill(&mut outputs).unwrap();
    records
}

/// Like [`fill`] through [`PreparedBatch::fill_pipelined`]: buffers handed out piece by
/// piece, as the Python binding creates its objects.
fn fill_pipelined(prepared: &PreparedBatch<'_>) -> Vec<Vec<u8>> {
    let mut records: Vec<Vec<u8>> = (0..prepared.len())
        .map(|position| vec![0xAA; prepared.record_len(position)])
        .collect();
    let mut unclaimed: Vec<Option<&mut [u8]>> = records
        .iter_mut()
        .map(|record| Some(record.as_mut_slice()))
        .collect();
    prepared
        .fill_pipelined(|positions, buffers| {
            for &position in positions {
                let buffer = unclaimed[position as usize].take();
                buffers.push(buffer.expect("every position is asked for once"));
            }
            Ok::<(), shapeshift_records::Error>(())
        })
        .unwrap();
    assert!(
        unclaimed.iter().all(Option::is_none),
        "a position was never asked for"
    );
    records
}

#[test]
fn prepared_batch_rejects_mismatched_destinations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file.array_record");
    let mut writer = Writer::create(&path, "group_size:2,zstd:1").unwrap();
    for record in [&b"one"[..], b"three", b""] {
        writer.write(record).unwrap();
    }
    writer.close().unwrap();
    let reader = Reader::open(&path).unwrap();
    let prepared = reader.prepare_batch(&[2, 1, 1]).unwrap();
    assert_eq!(
        (0..3).map(|p| prepared.record_len(p)).collect::<Vec<_>>(),
        [0, 5, 5]
    );
    let mut short = [0u8; 4];
    let mut fine = [0u8; 5];
    let mut empty = [0u8; 0];
    assert!(prepared
        .fill(&mut [&mut empty[..], &mut short[..], &mut fine[..]])
        .is_err());
    assert!(prepared.fill(&mut [&mut empty[..]]).is_err());
    assert!(reader.prepare_batch(&[3]).is_err());
    assert!(reader.prepare_range(2, 4).is_err());
    assert!(reader.prepare_range(0, 0).unwrap().is_empty());
}

fn options() -> impl Strategy<Value = String> {
    let compression = prop_oneof![
        Just("uncompressed".to_string()),
        (1..8i32).prop_map(|level| format!("zstd:{level}")),
        (0..7i32).prop_map(|level| format!("brotli:{level}")),
        Just("snappy".to_string()),
    ];
    (1..20u64, compression)
        .prop_map(|(group_size, compression)| format!("group_size:{group_size},{compression}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn written_records_read_back(
        records in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..60),
        options in options(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file.array_record");
        let mut writer = Writer::create(&path, &options).unwrap();
        for record in &records {
            writer.write(record).unwrap();
        }
        writer.close().unwrap();
        let reader = Reader::open(&path).unwrap();
        prop_assert_eq!(reader.num_records(), records.len() as u64);
        prop_assert_eq!(reader.read_all().unwrap().to_vecs(), records.clone());
        for (index, record) in records.iter().enumerate() {
            prop_assert_eq!(&reader.read(index as u64).unwrap(), record);
        }
    }

    #[test]
    fn prepared_batches_match_the_requested_records(
        records in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..60),
        options in options(),
        picks in proptest::collection::vec(any::<proptest::sample::Index>(), 0..80),
        parallel in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file.array_record");
        let mut writer = Writer::create(&path, &options).unwrap();
        for record in &records {
            writer.write(record).unwrap();
        }
        writer.close().unwrap();
        let reader_options = if parallel { "" } else { "max_parallelism:1" };
        let reader = Reader::open_with_options(&path, ReaderOptions::parse(reader_options).unwrap()).unwrap();
        // Out of order, with repeats.
        let indices: Vec<u64> = picks.iter().map(|pick| pick.index(records.len()) as u64).collect();
        let expected: Vec<Vec<u8>> = indices.iter().map(|&i| records[i as usize].clone()).collect();
        prop_assert_eq!(fill(&reader.prepare_batch(&indices).unwrap()), expected.clone());
        prop_assert_eq!(fill_pipelined(&reader.prepare_batch(&indices).unwrap()), expected);
        let begin = indices.first().copied().unwrap_or(0);
        let end = records.len() as u64;
        prop_assert_eq!(fill(&reader.prepare_range(begin, end).unwrap()), records[begin as usize..].to_vec());
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_signature_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..70_000)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file.array_record");
        let mut writer = Writer::create(&path, "group_size:1,uncompressed").unwrap();
        writer.close().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(64);
        bytes.extend_from_slice(&tail);
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(reader) = Reader::open(&path) {
            let _ = reader.read_all();
        }
    }
}

fn drain_from(sequential: &mut SequentialReader, count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map_while(|_| {
            sequential
                .next_record()
                .map(|record| record.unwrap().to_vec())
        })
        .collect()
}

#[test]
fn pipelined_fills_span_many_pieces_and_stop_at_the_first_allocation_error() {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<Vec<u8>> = (0..5000u32)
        .map(|i| format!("{i};").into_bytes().repeat((i % 97) as usize))
        .collect();
    for options in [
        "group_size:1,zstd:1",
        "group_size:7,snappy",
        "group_size:300,uncompressed",
    ] {
        let path = dir.path().join("file.array_record");
        let mut writer = Writer::create(&path, options).unwrap();
        for record in &records {
            writer.write(record).unwrap();
        }
        writer.close().unwrap();
        for reader_options in ["", "max_parallelism:1"] {
            let reader =
                Reader::open_with_options(&path, ReaderOptions::parse(reader_options).unwrap())
                    .unwrap();
            let indices: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 5000).collect();
            let expected: Vec<Vec<u8>> = indices
                .iter()
                .map(|&i| records[i as usize].clone())
                .collect();
            let prepared = reader.prepare_batch(&indices).unwrap();
            assert_eq!(
                fill_pipelined(&prepared),
                expected,
                "{options} {reader_options}"
            );
            assert_eq!(
                fill_pipelined(&reader.prepare_range(0, 5000).unwrap()),
                records
            );
            // The caller's allocation fails on the second piece: that error comes back and
            // no further piece is asked for.
            let mut pieces = 0;
            let mut storage: Vec<Vec<u8>> = (0..prepared.len())
                .map(|position| vec![0; prepared.record_len(position)])
                .collect();
            let mut unclaimed: Vec<Option<&mut [u8]>> =
                storage.iter_mut().map(|s| Some(s.as_mut_slice())).collect();
            let result = prepared.fill_pipelined(|positions, buffers| {
                pieces += 1;
                if pieces == 2 {
                    return Err(shapeshift_records::Error::State {
                        path: "caller".into(),
                        what: "out of memory".into(),
                    });
                }
                for &position in positions {
                    buffers.push(unclaimed[position as usize].take().unwrap());
                }
                Ok(())
            });
            assert!(result.unwrap_err().to_string().contains("out of memory"));
            assert_eq!(pieces, 2);
            // A buffer of the wrong length is refused before anything is written into it.
            let mut short = [0u8; 1];
            let mut short_buffer = Some(&mut short[..]);
            let result = prepared.fill_pipelined(|_, buffers| {
                buffers.extend(short_buffer.take());
                Ok::<(), shapeshift_records::Error>(())
            });
            assert!(result.is_err());
        }
    }
}

#[test]
fn sequential_read_ahead_reaches_the_end_and_follows_seeks() {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| format!("{i}:").into_bytes().repeat((i % 23) as usize))
        .collect();
    for options in [
        "group_size:1,zstd:3",
        "group_size:7,brotli:2",
        "group_size:256,uncompressed",
    ] {
        let path = dir.path().join("file.array_record");
        let mut writer = Writer::create(&path, options).unwrap();
        for record in &records {
            writer.write(record).unwrap();
        }
        writer.close().unwrap();
        for reader_options in [
            "",
            "readahead_buffer_size:3k",
            "readahead_buffer_size:0",
            "max_parallelism:1",
        ] {
            let reader = Arc::new(
                Reader::open_with_options(&path, ReaderOptions::parse(reader_options).unwrap())
                    .unwrap(),
            );
            let mut sequential = SequentialReader::new(Arc::clone(&reader));
            assert_eq!(
                drain_from(&mut sequential, usize::MAX),
                records,
                "{options} {reader_options}"
            );
            assert!(sequential.next_record().is_none());
            // Forward past the queued windows, back into an old one, to the very end.
            sequential.seek(2500).unwrap();
            assert_eq!(drain_from(&mut sequential, 10), records[2500..2510]);
            sequential.seek(3).unwrap();
            assert_eq!(drain_from(&mut sequential, 2000), records[3..2003]);
            sequential.seek(2999).unwrap();
            assert_eq!(drain_from(&mut sequential, 5), records[2999..]);
            sequential.seek(3000).unwrap();
            assert!(sequential.next_record().is_none());
            assert!(sequential.seek(3001).is_err());
            // A reader dropped with read-ahead queued does not disturb the next one.
            let mut early = SequentialReader::new(Arc::clone(&reader));
            assert_eq!(drain_from(&mut early, 1), records[..1]);
            drop(early);
        }
    }
}

#[test]
fn pipelined_writing_is_deterministic_across_many_batches() {
    let dir = tempfile::tempdir().unwrap();
    // About 12 MiB: several 2 MiB batches in flight at once.
    let records: Vec<Vec<u8>> = (0..9000u32)
        .map(|i| {
            format!("record {i} of the pipelined writer ")
                .into_bytes()
                .repeat(40)
        })
        .collect();
    for options in [
        "group_size:1,zstd:3",
        "group_size:100,brotli:1",
        "group_size:7,snappy",
    ] {
        let mut data_sections = Vec::new();
        for parallelism in ["max_parallelism:1", "max_parallelism:4"] {
            let path = dir
                .path()
                .join(format!("{parallelism}.array_record").replace(':', "_"));
            let mut writer = Writer::create(&path, &format!("{options},{parallelism}")).unwrap();
            for record in &records {
                writer.write(record).unwrap();
            }
            writer.close().unwrap();
            let reader = Reader::open(&path).unwrap();
            assert_eq!(
                reader.read_all().unwrap().to_vecs(),
                records,
                "{options} {parallelism}"
            );
            let bytes = std::fs::read(&path).unwrap();
            data_sections.push(bytes[..reader.info().footer_offset as usize].to_vec());
        }
        assert!(
            data_sections[0] == data_sections[1],
            "{options}: output depends on threads"
        );
    }
}

/// The consumer decodes windows ahead that no pool thread has started while the pool
/// decodes the one it needs: with pool threads held up at random moments, every record
/// still comes back once, in order.
#[test]
fn sequential_reads_stay_in_order_while_the_consumer_helps_a_busy_pool() {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<Vec<u8>> = (0..6000u32)
        .map(|i| format!("{i}:").into_bytes().repeat(40 + (i % 31) as usize))
        .collect();
    let path = dir.path().join("file.array_record");
    let mut writer = Writer::create(&path, "group_size:64,zstd:1").unwrap();
    for record in &records {
        writer.write(record).unwrap();
    }
    writer.close().unwrap();
    for round in 0..12u64 {
        // Small windows, many of them queued at once.
        let reader = Arc::new(
            Reader::open_with_options(
                &path,
                ReaderOptions::parse("readahead_buffer_size:600k").unwrap(),
            )
            .unwrap(),
        );
        // Hold every pool thread for a while, so that windows are decoded by the consumer,
        // by the pool, and by both at once in varying order.
        for _ in 0..rayon::current_num_threads() {
            rayon::spawn(move || std::thread::sleep(std::time::Duration::from_micros(300 * round)));
        }
        let mut sequential = SequentialReader::new(Arc::clone(&reader));
        let mut index = 0usize;
        while let Some(record) = sequential.next_record() {
            assert_eq!(
                record.unwrap(),
                records[index].as_slice(),
                "round {round}, record {index}"
            );
            index += 1;
            if [1500, 3000, 4500].contains(&index) {
                for _ in 0..rayon::current_num_threads() {
                    rayon::spawn(|| std::thread::sleep(std::time::Duration::from_millis(1)));
                }
            }
        }
        assert_eq!(index, records.len(), "round {round}");
    }
}
