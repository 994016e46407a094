//! Writing ArrayRecord files.
//!
//! Three stages, so that the caller's thread (the interpreter's, in Python) does as little
//! as possible per record:
//! 1. The caller copies each record into the current [`Batch`]: one buffer of values and
//!    one of sizes for many chunks, reused from batch to batch (no allocation per record
//!    or per chunk).
//! 2. When about [`BATCH_BYTES`] of records wait, the batch goes to the thread pool, which
//!    encodes its chunks (in parallel; zstd/brotli contexts are reused per thread).
//! 3. A file appender thread takes the encoded batches strictly in submission order, lays
//!    the chunks out (block headers, padding), records their footer entries, writes the
//!    file and hands the emptied batch buffers back to the caller.
//!
//! At most `parallelism + 1` batches are in flight: a caller that gets further ahead waits
//! for the appender. Since batches are appended in submission order, the bytes of the file
//! do not depend on the thread count or on timing (`max_parallelism:1` encodes and appends
//! on the caller's thread, byte-identical). A panic while encoding is caught on the pool,
//! an I/O error ends the appender; either surfaces as an error of a later call (the writer
//! then refuses further records and `close` removes the temporary file). The file is written
//! under `<name>.incomplete` and renamed to its name only when [`Writer::close`] has written
//! the footer and the postscript, so a file under its final name is always complete.
//!
//! Layout produced (what array_record 0.8.6 produces for the same options): signature
//! chunk; [extension: dictionary chunk]; data chunks back to back; footer chunk (the file's
//! compression); padding to a block boundary; postscript chunk (uncompressed); padding to a
//! block boundary.

use std::fs::File;
use std::io::{IoSlice, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use prost::Message;
use rayon::prelude::*;

use crate::block::{
    append_chunk, append_padding_to_block_boundary, lay_out_chunk, ChunkHeader, ChunkType, LaidOut,
};
use crate::compression::{Compression, Compressor, Dictionary};
use crate::error::{io_error, Error, Result};
use crate::footer::{
    ArrayRecordFooter, ArrayRecordMetadata, RiegeliFooterMetadata, RiegeliPostscript,
    ARRAY_RECORD_MAGIC, ARRAY_RECORD_VERSION,
};
use crate::options::WriterOptions;
use crate::simple_chunk;

/// Records waiting before they are handed to the pool as one encoding batch.
const BATCH_BYTES: usize = 2 << 20;
/// Batch buffers up to this capacity are handed back for reuse; larger ones (a chunk far
/// above the batch size) are freed.
const REUSED_BATCH_BYTES: usize = 4 * BATCH_BYTES;
/// Encoded bytes gathered before a write to the file.
const OUTPUT_FLUSH_BYTES: usize = 8 << 20;
/// Records sampled to train a shared dictionary: up to this many bytes...
const DICTIONARY_SAMPLE_BYTES: usize = 8 << 20;
/// ...or this many records.
const DICTIONARY_SAMPLE_RECORDS: usize = 16_384;

/// Records of several chunks, back to back. Finished chunk `i` holds the records
/// `sizes[ends[i-1].0..ends[i].0]` whose values are `values[ends[i-1].1..ends[i].1]`;
/// records after the last end belong to the chunk still open.
#[derive(Default)]
struct Batch {
    values: Vec<u8>,
    sizes: Vec<u64>,
    /// Per finished chunk: (end in `sizes`, end in `values`).
    ends: Vec<(usize, usize)>,
}

impl Batch {
    fn with_capacity(bytes: usize) -> Batch {
        Batch {
            values: Vec::with_capacity(bytes),
            sizes: Vec::new(),
            ends: Vec::new(),
        }
    }

    fn finished_end(&self) -> (usize, usize) {
        self.ends.last().copied().unwrap_or((0, 0))
    }

    fn open_records(&self) -> usize {
        self.sizes.len() - self.finished_end().0
    }

    fn finished_bytes(&self) -> usize {
        self.finished_end().1
    }

    fn close_chunk(&mut self) {
        self.ends.push((self.sizes.len(), self.values.len()));
    }

    /// The finished chunks: (values, sizes) of each.
    fn chunks(&self) -> impl Iterator<Item = (&[u8], &[u64])> + '_ {
        let mut start = (0, 0);
        self.ends.iter().map(move |&end| {
            let chunk = (&self.values[start.1..end.1], &self.sizes[start.0..end.0]);
            start = end;
            chunk
        })
    }

    fn clear(&mut self) {
        self.values.clear();
        self.sizes.clear();
        self.ends.clear();
    }
}

enum DictionaryState {
    /// The extension is off.
    Off,
    /// Collecting samples: nothing is encoded until the dictionary is trained.
    Sampling { size: usize },
    /// Trained (or training failed and the file is written without one).
    Done,
}

/// An encoded batch: its chunks as (header, data) and the batch buffer for reuse, or the
/// message of a panic while encoding.
type EncodedBatch = std::result::Result<(Vec<(ChunkHeader, Vec<u8>)>, Batch), String>;

/// Alignment of the buffer address, file offset and length of a direct (`O_DIRECT`) write;
/// the largest logical block size of common devices.
const DIRECT_ALIGNMENT: usize = 4096;

/// `O_DIRECT` where we use it (Linux; elsewhere files are written through the page cache).
#[cfg(target_os = "linux")]
const O_DIRECT: Option<i32> = Some(libc::O_DIRECT);
#[cfg(not(target_os = "linux"))]
const O_DIRECT: Option<i32> = None;

/// Creates (truncates) the output file; with `direct_io`, in direct mode where the file
/// system allows it. Returns the file and whether it is in direct mode.
///
/// Buffered is the default, as in array_record: `write` returns once the bytes are in the
/// page cache and the kernel writes them back while the program goes on, so writing is as
/// fast as copying memory on any disk. A direct write hands the buffer to the device
/// without copying it but waits for the device: worth it only where taking page-cache pages
/// is the expensive part (on the lab's VM, pages free for a while cost ~5x a copy) or to
/// keep a large dataset out of the cache. The file's bytes are the same either way.
fn create_output_file(path: &Path, direct_io: bool) -> Result<(File, bool)> {
    #[cfg(unix)]
    if let (Some(flag), true) = (O_DIRECT, direct_io) {
        use std::os::unix::fs::OpenOptionsExt;
        match std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(flag)
            .open(path)
        {
            Ok(file) => return Ok((file, true)),
            // The file system does not do direct I/O: write through the page cache.
            Err(error) if error.kind() == std::io::ErrorKind::InvalidInput => {}
            Err(error) => return Err(io_error(path, error)),
        }
    }
    let file = File::create(path).map_err(|error| io_error(path, error))?;
    Ok((file, false))
}

/// Writes all of `slices` to `file` at its position (retrying interrupted and short
/// writes); returns the number of bytes written. A direct write the file system refuses
/// (`EINVAL`, also when a short direct write left the rest unaligned) turns direct I/O off
/// on the file, clears `direct`, and the rest goes through the page cache.
fn write_all_slices(
    file: &mut File,
    path: &Path,
    direct: &mut bool,
    mut slices: &mut [IoSlice<'_>],
) -> Result<u64> {
    let mut written = 0u64;
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => {
                return Err(io_error(
                    path,
                    std::io::Error::from(std::io::ErrorKind::WriteZero),
                ))
            }
            Ok(count) => {
                written += count as u64;
                IoSlice::advance_slices(&mut slices, count);
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) if *direct && error.kind() == std::io::ErrorKind::InvalidInput => {
                turn_off_direct_io(file, path)?;
                *direct = false;
            }
            Err(error) => return Err(io_error(path, error)),
        }
    }
    Ok(written)
}

/// Turns direct I/O off on the open file (Linux allows it through `F_SETFL`), so the rest
/// goes into the same file at the same offset whatever happened to its name.
fn turn_off_direct_io(file: &File, path: &Path) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor the caller owns, with integer arguments only.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT) } < 0 {
            return Err(io_error(path, std::io::Error::last_os_error()));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, path);
    Ok(())
}

/// An empty output buffer whose data (after `lead` unused bytes) starts at an address
/// aligned for direct writes; returns it with its `lead`.
fn aligned_output(capacity: usize) -> (Vec<u8>, usize) {
    let mut output: Vec<u8> = Vec::with_capacity(capacity + DIRECT_ALIGNMENT);
    let lead = output.as_ptr().align_offset(DIRECT_ALIGNMENT);
    output.resize(lead, 0);
    (output, lead)
}

/// The file being written: layout of chunks, footer entries, buffered output.
///
/// `output[lead..]` holds the file's bytes from `written` on, not yet written; the `lead`
/// bytes before them only put them at an address aligned for direct writes. In direct mode
/// only whole multiples of [`DIRECT_ALIGNMENT`] are written before the end (the rest stays
/// at the front of the buffer); the whole file is a multiple of 64 KiB, so the last write
/// is aligned too. If the file system refuses a direct write, direct I/O is turned off on
/// the open file and writing goes on at the same position.
struct FileAppender {
    file: File,
    direct: bool,
    temp_path: PathBuf,
    written: u64,
    output: Vec<u8>,
    lead: usize,
    footer: Vec<ArrayRecordFooter>,
    pad_to_block_boundary: bool,
    /// Buffered mode: the layout's own bytes (headers, padding) of the batch being written,
    /// and the batch's runs in file order as (source, range): [`MADE`] for `made`, else the
    /// index of the encoded chunk. Kept between batches for their capacity.
    made: Vec<u8>,
    runs: Vec<(usize, Range<usize>)>,
}

/// The source of a run that lies in [`FileAppender`]'s `made` bytes.
const MADE: usize = usize::MAX;

impl FileAppender {
    fn new(
        temp_path: PathBuf,
        pad_to_block_boundary: bool,
        direct_io: bool,
    ) -> Result<FileAppender> {
        let (file, direct) = create_output_file(&temp_path, direct_io)?;
        let (output, lead) = aligned_output(OUTPUT_FLUSH_BYTES + (1 << 20));
        Ok(FileAppender {
            file,
            direct,
            temp_path,
            written: 0,
            output,
            lead,
            footer: Vec::new(),
            pad_to_block_boundary,
            made: Vec::new(),
            runs: Vec::new(),
        })
    }

    /// File position after everything appended so far (written or still in `output`).
    fn position(&self) -> u64 {
        self.written + (self.output.len() - self.lead) as u64
    }

    /// Appends a chunk; returns where it begins.
    fn append_chunk(&mut self, header: &ChunkHeader, data: &[u8]) -> u64 {
        let begin = self.position();
        append_chunk(&mut self.output, begin, header, data);
        begin
    }

    fn append_padding_to_block_boundary(&mut self) {
        let position = self.position();
        append_padding_to_block_boundary(&mut self.output, position);
    }

    /// The footer's entry for the data chunk beginning at `offset`.
    fn add_footer_entry(&mut self, offset: u64, header: &ChunkHeader) {
        self.footer.push(ArrayRecordFooter {
            chunk_offset: Some(offset),
            decoded_data_size: Some(header.decoded_data_size),
            num_records: Some(header.num_records),
        });
    }

    fn append_data_chunks(&mut self, encoded: &[(ChunkHeader, Vec<u8>)]) -> Result<()> {
        if !self.direct {
            return self.write_data_chunks(encoded);
        }
        for (header, data) in encoded {
            let offset = self.append_chunk(header, data);
            if self.pad_to_block_boundary {
                self.append_padding_to_block_boundary();
            }
            self.add_footer_entry(offset, header);
            if self.output.len() - self.lead >= OUTPUT_FLUSH_BYTES {
                self.write_out(false)?;
            }
        }
        Ok(())
    }

    /// [`FileAppender::append_data_chunks`] in buffered mode: the chunks' data goes to the
    /// file straight from the encoded buffers (`writev`), so copying it into the page cache
    /// is the only copy; only the layout's own bytes are gathered first.
    fn write_data_chunks(&mut self, encoded: &[(ChunkHeader, Vec<u8>)]) -> Result<()> {
        // Whatever was appended before (the signature, a dictionary) goes first.
        self.write_out(true)?;
        let mut made = std::mem::take(&mut self.made);
        let mut runs = std::mem::take(&mut self.runs);
        made.clear();
        runs.clear();
        let push =
            |runs: &mut Vec<(usize, Range<usize>)>, source: usize, range: Range<usize>| match runs
                .last_mut()
            {
                Some((last, previous)) if *last == source && previous.end == range.start => {
                    previous.end = range.end
                }
                _ if range.is_empty() => {}
                _ => runs.push((source, range)),
            };
        let mut position = self.written;
        for (index, (header, data)) in encoded.iter().enumerate() {
            let begin = position;
            position = lay_out_chunk(begin, header, data.len(), |run| match run {
                LaidOut::Made(bytes) => {
                    let start = made.len();
                    made.extend_from_slice(bytes);
                    push(&mut runs, MADE, start..made.len());
                }
                LaidOut::Data(range) => push(&mut runs, index, range),
            });
            if self.pad_to_block_boundary {
                let start = made.len();
                position = append_padding_to_block_boundary(&mut made, position);
                push(&mut runs, MADE, start..made.len());
            }
            self.add_footer_entry(begin, header);
        }
        let mut slices: Vec<IoSlice<'_>> = runs
            .iter()
            .map(|(source, range)| {
                IoSlice::new(match *source {
                    MADE => &made[range.clone()],
                    chunk => &encoded[chunk].1[range.clone()],
                })
            })
            .collect();
        self.written += write_all_slices(
            &mut self.file,
            &self.temp_path,
            &mut self.direct,
            &mut slices,
        )?;
        drop(slices);
        debug_assert_eq!(self.written, position, "every laid-out byte written");
        self.made = made;
        self.runs = runs;
        Ok(())
    }

    /// Writes everything appended so far (at the end of the file).
    fn flush(&mut self) -> Result<()> {
        self.write_out(true)
    }

    /// Writes the buffered bytes: all of them if `everything`, else (in direct mode) the
    /// longest aligned prefix.
    fn write_out(&mut self, everything: bool) -> Result<()> {
        let pending = self.output.len() - self.lead;
        let length = if self.direct && !everything {
            pending / DIRECT_ALIGNMENT * DIRECT_ALIGNMENT
        } else {
            pending
        };
        if length == 0 {
            return Ok(());
        }
        if self.direct && length % DIRECT_ALIGNMENT != 0 {
            // Only a file that does not end on a block boundary (an abandoned one) gets
            // here; direct writes need whole units.
            self.leave_direct_mode()?;
        }
        if self.direct
            && self.output[self.lead..]
                .as_ptr()
                .align_offset(DIRECT_ALIGNMENT)
                != 0
        {
            // The buffer grew past its capacity (a chunk larger than the flush size) and
            // moved: put the data at an aligned address again.
            let (mut realigned, lead) = aligned_output(pending.max(OUTPUT_FLUSH_BYTES));
            realigned.extend_from_slice(&self.output[self.lead..]);
            self.output = realigned;
            self.lead = lead;
        }
        self.written += write_all_slices(
            &mut self.file,
            &self.temp_path,
            &mut self.direct,
            &mut [IoSlice::new(&self.output[self.lead..self.lead + length])],
        )?;
        self.output.copy_within(self.lead + length.., self.lead);
        self.output.truncate(self.output.len() - length);
        Ok(())
    }

    /// Turns direct I/O off on the open file (Linux allows it through `F_SETFL`), so the
    /// rest goes into the same file at the same offset whatever happened to its name.
    fn leave_direct_mode(&mut self) -> Result<()> {
        turn_off_direct_io(&self.file, &self.temp_path)?;
        self.direct = false;
        Ok(())
    }

    /// The appender thread: appends batches in the order their receivers arrive, hands the
    /// emptied batch buffers back, and returns itself (for the footer) once `jobs` closes.
    fn run(
        mut self,
        jobs: Receiver<Receiver<EncodedBatch>>,
        recycle: Sender<Batch>,
    ) -> std::result::Result<FileAppender, String> {
        for job in jobs {
            let (encoded, mut batch) = match job.recv() {
                Ok(Ok(done)) => done,
                Ok(Err(panic)) => return Err(format!("encoding a chunk failed: {panic}")),
                Err(_) => return Err("an encoding task vanished".to_string()),
            };
            self.append_data_chunks(&encoded)
                .map_err(|error| error.to_string())?;
            drop(encoded);
            if batch.values.capacity() <= REUSED_BATCH_BYTES {
                batch.clear();
                let _ = recycle.send(batch);
            }
        }
        Ok(self)
    }
}

/// Where encoded batches go.
enum Sink {
    /// Appended on the caller's thread (`max_parallelism:1`, before the first batch, and
    /// while closing).
    Here(FileAppender),
    /// Appended by the appender thread; `jobs` is bounded, which bounds the batches in flight.
    Thread {
        jobs: SyncSender<Receiver<EncodedBatch>>,
        appender: JoinHandle<std::result::Result<FileAppender, String>>,
    },
    /// Closed, failed or being switched.
    None,
}

/// Writes an ArrayRecord file record by record.
///
/// ```no_run
/// # fn main() -> shapeshift_records::Result<()> {
/// let mut writer = shapeshift_records::Writer::create("data.array_record", "group_size:1,zstd:3")?;
/// writer.write(b"first record")?;
/// writer.close()?;
/// # Ok(()) }
/// ```
pub struct Writer {
    path: PathBuf,
    temp_path: PathBuf,
    sink: Sink,
    options: WriterOptions,
    parallelism: usize,
    compressor: Compressor,
    batch: Batch,
    dictionary: DictionaryState,
    failure: Option<String>,
    /// Emptied batch buffers coming back from the appender thread. (In a mutex only so
    /// that the writer is `Sync`, as Python classes must be.)
    recycled: Mutex<Receiver<Batch>>,
    recycle: Sender<Batch>,
}

impl Writer {
    /// Creates `path` (through `<path>.incomplete`) with options in ArrayRecord's grammar.
    ///
    /// # Errors
    /// [`Error::Options`] for a bad option string, [`Error::Io`] if the file cannot be created.
    pub fn create(path: impl AsRef<Path>, options: &str) -> Result<Writer> {
        Writer::with_options(path, WriterOptions::parse(options)?)
    }

    /// Like [`Writer::create`] with parsed options.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be created.
    pub fn with_options(path: impl AsRef<Path>, options: WriterOptions) -> Result<Writer> {
        let path = path.as_ref().to_path_buf();
        let mut temp_name = path.file_name().unwrap_or_default().to_os_string();
        temp_name.push(".incomplete");
        let temp_path = path.with_file_name(temp_name);
        let parallelism = match options.max_parallelism {
            Some(threads) => threads.min(rayon::current_num_threads()).max(1),
            None => rayon::current_num_threads(),
        };
        let compressor = Compressor {
            compression: options.compression,
            window_log: options.effective_window_log(),
            dictionary: None,
        };
        let dictionary = match options.zstd_dictionary {
            Some(size) => DictionaryState::Sampling { size },
            None => DictionaryState::Off,
        };
        let mut appender = FileAppender::new(
            temp_path.clone(),
            options.pad_to_block_boundary,
            options.direct_io,
        )?;
        let signature = ChunkHeader::for_data(&[], ChunkType::Signature, 0, 0);
        appender.append_chunk(&signature, &[]);
        let (recycle, recycled) = channel();
        Ok(Writer {
            path,
            temp_path,
            sink: Sink::Here(appender),
            options,
            parallelism,
            compressor,
            batch: Batch::with_capacity(BATCH_BYTES + (64 << 10)),
            dictionary,
            failure: None,
            recycled: Mutex::new(recycled),
            recycle,
        })
    }

    /// The final path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the writer can still take records (not closed, no failure).
    pub fn is_open(&self) -> bool {
        !matches!(self.sink, Sink::None) && self.failure.is_none()
    }

    /// Appends one record.
    ///
    /// # Errors
    /// [`Error::State`] after `close` or a failure; [`Error::Io`] if writing fails.
    pub fn write(&mut self, record: &[u8]) -> Result<()> {
        if self.buffer_record(record)? {
            self.encode_buffered()?;
        }
        Ok(())
    }

    /// Copies `record` into the current batch without encoding anything; returns whether
    /// enough records wait that [`Writer::encode_buffered`] should run (bindings call the
    /// two halves separately to release their interpreter lock only for the heavy part).
    ///
    /// # Errors
    /// [`Error::State`] after `close` or a failure.
    pub fn buffer_record(&mut self, record: &[u8]) -> Result<bool> {
        self.check_open()?;
        self.batch.values.extend_from_slice(record);
        self.batch.sizes.push(record.len() as u64);
        if self.batch.open_records() as u64 >= self.options.group_size {
            self.batch.close_chunk();
            return Ok(self.encoding_due());
        }
        Ok(false)
    }

    fn encoding_due(&self) -> bool {
        match self.dictionary {
            DictionaryState::Sampling { .. } => {
                // Every finished chunk holds group_size records.
                let sampled = self.batch.ends.len() as u64 * self.options.group_size;
                self.batch.finished_bytes() >= DICTIONARY_SAMPLE_BYTES
                    || sampled >= DICTIONARY_SAMPLE_RECORDS as u64
            }
            _ => self.batch.finished_bytes() >= BATCH_BYTES || self.batch.ends.len() >= 65_536,
        }
    }

    /// Hands the finished chunks waiting in memory to the encoder (and writer).
    ///
    /// # Errors
    /// [`Error::State`] after `close` or a failure (including a failed encoding task or
    /// file write of an earlier batch); [`Error::Io`] if writing on this thread fails.
    pub fn encode_buffered(&mut self) -> Result<()> {
        self.check_open()?;
        let result = self.encode_pending();
        if let Err(error) = &result {
            self.failure.get_or_insert_with(|| error.to_string());
        }
        result
    }

    /// Writes the remaining records, the footer and the postscript, and renames the file to
    /// its final name. Closing twice is an error-free no-op.
    ///
    /// # Errors
    /// [`Error::Io`] if writing or renaming fails, [`Error::State`] if an earlier batch
    /// failed (the `.incomplete` file is then removed).
    pub fn close(&mut self) -> Result<()> {
        if matches!(self.sink, Sink::None) && self.failure.is_none() {
            return Ok(());
        }
        let result = self.check_open().and_then(|()| self.finish());
        if result.is_err() {
            self.abandon();
        }
        result
    }

    /// Stops the appender (if running), closes and removes the `.incomplete` file.
    fn abandon(&mut self) {
        let sink = std::mem::replace(&mut self.sink, Sink::None);
        if let Sink::Thread { jobs, appender } = sink {
            drop(jobs);
            let _ = appender.join();
        }
        let _ = std::fs::remove_file(&self.temp_path);
    }

    fn finish(&mut self) -> Result<()> {
        if self.batch.open_records() > 0 {
            self.batch.close_chunk();
        }
        self.encode_pending()?;
        let footer_chunk = self.footer_chunk_after_join()?;
        let mut appender = match std::mem::replace(&mut self.sink, Sink::None) {
            Sink::Here(appender) => appender,
            _ => unreachable!("footer_chunk_after_join leaves the appender here"),
        };
        let footer_offset = appender.append_chunk(&footer_chunk.0, &footer_chunk.1);
        appender.append_padding_to_block_boundary();
        let postscript = RiegeliPostscript {
            footer_offset: Some(footer_offset),
            magic: Some(ARRAY_RECORD_MAGIC),
        }
        .encode_to_vec();
        let records = [
            postscript.as_slice(),
            postscript.as_slice(),
            postscript.as_slice(),
        ];
        let (header, data) = simple_records_chunk(&records, &Compressor::uncompressed());
        appender.append_chunk(&header, &data);
        appender.append_padding_to_block_boundary();
        appender.flush()?;
        drop(appender);
        std::fs::rename(&self.temp_path, &self.path).map_err(|error| io_error(&self.path, error))
    }

    /// Waits for the appender thread (every batch written) and builds the footer chunk.
    fn footer_chunk_after_join(&mut self) -> Result<(ChunkHeader, Vec<u8>)> {
        let footer = &self.appender_here()?.footer;
        let num_records: u64 = footer
            .iter()
            .map(|entry| entry.num_records.unwrap_or(0))
            .sum();
        let num_chunks = footer.len() as u64;
        let entries: Vec<Vec<u8>> = footer.iter().map(Message::encode_to_vec).collect();
        let mut options = self.options.clone();
        if self.compressor.dictionary.is_none() {
            options.zstd_dictionary = None;
        }
        let metadata = RiegeliFooterMetadata {
            array_record_metadata: Some(ArrayRecordMetadata {
                version: Some(ARRAY_RECORD_VERSION),
                num_chunks: Some(num_chunks),
                num_records: Some(num_records),
                writer_options: Some(options.to_canonical_string(
                    options.recorded_max_parallelism.unwrap_or(self.parallelism),
                )),
            }),
        }
        .encode_to_vec();
        let mut records: Vec<&[u8]> = Vec::with_capacity(entries.len() + 1);
        records.push(&metadata);
        records.extend(entries.iter().map(Vec::as_slice));
        let plain = Compressor {
            dictionary: None,
            ..self.compressor.clone()
        };
        Ok(simple_records_chunk(&records, &plain))
    }

    /// The appender on this thread, after the appender thread (if any) finished every batch.
    fn appender_here(&mut self) -> Result<&mut FileAppender> {
        if let Sink::Thread { .. } = self.sink {
            let Sink::Thread { jobs, appender } = std::mem::replace(&mut self.sink, Sink::None)
            else {
                unreachable!()
            };
            drop(jobs);
            let joined = appender
                .join()
                .unwrap_or_else(|panic| Err(panic_message(&*panic)));
            match joined {
                Ok(appender) => self.sink = Sink::Here(appender),
                Err(what) => return Err(self.fail(what)),
            }
        }
        match &mut self.sink {
            Sink::Here(appender) => Ok(appender),
            _ => Err(Error::State {
                path: self.path.clone(),
                what: "the writer is closed".into(),
            }),
        }
    }

    fn check_open(&self) -> Result<()> {
        if let Some(failure) = &self.failure {
            return Err(Error::State {
                path: self.path.clone(),
                what: format!("the writer failed earlier: {failure}"),
            });
        }
        if matches!(self.sink, Sink::None) {
            return Err(Error::State {
                path: self.path.clone(),
                what: "the writer is closed".into(),
            });
        }
        Ok(())
    }

    fn train_dictionary(&mut self, size: usize) -> Result<()> {
        let samples: Vec<&[u8]> = {
            let mut start = 0usize;
            self.batch.sizes[..self.batch.finished_end().0]
                .iter()
                .map(|&len| {
                    let sample = &self.batch.values[start..start + len as usize];
                    start += len as usize;
                    sample
                })
                .collect()
        };
        self.dictionary = DictionaryState::Done;
        // zstd needs a handful of samples; with too few the file is written without one.
        if samples.len() < 8 {
            return Ok(());
        }
        let Ok(raw) = zstd::dict::from_samples(&samples, size) else {
            return Ok(());
        };
        drop(samples);
        let header = ChunkHeader::for_data(&raw, ChunkType::ZstdDictionary, 0, raw.len() as u64);
        // Sampling precedes the first batch, so the appender is still on this thread.
        self.appender_here()?.append_chunk(&header, &raw);
        self.compressor.dictionary = Some(Arc::new(Dictionary::new(raw)));
        Ok(())
    }

    /// Hands the finished chunks of the batch to the encoder and starts a new batch.
    fn encode_pending(&mut self) -> Result<()> {
        if let DictionaryState::Sampling { size } = self.dictionary {
            // Enough samples wait (or the file ends): train before anything is encoded.
            self.train_dictionary(size)?;
        }
        if self.batch.ends.is_empty() {
            return Ok(());
        }
        let next = self
            .recycled
            .get_mut()
            .unwrap_or_else(|poison| poison.into_inner())
            .try_recv()
            .unwrap_or_else(|_| Batch::with_capacity(BATCH_BYTES + (64 << 10)));
        let batch = std::mem::replace(&mut self.batch, next);
        debug_assert_eq!(batch.open_records(), 0, "batches end with a finished chunk");
        if self.parallelism <= 1 {
            let encoded = encode_chunks(&batch, &self.compressor, false);
            let appender = self.appender_here()?;
            appender.append_data_chunks(&encoded)?;
            let mut batch = batch;
            batch.clear();
            self.batch = batch;
            return Ok(());
        }
        if let Sink::Here(_) = self.sink {
            let Sink::Here(appender) = std::mem::replace(&mut self.sink, Sink::None) else {
                unreachable!()
            };
            let (jobs, queue) = sync_channel(self.parallelism);
            let recycle = self.recycle.clone();
            let thread = std::thread::Builder::new()
                .name("records-appender".into())
                .spawn(move || appender.run(queue, recycle))
                .map_err(|error| io_error(&self.temp_path, error))?;
            self.sink = Sink::Thread {
                jobs,
                appender: thread,
            };
        }
        // Encoded on the pool while the caller goes on appending; the appender takes the
        // results in submission order, so the file does not depend on timing.
        let (sender, receiver) = sync_channel(1);
        let compressor = self.compressor.clone();
        rayon::spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                encode_chunks(&batch, &compressor, true)
            }));
            let _ = sender.send(
                result
                    .map(|encoded| (encoded, batch))
                    .map_err(|panic| panic_message(&*panic)),
            );
        });
        let Sink::Thread { jobs, .. } = &self.sink else {
            unreachable!("started above")
        };
        if jobs.send(receiver).is_err() {
            // The appender stopped on an error: collect it.
            self.appender_here()?;
            return Err(self.fail("the file appender stopped".to_string()));
        }
        Ok(())
    }

    fn fail(&mut self, what: String) -> Error {
        self.failure.get_or_insert_with(|| what.clone());
        Error::State {
            path: self.path.clone(),
            what,
        }
    }
}

impl Drop for Writer {
    /// A writer dropped without `close` leaves no file under the final name and removes its
    /// `.incomplete` file.
    fn drop(&mut self) {
        if !matches!(self.sink, Sink::None) {
            self.abandon();
        }
    }
}

impl Compressor {
    pub(crate) fn uncompressed() -> Compressor {
        Compressor {
            compression: Compression::None,
            window_log: None,
            dictionary: None,
        }
    }
}

/// Encodes the finished chunks of a batch into (header, data) pairs, in order.
fn encode_chunks(
    batch: &Batch,
    compressor: &Compressor,
    parallel: bool,
) -> Vec<(ChunkHeader, Vec<u8>)> {
    let encode = |(values, sizes): (&[u8], &[u64])| {
        let data = simple_chunk::encode(values, sizes, compressor);
        let header = ChunkHeader::for_data(
            &data,
            ChunkType::Simple,
            sizes.len() as u64,
            values.len() as u64,
        );
        (header, data)
    };
    if parallel && batch.ends.len() > 1 {
        let chunks: Vec<(&[u8], &[u64])> = batch.chunks().collect();
        chunks.into_par_iter().with_min_len(4).map(encode).collect()
    } else {
        batch.chunks().map(encode).collect()
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

fn simple_records_chunk(records: &[&[u8]], compressor: &Compressor) -> (ChunkHeader, Vec<u8>) {
    let values: Vec<u8> = records.concat();
    let sizes: Vec<u64> = records.iter().map(|record| record.len() as u64).collect();
    let data = simple_chunk::encode(&values, &sizes, compressor);
    let header = ChunkHeader::for_data(
        &data,
        ChunkType::Simple,
        sizes.len() as u64,
        values.len() as u64,
    );
    (header, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::BLOCK_SIZE;

    /// Chunks of 3 MB (several per flush), one of 12 MiB (larger than the output buffer, so
    /// the buffer moves and is realigned), and small ones.
    fn test_chunks() -> Vec<(ChunkHeader, Vec<u8>)> {
        let sizes = [3_000_000, 17, 3_001_001, 12 << 20, 5, 3_002_002, 70_000];
        sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| {
                let data: Vec<u8> = (0..size).map(|j| (j * 31 + i * 7) as u8).collect();
                let header = ChunkHeader::for_data(&data, ChunkType::Simple, 1, size as u64);
                (header, data)
            })
            .collect()
    }

    /// The file the appender should produce, laid out in memory from position 0.
    fn expected_bytes(chunks: &[(ChunkHeader, Vec<u8>)], pad_at_end: bool) -> Vec<u8> {
        expected_padded_bytes(chunks, false, pad_at_end)
    }

    /// [`expected_bytes`], with every data chunk padded to a block boundary if `pad_chunks`.
    fn expected_padded_bytes(
        chunks: &[(ChunkHeader, Vec<u8>)],
        pad_chunks: bool,
        pad_at_end: bool,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let signature = ChunkHeader::for_data(&[], ChunkType::Signature, 0, 0);
        let mut position = append_chunk(&mut out, 0, &signature, &[]);
        for (header, data) in chunks {
            position = append_chunk(&mut out, position, header, data);
            if pad_chunks {
                position = append_padding_to_block_boundary(&mut out, position);
            }
        }
        if pad_at_end {
            append_padding_to_block_boundary(&mut out, position);
        }
        out
    }

    /// Appends the chunks one by one (in direct mode if `direct_io` and the file system
    /// allows), leaving direct mode after chunk `switch_after`.
    fn appended_bytes(
        directory: &Path,
        chunks: &[(ChunkHeader, Vec<u8>)],
        direct_io: bool,
        switch_after: Option<usize>,
        pad_at_end: bool,
    ) -> (Vec<u8>, bool) {
        let path = directory.join(format!(
            "appended-{direct_io}-{switch_after:?}-{pad_at_end}"
        ));
        let mut appender = FileAppender::new(path.clone(), false, direct_io).unwrap();
        let started_direct = appender.direct;
        let signature = ChunkHeader::for_data(&[], ChunkType::Signature, 0, 0);
        appender.append_chunk(&signature, &[]);
        for (i, chunk) in chunks.iter().enumerate() {
            appender
                .append_data_chunks(std::slice::from_ref(chunk))
                .unwrap();
            if switch_after == Some(i) {
                appender.leave_direct_mode().unwrap();
            }
        }
        if pad_at_end {
            appender.append_padding_to_block_boundary();
        }
        appender.flush().unwrap();
        drop(appender);
        (std::fs::read(&path).unwrap(), started_direct)
    }

    #[test]
    fn the_file_is_the_same_in_direct_and_buffered_mode() {
        let directory = tempfile::tempdir().unwrap();
        let chunks = test_chunks();
        let expected = expected_bytes(&chunks, true);
        assert_eq!(expected.len() as u64 % BLOCK_SIZE, 0);
        let (bytes, direct) = appended_bytes(directory.path(), &chunks, false, None, true);
        assert!(!direct, "buffered unless direct_io is asked for");
        assert!(bytes == expected, "buffered");
        for switch_after in [None, Some(0), Some(3)] {
            let (bytes, _) = appended_bytes(directory.path(), &chunks, true, switch_after, true);
            assert!(bytes == expected, "switch after {switch_after:?}");
        }
    }

    /// Many small chunks handed over in one batch: more runs than one `writev` takes
    /// (IOV_MAX is 1024 on Linux), with and without padding after every chunk.
    #[test]
    fn one_batch_of_many_chunks_is_written_whole_in_both_modes() {
        let directory = tempfile::tempdir().unwrap();
        let chunks: Vec<(ChunkHeader, Vec<u8>)> = (0..3000usize)
            .map(|i| {
                let size = if i % 997 == 5 {
                    200_000
                } else {
                    (i * 37) % 301
                };
                let data: Vec<u8> = (0..size).map(|j| (j * 13 + i) as u8).collect();
                let header = ChunkHeader::for_data(&data, ChunkType::Simple, 1, size as u64);
                (header, data)
            })
            .collect();
        for pad_chunks in [false, true] {
            let expected = expected_padded_bytes(&chunks, pad_chunks, true);
            for direct_io in [false, true] {
                let path = directory
                    .path()
                    .join(format!("batch-{pad_chunks}-{direct_io}"));
                let mut appender = FileAppender::new(path.clone(), pad_chunks, direct_io).unwrap();
                let signature = ChunkHeader::for_data(&[], ChunkType::Signature, 0, 0);
                appender.append_chunk(&signature, &[]);
                appender.append_data_chunks(&chunks[..1]).unwrap();
                appender.append_data_chunks(&chunks[1..]).unwrap();
                appender.append_padding_to_block_boundary();
                appender.flush().unwrap();
                let offsets: Vec<u64> = appender
                    .footer
                    .iter()
                    .map(|entry| entry.chunk_offset.unwrap())
                    .collect();
                drop(appender);
                let bytes = std::fs::read(&path).unwrap();
                assert!(
                    bytes == expected,
                    "pad_chunks {pad_chunks}, direct_io {direct_io}"
                );
                assert_eq!(offsets.len(), chunks.len());
                assert!(offsets.windows(2).all(|pair| pair[0] < pair[1]));
            }
        }
    }

    #[test]
    fn a_file_ending_off_a_block_boundary_is_written_whole() {
        // Direct writes need whole units: the unaligned end goes through the page cache.
        let directory = tempfile::tempdir().unwrap();
        let chunks = test_chunks();
        let expected = expected_bytes(&chunks, false);
        assert_ne!(expected.len() % DIRECT_ALIGNMENT, 0);
        let (bytes, _) = appended_bytes(directory.path(), &chunks, true, None, false);
        assert!(bytes == expected);
    }
}
