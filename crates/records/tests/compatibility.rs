//! Round trips through our own writer and reader, across options and access paths.
//! (Compatibility with array_record itself is tested in python/tests/test_records_compat.py.)

use std::sync::Arc;

use shapeshift_records::{Error, Reader, ReaderOptions, SequentialReader, Writer};

fn records(count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| {
            let words = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur"];
            let mut record = Vec::new();
            for j in 0..(i % 37) {
                record.extend_from_slice(words[(i * 7 + j) % words.len()].as_bytes());
                record.push(b' ');
            }
            record
        })
        .collect()
}

fn write(path: &std::path::Path, options: &str, records: &[Vec<u8>]) {
    let mut writer = Writer::create(path, options).unwrap();
    for record in records {
        writer.write(record).unwrap();
    }
    writer.close().unwrap();
}

fn drain(sequential: &mut SequentialReader) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(record) = sequential.next_record() {
        out.push(record.unwrap().to_vec());
    }
    out
}

const OPTIONS: &[&str] = &[
    "group_size:1,uncompressed",
    "group_size:1,zstd:3",
    "group_size:7,zstd:1",
    "group_size:256,zstd:7,window_log:18",
    "group_size:1,brotli:5",
    "group_size:64,brotli:1",
    "group_size:1,snappy",
    "group_size:300,snappy",
    "group_size:3,uncompressed,pad_to_block_boundary",
    "group_size:1,zstd:3,zstd_dictionary:4096",
    "group_size:16,zstd:3,zstd_dictionary",
    "",
];

#[test]
fn every_access_path_returns_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let data = records(1500);
    for options in OPTIONS {
        let path = dir.path().join("file.array_record");
        write(&path, options, &data);
        let reader = Reader::open(&path).unwrap();
        assert_eq!(reader.num_records(), data.len() as u64, "{options}");
        assert_eq!(std::fs::metadata(&path).unwrap().len() % 65536, 0);
        for (index, record) in data.iter().enumerate().step_by(13) {
            assert_eq!(
                &reader.read(index as u64).unwrap(),
                record,
                "{options} record {index}"
            );
        }
        let indices: Vec<u64> = (0..data.len() as u64)
            .rev()
            .step_by(3)
            .chain([5, 5, 0])
            .collect();
        let batch = reader.read_batch(&indices).unwrap();
        for (position, &index) in indices.iter().enumerate() {
            assert_eq!(
                batch.get(position),
                data[index as usize].as_slice(),
                "{options}"
            );
        }
        assert_eq!(reader.read_all().unwrap().to_vecs(), data, "{options}");
        let range = reader.read_range(100, 1001).unwrap();
        assert_eq!(range.to_vecs(), data[100..1001].to_vec(), "{options}");
        let mut sequential = SequentialReader::new(Arc::new(reader));
        sequential.seek(1200).unwrap();
        let tail = drain(&mut sequential);
        assert_eq!(tail, data[1200..].to_vec(), "{options}");
    }
}

#[test]
fn sequential_reading_without_read_ahead_and_single_threaded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file.array_record");
    let data = records(700);
    write(&path, "group_size:5,zstd:3", &data);
    for options in [
        "readahead_buffer_size:0,max_parallelism:0",
        "readahead_buffer_size:2k",
        "",
    ] {
        let reader =
            Reader::open_with_options(&path, ReaderOptions::parse(options).unwrap()).unwrap();
        let mut sequential = SequentialReader::new(Arc::new(reader));
        let all = drain(&mut sequential);
        assert_eq!(all, data, "{options}");
    }
}

#[test]
fn empty_and_single_record_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.array_record");
    write(&path, "group_size:1", &[]);
    let reader = Reader::open(&path).unwrap();
    assert_eq!(reader.num_records(), 0);
    assert!(reader.read_all().unwrap().is_empty());
    assert!(matches!(reader.read(0), Err(Error::OutOfRange { .. })));
    write(&path, "group_size:10", &[b"only".to_vec()]);
    let reader = Reader::open(&path).unwrap();
    assert_eq!(reader.read(0).unwrap(), b"only");
    write(&path, "group_size:1,snappy", &[Vec::new(), Vec::new()]);
    let reader = Reader::open(&path).unwrap();
    assert_eq!(
        reader.read_all().unwrap().to_vecs(),
        vec![Vec::<u8>::new(); 2]
    );
}

#[test]
fn large_records_span_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.array_record");
    let data: Vec<Vec<u8>> = (0..5u32)
        .map(|i| {
            (0..300_000u32)
                .map(|j| (j.wrapping_mul(2_654_435_761) >> (i + 3)) as u8)
                .collect()
        })
        .collect();
    for options in [
        "group_size:1,uncompressed",
        "group_size:2,zstd:1",
        "group_size:1,brotli:1",
        "snappy",
    ] {
        write(&path, options, &data);
        let reader = Reader::open(&path).unwrap();
        assert_eq!(reader.read_all().unwrap().to_vecs(), data, "{options}");
        assert_eq!(reader.read(3).unwrap(), data[3], "{options}");
    }
}

#[test]
fn many_tiny_records_pad_chunks_to_their_record_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.array_record");
    let data: Vec<Vec<u8>> = (0..100_000u32)
        .map(|i| vec![(i % 3) as u8; (i % 2) as usize])
        .collect();
    write(&path, "group_size:50000,uncompressed", &data);
    let reader = Reader::open(&path).unwrap();
    assert_eq!(reader.read_all().unwrap().to_vecs(), data);
    assert_eq!(reader.info().num_chunks, 2);
}

#[test]
fn out_of_range_and_options_errors_say_what() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file.array_record");
    write(&path, "group_size:2", &records(5));
    let reader = Reader::open(&path).unwrap();
    let message = reader.read(5).unwrap_err().to_string();
    assert!(
        message.contains("record index 5") && message.contains("file.array_record"),
        "{message}"
    );
    assert!(reader.read_batch(&[1, 99]).is_err());
    assert!(reader.read_range(3, 9).is_err());
    assert!(Writer::create(&path, "zstd:77").is_err());
    assert!(Writer::create(&path, "transpose:true").is_err());
}

#[test]
fn an_unclosed_writer_leaves_no_file_under_the_final_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file.array_record");
    let mut writer = Writer::create(&path, "group_size:1").unwrap();
    writer.write(b"x").unwrap();
    assert!(!path.exists());
    assert!(dir.path().join("file.array_record.incomplete").exists());
    drop(writer);
    assert!(!path.exists());
    assert!(!dir.path().join("file.array_record.incomplete").exists());
}

#[test]
fn dictionary_files_are_marked_and_smaller() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.array_record");
    let with_dictionary = dir.path().join("dictionary.array_record");
    let data = records(20_000);
    write(&plain, "group_size:1,zstd:3", &data);
    write(
        &with_dictionary,
        "group_size:1,zstd:3,zstd_dictionary:16384",
        &data,
    );
    let reader = Reader::open(&with_dictionary).unwrap();
    let info = reader.info();
    assert_eq!(info.compression, "zstd+dictionary");
    assert!(info.zstd_dictionary_size.is_some());
    assert!(info.writer_options.contains("zstd_dictionary"));
    assert_eq!(reader.read_all().unwrap().to_vecs(), data);
    let plain_info = Reader::open(&plain).unwrap().info();
    assert!(
        info.footer_offset < plain_info.footer_offset,
        "{info:?} vs {plain_info:?}"
    );
}
