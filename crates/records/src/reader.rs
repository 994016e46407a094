//! Reading ArrayRecord files: random access by index, batches, ranges, and sequential reads
//! with read-ahead.
//!
//! Invariants: the file is memory-mapped once and never copied as a whole; the index (one
//! entry per chunk, from the footer) is validated at open so every later lookup stays inside
//! the file; each chunk read verifies both hashes and every size it decodes, so a damaged
//! chunk yields an error naming its offset while other chunks stay readable; decoded
//! records are borrowed from the decoded chunk (or the map itself when uncompressed) until
//! the caller copies them out.

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memmap2::Mmap;
use prost::Message;
use rayon::prelude::*;

use crate::block::{
    locate_chunk, read_chunk, read_chunk_in, remaining_in_block, verify_in_place, ChunkInPlace,
    ChunkType, RawChunk, BLOCK_SIZE,
};
use crate::compression::Dictionary;
use crate::error::{io_error, Error, Malformed, Result};
use crate::footer::{
    ArrayRecordFooter, RiegeliFooterMetadata, RiegeliPostscript, ARRAY_RECORD_MAGIC,
};
use crate::options::ReaderOptions;
use crate::simple_chunk::{self, DecodedValues};
use crate::transposed_chunk;

/// The first 64 bytes of every Riegeli file: block header and signature chunk.
const SIGNATURE: [u8; 64] = [
    0x83, 0xaf, 0x70, 0xd1, 0x0d, 0x88, 0x4a, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0, //
    0x40, 0, 0, 0, 0, 0, 0, 0, 0x91, 0xba, 0xc2, 0x3c, 0x92, 0x87, 0xe1, 0xa9, //
    0, 0, 0, 0, 0, 0, 0, 0, 0xe1, 0x9f, 0x13, 0xc0, 0xe9, 0xb1, 0xc3, 0x72, //
    0x73, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// Whether `bytes` start as a Riegeli file (so an ArrayRecord file) does: block header and
/// signature chunk.
pub fn is_record_file(bytes: &[u8]) -> bool {
    bytes.starts_with(&SIGNATURE)
}

/// Largest record [`Reader::known_record_size`] reports.
const MAX_PREALLOCATED_RECORD: u64 = 64 << 20;

/// Decoded chunks kept for reads of single records from chunks of several records.
const CACHED_CHUNKS: usize = 16;

#[derive(Debug, Clone, Copy)]
struct ChunkEntry {
    offset: u64,
    num_records: u64,
    decoded_size: u64,
}

enum Values {
    /// Inside the file map (uncompressed data within one block).
    Mapped {
        map: Arc<Mmap>,
        start: usize,
        len: usize,
    },
    /// A decompressed buffer, or chunk data gathered across block headers (then the values
    /// are the part from `start` on, which saves copying them out).
    Owned { buffer: Vec<u8>, start: usize },
}

/// One decoded data chunk; its values buffer goes to [`SPARE_BUFFERS`] when the chunk is
/// dropped.
struct DecodedChunk {
    values: Values,
    ends: Vec<u64>,
}

impl Drop for DecodedChunk {
    fn drop(&mut self) {
        if let Values::Owned { buffer, .. } = &mut self.values {
            SPARE_BUFFERS.give_back(std::mem::take(buffer));
        }
    }
}

/// Most bytes of spare buffers the process keeps.
const SPARE_BYTES: usize = 32 << 20;
/// Most spare buffers the process keeps (each `take` looks through them).
const SPARE_COUNT: usize = 64;
/// Smaller buffers are not kept: the allocator hands those out from its heap without
/// faulting pages in, and a `group_size:1` read would fill the pool with one-record buffers.
const SMALLEST_SPARE: usize = 64 << 10;

/// Values buffers of dropped chunks, for the next chunks to decode into, shared by every
/// reader of the process.
///
/// Why: a sequential or range read decodes chunk after chunk into buffers of hundreds of
/// KiB and drops them soon after. Fresh from the allocator, such buffers come back from the
/// kernel page by page (glibc maps them above its mmap threshold and trims its heaps below
/// it): about 6,300 minor page faults per sequential pass over the records study's
/// `group_size:256,zstd:3` file, 4,500 of them in filling the 16 MiB read-ahead of a newly
/// opened reader. Shared by all readers, as a data loader opens reader after reader; at
/// most [`SPARE_BYTES`] are kept, the price of never faulting them in again.
static SPARE_BUFFERS: SpareBuffers = SpareBuffers {
    buffers: Mutex::new(Vec::new()),
};

#[derive(Default)]
struct SpareBuffers {
    buffers: Mutex<Vec<Vec<u8>>>,
}

impl SpareBuffers {
    /// An empty buffer, with room for `size` bytes if a spare one fits: one not more than
    /// twice as large (or 64 KiB larger), so a small chunk does not hold a large buffer.
    fn take(&self, size: u64) -> Vec<u8> {
        let size = size as usize;
        let fits = |capacity: usize| {
            capacity >= size
                && capacity <= size.saturating_mul(2).max(size.saturating_add(64 << 10))
        };
        let mut buffers = self.lock();
        match buffers.iter().position(|buffer| fits(buffer.capacity())) {
            Some(index) => buffers.swap_remove(index),
            None => Vec::new(),
        }
    }

    /// Keeps `buffer` (of at least [`SMALLEST_SPARE`] bytes) for a later chunk while the
    /// spare buffers number under [`SPARE_COUNT`] and hold under [`SPARE_BYTES`].
    fn give_back(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() < SMALLEST_SPARE {
            return;
        }
        let mut buffers = self.lock();
        let kept: usize = buffers.iter().map(Vec::capacity).sum();
        if buffers.len() < SPARE_COUNT && kept + buffer.capacity() <= SPARE_BYTES {
            buffer.clear();
            buffers.push(buffer);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.buffers
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl DecodedChunk {
    fn values(&self) -> &[u8] {
        match &self.values {
            Values::Mapped { map, start, len } => &map[*start..*start + *len],
            Values::Owned { buffer, start } => &buffer[*start..],
        }
    }

    fn record(&self, index: usize) -> &[u8] {
        let start = if index == 0 {
            0
        } else {
            self.ends[index - 1] as usize
        };
        &self.values()[start..self.ends[index] as usize]
    }
}

/// Records decoded by a batch or range read, borrowed from their decoded chunks.
pub struct RecordBatch {
    chunks: Vec<Arc<DecodedChunk>>,
    /// (position in `chunks`, record index within that chunk) per requested record.
    items: Vec<(u32, u32)>,
}

impl RecordBatch {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the batch holds no record.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The `position`-th record of the batch.
    ///
    /// # Panics
    /// If `position >= self.len()`.
    pub fn get(&self, position: usize) -> &[u8] {
        let (chunk, record) = self.items[position];
        self.chunks[chunk as usize].record(record as usize)
    }

    /// The records in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.items.len()).map(|position| self.get(position))
    }

    /// Owned copies of the records.
    pub fn to_vecs(&self) -> Vec<Vec<u8>> {
        self.iter().map(<[u8]>::to_vec).collect()
    }
}

/// What `records info` shows about a file.
#[derive(Debug, Clone)]
pub struct FileInfo {
    pub path: PathBuf,
    pub file_size: u64,
    pub num_records: u64,
    pub num_chunks: u64,
    /// Records per chunk: the writer's `group_size` option, or, for files without options,
    /// the common count when every chunk but the last holds the same number.
    pub group_size: Option<u64>,
    /// Name of the compression of the first data chunk ("zstd", "brotli", "snappy",
    /// "uncompressed", "zstd+dictionary"), or "none" for a file without records.
    pub compression: String,
    /// The writer's option string from the footer.
    pub writer_options: String,
    /// Sum of the record sizes.
    pub decoded_size: u64,
    /// Where the footer chunk begins.
    pub footer_offset: u64,
    /// Size of the shared zstd dictionary (shapeshift extension), if any.
    pub zstd_dictionary_size: Option<u64>,
    /// Whether the first data chunk is a transposed one (written with `transpose:true`).
    pub transposed: bool,
}

/// An open ArrayRecord file. Reads take `&self` and may run from many threads at once.
pub struct Reader {
    path: PathBuf,
    map: Arc<Mmap>,
    chunks: Vec<ChunkEntry>,
    /// `record_starts[c]` is the index of chunk `c`'s first record; one extra entry at the end.
    record_starts: Vec<u64>,
    group_size: Option<u64>,
    writer_options: String,
    footer_offset: u64,
    dictionary: Option<Arc<Dictionary>>,
    options: ReaderOptions,
    cache: Mutex<VecDeque<(usize, Arc<DecodedChunk>)>>,
}

impl Reader {
    /// Opens `path` with default options.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be opened or mapped; [`Error::Corrupt`] with the
    /// offset if it is not an ArrayRecord file or its postscript or footer is damaged.
    pub fn open(path: impl AsRef<Path>) -> Result<Reader> {
        Reader::open_with_options(path, ReaderOptions::default())
    }

    /// Opens `path` with reader options (see [`ReaderOptions::parse`]).
    ///
    /// # Errors
    /// As [`Reader::open`].
    pub fn open_with_options(path: impl AsRef<Path>, options: ReaderOptions) -> Result<Reader> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|error| io_error(&path, error))?;
        let size = file
            .metadata()
            .map_err(|error| io_error(&path, error))?
            .len();
        let corrupt = |offset: u64, what: String| Malformed::new(offset, what).in_file(&path);
        if size < BLOCK_SIZE {
            let mut start = [0u8; SIGNATURE.len()];
            let starts_as_record_file = size >= SIGNATURE.len() as u64
                && std::io::Read::read_exact(&mut &file, &mut start).is_ok()
                && is_record_file(&start);
            let what = if starts_as_record_file {
                format!("the file is truncated: {size} bytes, but an ArrayRecord file has at least 65536 (its last block holds the postscript)")
            } else {
                format!(
                    "file of {size} bytes is too short for an ArrayRecord file (at least 65536)"
                )
            };
            return Err(corrupt(size, what));
        }
        // SAFETY: the map is read-only; a file changed underneath by another process can
        // yield wrong bytes, which the chunk hashes then report as corruption.
        let map = unsafe { Mmap::map(&file) }.map_err(|error| io_error(&path, error))?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Random);
        if map[..SIGNATURE.len()] != SIGNATURE {
            return Err(corrupt(
                0,
                "wrong magic: the file does not start with a Riegeli signature".into(),
            ));
        }
        if size % BLOCK_SIZE != 0 {
            return Err(corrupt(
                size,
                format!("file size {size} is not a multiple of 65536: the file is truncated or incomplete"),
            ));
        }
        let map = Arc::new(map);
        let postscript_offset = size - BLOCK_SIZE;
        let footer_offset = read_postscript(&map, postscript_offset).map_err(|m| {
            // A file cut at a block boundary ends in some other block than the postscript's.
            Malformed::new(
                m.offset,
                format!(
                    "{} (no postscript in the last block: the file is truncated or incomplete)",
                    m.what
                ),
            )
            .in_file(&path)
        })?;
        let (metadata, entries) = read_footer(&map, footer_offset).map_err(|m| m.in_file(&path))?;
        let mut chunks = Vec::with_capacity(entries.len());
        let mut record_starts = Vec::with_capacity(entries.len() + 1);
        let mut total = 0u64;
        let mut previous_end = SIGNATURE.len() as u64;
        for entry in &entries {
            let chunk = ChunkEntry {
                offset: entry.chunk_offset.unwrap_or(0),
                num_records: entry.num_records.unwrap_or(0),
                decoded_size: entry.decoded_data_size.unwrap_or(0),
            };
            if chunk.offset < previous_end || chunk.offset >= footer_offset {
                return Err(corrupt(
                    footer_offset,
                    format!(
                        "footer entry {} points at byte {}, outside the data section {previous_end}..{footer_offset}",
                        chunks.len(),
                        chunk.offset
                    ),
                ));
            }
            previous_end = chunk.offset + 1;
            record_starts.push(total);
            total = total
                .checked_add(chunk.num_records)
                .ok_or_else(|| corrupt(footer_offset, "record counts overflow".into()))?;
            chunks.push(chunk);
        }
        record_starts.push(total);
        let array_metadata = metadata.array_record_metadata.unwrap_or_default();
        if array_metadata.num_records.unwrap_or(total) != total {
            return Err(corrupt(
                footer_offset,
                format!(
                    "footer declares {} records, its chunk entries add up to {total}",
                    array_metadata.num_records.unwrap_or(0)
                ),
            ));
        }
        let writer_options = array_metadata.writer_options.unwrap_or_default();
        let dictionary = if writer_options
            .split(',')
            .any(|option| option.starts_with("zstd_dictionary"))
        {
            Some(Arc::new(
                read_dictionary(&map).map_err(|m| m.in_file(&path))?,
            ))
        } else {
            None
        };
        let group_size = uniform_group_size(&chunks);
        Ok(Reader {
            path,
            map,
            chunks,
            record_starts,
            group_size,
            writer_options,
            footer_offset,
            dictionary,
            options,
            cache: Mutex::new(VecDeque::with_capacity(CACHED_CHUNKS)),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of records in the file.
    pub fn num_records(&self) -> u64 {
        *self
            .record_starts
            .last()
            .expect("one entry more than chunks")
    }

    /// The writer's option string stored in the footer.
    pub fn writer_options(&self) -> &str {
        &self.writer_options
    }

    /// The reader options in use.
    pub fn options(&self) -> &ReaderOptions {
        &self.options
    }

    /// Summary of the file for `records info`.
    pub fn info(&self) -> FileInfo {
        let first_chunk = self
            .chunks
            .first()
            .map(|chunk| read_chunk(&self.map, chunk.offset));
        let transposed =
            matches!(&first_chunk, Some(Ok(raw)) if raw.header.chunk_type == ChunkType::Transposed);
        let compression = match first_chunk {
            None => "none".to_string(),
            Some(raw) => match raw {
                Ok(raw) => match raw.data.first() {
                    Some(0) => "uncompressed".into(),
                    Some(b'z') => "zstd".into(),
                    Some(b'b') => "brotli".into(),
                    Some(b's') => "snappy".into(),
                    Some(b'Z') => "zstd+dictionary".into(),
                    Some(other) => format!("unknown (0x{other:02x})"),
                    None => "unknown (empty chunk)".into(),
                },
                Err(_) => "unknown (first chunk is corrupt)".into(),
            },
        };
        // The writer's declared group size; files without options fall back to the layout.
        let declared_group_size = self
            .writer_options
            .split(',')
            .find_map(|option| option.strip_prefix("group_size:")?.parse::<u64>().ok());
        FileInfo {
            path: self.path.clone(),
            file_size: self.map.len() as u64,
            num_records: self.num_records(),
            num_chunks: self.chunks.len() as u64,
            group_size: declared_group_size.or(self.group_size),
            compression,
            writer_options: self.writer_options.clone(),
            decoded_size: self.chunks.iter().map(|chunk| chunk.decoded_size).sum(),
            footer_offset: self.footer_offset,
            zstd_dictionary_size: self.dictionary.as_ref().map(|d| d.raw.len() as u64),
            transposed,
        }
    }

    pub(crate) fn out_of_range(&self, index: u64) -> Error {
        Error::OutOfRange {
            path: self.path.clone(),
            index,
            num_records: self.num_records(),
        }
    }

    /// (chunk, record within chunk) of record `index`, which must be in range.
    pub(crate) fn locate(&self, index: u64) -> (usize, usize) {
        if let Some(group_size) = self.group_size {
            return ((index / group_size) as usize, (index % group_size) as usize);
        }
        let chunk = self.record_starts.partition_point(|&start| start <= index) - 1;
        (chunk, (index - self.record_starts[chunk]) as usize)
    }

    /// Chunk `chunk_index` read, hash-verified and checked against its footer entry.
    pub(crate) fn read_verified_chunk(&self, chunk_index: usize) -> Result<RawChunk<'_>> {
        self.read_verified_chunk_in(chunk_index, None)
    }

    /// [`Reader::read_verified_chunk`] gathering data that spans blocks into `scratch`.
    pub(crate) fn read_verified_chunk_in<'a>(
        &'a self,
        chunk_index: usize,
        scratch: Option<&'a mut Vec<u8>>,
    ) -> Result<RawChunk<'a>> {
        let entry = self.chunks[chunk_index];
        let raw =
            read_chunk_in(&self.map, entry.offset, scratch).map_err(|m| m.in_file(&self.path))?;
        self.check_entry(&raw.header, entry)?;
        Ok(raw)
    }

    /// Chunk `chunk_index` verified where it lies, if its data spans blocks and is stored
    /// uncompressed (compression byte 0): header checked against the footer entry, data
    /// hashed piece by piece without being gathered, since its records will be copied
    /// straight from the blocks. `Ok(None)`, with nothing verified, for any other chunk.
    pub(crate) fn verify_stored_spanning_chunk(
        &self,
        chunk_index: usize,
    ) -> Result<Option<ChunkInPlace>> {
        let entry = self.chunks[chunk_index];
        let in_file = |malformed: Malformed| malformed.in_file(&self.path);
        let (header, data_offset) = locate_chunk(&self.map, entry.offset).map_err(in_file)?;
        // Data longer than the rest of its block has at least two bytes, inside the file
        // (checked by `locate_chunk`); the first is the compression byte.
        if header.data_size <= remaining_in_block(data_offset)
            || header.chunk_type != ChunkType::Simple
            || self.map[data_offset as usize] != 0
        {
            return Ok(None);
        }
        self.check_entry(&header, entry)?;
        verify_in_place(&self.map, entry.offset, header, data_offset)
            .map(Some)
            .map_err(in_file)
    }

    /// The file's bytes (for gathering chunk data verified before).
    pub(crate) fn file_bytes(&self) -> &[u8] {
        &self.map
    }

    /// The footer's (records, decoded bytes) of chunk `chunk_index`.
    pub(crate) fn chunk_counts(&self, chunk_index: usize) -> (u64, u64) {
        let entry = self.chunks[chunk_index];
        (entry.num_records, entry.decoded_size)
    }

    /// Maps the pages of chunks `first..=last` in one call before a bulk read: the map is
    /// opened for random access (no read-around, one fault per page), which suits single
    /// reads; reads that cover a run of chunks densely populate it instead (a hint: errors
    /// are ignored, reads fault pages in as usual).
    pub(crate) fn populate_chunks(&self, first: usize, last: usize) {
        #[cfg(target_os = "linux")]
        {
            let Some(start) = self.chunks.get(first).map(|chunk| chunk.offset) else {
                return;
            };
            let end = self
                .chunks
                .get(last + 1)
                .map_or(self.footer_offset, |chunk| chunk.offset)
                .min(self.map.len() as u64);
            if end > start {
                let _ = self.map.advise_range(
                    memmap2::Advice::PopulateRead,
                    start as usize,
                    (end - start) as usize,
                );
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (first, last);
    }

    /// Number of data chunks.
    pub(crate) fn num_chunks(&self) -> usize {
        self.chunks.len()
    }

    /// Index of the first record of chunk `chunk_index` (`num_chunks()` gives the end).
    pub(crate) fn chunk_first_record(&self, chunk_index: usize) -> u64 {
        self.record_starts[chunk_index]
    }

    /// The shared zstd dictionary (extension), if the file has one.
    pub(crate) fn dictionary(&self) -> Option<&Dictionary> {
        self.dictionary.as_deref()
    }

    fn decode_chunk(&self, chunk_index: usize) -> Result<Arc<DecodedChunk>> {
        let entry = self.chunks[chunk_index];
        let raw = self.read_verified_chunk(chunk_index)?;
        if raw.header.chunk_type == ChunkType::Transposed {
            let decoded = transposed_chunk::decode(
                &raw.data,
                raw.data_offset,
                entry.num_records,
                entry.decoded_size,
                SPARE_BUFFERS.take(entry.decoded_size),
            )
            .map_err(|m| m.in_file(&self.path))?;
            return Ok(Arc::new(DecodedChunk {
                values: Values::Owned {
                    buffer: decoded.buffer,
                    start: decoded.start,
                },
                ends: decoded.ends,
            }));
        }
        let decoded = simple_chunk::decode(
            &raw.data,
            raw.data_offset,
            entry.num_records,
            entry.decoded_size,
            self.dictionary.as_deref(),
            SPARE_BUFFERS.take(entry.decoded_size),
        )
        .map_err(|m| m.in_file(&self.path))?;
        let values = match decoded.values {
            DecodedValues::Owned(values) => Values::Owned {
                buffer: values,
                start: 0,
            },
            DecodedValues::InData(range) => match raw.data {
                std::borrow::Cow::Borrowed(_) => Values::Mapped {
                    map: Arc::clone(&self.map),
                    start: raw.data_offset as usize + range.start,
                    len: range.len(),
                },
                // Uncompressed values run to the end of the chunk data.
                std::borrow::Cow::Owned(data) => Values::Owned {
                    buffer: data,
                    start: range.start,
                },
            },
        };
        Ok(Arc::new(DecodedChunk {
            values,
            ends: decoded.ends,
        }))
    }

    fn check_entry(&self, header: &crate::block::ChunkHeader, entry: ChunkEntry) -> Result<()> {
        if header.chunk_type != ChunkType::Simple && header.chunk_type != ChunkType::Transposed {
            return Err(Malformed::new(
                entry.offset,
                format!(
                    "expected a simple ('r') or transposed ('t') chunk, found chunk type 0x{:02x}",
                    header.chunk_type.byte()
                ),
            )
            .in_file(&self.path));
        }
        if header.num_records != entry.num_records || header.decoded_data_size != entry.decoded_size
        {
            return Err(Malformed::new(
                entry.offset,
                format!(
                    "chunk holds {} records of {} bytes, the footer says {} records of {} bytes",
                    header.num_records,
                    header.decoded_data_size,
                    entry.num_records,
                    entry.decoded_size
                ),
            )
            .in_file(&self.path));
        }
        Ok(())
    }

    fn decode_chunk_cached(&self, chunk_index: usize) -> Result<Arc<DecodedChunk>> {
        {
            let cache = self
                .cache
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            if let Some((_, chunk)) = cache.iter().find(|(index, _)| *index == chunk_index) {
                return Ok(Arc::clone(chunk));
            }
        }
        let chunk = self.decode_chunk(chunk_index)?;
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if cache.len() >= CACHED_CHUNKS {
            cache.pop_back();
        }
        cache.push_front((chunk_index, Arc::clone(&chunk)));
        Ok(chunk)
    }

    /// The size of record `index` when it can be known without decoding (its chunk holds
    /// only it); used to allocate the destination of [`Reader::read_into`].
    pub fn known_record_size(&self, index: u64) -> Option<u64> {
        if index >= self.num_records() {
            return None;
        }
        let (chunk, _) = self.locate(index);
        let entry = self.chunks[chunk];
        // Above this the caller's buffer would be sized by an unverified claim; such
        // records go through the bounded decoding path instead.
        (entry.num_records == 1 && entry.decoded_size <= MAX_PREALLOCATED_RECORD)
            .then_some(entry.decoded_size)
    }

    /// Decodes record `index` into `out`, whose length must be
    /// [`Reader::known_record_size`]: no intermediate buffer for one-record chunks.
    ///
    /// # Errors
    /// [`Error::OutOfRange`]; [`Error::Corrupt`] if the chunk is damaged; [`Error::State`]
    /// if `out` has the wrong length.
    pub fn read_into(&self, index: u64, out: &mut [u8]) -> Result<()> {
        if index >= self.num_records() {
            return Err(self.out_of_range(index));
        }
        let (chunk_index, within) = self.locate(index);
        let entry = self.chunks[chunk_index];
        if entry.num_records != 1 {
            return self.read_with(index, |record| {
                if record.len() == out.len() {
                    out.copy_from_slice(record);
                    Ok(())
                } else {
                    Err(self.wrong_length(index, record.len(), out.len()))
                }
            })?;
        }
        debug_assert_eq!(within, 0);
        if entry.decoded_size != out.len() as u64 {
            return Err(self.wrong_length(index, entry.decoded_size as usize, out.len()));
        }
        let raw = read_chunk(&self.map, entry.offset).map_err(|m| m.in_file(&self.path))?;
        self.check_entry(&raw.header, entry)?;
        if raw.header.chunk_type == ChunkType::Transposed {
            let decoded = transposed_chunk::decode(
                &raw.data,
                raw.data_offset,
                1,
                out.len() as u64,
                Vec::new(),
            )
            .map_err(|m| m.in_file(&self.path))?;
            out.copy_from_slice(&decoded.buffer[decoded.start..]);
            return Ok(());
        }
        simple_chunk::decode_single_into(
            &raw.data,
            raw.data_offset,
            self.dictionary.as_deref(),
            out,
        )
        .map_err(|m| m.in_file(&self.path))
    }

    fn wrong_length(&self, index: u64, actual: usize, given: usize) -> Error {
        Error::State {
            path: self.path.clone(),
            what: format!("record {index} has {actual} bytes, the destination {given}"),
        }
    }

    /// Calls `f` with record `index`, borrowed from its decoded chunk.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] or [`Error::Corrupt`].
    pub fn read_with<R>(&self, index: u64, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        if index >= self.num_records() {
            return Err(self.out_of_range(index));
        }
        let (chunk_index, within) = self.locate(index);
        let chunk = if self.chunks[chunk_index].num_records > 1 {
            self.decode_chunk_cached(chunk_index)?
        } else {
            self.decode_chunk(chunk_index)?
        };
        Ok(f(chunk.record(within)))
    }

    /// Record `index` as an owned vector.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] or [`Error::Corrupt`].
    pub fn read(&self, index: u64) -> Result<Vec<u8>> {
        if let Some(size) = self.known_record_size(index) {
            let mut out = vec![0u8; size as usize];
            self.read_into(index, &mut out)?;
            return Ok(out);
        }
        self.read_with(index, <[u8]>::to_vec)
    }

    fn decode_many(
        &self,
        chunk_indices: &[usize],
        parallel: bool,
    ) -> Result<Vec<Arc<DecodedChunk>>> {
        if parallel && self.options.parallel() && chunk_indices.len() > 1 {
            chunk_indices
                .par_iter()
                .with_min_len(64)
                .map(|&chunk| self.decode_chunk(chunk))
                .collect()
        } else {
            chunk_indices
                .iter()
                .map(|&chunk| self.decode_chunk(chunk))
                .collect()
        }
    }

    /// The records at `indices` (any order, repeats allowed), chunks decoded in parallel.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for the first bad index; [`Error::Corrupt`] if a needed chunk
    /// is damaged.
    pub fn read_batch(&self, indices: &[u64]) -> Result<RecordBatch> {
        let num_records = self.num_records();
        let mut located: Vec<(usize, u32, u32)> = Vec::with_capacity(indices.len());
        for (position, &index) in indices.iter().enumerate() {
            if index >= num_records {
                return Err(self.out_of_range(index));
            }
            let (chunk, within) = self.locate(index);
            located.push((chunk, within as u32, position as u32));
        }
        located.sort_unstable_by_key(|&(chunk, _, _)| chunk);
        let mut unique: Vec<usize> = Vec::new();
        let mut items = vec![(0u32, 0u32); indices.len()];
        for &(chunk, within, position) in &located {
            if unique.last() != Some(&chunk) {
                unique.push(chunk);
            }
            items[position as usize] = ((unique.len() - 1) as u32, within);
        }
        let chunks = self.decode_many(&unique, true)?;
        Ok(RecordBatch { chunks, items })
    }

    /// Records `begin..end`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if `end` exceeds the record count or `begin > end`;
    /// [`Error::Corrupt`] if a needed chunk is damaged.
    pub fn read_range(&self, begin: u64, end: u64) -> Result<RecordBatch> {
        self.read_range_with(begin, end, true)
    }

    /// [`Reader::read_range`], decoding on the calling thread alone unless `parallel`.
    pub(crate) fn read_range_with(
        &self,
        begin: u64,
        end: u64,
        parallel: bool,
    ) -> Result<RecordBatch> {
        if end > self.num_records() {
            return Err(self.out_of_range(end.saturating_sub(1).max(begin)));
        }
        if begin > end {
            return Err(self.out_of_range(begin));
        }
        if begin == end {
            return Ok(RecordBatch {
                chunks: Vec::new(),
                items: Vec::new(),
            });
        }
        let (first_chunk, first_within) = self.locate(begin);
        let (last_chunk, _) = self.locate(end - 1);
        let unique: Vec<usize> = (first_chunk..=last_chunk).collect();
        self.populate_chunks(first_chunk, last_chunk);
        let chunks = self.decode_many(&unique, parallel)?;
        let mut items = Vec::with_capacity((end - begin) as usize);
        let mut slot = 0usize;
        let mut within = first_within;
        for _ in begin..end {
            while within >= self.chunks[first_chunk + slot].num_records as usize {
                slot += 1;
                within = 0;
            }
            items.push((slot as u32, within as u32));
            within += 1;
        }
        Ok(RecordBatch { chunks, items })
    }

    /// Every record of the file.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if a chunk is damaged.
    pub fn read_all(&self) -> Result<RecordBatch> {
        self.read_range(0, self.num_records())
    }
}

fn uniform_group_size(chunks: &[ChunkEntry]) -> Option<u64> {
    let first = chunks.first()?.num_records;
    let (last, middle) = chunks.split_last()?;
    let uniform = first > 0
        && middle.iter().all(|chunk| chunk.num_records == first)
        && last.num_records >= 1
        && last.num_records <= first;
    uniform.then_some(first)
}

fn decode_records(map: &[u8], offset: u64, what: &str) -> Result<Vec<Vec<u8>>, Malformed> {
    let raw = read_chunk(map, offset)?;
    if raw.header.chunk_type != ChunkType::Simple {
        return Err(Malformed::new(
            offset,
            format!(
                "the {what} is not a simple chunk (type 0x{:02x})",
                raw.header.chunk_type.byte()
            ),
        ));
    }
    let decoded = simple_chunk::decode(
        &raw.data,
        raw.data_offset,
        raw.header.num_records,
        raw.header.decoded_data_size,
        None,
        Vec::new(),
    )?;
    let values: &[u8] = match &decoded.values {
        DecodedValues::InData(range) => &raw.data[range.clone()],
        DecodedValues::Owned(values) => values,
    };
    Ok(split_records(values, &decoded.ends))
}

/// Concatenated records cut at their end offsets, as vectors.
pub(crate) fn split_records(values: &[u8], ends: &[u64]) -> Vec<Vec<u8>> {
    let mut start = 0usize;
    ends.iter()
        .map(|&end| {
            let record = values[start..end as usize].to_vec();
            start = end as usize;
            record
        })
        .collect()
}

fn read_postscript(map: &[u8], offset: u64) -> Result<u64, Malformed> {
    let records = decode_records(map, offset, "postscript")?;
    for record in &records {
        if let Ok(postscript) = RiegeliPostscript::decode(record.as_slice()) {
            if postscript.magic == Some(ARRAY_RECORD_MAGIC) {
                let footer_offset = postscript.footer_offset.unwrap_or(u64::MAX);
                if footer_offset >= offset {
                    return Err(Malformed::new(
                        offset,
                        format!("postscript points at byte {footer_offset}, past the footer's possible end"),
                    ));
                }
                return Ok(footer_offset);
            }
        }
    }
    Err(Malformed::new(
        offset,
        "postscript has no record with ArrayRecord's magic number: not an ArrayRecord file",
    ))
}

fn read_footer(
    map: &[u8],
    offset: u64,
) -> Result<(RiegeliFooterMetadata, Vec<ArrayRecordFooter>), Malformed> {
    let records = decode_records(map, offset, "footer")?;
    let Some((first, rest)) = records.split_first() else {
        return Err(Malformed::new(offset, "footer chunk holds no records"));
    };
    let metadata = RiegeliFooterMetadata::decode(first.as_slice()).map_err(|error| {
        Malformed::new(offset, format!("footer metadata does not parse: {error}"))
    })?;
    let Some(array_metadata) = &metadata.array_record_metadata else {
        return Err(Malformed::new(
            offset,
            "footer metadata lacks array_record_metadata",
        ));
    };
    if array_metadata.version.unwrap_or(0) != 1 {
        return Err(Malformed::new(
            offset,
            format!(
                "unsupported ArrayRecord version {:?}",
                array_metadata.version
            ),
        ));
    }
    if array_metadata.num_chunks.unwrap_or(0) != rest.len() as u64 {
        return Err(Malformed::new(
            offset,
            format!(
                "footer declares {} chunks but holds {} entries",
                array_metadata.num_chunks.unwrap_or(0),
                rest.len()
            ),
        ));
    }
    let entries = rest
        .iter()
        .enumerate()
        .map(|(position, record)| {
            ArrayRecordFooter::decode(record.as_slice()).map_err(|error| {
                Malformed::new(
                    offset,
                    format!("footer entry {position} does not parse: {error}"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((metadata, entries))
}

fn read_dictionary(map: &[u8]) -> Result<Dictionary, Malformed> {
    let offset = SIGNATURE.len() as u64;
    let raw = read_chunk(map, offset)?;
    if raw.header.chunk_type != ChunkType::ZstdDictionary {
        return Err(Malformed::new(
            offset,
            "the writer options announce a zstd dictionary but no dictionary chunk follows the signature",
        ));
    }
    Ok(Dictionary::new(raw.data.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::SpareBuffers;

    #[test]
    fn a_given_back_buffer_is_taken_again_empty_by_a_chunk_it_fits() {
        let spare = SpareBuffers::default();
        let mut buffer = Vec::with_capacity(400_000);
        buffer.extend_from_slice(b"stale bytes");
        let address = buffer.as_ptr();
        spare.give_back(buffer);
        let taken = spare.take(380_000);
        assert_eq!(taken.as_ptr(), address);
        assert!(taken.is_empty());
        assert!(
            spare.take(380_000).capacity() == 0,
            "a buffer is handed out once"
        );
    }

    #[test]
    fn buffers_far_larger_or_smaller_than_a_chunk_are_not_taken() {
        let spare = SpareBuffers::default();
        spare.give_back(Vec::with_capacity(1 << 20));
        assert_eq!(
            spare.take(1500).capacity(),
            0,
            "a small chunk would hold 1 MiB"
        );
        assert_eq!(spare.take(2 << 20).capacity(), 0, "too small for the chunk");
        assert!(spare.take(600_000).capacity() >= 1 << 20);
    }

    #[test]
    fn small_buffers_are_not_kept_and_the_count_is_bounded() {
        let spare = SpareBuffers::default();
        for _ in 0..1000 {
            spare.give_back(Vec::with_capacity(1500));
        }
        assert!(
            spare.lock().is_empty(),
            "one-record buffers are left to the allocator"
        );
        for _ in 0..1000 {
            spare.give_back(Vec::with_capacity(super::SMALLEST_SPARE));
        }
        assert_eq!(spare.lock().len(), super::SPARE_COUNT);
    }

    #[test]
    fn spare_buffers_stay_under_their_byte_budget() {
        let spare = SpareBuffers::default();
        for _ in 0..40 {
            spare.give_back(Vec::with_capacity(1 << 20));
        }
        let kept: usize = spare.lock().iter().map(Vec::capacity).sum();
        assert!(kept <= super::SPARE_BYTES, "{kept} bytes kept");
        assert!(kept >= super::SPARE_BYTES - (1 << 20));
    }
}
