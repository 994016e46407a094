//! Parsing a transposed chunk: its compression byte, header (buckets, buffers, state
//! machine) and where its buckets and transitions lie. See the parent module for the layout.

use std::borrow::Cow;

use super::error;
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
pub(super) enum Action {
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
pub(super) struct Node {
    pub action: Action,
    /// The varint tag, followed by the value byte of an inline varint.
    pub tag: [u8; 6],
    /// Bytes of `tag` that are written (the inline value byte included).
    pub tag_len: u8,
    pub buffer: u32,
    pub next: u32,
    pub implicit: bool,
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

pub(super) struct Buffers<'d> {
    compression: u8,
    buckets: Vec<Bucket<'d>>,
    spans: Vec<BufferSpan>,
}

impl Buffers<'_> {
    /// The unread bytes of buffer `index`.
    #[inline]
    pub fn rest(&mut self, index: u32) -> Result<&[u8], Malformed> {
        let span = self.spans[index as usize];
        let decoded = self.decoded_bucket(span.bucket)?;
        Ok(&decoded[span.pos..span.end])
    }

    /// The decoded bytes of bucket `index`, decompressed on first use.
    #[inline]
    fn decoded_bucket(&mut self, index: u32) -> Result<&[u8], Malformed> {
        if self.buckets[index as usize].decoded.is_none() {
            self.decompress_bucket(index)?;
        }
        let decoded = self.buckets[index as usize].decoded.as_deref();
        Ok(decoded.expect("decompressed above"))
    }

    #[cold]
    fn decompress_bucket(&mut self, index: u32) -> Result<(), Malformed> {
        let bucket = &mut self.buckets[index as usize];
        // Buffer lengths were checked against the size the bucket declares, which
        // decompression enforces (an uncompressed bucket is its own size).
        bucket.decoded = Some(decompressed(
            self.compression,
            bucket.compressed,
            bucket.offset,
        )?);
        Ok(())
    }

    /// The next `len` bytes of buffer `index`; `what` names the field for errors.
    #[inline]
    pub fn take(&mut self, index: u32, len: usize, what: &str) -> Result<&[u8], Malformed> {
        let span = self.spans[index as usize];
        if len > span.end - span.pos {
            return Err(self.ends_before(index, len, what));
        }
        self.spans[index as usize].pos += len;
        let decoded = self.decoded_bucket(span.bucket)?;
        Ok(&decoded[span.pos..span.pos + len])
    }

    #[cold]
    fn ends_before(&self, index: u32, len: usize, what: &str) -> Malformed {
        let span = self.spans[index as usize];
        error(
            self.bucket_offset(index),
            format_args!(
                "buffer {index} ends before {what} ({len} bytes wanted, {} left)",
                span.end - span.pos
            ),
        )
    }

    pub fn bucket_offset(&self, index: u32) -> u64 {
        self.buckets[self.spans[index as usize].bucket as usize].offset
    }
}

pub(super) struct ParsedChunk<'d> {
    pub nodes: Vec<Node>,
    pub first_node: u32,
    pub buffers: Buffers<'d>,
    /// The buffer holding the lengths of non-proto records (the last one), if any.
    pub nonproto_lengths: Option<u32>,
    pub transitions: Cow<'d, [u8]>,
    pub transitions_offset: u64,
    pub offset: u64,
    pub data_len: usize,
}

pub(super) fn parse(data: &[u8], offset: u64) -> Result<ParsedChunk<'_>, Malformed> {
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
