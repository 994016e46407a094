//! Writing ArrayRecord files.
//!
//! Records gather into chunks of `group_size`; finished chunks queue up until about
//! [`BATCH_BYTES`] of records are waiting, then the batch goes to the thread pool, which
//! encodes its chunks (in parallel) while the caller keeps appending records. At most
//! `parallelism + 1` batches are in flight: a caller that gets further ahead waits for the
//! oldest batch. Batches are appended strictly in submission order, so the bytes of the
//! file do not depend on the thread count or on timing. A panic while encoding is caught
//! on the pool and surfaces as an error of the next call (the writer then refuses further
//! records and `close` removes the temporary file). The file is written under
//! `<name>.incomplete` and renamed to its name only when [`Writer::close`] has written the
//! footer and the postscript, so a file under its final name is always complete.
//!
//! Layout produced (what array_record 0.8.6 produces for the same options): signature
//! chunk; [extension: dictionary chunk]; data chunks back to back; footer chunk (the file's
//! compression); padding to a block boundary; postscript chunk (uncompressed); padding to a
//! block boundary.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};

use prost::Message;
use rayon::prelude::*;

use crate::block::{append_chunk, append_padding_to_block_boundary, ChunkHeader, ChunkType};
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
/// Encoded bytes gathered before a write to the file.
const OUTPUT_FLUSH_BYTES: usize = 8 << 20;
/// Records sampled to train a shared dictionary: up to this many bytes...
const DICTIONARY_SAMPLE_BYTES: usize = 8 << 20;
/// ...or this many records.
const DICTIONARY_SAMPLE_RECORDS: usize = 16_384;

#[derive(Default)]
struct ChunkRecords {
    values: Vec<u8>,
    sizes: Vec<u64>,
}

enum DictionaryState {
    /// The extension is off.
    Off,
    /// Collecting samples: nothing is encoded until the dictionary is trained.
    Sampling { size: usize },
    /// Trained (or training failed and the file is written without one).
    Done,
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
    file: Option<File>,
    position: u64,
    options: WriterOptions,
    parallelism: usize,
    compressor: Compressor,
    current: ChunkRecords,
    pending: Vec<ChunkRecords>,
    pending_bytes: usize,
    footer: Vec<ArrayRecordFooter>,
    dictionary: DictionaryState,
    output: Vec<u8>,
    failure: Option<String>,
    /// Batches encoding on the pool, oldest first (at most `parallelism + 1`).
    /// (In a mutex only so that the writer is `Sync`, as Python classes must be.)
    in_flight: VecDeque<Mutex<Receiver<EncodedBatch>>>,
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
    /// [`Error::Io`] if the file cannot be created or its first bytes written.
    pub fn with_options(path: impl AsRef<Path>, options: WriterOptions) -> Result<Writer> {
        let path = path.as_ref().to_path_buf();
        let mut temp_name = path.file_name().unwrap_or_default().to_os_string();
        temp_name.push(".incomplete");
        let temp_path = path.with_file_name(temp_name);
        let file = File::create(&temp_path).map_err(|error| io_error(&temp_path, error))?;
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
        let mut writer = Writer {
            path,
            temp_path,
            file: Some(file),
            position: 0,
            options,
            parallelism,
            compressor,
            current: ChunkRecords::default(),
            pending: Vec::new(),
            pending_bytes: 0,
            footer: Vec::new(),
            dictionary,
            output: Vec::with_capacity(OUTPUT_FLUSH_BYTES),
            failure: None,
            in_flight: VecDeque::new(),
        };
        let signature = ChunkHeader::for_data(&[], ChunkType::Signature, 0, 0);
        writer.position = append_chunk(&mut writer.output, 0, &signature, &[]);
        writer.flush_output()?;
        Ok(writer)
    }

    /// The final path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the writer can still take records (not closed, no failure).
    pub fn is_open(&self) -> bool {
        self.file.is_some() && self.failure.is_none()
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

    /// Copies `record` into the current chunk without encoding anything; returns whether
    /// enough records wait that [`Writer::encode_buffered`] should run (bindings call the
    /// two halves separately to release their interpreter lock only for the heavy part).
    ///
    /// # Errors
    /// [`Error::State`] after `close` or a failure.
    pub fn buffer_record(&mut self, record: &[u8]) -> Result<bool> {
        self.check_open()?;
        self.current.values.extend_from_slice(record);
        self.current.sizes.push(record.len() as u64);
        if self.current.sizes.len() as u64 >= self.options.group_size {
            self.pending_bytes += self.current.values.len();
            self.pending.push(std::mem::take(&mut self.current));
            return Ok(self.encoding_due());
        }
        Ok(false)
    }

    fn encoding_due(&self) -> bool {
        match self.dictionary {
            DictionaryState::Sampling { .. } => {
                // Every pending chunk is full: group_size records each.
                let sampled = self.pending.len() as u64 * self.options.group_size;
                self.pending_bytes >= DICTIONARY_SAMPLE_BYTES
                    || sampled >= DICTIONARY_SAMPLE_RECORDS as u64
            }
            _ => self.pending_bytes >= BATCH_BYTES || self.pending.len() >= 65_536,
        }
    }

    /// Encodes (in parallel) and writes the finished chunks waiting in memory.
    ///
    /// # Errors
    /// [`Error::State`] after `close` or a failure; [`Error::Io`] if writing fails.
    pub fn encode_buffered(&mut self) -> Result<()> {
        self.check_open()?;
        let result = self.encode_pending(false);
        if let Err(error) = &result {
            self.failure.get_or_insert_with(|| error.to_string());
        }
        result
    }

    /// Writes the remaining records, the footer and the postscript, and renames the file to
    /// its final name. Closing twice is an error-free no-op.
    ///
    /// # Errors
    /// [`Error::Io`] if writing or renaming fails (the `.incomplete` file is then removed).
    pub fn close(&mut self) -> Result<()> {
        if self.file.is_none() && self.failure.is_none() {
            return Ok(());
        }
        self.check_open()?;
        let result = self.finish();
        if result.is_err() {
            self.file = None;
            let _ = std::fs::remove_file(&self.temp_path);
        }
        result
    }

    fn finish(&mut self) -> Result<()> {
        if !self.current.sizes.is_empty() {
            self.pending_bytes += self.current.values.len();
            self.pending.push(std::mem::take(&mut self.current));
        }
        self.encode_pending(true)?;
        let footer_chunk = self.footer_chunk();
        let footer_offset = self.position;
        let base = self.position - self.output.len() as u64;
        self.position = append_chunk(&mut self.output, base, &footer_chunk.0, &footer_chunk.1);
        let base = self.position - self.output.len() as u64;
        self.position = append_padding_to_block_boundary(&mut self.output, base);
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
        let base = self.position - self.output.len() as u64;
        self.position = append_chunk(&mut self.output, base, &header, &data);
        let base = self.position - self.output.len() as u64;
        self.position = append_padding_to_block_boundary(&mut self.output, base);
        self.flush_output()?;
        let file = self.file.take().expect("checked open");
        drop(file);
        std::fs::rename(&self.temp_path, &self.path).map_err(|error| io_error(&self.path, error))
    }

    fn footer_chunk(&self) -> (ChunkHeader, Vec<u8>) {
        let num_records: u64 = self
            .footer
            .iter()
            .map(|entry| entry.num_records.unwrap_or(0))
            .sum();
        let mut options = self.options.clone();
        if self.compressor.dictionary.is_none() {
            options.zstd_dictionary = None;
        }
        let metadata = RiegeliFooterMetadata {
            array_record_metadata: Some(ArrayRecordMetadata {
                version: Some(ARRAY_RECORD_VERSION),
                num_chunks: Some(self.footer.len() as u64),
                num_records: Some(num_records),
                writer_options: Some(options.to_canonical_string(self.parallelism)),
            }),
        }
        .encode_to_vec();
        let entries: Vec<Vec<u8>> = self.footer.iter().map(Message::encode_to_vec).collect();
        let mut records: Vec<&[u8]> = Vec::with_capacity(entries.len() + 1);
        records.push(&metadata);
        records.extend(entries.iter().map(Vec::as_slice));
        let plain = Compressor {
            dictionary: None,
            ..self.compressor.clone()
        };
        simple_records_chunk(&records, &plain)
    }

    fn check_open(&self) -> Result<()> {
        if let Some(failure) = &self.failure {
            return Err(Error::State {
                path: self.path.clone(),
                what: format!("the writer failed earlier: {failure}"),
            });
        }
        if self.file.is_none() {
            return Err(Error::State {
                path: self.path.clone(),
                what: "the writer is closed".into(),
            });
        }
        Ok(())
    }

    fn train_dictionary(&mut self, size: usize) -> Result<()> {
        let mut samples = Vec::new();
        for chunk in &self.pending {
            let mut start = 0usize;
            for &len in &chunk.sizes {
                samples.push(&chunk.values[start..start + len as usize]);
                start += len as usize;
            }
        }
        self.dictionary = DictionaryState::Done;
        // zstd needs a handful of samples; with too few the file is written without one.
        if samples.len() < 8 {
            return Ok(());
        }
        let Ok(raw) = zstd::dict::from_samples(&samples, size) else {
            return Ok(());
        };
        let header = ChunkHeader::for_data(&raw, ChunkType::ZstdDictionary, 0, raw.len() as u64);
        let base = self.position - self.output.len() as u64;
        self.position = append_chunk(&mut self.output, base, &header, &raw);
        self.compressor.dictionary = Some(Arc::new(Dictionary::new(raw)));
        Ok(())
    }

    /// Hands the finished chunks to the encoder; with `drain`, also waits for every batch
    /// and appends it (before the footer).
    fn encode_pending(&mut self, drain: bool) -> Result<()> {
        if let DictionaryState::Sampling { size } = self.dictionary {
            // Enough samples wait (or the file ends): train before anything is encoded.
            self.train_dictionary(size)?;
        }
        let pending = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        if self.parallelism <= 1 {
            let encoded = encode_chunks(&pending, &self.compressor, false);
            self.append_encoded(encoded)?;
            return self.flush_output();
        }
        if !pending.is_empty() {
            // Encoded on the pool while the caller goes on appending; results come back
            // through the queue in submission order, so the file does not depend on timing.
            let (sender, receiver) = sync_channel(1);
            let compressor = self.compressor.clone();
            rayon::spawn(move || {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    encode_chunks(&pending, &compressor, true)
                }));
                let _ = sender.send(result.map_err(|panic| panic_message(&*panic)));
            });
            self.in_flight.push_back(Mutex::new(receiver));
        }
        let keep = if drain { 0 } else { self.parallelism + 1 };
        while self.in_flight.len() > keep {
            self.append_oldest_batch()?;
        }
        Ok(())
    }

    /// Waits for the oldest batch on the pool and appends its chunks.
    fn append_oldest_batch(&mut self) -> Result<()> {
        let receiver = self.in_flight.pop_front().expect("a batch is in flight");
        let receiver = receiver
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner());
        let encoded = match receiver.recv() {
            Ok(Ok(encoded)) => encoded,
            Ok(Err(panic)) => {
                return Err(self.fail(format!("encoding a chunk failed: {panic}")));
            }
            Err(_) => return Err(self.fail("an encoding task vanished".to_string())),
        };
        self.append_encoded(encoded)
    }

    fn fail(&mut self, what: String) -> Error {
        self.failure.get_or_insert_with(|| what.clone());
        Error::State {
            path: self.path.clone(),
            what,
        }
    }

    fn append_encoded(&mut self, encoded: Vec<(ChunkHeader, Vec<u8>)>) -> Result<()> {
        for (header, data) in encoded {
            let base = self.position - self.output.len() as u64;
            let offset = self.position;
            self.position = append_chunk(&mut self.output, base, &header, &data);
            if self.options.pad_to_block_boundary {
                let base = self.position - self.output.len() as u64;
                self.position = append_padding_to_block_boundary(&mut self.output, base);
            }
            self.footer.push(ArrayRecordFooter {
                chunk_offset: Some(offset),
                decoded_data_size: Some(header.decoded_data_size),
                num_records: Some(header.num_records),
            });
            if self.output.len() >= OUTPUT_FLUSH_BYTES {
                self.flush_output()?;
            }
        }
        Ok(())
    }

    fn flush_output(&mut self) -> Result<()> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        if let Err(error) = file.write_all(&self.output) {
            self.failure = Some(error.to_string());
            return Err(io_error(&self.temp_path, error));
        }
        self.output.clear();
        Ok(())
    }
}

impl Drop for Writer {
    /// A writer dropped without `close` leaves no file under the final name and removes its
    /// `.incomplete` file.
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.temp_path);
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

/// The chunks of one batch, encoded, or the message of a panic while encoding.
type EncodedBatch = std::result::Result<Vec<(ChunkHeader, Vec<u8>)>, String>;

/// Encodes finished chunks into (header, data) pairs, in order.
fn encode_chunks(
    chunks: &[ChunkRecords],
    compressor: &Compressor,
    parallel: bool,
) -> Vec<(ChunkHeader, Vec<u8>)> {
    let encode = |chunk: &ChunkRecords| {
        let data = simple_chunk::encode(&chunk.values, &chunk.sizes, compressor);
        let header = ChunkHeader::for_data(
            &data,
            ChunkType::Simple,
            chunk.sizes.len() as u64,
            chunk.values.len() as u64,
        );
        (header, data)
    };
    if parallel && chunks.len() > 1 {
        chunks.par_iter().with_min_len(4).map(encode).collect()
    } else {
        chunks.iter().map(encode).collect()
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
