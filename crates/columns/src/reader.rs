//! Reading a column: validated metadata up front, then whole-column decode, single values and
//! sorted multi-row `take` that decodes only what it must.

use std::mem::MaybeUninit;

use crate::bytes::ByteReader;
use crate::error::{corrupt, Error, Result};
use crate::layout::{self, BlockEntry, Metadata};
use crate::scheme::shared_dictionary::SharedEntries;
use crate::scheme::{self, Encoding};
use crate::value::{ColumnValue, ValueType};

/// A random-access `take` beats decoding the block when it reads fewer than 1 in this many
/// of the block's values (a bit-packed `get` costs about as much as decoding 16 values).
const GATHER_RATIO: usize = 16;

/// An encoded column over any byte buffer (`Vec<u8>`, `&[u8]`, a memory map, ...).
#[derive(Debug)]
pub struct Column<B: AsRef<[u8]> = Vec<u8>> {
    bytes: B,
    metadata: Metadata,
}

impl<B: AsRef<[u8]>> Column<B> {
    /// Opens a column, validating the header, block table and every block's checksum.
    ///
    /// # Errors
    /// `Truncated`, `Corrupt` or `Checksum` naming the byte offset of the first problem.
    pub fn open(bytes: B) -> Result<Self> {
        let column = Self::open_without_block_checksums(bytes)?;
        let data = column.bytes.as_ref();
        let verify = |region: &'static str, start: usize, end: usize, stored: u32| {
            let computed = layout::checksum(&data[start..end]);
            if computed != stored {
                return Err(Error::Checksum {
                    region,
                    offset: start,
                    stored,
                    computed,
                });
            }
            Ok(())
        };
        if let Some(shared) = &column.metadata.shared {
            verify(
                "shared dictionary",
                shared.start,
                shared.end,
                shared.checksum,
            )?;
        }
        for block in &column.metadata.blocks {
            verify("block", block.start, block.end, block.checksum)?;
        }
        Ok(column)
    }

    /// Like `open` but trusts the block checksums (the metadata checksum is still checked).
    /// Decoders stay memory-safe and report corrupt blocks as errors; this exists so tests
    /// can feed them hostile blocks.
    ///
    /// # Errors
    /// As `open`, except block checksum mismatches.
    #[doc(hidden)]
    pub fn open_without_block_checksums(bytes: B) -> Result<Self> {
        let metadata = layout::parse(bytes.as_ref())?;
        let data = bytes.as_ref();
        for (index, block) in metadata.blocks.iter().enumerate() {
            let tag = data.get(block.start).copied();
            if block.start == block.end || tag != Some(block.encoding.tag()) {
                return Err(corrupt(
                    block.start,
                    format!("block {index} does not start with its table tag"),
                ));
            }
        }
        Ok(Column { bytes, metadata })
    }

    /// The value type stored.
    pub fn value_type(&self) -> ValueType {
        self.metadata.value_type
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.metadata.value_count
    }

    /// Whether the column holds no values.
    pub fn is_empty(&self) -> bool {
        self.metadata.value_count == 0
    }

    /// Values per block (the last block may hold fewer).
    pub fn block_size(&self) -> usize {
        1 << self.metadata.block_log2
    }

    /// Number of blocks.
    pub fn block_count(&self) -> usize {
        self.metadata.blocks.len()
    }

    /// Encoded size in bytes.
    pub fn nbytes(&self) -> usize {
        self.bytes.as_ref().len()
    }

    /// The encoding of block `index` (`None` past the end).
    pub fn block_encoding(&self, index: usize) -> Option<Encoding> {
        self.metadata.blocks.get(index).map(|b| b.encoding)
    }

    /// How many blocks use each encoding (encodings with no blocks omitted), in tag order.
    pub fn composition(&self) -> Vec<(Encoding, usize)> {
        Encoding::ALL
            .iter()
            .filter_map(|&e| {
                let count = self.metadata.composition[e.tag() as usize] as usize;
                (count > 0).then_some((e, count))
            })
            .collect()
    }

    /// The writer's target: `"smaller"`, `"balanced"`, `"faster"` or `"baseline"`.
    pub fn target_name(&self) -> &'static str {
        match self.metadata.target_code {
            0 => "smaller",
            1 => "balanced",
            2 => "faster",
            layout::BASELINE_TARGET => "baseline",
            _ => "unknown",
        }
    }

    fn check_type<T: ColumnValue>(&self) -> Result<()> {
        if T::VALUE_TYPE != self.metadata.value_type {
            return Err(Error::TypeMismatch {
                stored: self.metadata.value_type.name(),
                requested: T::VALUE_TYPE.name(),
            });
        }
        Ok(())
    }

    fn block_values(&self, index: usize) -> usize {
        let size = self.block_size();
        (self.len() - index * size).min(size)
    }

    fn block_reader(&self, block: &BlockEntry) -> ByteReader<'_> {
        ByteReader::of_version(
            &self.bytes.as_ref()[block.start..block.end],
            block.start,
            self.metadata.version,
        )
    }

    /// The column's shared dictionary (none for most columns), decoded on first use.
    fn shared_entries<T: ColumnValue>(&self) -> Result<SharedEntries<'_, T>> {
        match &self.metadata.shared {
            None => Ok(SharedEntries::none()),
            Some(place) => SharedEntries::parse(
                &self.bytes.as_ref()[place.start..place.end],
                place.start,
                self.metadata.version,
                place.entries,
            ),
        }
    }

    fn decode_block<T: ColumnValue>(
        &self,
        index: usize,
        out: &mut [T],
        shared: &mut SharedEntries<'_, T>,
    ) -> Result<()> {
        scheme::decode(self.block_reader(&self.metadata.blocks[index]), out, shared)
    }

    /// Decodes every value into `out` (`out.len()` must equal `len()`).
    ///
    /// # Errors
    /// `TypeMismatch`, `InvalidOption` for a wrong output length, or a decoding error.
    pub fn decode_into<T: ColumnValue>(&self, out: &mut [T]) -> Result<()> {
        self.check_type::<T>()?;
        if out.len() != self.len() {
            return Err(Error::InvalidOption(format!(
                "output holds {} values, the column {}",
                out.len(),
                self.len()
            )));
        }
        let mut shared = self.shared_entries::<T>()?;
        for (index, chunk) in out.chunks_mut(self.block_size()).enumerate() {
            self.decode_block(index, chunk, &mut shared)?;
        }
        Ok(())
    }

    /// Decodes every value into uninitialised memory (`out.len()` must equal `len()`), for
    /// example a freshly allocated numpy array, and returns it initialised. Saves the pass that
    /// zeroes a fresh buffer (page faults and a memset: about a third of a fast decode).
    ///
    /// # Errors
    /// As `decode_into`; on error the contents of `out` are unspecified (possibly still
    /// uninitialised), which is why only the `Ok` path hands out an initialised view.
    pub fn decode_into_uninit<'o, T: ColumnValue>(
        &self,
        out: &'o mut [MaybeUninit<T>],
    ) -> Result<&'o mut [T]> {
        // SAFETY: `T` is a plain integer or float (every bit pattern valid), so the view only
        // matters once read. Every scheme's decoder writes each slot of its output before it
        // reads that slot, and returns `Ok` only after writing all of them (pco's progress and
        // run coverage are checked); `decode_into` returns `Ok` only when every block
        // succeeded, and only then is the view handed out.
        let values: &'o mut [T] =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<T>(), out.len()) };
        self.decode_into(values)?;
        Ok(values)
    }

    /// Decodes the whole column.
    ///
    /// # Errors
    /// `TypeMismatch` or a decoding error.
    pub fn decode<T: ColumnValue>(&self) -> Result<Vec<T>> {
        let mut out: Vec<T> = Vec::with_capacity(self.len());
        self.decode_into_uninit(&mut out.spare_capacity_mut()[..self.len()])?;
        // SAFETY: `decode_into_uninit` returned Ok, so all `len()` values are written.
        unsafe { out.set_len(self.len()) };
        Ok(out)
    }

    /// Value at `index`; reads only that value when the block's encoding allows
    /// (bit-packed, byte-packed, constant, dictionary, ...), else decodes its block.
    ///
    /// # Errors
    /// `TypeMismatch`, `IndexOutOfRange` or a decoding error.
    pub fn get<T: ColumnValue>(&self, index: usize) -> Result<T> {
        let mut out = [MaybeUninit::<T>::uninit()];
        Ok(self.take_into_uninit(&[index], &mut out)?[0])
    }

    /// Values at `indices` (non-decreasing, repeats allowed).
    ///
    /// # Errors
    /// `TypeMismatch`, `UnsortedIndices`, `IndexOutOfRange` or a decoding error.
    pub fn take<T: ColumnValue>(&self, indices: &[usize]) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.take_into(indices, &mut out)?;
        Ok(out)
    }

    /// Appends the values at `indices` (non-decreasing) to `out`.
    ///
    /// # Errors
    /// As `take`; on error `out` is unchanged.
    pub fn take_into<T: ColumnValue>(&self, indices: &[usize], out: &mut Vec<T>) -> Result<()> {
        out.reserve(indices.len());
        let start = out.len();
        self.take_into_uninit(indices, &mut out.spare_capacity_mut()[..indices.len()])?;
        // SAFETY: `take_into_uninit` returned Ok, so the `indices.len()` slots after `start`
        // are written.
        unsafe { out.set_len(start + indices.len()) };
        Ok(())
    }

    /// Writes the values at `indices` (non-decreasing, repeats allowed) into uninitialised
    /// memory of the same length (for example a fresh numpy array) and returns it initialised.
    ///
    /// The indices are checked once (sorted: one branch-free pass; in range: the last one),
    /// grouped per block with one binary search per block, and turned into in-block `u32`
    /// positions; each random-access block then runs its scheme's batched `take` kernel
    /// straight into `out`. A block asked for more than 1 in `GATHER_RATIO` of its values, or
    /// whose encoding has no random access (pco, delta, LZ4, zstd), is decoded once into a
    /// scratch buffer and picked from.
    ///
    /// # Errors
    /// `TypeMismatch`, `InvalidOption` for a wrong output length, `UnsortedIndices`,
    /// `IndexOutOfRange` or a decoding error; on error the contents of `out` are unspecified.
    pub fn take_into_uninit<'o, T: ColumnValue>(
        &self,
        indices: &[usize],
        out: &'o mut [MaybeUninit<T>],
    ) -> Result<&'o mut [T]> {
        self.check_type::<T>()?;
        if out.len() != indices.len() {
            return Err(Error::InvalidOption(format!(
                "output holds {} values, {} indices were given",
                out.len(),
                indices.len()
            )));
        }
        check_sorted(indices)?;
        if let Some(&last) = indices.last() {
            if last >= self.len() {
                return Err(Error::IndexOutOfRange {
                    index: last as u64,
                    len: self.len() as u64,
                });
            }
        }
        // SAFETY: as in `decode_into_uninit`: `T` is a plain integer or float; every scheme's
        // take kernel (and the decode-and-pick path) writes each slot of its part of the
        // output before reading it, the blocks' parts tile the output, and the initialised
        // view is handed out only when every block succeeded.
        let values: &'o mut [T] =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<T>(), out.len()) };
        self.take_sorted(indices, values)?;
        Ok(values)
    }

    /// The take itself, for sorted indices below `len()`.
    fn take_sorted<T: ColumnValue>(&self, indices: &[usize], out: &mut [T]) -> Result<()> {
        let log2 = self.metadata.block_log2;
        let mut shared = self.shared_entries::<T>()?;
        let mut scratch: Vec<T> = Vec::new();
        let mut positions: Vec<u32> = Vec::new();
        let mut start = 0;
        while start < indices.len() {
            let block = indices[start] >> log2;
            let block_start = block << log2;
            let next_block_start = block_start + (1 << log2);
            // Sorted, so the block's rows end where the next block's begin (binary search).
            let end = start + indices[start..].partition_point(|&i| i < next_block_start);
            let count = self.block_values(block);
            let entry = &self.metadata.blocks[block];
            // In-block positions fit u32 (blocks hold at most 2^16 values); the conversion
            // is one vectorised pass and halves the kernels' index traffic.
            positions.clear();
            positions.extend(
                indices[start..end]
                    .iter()
                    .map(|&i| (i - block_start) as u32),
            );
            let target = &mut out[start..end];
            let taken = (end - start) * GATHER_RATIO < count
                && entry.encoding.random_access()
                && scheme::take(
                    self.block_reader(entry),
                    count,
                    &positions,
                    target,
                    &mut shared,
                )?;
            if !taken {
                scratch.resize(count, T::default());
                self.decode_block(block, &mut scratch[..count], &mut shared)?;
                for (slot, &p) in target.iter_mut().zip(&positions) {
                    *slot = scratch[p as usize];
                }
            }
            start = end;
        }
        Ok(())
    }
}

/// `Ok` when `indices` never decrease; the position is only searched for on failure.
fn check_sorted(indices: &[usize]) -> Result<()> {
    // A fold without an early exit, so it vectorises (`all` stops at the first failure and
    // stays a scalar loop: about a tenth of a 1% take on a chunked column).
    let descending = indices
        .windows(2)
        .fold(false, |seen, pair| seen | (pair[0] > pair[1]));
    if !descending {
        return Ok(());
    }
    let position = indices
        .windows(2)
        .position(|pair| pair[0] > pair[1])
        .map_or(0, |p| p + 1);
    Err(Error::UnsortedIndices {
        position,
        index: indices[position] as u64,
        previous: indices[position - 1] as u64,
    })
}
