//! The transposed chunk decoder on hand-built chunks (format semantics, hostile state
//! machines) and on mutated chunks of the golden files array_record wrote: damaged input
//! gives an error naming the transposed chunk, never a panic, hang or huge allocation.

use proptest::prelude::*;

use super::decode;
use crate::reader::Reader;
use crate::varint::put_varint;

/// An uncompressed transposed chunk from its decompressed parts.
fn chunk(header: &[u64], buckets: &[u8], transitions: &[u8]) -> Vec<u8> {
    let mut header_bytes = Vec::new();
    for &value in header {
        put_varint(&mut header_bytes, value);
    }
    let mut data = vec![0u8];
    put_varint(&mut data, header_bytes.len() as u64);
    data.extend_from_slice(&header_bytes);
    data.extend_from_slice(buckets);
    data.extend_from_slice(transitions);
    data
}

/// Header of a machine with a varint field 1 (two-byte values, from buffer 0) that moves
/// implicitly to a start of message, which moves back explicitly (by transition byte).
/// Subtypes are bytes in the header; the one subtype here (1: two-byte varint) is written
/// as a one-byte varint, which is the same byte.
fn varint_machine_header(bucket_len: u64) -> Vec<u64> {
    // buckets, buffers, bucket length, buffer length, nodes, tags, next nodes (node 0's
    // next is implicit: 1 + size), subtypes, node 0's buffer index, first node.
    vec![1, 1, bucket_len, bucket_len, 2, 8, 3, 1 + 2, 0, 1, 0, 0]
}

fn records_of(decoded: &super::DecodedTransposedChunk) -> Vec<Vec<u8>> {
    let values = &decoded.buffer[decoded.start..];
    let mut start = 0;
    decoded
        .ends
        .iter()
        .map(|&end| {
            let record = values[start..end as usize].to_vec();
            start = end as usize;
            record
        })
        .collect()
}

#[test]
fn records_come_back_in_order_with_continuation_bits_restored() {
    // Values 150 (0x96 0x01) then 256 (0x80 0x02) in the buffer, continuation bits
    // stripped; the machine decodes the last record first, so buffer order is reversed.
    let data = chunk(
        &varint_machine_header(4),
        &[0x16, 0x01, 0x00, 0x02],
        &[0x00],
    );
    let decoded = decode(&data, 1000, 2, 6, Vec::new()).unwrap();
    assert_eq!(
        records_of(&decoded),
        [vec![0x08, 0x80, 0x02], vec![0x08, 0x96, 0x01]]
    );
    assert_eq!(decoded.ends, [3, 6]);
}

#[test]
fn counts_and_sizes_that_disagree_with_the_header_are_errors() {
    let data = chunk(
        &varint_machine_header(4),
        &[0x16, 0x01, 0x00, 0x02],
        &[0x00],
    );
    for (records, size, expected) in [
        (3, 6, "2 records decoded, 3 declared"),
        (1, 6, "more records than the 1 declared"),
        (2, 7, "the records fill 6 bytes, the chunk declares 7"),
        (2, 5, "exceed the chunk's declared size of 5 bytes"),
    ] {
        let error = decode(&data, 1000, records, size, Vec::new())
            .err()
            .unwrap_or_else(|| panic!("{records} records of {size} bytes accepted"));
        assert!(
            error.what.starts_with("transposed chunk: "),
            "{}",
            error.what
        );
        assert!(error.what.contains(expected), "{}", error.what);
    }
}

#[test]
fn a_buffer_that_runs_out_is_an_error_at_its_bucket() {
    // Two transitions ask for three values; the buffer holds two.
    let data = chunk(
        &varint_machine_header(4),
        &[0x16, 0x01, 0x00, 0x02],
        &[0x00, 0x00],
    );
    let error = decode(&data, 1000, 3, 9, Vec::new()).err().unwrap();
    assert!(
        error.what.contains("buffer 0 ends before a varint"),
        "{}",
        error.what
    );
    // The bucket starts after the compression byte, the header length and the header.
    assert_eq!(error.offset, 1000 + 2 + 12);
}

#[test]
fn implicit_loops_are_refused_before_running() {
    // Two no-op nodes whose implicit transitions lead to each other.
    let data = chunk(&[0, 0, 2, 0, 0, 1 + 2, 2, 0], &[], &[]);
    let error = decode(&data, 0, 0, 0, Vec::new()).err().unwrap();
    assert!(
        error.what.contains("loop of implicit transitions"),
        "{}",
        error.what
    );
}

#[test]
fn endless_no_ops_stop() {
    // One no-op node looping on itself through transitions that each repeat it 3 times.
    let data = chunk(&[0, 0, 1, 0, 0, 0], &[], &[0x03; 1000]);
    let error = decode(&data, 0, 0, 0, Vec::new()).err().unwrap();
    assert!(
        error.what.contains("no-op nodes in a row"),
        "{}",
        error.what
    );
}

#[test]
fn endless_submessage_ends_stop_at_the_declared_size() {
    // A submessage end (field 1, wire type 6) looping on itself.
    let data = chunk(&[0, 0, 1, 8 + 6, 0, 0], &[], &[0x03; 1000]);
    let error = decode(&data, 0, 1, 40, Vec::new()).err().unwrap();
    assert!(
        error.what.contains("more submessages open"),
        "{}",
        error.what
    );
}

#[test]
fn huge_counts_are_refused_before_allocating() {
    for header in [
        vec![u64::from(u32::MAX), 0],
        vec![1, u64::from(u32::MAX)],
        vec![0, 0, u64::from(u32::MAX)],
    ] {
        let data = chunk(&header, &[], &[]);
        let error = decode(&data, 0, 1, 1, Vec::new()).err().unwrap();
        assert!(error.what.contains("header bytes left"), "{}", error.what);
    }
    // A declared decoded size far beyond what the chunk produces allocates in proportion to
    // the chunk, then fails at the end.
    let data = chunk(
        &varint_machine_header(4),
        &[0x16, 0x01, 0x00, 0x02],
        &[0x00],
    );
    let error = decode(&data, 0, 2, 1 << 50, Vec::new()).err().unwrap();
    assert!(error.what.contains("the chunk declares"), "{}", error.what);
}

#[test]
fn every_truncation_of_a_golden_chunk_is_an_error() {
    for (data, offset, records, size) in golden_chunks().into_iter().step_by(7) {
        for len in 0..data.len() {
            let result = decode(&data[..len], offset, records, size, Vec::new());
            let error = result
                .err()
                .unwrap_or_else(|| panic!("{len} bytes accepted"));
            assert!(
                error.what.starts_with("transposed chunk: "),
                "{}",
                error.what
            );
        }
    }
}

/// (data, file offset, records, decoded size) of every transposed chunk of the golden
/// files with group_size 16 (several records per chunk), and of one group_size 1 file.
fn golden_chunks() -> Vec<(Vec<u8>, u64, u64, u64)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/transposed");
    let mut chunks = Vec::new();
    for kind in ["proto", "nonproto", "mixed"] {
        for compression in ["zstd", "brotli", "snappy", "none"] {
            let mut names = vec![format!("{kind}_{compression}_g16")];
            if kind == "mixed" {
                names.push(format!("{kind}_{compression}_g1"));
            }
            for name in names {
                let reader = Reader::open(dir.join(format!("{name}.array_record"))).unwrap();
                for index in 0..reader.num_chunks().min(3) {
                    let raw = reader.read_verified_chunk(index).unwrap();
                    let (records, size) = reader.chunk_counts(index);
                    chunks.push((raw.data.into_owned(), raw.data_offset, records, size));
                }
            }
        }
    }
    chunks
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Xor(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Remove(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Set(at, byte)),
        (any::<usize>(), 1..=255u8).prop_map(|(at, bits)| Mutation::Xor(at, bits)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert(at, byte)),
        any::<usize>().prop_map(Mutation::Remove),
    ]
}

fn apply(data: &mut Vec<u8>, mutation: &Mutation) {
    if data.is_empty() {
        return;
    }
    let len = data.len();
    match *mutation {
        Mutation::Set(at, byte) => data[at % len] = byte,
        Mutation::Xor(at, bits) => data[at % len] ^= bits,
        Mutation::Truncate(at) => data.truncate(at % len),
        Mutation::Insert(at, byte) => data.insert(at % (len + 1), byte),
        Mutation::Remove(at) => {
            data.remove(at % len);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Mutated chunks (and wrong record counts or sizes) decode to an error or to records
    /// that agree with the counts given; they never panic, hang or exhaust memory.
    #[test]
    fn mutated_golden_chunks_never_panic(
        which in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
        records_delta in prop_oneof![Just(0i64), -2..3i64],
        size_delta in prop_oneof![Just(0i64), -40..40i64],
    ) {
        let chunks = GOLDEN.with(|golden| golden.clone());
        let (mut data, offset, records, size) = chunks[which.index(chunks.len())].clone();
        for mutation in &mutations {
            apply(&mut data, mutation);
        }
        let records = records.saturating_add_signed(records_delta);
        let size = size.saturating_add_signed(size_delta);
        match decode(&data, offset, records, size, Vec::new()) {
            Ok(decoded) => {
                prop_assert_eq!(decoded.ends.len() as u64, records);
                prop_assert_eq!((decoded.buffer.len() - decoded.start) as u64, size);
                prop_assert!(decoded.ends.windows(2).all(|pair| pair[0] <= pair[1]));
                prop_assert_eq!(decoded.ends.last().copied().unwrap_or(0), size);
            }
            Err(error) => prop_assert!(error.what.starts_with("transposed chunk: "), "{}", error.what),
        }
    }
}

thread_local! {
    static GOLDEN: std::rc::Rc<Vec<(Vec<u8>, u64, u64, u64)>> = std::rc::Rc::new(golden_chunks());
}
