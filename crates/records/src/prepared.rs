//! Batch reads into buffers the caller allocates: the path of Python's `read(list)`,
//! `__getitems__` and `read_all`, where every record becomes a `bytes` object.
//!
//! Reading happens in two halves so that the caller can allocate each record's final home
//! in between, and records are then written straight into those homes:
//!
//! 1. [`Reader::prepare_batch`] / [`Reader::prepare_range`] read every needed chunk once
//!    (in parallel), verify its hashes and footer entry, decode its sizes buffer and check
//!    the declared values size against what the compressed payload can produce. Nothing is
//!    decompressed yet, but every record's length is known and trusted.
//! 2. [`PreparedBatch::fill`] decompresses each chunk once (in parallel): a one-record chunk
//!    straight into the destination of the first request for it, a larger chunk into a
//!    scratch buffer reused by the thread, from which its requested records are copied out.
//!
//! Invariants: every requested position maps to exactly one chunk slot, so the parallel
//! tasks of `fill` write disjoint destinations; a destination is written only after its
//! chunk verified, and `fill` fails as a whole if any needed chunk is damaged (the caller
//! then discards the destinations, so a half-written record is never returned).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;

use crate::block::{copy_logical, gather_logical, remaining_in_block, ChunkType};
use crate::error::{Error, Result};
use crate::reader::Reader;
use crate::simple_chunk::{self, PreparedSimpleChunk};
use crate::transposed_chunk;

/// Scratch buffers above this size are not kept by the thread after use.
const KEPT_SCRATCH_BYTES: usize = 16 << 20;

thread_local! {
    /// Decoded values of multi-record chunks land here before their records are copied out;
    /// reusing it spares an allocation (and its page faults) per chunk.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// Chunk data that spans blocks is gathered here (without its block headers), once to
    /// verify it while preparing and once more when it is decoded: a warm reused buffer
    /// instead of one fresh allocation per chunk kept from prepare to fill.
    static GATHER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Where a prepared chunk's (verified) data is.
enum ChunkData<'r> {
    /// Inside one block of the file.
    InFile(&'r [u8]),
    /// Spanning blocks: `size` logical bytes from file position `offset`, gathered again
    /// when decoded.
    SpansBlocks { offset: u64, size: u64 },
}

struct PreparedChunk<'r> {
    chunk_index: usize,
    data: ChunkData<'r>,
    simple: PreparedSimpleChunk,
}

impl PreparedChunk<'_> {
    fn record_range(&self, within: usize) -> std::ops::Range<usize> {
        let start = if within == 0 {
            0
        } else {
            self.simple.ends[within - 1] as usize
        };
        start..self.simple.ends[within] as usize
    }

    fn decoded_size(&self) -> usize {
        self.simple.ends.last().copied().unwrap_or(0) as usize
    }
}

/// Records of a batch or range whose chunks are verified and whose lengths are known, to be
/// decoded into caller-provided buffers with [`PreparedBatch::fill`].
pub struct PreparedBatch<'r> {
    reader: &'r Reader,
    chunks: Vec<PreparedChunk<'r>>,
    /// Per requested record: (chunk slot, record within that chunk).
    items: Vec<(u32, u32)>,
    /// Positions of the requested records grouped by chunk slot:
    /// `by_chunk[chunk_starts[slot]..chunk_starts[slot + 1]]`.
    by_chunk: Vec<u32>,
    chunk_starts: Vec<u32>,
}

/// Destination buffers of a run of requests in `by_chunk` order (entry `k` receives the
/// record of request `by_chunk[first + k]`), handed to the parallel tasks of
/// [`PreparedBatch::fill`] and [`PreparedBatch::fill_pipelined`].
struct Destinations {
    pointers: Vec<(*mut u8, usize)>,
}

// SAFETY: the pointers come from distinct `&mut [u8]` borrowed for the whole fill call, and
// each is written by exactly one task (the one of its chunk slot).
unsafe impl Sync for Destinations {}
// SAFETY: as above; a task that owns a `Destinations` is its only user.
unsafe impl Send for Destinations {}

impl Destinations {
    fn from_buffers(buffers: &mut [&mut [u8]]) -> Destinations {
        Destinations {
            pointers: buffers
                .iter_mut()
                .map(|buffer| (buffer.as_mut_ptr(), buffer.len()))
                .collect(),
        }
    }

    /// # Safety
    /// Entry `k` must belong to the calling task's chunk slot (no other task touches it).
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self, k: usize) -> &mut [u8] {
        let (pointer, len) = self.pointers[k];
        // SAFETY: see the type's invariant; the slice lies inside the caller's buffer.
        unsafe { std::slice::from_raw_parts_mut(pointer, len) }
    }
}

/// Requests per piece of [`PreparedBatch::fill_pipelined`]: enough work per pool task that
/// scheduling costs nothing, small enough that the first piece starts decoding at once.
const PIECE_RECORDS: usize = 512;
/// Decoded bytes per piece, for chunks of many records.
const PIECE_BYTES: usize = 1 << 20;

impl<'r> PreparedBatch<'r> {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the batch holds no record.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Length in bytes of the `position`-th record.
    ///
    /// # Panics
    /// If `position >= self.len()`.
    pub fn record_len(&self, position: usize) -> usize {
        let (slot, within) = self.items[position];
        self.chunks[slot as usize]
            .record_range(within as usize)
            .len()
    }

    /// Decodes the records into `outputs`, one buffer per record in request order, each
    /// exactly [`PreparedBatch::record_len`] bytes long. Chunks decode in parallel unless the
    /// reader's `max_parallelism` is 0 or 1.
    ///
    /// # Errors
    /// [`Error::State`] if `outputs` does not match the batch; [`Error::Corrupt`] if a
    /// chunk's payload is damaged (the outputs then hold partial data and must be dropped).
    pub fn fill(&self, outputs: &mut [&mut [u8]]) -> Result<()> {
        if outputs.len() != self.items.len() {
            return Err(Error::State {
                path: self.reader.path().to_path_buf(),
                what: format!(
                    "{} destination buffers for a batch of {} records",
                    outputs.len(),
                    self.items.len()
                ),
            });
        }
        for (position, output) in outputs.iter().enumerate() {
            let expected = self.record_len(position);
            if output.len() != expected {
                return Err(Error::State {
                    path: self.reader.path().to_path_buf(),
                    what: format!(
                        "destination {position} has {} bytes, the record {expected}",
                        output.len()
                    ),
                });
            }
        }
        // Destination of every request in `by_chunk` order, so each slot owns a run.
        let destinations = Destinations {
            pointers: self
                .by_chunk
                .iter()
                .map(|&position| {
                    let output = &mut outputs[position as usize];
                    (output.as_mut_ptr(), output.len())
                })
                .collect(),
        };
        let fill_slot = |slot: usize| {
            let run = self.chunk_starts[slot] as usize;
            self.fill_slot(slot, &destinations, run)
        };
        if self.reader.options().parallel() && self.chunks.len() > 1 {
            // Small chunks are cheap: hand them out in runs so scheduling does not dominate.
            let run = (4096 / self.items.len().div_ceil(self.chunks.len()).max(1)).clamp(1, 64);
            (0..self.chunks.len())
                .into_par_iter()
                .with_min_len(run)
                .try_for_each(fill_slot)
        } else {
            (0..self.chunks.len()).try_for_each(fill_slot)
        }
    }

    /// [`PreparedBatch::fill`] with the destinations created along the way: the records
    /// are taken in pieces of consecutive chunks; for each piece `allocate(positions, out)`
    /// runs on the calling thread and must push one buffer per request position it is given
    /// (of [`PreparedBatch::record_len`] bytes each, in the given order), and the piece then
    /// decodes on the pool while the caller allocates the next one. So the caller's serial
    /// work (in Python: creating the `bytes` objects) overlaps the parallel decoding instead
    /// of preceding it.
    ///
    /// # Errors
    /// The first error of `allocate` (nothing more is allocated; pieces already handed over
    /// still finish), [`Error::State`] (converted) if a buffer has the wrong length,
    /// [`Error::Corrupt`] (converted) if a chunk's payload is damaged. On error the buffers
    /// hold partial data and must be dropped.
    pub fn fill_pipelined<'o, E: From<Error>>(
        &self,
        mut allocate: impl FnMut(&[u32], &mut Vec<&'o mut [u8]>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let parallel = self.reader.options().parallel() && self.chunks.len() > 1;
        let failure: Mutex<Option<Error>> = Mutex::new(None);
        let failed = AtomicBool::new(false);
        let record_failure = |error: Error| {
            failed.store(true, Ordering::Relaxed);
            failure
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .get_or_insert(error);
        };
        let fill_piece = |slots: std::ops::Range<usize>, destinations: Destinations| {
            if failed.load(Ordering::Relaxed) {
                return;
            }
            let first = self.chunk_starts[slots.start] as usize;
            for slot in slots {
                let run = self.chunk_starts[slot] as usize - first;
                if let Err(error) = self.fill_slot(slot, &destinations, run) {
                    record_failure(error);
                    return;
                }
            }
        };
        let mut buffers: Vec<&'o mut [u8]> = Vec::new();
        let allocated = rayon::in_place_scope(|scope| -> std::result::Result<(), E> {
            let mut slot = 0;
            while slot < self.chunks.len() && !failed.load(Ordering::Relaxed) {
                let start = slot;
                let (mut records, mut bytes) = (0usize, 0usize);
                while slot < self.chunks.len() && records < PIECE_RECORDS && bytes < PIECE_BYTES {
                    records += (self.chunk_starts[slot + 1] - self.chunk_starts[slot]) as usize;
                    bytes += self.chunks[slot].decoded_size();
                    slot += 1;
                }
                let positions = &self.by_chunk
                    [self.chunk_starts[start] as usize..self.chunk_starts[slot] as usize];
                buffers.clear();
                allocate(positions, &mut buffers)?;
                self.check_buffers(positions, &buffers)?;
                let destinations = Destinations::from_buffers(&mut buffers);
                if parallel {
                    let fill_piece = &fill_piece;
                    scope.spawn(move |_| fill_piece(start..slot, destinations));
                } else {
                    fill_piece(start..slot, destinations);
                }
            }
            Ok(())
        });
        allocated?;
        match failure
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner())
        {
            Some(error) => Err(error.into()),
            None => Ok(()),
        }
    }

    fn check_buffers(&self, positions: &[u32], buffers: &[&mut [u8]]) -> Result<()> {
        let mismatch = |what: String| Error::State {
            path: self.reader.path().to_path_buf(),
            what,
        };
        if buffers.len() != positions.len() {
            return Err(mismatch(format!(
                "{} destination buffers for {} records",
                buffers.len(),
                positions.len()
            )));
        }
        for (&position, buffer) in positions.iter().zip(buffers) {
            let expected = self.record_len(position as usize);
            if buffer.len() != expected {
                return Err(mismatch(format!(
                    "destination {position} has {} bytes, the record {expected}",
                    buffer.len()
                )));
            }
        }
        Ok(())
    }

    /// Decodes chunk `slot` into its destinations: entry `run + j` of `destinations` for
    /// the `j`-th request of the slot.
    fn fill_slot(&self, slot: usize, destinations: &Destinations, run: usize) -> Result<()> {
        match self.chunks[slot].data {
            ChunkData::InFile(data) => self.fill_slot_from(slot, data, destinations, run),
            ChunkData::SpansBlocks { offset, .. }
                if self.chunks[slot].simple.stored_values_start().is_some() =>
            {
                self.fill_slot_stored(slot, offset, destinations, run);
                Ok(())
            }
            ChunkData::SpansBlocks { offset, size } => GATHER.with(|gather| {
                let mut gather = gather.borrow_mut();
                gather.clear();
                gather_logical(self.reader.file_bytes(), offset, size, &mut gather);
                let result = self.fill_slot_from(slot, &gather, destinations, run);
                if gather.capacity() > KEPT_SCRATCH_BYTES {
                    *gather = Vec::new();
                }
                result
            }),
        }
    }

    /// [`PreparedBatch::fill_slot`] for an uncompressed chunk spanning blocks, whose data
    /// begins at file position `data_start`: each requested record is copied straight from
    /// the file's blocks (verified while preparing), without gathering the chunk first —
    /// one copy of every byte instead of two.
    fn fill_slot_stored(
        &self,
        slot: usize,
        data_start: u64,
        destinations: &Destinations,
        run: usize,
    ) {
        let chunk = &self.chunks[slot];
        let values_start = chunk
            .simple
            .stored_values_start()
            .expect("called for stored values only") as u64;
        let positions =
            &self.by_chunk[self.chunk_starts[slot] as usize..self.chunk_starts[slot + 1] as usize];
        let file = self.reader.file_bytes();
        for (j, &position) in positions.iter().enumerate() {
            let range = chunk.record_range(self.items[position as usize].1 as usize);
            // SAFETY: entries `run..run + positions.len()` belong to this slot only.
            let destination = unsafe { destinations.get(run + j) };
            // The lengths were checked against the records before filling started.
            assert_eq!(destination.len(), range.len(), "destination length");
            copy_logical(
                file,
                data_start,
                values_start + range.start as u64,
                destination,
            );
        }
    }

    /// [`PreparedBatch::fill_slot`] with the chunk's data at hand.
    fn fill_slot_from(
        &self,
        slot: usize,
        data: &[u8],
        destinations: &Destinations,
        run: usize,
    ) -> Result<()> {
        let chunk = &self.chunks[slot];
        let positions =
            &self.by_chunk[self.chunk_starts[slot] as usize..self.chunk_starts[slot + 1] as usize];
        let reader = self.reader;
        let corrupt = |malformed: crate::error::Malformed| malformed.in_file(reader.path());
        // SAFETY (every `destinations.get` below): entries `run..run + positions.len()`
        // belong to this slot only.
        let destination = |j: usize| unsafe { destinations.get(run + j) };
        if let Some(values) = chunk.simple.values_in_place(data) {
            for (j, &position) in positions.iter().enumerate() {
                let within = self.items[position as usize].1 as usize;
                destination(j).copy_from_slice(&values[chunk.record_range(within)]);
            }
            return Ok(());
        }
        if chunk.simple.ends.len() == 1 {
            // The only record is the whole values buffer: decompress into the first
            // destination, copy it to repeated requests.
            let out = destination(0);
            chunk
                .simple
                .decompress_values_into(data, reader.dictionary(), out)
                .map_err(corrupt)?;
            for j in 1..positions.len() {
                destination(j).copy_from_slice(out);
            }
            return Ok(());
        }
        let scatter = |values: &[u8]| {
            for (j, &position) in positions.iter().enumerate() {
                let within = self.items[position as usize].1 as usize;
                destination(j).copy_from_slice(&values[chunk.record_range(within)]);
            }
        };
        let size = chunk.decoded_size();
        if size > KEPT_SCRATCH_BYTES {
            let mut values = vec![0u8; size];
            chunk
                .simple
                .decompress_values_into(data, reader.dictionary(), &mut values)
                .map_err(corrupt)?;
            scatter(&values);
            return Ok(());
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            if scratch.len() < size {
                scratch.resize(size, 0);
            }
            let values = &mut scratch[..size];
            chunk
                .simple
                .decompress_values_into(data, reader.dictionary(), values)
                .map_err(corrupt)?;
            scatter(values);
            Ok(())
        })
    }
}

impl Reader {
    /// First half of a batch read into caller buffers: the records at `indices` (any order,
    /// repeats allowed) located, their chunks read and verified (in parallel), their
    /// lengths known. See [`PreparedBatch::fill`].
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for the first bad index; [`Error::Corrupt`] if a needed chunk
    /// is damaged.
    pub fn prepare_batch(&self, indices: &[u64]) -> Result<PreparedBatch<'_>> {
        let num_records = self.num_records();
        let mut located: Vec<(u32, u32, u32)> = Vec::with_capacity(indices.len());
        for (position, &index) in indices.iter().enumerate() {
            if index >= num_records {
                return Err(self.out_of_range(index));
            }
            let (chunk, within) = self.locate(index);
            located.push((chunk as u32, within as u32, position as u32));
        }
        // Already in chunk order for ranges and sorted requests; otherwise group them.
        if !located.is_sorted_by_key(|&(chunk, _, _)| chunk) {
            located.sort_unstable_by_key(|&(chunk, _, _)| chunk);
        }
        let mut unique: Vec<usize> = Vec::new();
        let mut chunk_starts: Vec<u32> = Vec::new();
        let mut by_chunk = Vec::with_capacity(located.len());
        let mut items = vec![(0u32, 0u32); indices.len()];
        for (sorted_position, &(chunk, within, position)) in located.iter().enumerate() {
            if unique.last() != Some(&(chunk as usize)) {
                unique.push(chunk as usize);
                chunk_starts.push(sorted_position as u32);
            }
            items[position as usize] = ((unique.len() - 1) as u32, within);
            by_chunk.push(position);
        }
        chunk_starts.push(located.len() as u32);
        if let (Some(&first), Some(&last)) = (unique.first(), unique.last()) {
            // A batch that needs most chunks of its span maps the span at once.
            if unique.len() * 2 > last - first {
                self.populate_chunks(first, last);
            }
        }
        let chunks = self.prepare_chunks(&unique)?;
        Ok(PreparedBatch {
            reader: self,
            chunks,
            items,
            by_chunk,
            chunk_starts,
        })
    }

    /// [`Reader::prepare_batch`] for records `begin..end`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if `end` exceeds the record count or `begin > end`;
    /// [`Error::Corrupt`] if a needed chunk is damaged.
    pub fn prepare_range(&self, begin: u64, end: u64) -> Result<PreparedBatch<'_>> {
        if end > self.num_records() {
            return Err(self.out_of_range(end.saturating_sub(1).max(begin)));
        }
        if begin > end {
            return Err(self.out_of_range(begin));
        }
        let indices: Vec<u64> = (begin..end).collect();
        self.prepare_batch(&indices)
    }

    /// Prepares an uncompressed chunk whose data spans blocks without gathering its data:
    /// the hash runs over the blocks in place and only the sizes section is gathered
    /// (into `gather`); the records are copied straight from the blocks when filled. For
    /// `read_all` of an uncompressed `group_size:256` file this spares a copy of every
    /// byte. `Ok(None)` for other chunks, and for a damaged sizes section, which the
    /// general path then reports.
    fn prepare_stored_spanning(
        &self,
        chunk_index: usize,
        gather: &mut Vec<u8>,
    ) -> Result<Option<PreparedChunk<'_>>> {
        let Some(chunk) = self.verify_stored_spanning_chunk(chunk_index)? else {
            return Ok(None);
        };
        let file = self.file_bytes();
        let (offset, size) = (chunk.data_offset, chunk.header.data_size);
        gather.clear();
        gather_logical(
            file,
            offset,
            size.min(simple_chunk::STORED_HEAD_BYTES as u64),
            gather,
        );
        let sizes_end = match simple_chunk::sizes_section_end(gather, offset) {
            Ok(end) if end <= size => end,
            _ => return Ok(None),
        };
        gather.clear();
        gather_logical(file, offset, sizes_end, gather);
        let (num_records, decoded_size) = self.chunk_counts(chunk_index);
        let simple = simple_chunk::prepare_stored(gather, size, offset, num_records, decoded_size)
            .map_err(|malformed| malformed.in_file(self.path()))?;
        Ok(Some(PreparedChunk {
            chunk_index,
            data: ChunkData::SpansBlocks { offset, size },
            simple,
        }))
    }

    fn prepare_chunks(&self, chunk_indices: &[usize]) -> Result<Vec<PreparedChunk<'_>>> {
        let prepare = |&chunk_index: &usize| -> Result<PreparedChunk<'_>> {
            GATHER.with(|gather| {
                let mut gather = gather.borrow_mut();
                if let Some(chunk) = self.prepare_stored_spanning(chunk_index, &mut gather)? {
                    return Ok(chunk);
                }
                let raw = self.read_verified_chunk_in(chunk_index, Some(&mut gather))?;
                let (num_records, decoded_size) = self.chunk_counts(chunk_index);
                let simple = if raw.header.chunk_type == ChunkType::Transposed {
                    transposed_chunk::decode(
                        &raw.data,
                        raw.data_offset,
                        num_records,
                        decoded_size,
                        Vec::new(),
                    )
                    .map(|decoded| {
                        PreparedSimpleChunk::decoded(decoded.ends.clone(), decoded.into_values())
                    })
                } else {
                    simple_chunk::prepare(
                        &raw.data,
                        raw.data_offset,
                        num_records,
                        decoded_size,
                        self.dictionary(),
                    )
                }
                .map_err(|malformed| malformed.in_file(self.path()))?;
                let (offset, size) = (raw.data_offset, raw.header.data_size);
                drop(raw);
                if gather.capacity() > KEPT_SCRATCH_BYTES {
                    *gather = Vec::new();
                }
                // Verified: the bounds were checked against the file while reading.
                let data = if size <= remaining_in_block(offset) {
                    ChunkData::InFile(&self.file_bytes()[offset as usize..(offset + size) as usize])
                } else {
                    ChunkData::SpansBlocks { offset, size }
                };
                Ok(PreparedChunk {
                    chunk_index,
                    data,
                    simple,
                })
            })
        };
        if self.options().parallel() && chunk_indices.len() > 1 {
            chunk_indices
                .par_iter()
                .with_min_len(16)
                .map(prepare)
                .collect()
        } else {
            chunk_indices.iter().map(prepare).collect()
        }
    }
}

impl std::fmt::Debug for PreparedBatch<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PreparedBatch")
            .field("records", &self.items.len())
            .field(
                "chunks",
                &self
                    .chunks
                    .iter()
                    .map(|c| c.chunk_index)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}
