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

use std::borrow::Cow;

use crate::compression::decompress;
use crate::error::Malformed;
use crate::varint::{encode_varint, get_varint, get_varint32};

/// Reserved tags of state machine nodes (valid protobuf tags are at least 8).
const NO_OP: u32 = 0;
const NON_PROTO: u32 = 1;
const START_OF_SUBMESSAGE: u32 = 2;
const START_OF_MESSAGE: u32 = 3;

/// Wire types.
const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LENGTH_DELIMITED: u32 = 2;
const START_GROUP: u32 = 3;
const END_GROUP: u32 = 4;
const FIXED32: u32 = 5;
/// Not a protobuf wire type: marks the end of a submessage (a length-delimited field).
const SUBMESSAGE_END_WIRE_TYPE: u32 = 6;

/// Varint subtypes below this one give the value's length in the buffer (subtype + 1).
const VARINT_INLINE_0: u8 = 10;
/// Varint subtypes from [`VARINT_INLINE_0`] to this one carry the value (0..127) inline.
const VARINT_INLINE_MAX: u8 = VARINT_INLINE_0 + 0x7f;

/// What a node does when the machine reaches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    NoOp,
    /// A record that is not a protobuf: its length from the lengths buffer, its bytes from
    /// the node's buffer; then the record starts.
    NonProto,
    MessageStart,
    /// Writes the tag and length of the submessage whose end is on top of the stack.
    SubmessageStart,
    /// Remembers where a submessage ends (its fields come next).
    SubmessageEnd,
    /// Writes the node's tag bytes alone (groups, inline varints).
    CopyTag,
    /// Tag, then a varint of this many bytes from the buffer (continuation bits restored).
    Varint(u8),
    /// Tag, then this many bytes from the buffer.
    Fixed(u8),
    /// Tag, then a varint32 length and that many bytes, all from the buffer.
    String,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    action: Action,
    /// The varint tag, followed by the value byte of an inline varint.
    tag: [u8; 6],
    /// Bytes of `tag` that are written (the inline value byte included).
    tag_len: u8,
    buffer: u32,
    next: u32,
    implicit: bool,
}

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

/// A chunk part decompressed, or borrowed as it is when the chunk is not compressed.
fn decompressed(compression: u8, bytes: &[u8], offset: u64) -> Result<Cow<'_, [u8]>, Malformed> {
    if compression == 0 {
        Ok(Cow::Borrowed(bytes))
    } else {
        decompress(compression, bytes, offset, None)
            .map(Cow::Owned)
            .map_err(|e| error(e.offset, e.what))
    }
}

/// Reads the decompressed header; errors give the byte within it.
struct HeaderCursor<'h> {
    bytes: &'h [u8],
    pos: usize,
    offset: u64,
}

impl HeaderCursor<'_> {
    fn fail(&self, what: impl std::fmt::Display) -> Malformed {
        error(
            self.offset,
            format_args!("header byte {}: {what}", self.pos),
        )
    }

    fn varint64(&mut self, what: &str) -> Result<u64, Malformed> {
        let (value, len) = get_varint(&self.bytes[self.pos..], self.offset)
            .map_err(|e| self.fail(format_args!("{what}: {}", e.what)))?;
        self.pos += len;
        Ok(value)
    }

    fn varint32(&mut self, what: &str) -> Result<u32, Malformed> {
        let (value, len) = get_varint32(&self.bytes[self.pos..], self.offset)
            .map_err(|e| self.fail(format_args!("{what}: {}", e.what)))?;
        self.pos += len;
        Ok(value)
    }

    /// A count of items that take at least a byte each in what is left of the header.
    fn count(&mut self, what: &str) -> Result<usize, Malformed> {
        let count = self.varint32(what)?;
        let left = self.bytes.len() - self.pos;
        if count as usize > left {
            return Err(self.fail(format_args!(
                "{what} is {count}, more than the {left} header bytes left"
            )));
        }
        Ok(count as usize)
    }

    fn bytes(&mut self, len: usize, what: &str) -> Result<&[u8], Malformed> {
        if len > self.bytes.len() - self.pos {
            return Err(self.fail(format_args!("{what}: the header ends first")));
        }
        self.pos += len;
        Ok(&self.bytes[self.pos - len..self.pos])
    }

    fn buffer_index(&mut self, num_buffers: usize) -> Result<u32, Malformed> {
        let index = self.varint32("buffer index")?;
        if index as usize >= num_buffers {
            return Err(self.fail(format_args!(
                "buffer index {index}, the chunk has {num_buffers} buffers"
            )));
        }
        Ok(index)
    }
}

/// One compressed bucket, decompressed when a node first reads from it.
struct Bucket<'d> {
    compressed: &'d [u8],
    offset: u64,
    decoded: Option<Cow<'d, [u8]>>,
}

/// A buffer: a range of its bucket's decoded bytes, read front to back.
#[derive(Clone, Copy)]
struct BufferSpan {
    bucket: u32,
    pos: usize,
    end: usize,
}

struct Buffers<'d> {
    compression: u8,
    buckets: Vec<Bucket<'d>>,
    spans: Vec<BufferSpan>,
}

impl Buffers<'_> {
    /// The unread bytes of buffer `index`.
    fn rest(&mut self, index: u32) -> Result<&[u8], Malformed> {
        let span = self.spans[index as usize];
        let bucket = &mut self.buckets[span.bucket as usize];
        if bucket.decoded.is_none() {
            let decoded = decompressed(self.compression, bucket.compressed, bucket.offset)?;
            // The buffer lengths were checked against the size the bucket declared, which
            // decompression enforces; an uncompressed bucket is its own size.
            debug_assert!(decoded.len() >= span.end);
            bucket.decoded = Some(decoded);
        }
        let decoded = bucket.decoded.as_deref().expect("decoded above");
        Ok(&decoded[span.pos..span.end])
    }

    /// The next `len` bytes of buffer `index`; `what` names the field for errors.
    fn take(&mut self, index: u32, len: usize, what: &str) -> Result<&[u8], Malformed> {
        let offset = self.bucket_offset(index);
        let available = self.rest(index)?.len();
        if len > available {
            return Err(error(
                offset,
                format_args!(
                    "buffer {index} ends before {what} ({len} bytes wanted, {available} left)"
                ),
            ));
        }
        self.spans[index as usize].pos += len;
        let span = self.spans[index as usize];
        let decoded = self.buckets[span.bucket as usize].decoded.as_deref();
        Ok(&decoded.expect("decoded by rest")[span.pos - len..span.pos])
    }

    fn bucket_offset(&self, index: u32) -> u64 {
        self.buckets[self.spans[index as usize].bucket as usize].offset
    }
}

struct ParsedChunk<'d> {
    nodes: Vec<Node>,
    first_node: u32,
    buffers: Buffers<'d>,
    /// The buffer holding the lengths of non-proto records (the last one), if any.
    nonproto_lengths: Option<u32>,
    transitions: Cow<'d, [u8]>,
    transitions_offset: u64,
    offset: u64,
    data_len: usize,
}

fn parse(data: &[u8], offset: u64) -> Result<ParsedChunk<'_>, Malformed> {
    let Some((&compression, _)) = data.split_first() else {
        return Err(error(offset, "no compression byte"));
    };
    if !matches!(compression, 0 | b'b' | b'z' | b's') {
        return Err(error(
            offset,
            format_args!("unknown compression type byte 0x{compression:02x}"),
        ));
    }
    let (header_len, prefix) = get_varint(&data[1..], offset + 1)
        .map_err(|e| error(e.offset, format_args!("header length: {}", e.what)))?;
    let header_start = 1 + prefix;
    if header_len > (data.len() - header_start) as u64 {
        return Err(error(
            offset + 1,
            format_args!(
                "header of {header_len} bytes overruns the chunk data ({} bytes)",
                data.len()
            ),
        ));
    }
    let header_end = header_start + header_len as usize;
    let header_offset = offset + header_start as u64;
    let header = decompressed(compression, &data[header_start..header_end], header_offset)?;
    let mut cursor = HeaderCursor {
        bytes: &header,
        pos: 0,
        offset: header_offset,
    };

    let num_buckets = cursor.count("bucket count")?;
    let num_buffers = cursor.count("buffer count")?;
    if num_buckets == 0 && num_buffers != 0 {
        return Err(cursor.fail(format_args!("{num_buffers} buffers but no bucket")));
    }
    let mut buckets = Vec::with_capacity(num_buckets);
    let mut bucket_start = header_end;
    for _ in 0..num_buckets {
        let len = cursor.varint64("bucket length")?;
        if len > (data.len() - bucket_start) as u64 {
            return Err(cursor.fail(format_args!(
                "a bucket of {len} bytes overruns the chunk data ({} bytes)",
                data.len()
            )));
        }
        let end = bucket_start + len as usize;
        buckets.push(Bucket {
            compressed: &data[bucket_start..end],
            offset: offset + bucket_start as u64,
            decoded: None,
        });
        bucket_start = end;
    }
    let spans = buffer_spans(&mut cursor, compression, &buckets, num_buffers)?;
    let buffers = Buffers {
        compression,
        buckets,
        spans,
    };

    let (nodes, has_nonproto) = parse_nodes(&mut cursor, num_buffers)?;
    let first_node = cursor.varint32("first node index")?;
    if first_node as usize >= nodes.len() {
        return Err(cursor.fail(format_args!(
            "first node {first_node}, the state machine has {} nodes",
            nodes.len()
        )));
    }
    if let Some(node) = implicit_loop(&nodes) {
        return Err(cursor.fail(format_args!(
            "node {node} is on a loop of implicit transitions"
        )));
    }
    if cursor.pos != header.len() {
        return Err(cursor.fail(format_args!(
            "{} bytes left after the state machine",
            header.len() - cursor.pos
        )));
    }
    let nonproto_lengths = if has_nonproto {
        if num_buffers == 0 {
            return Err(error(
                header_offset,
                "non-proto records but no buffer for their lengths",
            ));
        }
        Some(num_buffers as u32 - 1)
    } else {
        None
    };
    let transitions_offset = offset + bucket_start as u64;
    let transitions = decompressed(compression, &data[bucket_start..], transitions_offset)?;
    Ok(ParsedChunk {
        nodes,
        first_node,
        buffers,
        nonproto_lengths,
        transitions,
        transitions_offset,
        offset,
        data_len: data.len(),
    })
}

/// Reads the buffer lengths and places each buffer in its bucket: buffers fill bucket
/// after bucket, each bucket exactly to the decoded size it declares.
fn buffer_spans(
    cursor: &mut HeaderCursor<'_>,
    compression: u8,
    buckets: &[Bucket<'_>],
    num_buffers: usize,
) -> Result<Vec<BufferSpan>, Malformed> {
    let declared_size = |bucket: &Bucket<'_>| -> Result<u64, Malformed> {
        if compression == 0 {
            Ok(bucket.compressed.len() as u64)
        } else {
            get_varint(bucket.compressed, bucket.offset)
                .map(|(size, _)| size)
                .map_err(|e| error(e.offset, format_args!("bucket size: {}", e.what)))
        }
    };
    let mut spans = Vec::with_capacity(num_buffers);
    if buckets.is_empty() {
        return Ok(spans);
    }
    let mut bucket = 0usize;
    let mut remaining = declared_size(&buckets[0])?;
    let mut pos = 0u64;
    for index in 0..num_buffers {
        let len = cursor.varint64("buffer length")?;
        if len > remaining {
            return Err(cursor.fail(format_args!(
                "buffer {index} of {len} bytes does not fit in bucket {bucket} \
                 ({remaining} bytes left of its declared size)"
            )));
        }
        spans.push(BufferSpan {
            bucket: bucket as u32,
            pos: pos as usize,
            end: (pos + len) as usize,
        });
        remaining -= len;
        pos += len;
        while remaining == 0 && bucket + 1 < buckets.len() {
            bucket += 1;
            remaining = declared_size(&buckets[bucket])?;
            pos = 0;
        }
    }
    if bucket + 1 < buckets.len() || remaining != 0 {
        return Err(cursor.fail(format_args!(
            "the buffers fill {bucket} of {} buckets, {remaining} bytes left in the last",
            buckets.len()
        )));
    }
    Ok(spans)
}

/// Reads the state machine: tags, next-node indices, subtypes and buffer indices. Returns
/// the nodes and whether one of them is a non-proto record.
fn parse_nodes(
    cursor: &mut HeaderCursor<'_>,
    num_buffers: usize,
) -> Result<(Vec<Node>, bool), Malformed> {
    let size = cursor.count("state machine size")?;
    let mut tags = Vec::with_capacity(size);
    for _ in 0..size {
        tags.push(cursor.varint32("node tag")?);
    }
    let mut next_indices = Vec::with_capacity(size);
    for _ in 0..size {
        next_indices.push(cursor.varint32("next node index")?);
    }
    let num_subtypes = tags
        .iter()
        .filter(|&&tag| tag >= 8 && tag & 7 == VARINT)
        .count();
    let subtypes = cursor.bytes(num_subtypes, "subtypes")?.to_vec();
    let mut subtypes = subtypes.into_iter();
    let mut has_nonproto = false;
    let mut nodes = Vec::with_capacity(size);
    for (index, (&raw_tag, &next)) in tags.iter().zip(&next_indices).enumerate() {
        let mut node = Node {
            action: Action::NoOp,
            tag: [0; 6],
            tag_len: 0,
            buffer: 0,
            next: 0,
            implicit: false,
        };
        match raw_tag {
            NO_OP => {}
            NON_PROTO => {
                node.action = Action::NonProto;
                node.buffer = cursor.buffer_index(num_buffers)?;
                has_nonproto = true;
            }
            START_OF_SUBMESSAGE => node.action = Action::SubmessageStart,
            START_OF_MESSAGE => node.action = Action::MessageStart,
            _ => {
                let (tag, ends_submessage) = if raw_tag & 7 == SUBMESSAGE_END_WIRE_TYPE {
                    (
                        raw_tag - (SUBMESSAGE_END_WIRE_TYPE - LENGTH_DELIMITED),
                        true,
                    )
                } else {
                    (raw_tag, false)
                };
                if tag < 8 || tag & 7 > FIXED32 {
                    return Err(cursor.fail(format_args!("node {index}: invalid tag {raw_tag}")));
                }
                let mut varint = [0u8; 10];
                let tag_len = encode_varint(u64::from(tag), &mut varint);
                node.tag[..tag_len].copy_from_slice(&varint[..tag_len]);
                node.tag_len = tag_len as u8;
                let (action, reads_buffer) = match tag & 7 {
                    VARINT => {
                        let subtype = subtypes.next().expect("counted with the tags");
                        if subtype < VARINT_INLINE_0 {
                            (Action::Varint(subtype + 1), true)
                        } else if subtype <= VARINT_INLINE_MAX {
                            node.tag[tag_len] = subtype - VARINT_INLINE_0;
                            node.tag_len += 1;
                            (Action::CopyTag, false)
                        } else {
                            return Err(cursor.fail(format_args!(
                                "node {index}: invalid varint subtype {subtype}"
                            )));
                        }
                    }
                    FIXED32 => (Action::Fixed(4), true),
                    FIXED64 => (Action::Fixed(8), true),
                    LENGTH_DELIMITED if ends_submessage => (Action::SubmessageEnd, false),
                    LENGTH_DELIMITED => (Action::String, true),
                    START_GROUP | END_GROUP => (Action::CopyTag, false),
                    _ => unreachable!("wire type checked above"),
                };
                node.action = action;
                if reads_buffer {
                    node.buffer = cursor.buffer_index(num_buffers)?;
                }
            }
        }
        let size32 = size as u32;
        let (next, implicit) = if next >= size32 {
            (next - size32, true)
        } else {
            (next, false)
        };
        if next >= size32 {
            return Err(cursor.fail(format_args!(
                "node {index}: next node {next}, the state machine has {size} nodes"
            )));
        }
        node.next = next;
        node.implicit = implicit;
        nodes.push(node);
    }
    Ok((nodes, has_nonproto))
}

/// A node on a cycle of implicit transitions (which would run forever), if any.
fn implicit_loop(nodes: &[Node]) -> Option<usize> {
    let mut walk_of = vec![0u32; nodes.len()];
    for (start, walk) in (0..nodes.len()).zip(1u32..) {
        if walk_of[start] != 0 {
            continue;
        }
        walk_of[start] = walk;
        let mut node = start;
        while nodes[node].implicit {
            node = nodes[node].next as usize;
            if walk_of[node] == walk {
                return Some(node);
            }
            if walk_of[node] != 0 {
                break;
            }
            walk_of[node] = walk;
        }
    }
    None
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
        let (offset, transitions_offset) = (self.offset, self.transitions_offset);

        let mut node_index = self.first_node as usize;
        let mut pending = u8::from(self.nodes[node_index].implicit);
        let mut next_transition = 0usize;
        loop {
            let node = self.nodes[node_index];
            if node.action == Action::NoOp {
                no_ops += 1;
                if no_ops > max_no_ops {
                    return Err(error(
                        transitions_offset + next_transition as u64,
                        format_args!("more than {max_no_ops} no-op nodes in a row"),
                    ));
                }
            } else {
                no_ops = 0;
            }
            let tag = &node.tag[..node.tag_len as usize];
            match node.action {
                Action::NoOp => {}
                Action::CopyTag => out.prepend(tag.len(), offset)?.copy_from_slice(tag),
                Action::Varint(len) => {
                    let value = self.buffers.take(node.buffer, len as usize, "a varint")?;
                    let dest = out.prepend(tag.len() + value.len(), offset)?;
                    dest[..tag.len()].copy_from_slice(tag);
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
                    dest[..tag.len()].copy_from_slice(tag);
                    dest[tag.len()..].copy_from_slice(value);
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
                    dest[..tag.len()].copy_from_slice(tag);
                    dest[tag.len()..].copy_from_slice(value);
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
                    dest[..tag.len()].copy_from_slice(tag);
                    dest[tag.len()..].copy_from_slice(&varint[..len_len]);
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
