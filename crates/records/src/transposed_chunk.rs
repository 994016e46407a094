//! Transposed chunks ('t'): what array_record writes with `transpose:true`.
//!
//! Riegeli's transposed encoding splits records that parse as protocol buffers into their
//! fields: the values of each field (per tag, per nesting) go to a buffer of their own, and a
//! state machine replays the order of the fields. Reading rebuilds every record byte for
//! byte, the tags and lengths included, so a record comes back exactly as it was written
//! whether or not it is a protobuf (those that are not travel whole, as "non-proto"
//! records). Riegeli's file format document leaves this encoding undocumented; this reader
//! follows Riegeli's public `transpose_decoder.cc` (without field projection).
//!
//! Chunk data layout:
//! - compression byte (0, `b`rotli, `z`std, `s`nappy), used by every compressed part below;
//! - `varint64` header length, then the header (compressed like a simple chunk's buffers:
//!   a `varint64` decoded size, then the compressed bytes; raw when the byte is 0);
//! - the buckets, each compressed on its own; a bucket decodes to consecutive buffers;
//! - the transitions, compressed, to the end of the data: one byte per transition.
//!
//! Header (varints): bucket count, buffer count, each bucket's compressed length, each
//! buffer's decoded length, state machine size `n`, then `n` tags, `n` next-node indices,
//! one subtype byte per varint-field node, a buffer index for each node that reads one,
//! and the first node. Tags 0..3 are reserved (no-op, non-proto record, start of a
//! submessage, start of a message); a tag with wire type 6 is the end of a submessage
//! (length-delimited field). A varint field's subtype says how many bytes its value takes
//! in the buffer (0..9: 1..10 bytes, stored without continuation bits) or gives a value
//! 0..127 inline (subtypes 10..137). A next-node index of `n` or more marks an implicit
//! transition (taken without reading a transition byte) to index `- n`.
//!
//! Running the machine: handle the node, go to its next node; unless a repeat count is
//! pending, read a transition byte and add its top six bits to the node index, its low two
//! bits being how many more explicit transitions follow without a byte. Records come out
//! last to first, each one back to front (a submessage's length is only known once its
//! fields are written), so the output grows towards its start ([`BackwardBuffer`]) and
//! each "start of message" marks where a record begins.
//!
//! Invariants that keep hostile input bounded (the chunk passed its hash, but may still
//! have been crafted): every count read from the header is at most the header bytes left
//! (each item takes at least a byte) before anything is allocated for it; buckets decode
//! through the crate's size-checked decompression, lazily, when a node first reads one of
//! their buffers, and must decode to exactly the declared buffer lengths; reads never pass
//! the end of their buffer; the output never exceeds the chunk's declared decoded size and
//! must fill it exactly; at most that many records, and open submessages only while two
//! bytes per open one remain to be written; no cycle of implicit transitions (checked
//! before running), and at most `2n + 2` no-op nodes in a row. Every other node writes a
//! byte, starts a record or opens a submessage, so the run is bounded by the output.

use crate::error::Malformed;
use crate::varint::{encode_varint, get_varint32};
use header::{parse, Action, ParsedChunk};

mod header;

/// A decoded transposed chunk: the records, concatenated, are `buffer[start..]`.
pub(crate) struct DecodedTransposedChunk {
    pub buffer: Vec<u8>,
    pub start: usize,
    /// End offset of every record, relative to `start`.
    pub ends: Vec<u64>,
}

impl DecodedTransposedChunk {
    /// The records' bytes in a vector of their own length.
    pub fn into_values(mut self) -> Vec<u8> {
        self.buffer.drain(..self.start);
        self.buffer
    }
}

/// Decodes transposed chunk `data` (verified by its hash) declaring `num_records` records
/// of `decoded_data_size` bytes in total. `offset` is the file offset of `data[0]`;
/// `buffer` is a recycled buffer for the records, or an empty one.
pub(crate) fn decode(
    data: &[u8],
    offset: u64,
    num_records: u64,
    decoded_data_size: u64,
    buffer: Vec<u8>,
) -> Result<DecodedTransposedChunk, Malformed> {
    let mut chunk = parse(data, offset)?;
    chunk.run(num_records, decoded_data_size, buffer)
}

fn error(offset: u64, what: impl std::fmt::Display) -> Malformed {
    Malformed::new(offset, format!("transposed chunk: {what}"))
}

/// Output written back to front: each write goes before everything written so far. The
/// bytes are `buffer[start..]`; the buffer grows (doubling, data kept at its end) up to
/// the chunk's declared decoded size.
struct BackwardBuffer {
    buffer: Vec<u8>,
    start: usize,
    limit: u64,
}

impl BackwardBuffer {
    fn written(&self) -> u64 {
        (self.buffer.len() - self.start) as u64
    }

    /// Room for `len` more bytes in front of the written ones, to fill front to back.
    fn prepend(&mut self, len: usize, offset: u64) -> Result<&mut [u8], Malformed> {
        let written = self.written();
        if len as u64 > self.limit - written {
            return Err(error(
                offset,
                format_args!(
                    "the records exceed the chunk's declared size of {} bytes",
                    self.limit
                ),
            ));
        }
        if len > self.start {
            let needed = written as usize + len;
            let grown = (self.buffer.len().saturating_mul(2))
                .max(needed)
                .min(self.limit as usize);
            let mut buffer = vec![0u8; grown];
            buffer[grown - written as usize..].copy_from_slice(&self.buffer[self.start..]);
            self.start = grown - written as usize;
            self.buffer = buffer;
        }
        self.start -= len;
        Ok(&mut self.buffer[self.start..self.start + len])
    }
}

/// `dest.copy_from_slice(src)` for the few bytes of tags and fixed values, without the call
/// to `memcpy` that a length unknown at compile time costs: two overlapping fixed copies.
#[inline(always)]
fn copy_short(dest: &mut [u8], src: &[u8]) {
    let len = src.len();
    assert_eq!(dest.len(), len);
    if (4..=8).contains(&len) {
        let head: [u8; 4] = src[..4].try_into().expect("4 bytes");
        let tail: [u8; 4] = src[len - 4..].try_into().expect("4 bytes");
        dest[..4].copy_from_slice(&head);
        dest[len - 4..].copy_from_slice(&tail);
    } else if (9..=16).contains(&len) {
        let head: [u8; 8] = src[..8].try_into().expect("8 bytes");
        let tail: [u8; 8] = src[len - 8..].try_into().expect("8 bytes");
        dest[..8].copy_from_slice(&head);
        dest[len - 8..].copy_from_slice(&tail);
    } else if len < 4 {
        for (d, &b) in dest.iter_mut().zip(src) {
            *d = b;
        }
    } else {
        dest.copy_from_slice(src);
    }
}

/// Output preallocated beyond this many bytes per chunk data byte grows as it is written.
const PREALLOCATED_RATIO: usize = 16;

impl ParsedChunk<'_> {
    fn run(
        &mut self,
        num_records: u64,
        decoded_data_size: u64,
        mut buffer: Vec<u8>,
    ) -> Result<DecodedTransposedChunk, Malformed> {
        let initial = decoded_data_size
            .min((self.data_len * PREALLOCATED_RATIO + (64 << 10)) as u64)
            as usize;
        buffer.clear();
        buffer.resize(initial, 0);
        let mut out = BackwardBuffer {
            start: buffer.len(),
            buffer,
            limit: decoded_data_size,
        };
        // Output positions where records start, in decoding order (last record first).
        let mut record_starts: Vec<u64> = Vec::with_capacity(num_records.min(1 << 16) as usize);
        // (output position where a submessage ends, its node).
        let mut open: Vec<(u64, u32)> = Vec::new();
        let max_no_ops = 2 * self.nodes.len() + 2;
        let mut no_ops = 0usize;
        let mut progress_at_no_op = 0u64;
        let (offset, transitions_offset) = (self.offset, self.transitions_offset);

        let mut node_index = self.first_node as usize;
        let mut pending = u8::from(self.nodes[node_index].implicit);
        let mut next_transition = 0usize;
        loop {
            let node = &self.nodes[node_index];
            let tag = &node.tag[..node.tag_len as usize];
            match node.action {
                Action::NoOp => {
                    // Every other node makes progress (writes, starts a record, opens a
                    // submessage); no-ops without progress are bounded.
                    let progress = out.written() + record_starts.len() as u64 + open.len() as u64;
                    if progress != progress_at_no_op {
                        progress_at_no_op = progress;
                        no_ops = 0;
                    }
                    no_ops += 1;
                    if no_ops > max_no_ops {
                        return Err(error(
                            transitions_offset + next_transition as u64,
                            format_args!("more than {max_no_ops} no-op nodes in a row"),
                        ));
                    }
                }
                Action::CopyTag => copy_short(out.prepend(tag.len(), offset)?, tag),
                Action::Varint(len) => {
                    let value = self.buffers.take(node.buffer, len as usize, "a varint")?;
                    let dest = out.prepend(tag.len() + value.len(), offset)?;
                    copy_short(&mut dest[..tag.len()], tag);
                    let (last, body) = value.split_last().expect("at least one byte");
                    for (d, &b) in dest[tag.len()..].iter_mut().zip(body) {
                        *d = b | 0x80;
                    }
                    dest[tag.len() + body.len()] = *last;
                }
                Action::Fixed(len) => {
                    let value = self
                        .buffers
                        .take(node.buffer, len as usize, "a fixed field")?;
                    let dest = out.prepend(tag.len() + value.len(), offset)?;
                    copy_short(&mut dest[..tag.len()], tag);
                    copy_short(&mut dest[tag.len()..], value);
                }
                Action::String => {
                    let bucket_offset = self.buffers.bucket_offset(node.buffer);
                    let rest = self.buffers.rest(node.buffer)?;
                    let (len, len_len) = get_varint32(rest, bucket_offset).map_err(|e| {
                        error(
                            e.offset,
                            format_args!("buffer {}: string length: {}", node.buffer, e.what),
                        )
                    })?;
                    let total = len_len + len as usize;
                    let value = self.buffers.take(node.buffer, total, "a string")?;
                    let dest = out.prepend(tag.len() + total, offset)?;
                    copy_short(&mut dest[..tag.len()], tag);
                    copy_short(&mut dest[tag.len()..], value);
                }
                Action::SubmessageEnd => {
                    // Each open submessage still needs its tag and length written.
                    let left = decoded_data_size - out.written();
                    if (open.len() as u64 + 1) * 2 > left {
                        return Err(error(
                            transitions_offset + next_transition as u64,
                            "more submessages open than the declared size can close",
                        ));
                    }
                    open.push((out.written(), node_index as u32));
                }
                Action::SubmessageStart => {
                    let Some((end, end_node)) = open.pop() else {
                        return Err(error(
                            transitions_offset + next_transition as u64,
                            "a submessage starts that was never ended",
                        ));
                    };
                    let len = out.written() - end;
                    let Ok(len) = u32::try_from(len) else {
                        return Err(error(offset, "a submessage exceeds 4 GiB"));
                    };
                    let end_node = &self.nodes[end_node as usize];
                    let tag = &end_node.tag[..end_node.tag_len as usize];
                    let mut varint = [0u8; 10];
                    let len_len = encode_varint(u64::from(len), &mut varint);
                    let dest = out.prepend(tag.len() + len_len, offset)?;
                    copy_short(&mut dest[..tag.len()], tag);
                    copy_short(&mut dest[tag.len()..], &varint[..len_len]);
                }
                Action::NonProto | Action::MessageStart => {
                    if node.action == Action::NonProto {
                        let lengths = self.nonproto_lengths.expect("set when a node is non-proto");
                        let lengths_offset = self.buffers.bucket_offset(lengths);
                        let (len, len_len) =
                            get_varint32(self.buffers.rest(lengths)?, 0).map_err(|e| {
                                error(
                                    lengths_offset,
                                    format_args!("non-proto record length: {}", e.what),
                                )
                            })?;
                        self.buffers.take(lengths, len_len, "a length")?;
                        let record = self.buffers.take(node.buffer, len as usize, "a record")?;
                        out.prepend(record.len(), offset)?.copy_from_slice(record);
                    }
                    if !open.is_empty() {
                        return Err(error(
                            transitions_offset + next_transition as u64,
                            "a record starts with submessages still open",
                        ));
                    }
                    if record_starts.len() as u64 == num_records {
                        return Err(error(
                            transitions_offset + next_transition as u64,
                            format_args!("more records than the {num_records} declared"),
                        ));
                    }
                    record_starts.push(out.written());
                }
            }

            node_index = node.next as usize;
            if pending == 0 {
                let Some(&transition) = self.transitions.get(next_transition) else {
                    break;
                };
                next_transition += 1;
                node_index += usize::from(transition >> 2);
                let Some(target) = self.nodes.get(node_index) else {
                    return Err(error(
                        transitions_offset + next_transition as u64 - 1,
                        format_args!(
                            "transition to node {node_index}, the state machine has {} nodes",
                            self.nodes.len()
                        ),
                    ));
                };
                pending = (transition & 3) + u8::from(target.implicit);
            } else if !self.nodes[node_index].implicit {
                pending -= 1;
            }
        }
        self.finish(out, record_starts, open.len(), num_records)
    }

    fn finish(
        &self,
        out: BackwardBuffer,
        record_starts: Vec<u64>,
        open: usize,
        num_records: u64,
    ) -> Result<DecodedTransposedChunk, Malformed> {
        let end = self.transitions_offset + self.transitions.len() as u64;
        if open != 0 {
            return Err(error(end, format_args!("{open} submessages still open")));
        }
        if record_starts.len() as u64 != num_records {
            return Err(error(
                end,
                format_args!(
                    "{} records decoded, {num_records} declared",
                    record_starts.len()
                ),
            ));
        }
        let total = out.written();
        if record_starts.last().copied().unwrap_or(0) != total {
            return Err(error(end, "bytes written after the last record started"));
        }
        if total != out.limit {
            return Err(error(
                end,
                format_args!(
                    "the records fill {total} bytes, the chunk declares {}",
                    out.limit
                ),
            ));
        }
        // Record `i` (forward order) was decoded `n - 1 - i`-th; it ends where the record
        // decoded before it started.
        let ends = (0..record_starts.len())
            .map(|i| {
                let before = record_starts.len() - 1 - i;
                total - before.checked_sub(1).map_or(0, |j| record_starts[j])
            })
            .collect();
        Ok(DecodedTransposedChunk {
            buffer: out.buffer,
            start: out.start,
            ends,
        })
    }
}

#[cfg(test)]
mod tests;
