//! The transposed chunk decoder on hand-built chunks (format semantics, hostile state
//! machines) and on mutated chunks of the golden files array_record wrote: damaged input
//! gives an error naming the transposed chunk, never a panic, hang or huge allocation.

use proptest::prelude::*;

use super::decode;
use crate::error::Malformed;
use crate::reader::{split_records, Reader};
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

/// A machine with a varint field 1 (two-byte values, from buffer 0) that moves implicitly
/// to a start of message, which moves back explicitly (by transition byte). Its buffer holds
/// 150 (0x96 0x01) and 256 (0x80 0x02) with the continuation bits stripped.
fn varint_chunk(transitions: &[u8]) -> Vec<u8> {
    // buckets, buffers, bucket length, buffer length, nodes, tags, next nodes (node 0's
    // next is implicit: 1 + size), the one subtype (1: a two-byte varint; subtypes are
    // bytes, and this one is its own varint), node 0's buffer index, first node.
    let header = [1, 1, 4, 4, 2, 8, 3, 1 + 2, 0, 1, 0, 0];
    chunk(&header, &[0x16, 0x01, 0x00, 0x02], transitions)
}

fn records_of(decoded: &super::DecodedTransposedChunk) -> Vec<Vec<u8>> {
    split_records(&decoded.buffer[decoded.start..], &decoded.ends)
}

/// Decodes `data` as a chunk of `records` records of `size` bytes, which must fail with an
/// error naming the transposed chunk and containing `expected`; returns the error.
fn decode_error(data: &[u8], records: u64, size: u64, expected: &str) -> Malformed {
    let Err(error) = decode(data, 1000, records, size, Vec::new()) else {
        panic!("{records} records of {size} bytes accepted, expected {expected:?}");
    };
    assert!(
        error.what.starts_with("transposed chunk: "),
        "{}",
        error.what
    );
    assert!(error.what.contains(expected), "{}", error.what);
    error
}

#[test]
fn records_come_back_in_order_with_continuation_bits_restored() {
    // Values 150 (0x96 0x01) then 256 (0x80 0x02) in the buffer, continuation bits
    // stripped; the machine decodes the last record first, so buffer order is reversed.
    let data = varint_chunk(&[0x00]);
    let decoded = decode(&data, 1000, 2, 6, Vec::new()).unwrap();
    assert_eq!(
        records_of(&decoded),
        [vec![0x08, 0x80, 0x02], vec![0x08, 0x96, 0x01]]
    );
    assert_eq!(decoded.ends, [3, 6]);
}

#[test]
fn counts_and_sizes_that_disagree_with_the_header_are_errors() {
    let data = varint_chunk(&[0x00]);
    decode_error(&data, 3, 6, "2 records decoded, 3 declared");
    decode_error(&data, 1, 6, "more records than the 1 declared");
    decode_error(
        &data,
        2,
        7,
        "the records fill 6 bytes, the chunk declares 7",
    );
    decode_error(&data, 2, 5, "exceed the chunk's declared size of 5 bytes");
}

#[test]
fn a_buffer_that_runs_out_is_an_error_at_its_bucket() {
    // Two transitions ask for three values; the buffer holds two.
    let data = varint_chunk(&[0x00, 0x00]);
    let error = decode_error(&data, 3, 9, "buffer 0 ends before a varint");
    // The bucket starts after the compression byte, the header length and the header.
    assert_eq!(error.offset, 1000 + 2 + 12);
}

#[test]
fn hostile_state_machines_stop() {
    // Two no-op nodes whose implicit transitions lead to each other: refused before running.
    let data = chunk(&[0, 0, 2, 0, 0, 1 + 2, 2, 0], &[], &[]);
    decode_error(&data, 0, 0, "loop of implicit transitions");
    // One no-op node looping on itself through transitions that each repeat it 3 times.
    let data = chunk(&[0, 0, 1, 0, 0, 0], &[], &[0x03; 1000]);
    decode_error(&data, 0, 0, "no-op nodes in a row");
    // A submessage end (field 1, wire type 6) looping on itself.
    let data = chunk(&[0, 0, 1, 8 + 6, 0, 0], &[], &[0x03; 1000]);
    decode_error(&data, 1, 40, "more submessages open");
    // A submessage start with none open, then a jump past the last node.
    let data = chunk(&[0, 0, 1, 2, 0, 0], &[], &[]);
    decode_error(&data, 1, 40, "a submessage starts that was never ended");
    let data = chunk(&[0, 0, 1, 0, 0, 0], &[], &[0x04]);
    decode_error(
        &data,
        0,
        0,
        "transition to node 1, the state machine has 1 nodes",
    );
}

#[test]
fn huge_counts_are_refused_before_allocating() {
    for header in [
        vec![u64::from(u32::MAX), 0],
        vec![1, u64::from(u32::MAX)],
        vec![0, 0, u64::from(u32::MAX)],
    ] {
        decode_error(&chunk(&header, &[], &[]), 1, 1, "header bytes left");
    }
    // A declared decoded size far beyond what the chunk produces allocates in proportion to
    // the chunk, then fails at the end.
    let data = varint_chunk(&[0x00]);
    decode_error(&data, 2, 1 << 50, "the chunk declares");
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
