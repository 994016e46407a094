//! Sequential reading with read-ahead.
//!
//! The file is cut into windows of whole chunks, each about [`WINDOW_BYTES`] of decoded
//! records (never more than the reader's `readahead_buffer_size`, at least one chunk).
//! Small windows keep the decoded records in cache until they are consumed and let the
//! first record come back after one window, not after the whole read-ahead. Up to
//! `readahead_buffer_size` bytes of windows ahead of the current one are queued on the
//! thread pool.
//!
//! Invariants: windows are handed out strictly in order; each window is decoded exactly
//! once, by whoever claims it first: a pool thread, or the consumer itself when it needs a
//! window that no thread has started (so a busy pool never makes the consumer wait idle);
//! a consumer that finds its window being decoded decodes the next windows nobody has
//! started meanwhile, and waits for that decoding only when there are none. A seek outside
//! the queued windows abandons them (queued ones are skipped, running ones finish
//! unobserved). Errors travel with their window and surface when it is reached; the
//! healthy chunks of a window before a damaged one are still returned (the window is then
//! retried chunk by chunk).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crate::error::{Error, Result};
use crate::reader::{Reader, RecordBatch};

/// Decoded bytes per read-ahead window.
const WINDOW_BYTES: u64 = 1 << 20;

enum WindowState {
    Queued,
    Decoding,
    Done(Result<RecordBatch>),
    Taken,
}

/// One window of the read-ahead queue, shared with the pool task that may decode it.
struct Window {
    begin: u64,
    end: u64,
    state: Mutex<WindowState>,
    done: Condvar,
}

impl Window {
    fn lock(&self) -> std::sync::MutexGuard<'_, WindowState> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Claims the window for decoding if nobody has.
    fn claim(&self) -> bool {
        let mut state = self.lock();
        if matches!(*state, WindowState::Queued) {
            *state = WindowState::Decoding;
            true
        } else {
            false
        }
    }

    fn finish(&self, result: Result<RecordBatch>) {
        *self.lock() = WindowState::Done(result);
        self.done.notify_all();
    }

    /// Decodes the window on the calling thread and publishes the result, unless someone
    /// claimed it already; returns whether it did.
    fn decode_if_unclaimed(&self, reader: &Reader) -> bool {
        if !self.claim() {
            return false;
        }
        // A panic must not leave a consumer waiting for the window forever.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            reader.read_range_with(self.begin, self.end, false)
        }))
        .unwrap_or_else(|_| {
            Err(Error::State {
                path: reader.path().to_path_buf(),
                what: format!("decoding records {}..{} panicked", self.begin, self.end),
            })
        });
        self.finish(result);
        true
    }

    /// The decoded window: decodes it here if nobody started; else, while its decoder
    /// works, decodes windows further ahead that nobody started (`later`, in file order)
    /// instead of sleeping, and waits only when there are none. On a loaded machine a pool
    /// thread decoding the current window may be descheduled for a whole time slice; a
    /// consumer that sleeps meanwhile turned every such delay into lost time (sequential
    /// reads slower than array_record's single-threaded ones, with less CPU), a consumer
    /// that helps only waits once the windows ahead are all started.
    fn take(&self, reader: &Reader, later: &VecDeque<Arc<Window>>) -> Result<RecordBatch> {
        if self.claim() {
            return reader.read_range_with(self.begin, self.end, false);
        }
        loop {
            {
                let mut state = self.lock();
                if matches!(*state, WindowState::Done(_)) {
                    if let WindowState::Done(result) =
                        std::mem::replace(&mut *state, WindowState::Taken)
                    {
                        return result;
                    }
                }
            }
            if !later
                .iter()
                .any(|window| window.decode_if_unclaimed(reader))
            {
                break;
            }
        }
        let mut state = self.lock();
        loop {
            match std::mem::replace(&mut *state, WindowState::Taken) {
                WindowState::Done(result) => return result,
                WindowState::Decoding => {
                    *state = WindowState::Decoding;
                    state = self
                        .done
                        .wait(state)
                        .unwrap_or_else(|poison| poison.into_inner());
                }
                WindowState::Queued | WindowState::Taken => {
                    unreachable!("a window is taken once, after it was claimed")
                }
            }
        }
    }
}

/// Sequential reading with read-ahead: the windows after the current one are decoded in
/// the background while the current one is consumed.
pub struct SequentialReader {
    reader: Arc<Reader>,
    position: u64,
    window_start: u64,
    window: Option<RecordBatch>,
    /// Windows queued or decoding, in file order, starting where `window` ends.
    ahead: VecDeque<Arc<Window>>,
    /// Set when the queued windows are no longer wanted (seek elsewhere, or drop), so pool
    /// tasks that have not started skip them.
    abandoned: Arc<AtomicBool>,
}

impl Drop for SequentialReader {
    fn drop(&mut self) {
        self.abandoned.store(true, Ordering::Relaxed);
    }
}

impl SequentialReader {
    /// Starts at record 0.
    pub fn new(reader: Arc<Reader>) -> SequentialReader {
        SequentialReader {
            reader,
            position: 0,
            window_start: 0,
            window: None,
            ahead: VecDeque::new(),
            abandoned: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The reader read from.
    pub fn reader(&self) -> &Arc<Reader> {
        &self.reader
    }

    /// Index of the record the next [`SequentialReader::next_record`] returns.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Moves to record `index` (`num_records()` is allowed: the end).
    ///
    /// # Errors
    /// [`Error::OutOfRange`](crate::Error::OutOfRange) past the end.
    pub fn seek(&mut self, index: u64) -> Result<()> {
        if index > self.reader.num_records() {
            return Err(self.reader.out_of_range(index));
        }
        self.position = index;
        Ok(())
    }

    fn window_covers(&self, index: u64) -> bool {
        self.window.as_ref().is_some_and(|window| {
            index >= self.window_start && index < self.window_start + window.len() as u64
        })
    }

    /// Where the window starting at record `begin` (a chunk's first record or inside the
    /// first chunk after a seek) ends: whole chunks, about [`WINDOW_BYTES`] decoded bytes.
    fn window_end(&self, begin: u64) -> u64 {
        let reader = &self.reader;
        let limit = WINDOW_BYTES.min(reader.options().readahead_buffer_size.max(1));
        let (mut chunk, _) = reader.locate(begin);
        let mut bytes = 0u64;
        loop {
            bytes += reader.chunk_counts(chunk).1;
            chunk += 1;
            if chunk >= reader.num_chunks() || bytes >= limit {
                return reader.chunk_first_record(chunk);
            }
        }
    }

    /// Queues windows until `readahead_buffer_size` decoded bytes are ahead of `from`.
    fn fill_queue(&mut self, mut from: u64) {
        let reader = &self.reader;
        if reader.options().readahead_buffer_size == 0 || !reader.options().parallel() {
            return;
        }
        if let Some(last) = self.ahead.back() {
            from = last.end;
        }
        let budget = reader.options().readahead_buffer_size;
        let mut queued: u64 = self.ahead.iter().map(|w| self.window_bytes(w)).sum();
        while from < reader.num_records() && queued < budget {
            let window = Arc::new(Window {
                begin: from,
                end: self.window_end(from),
                state: Mutex::new(WindowState::Queued),
                done: Condvar::new(),
            });
            queued += self.window_bytes(&window);
            from = window.end;
            let task_window = Arc::clone(&window);
            let task_reader = Arc::clone(reader);
            let abandoned = Arc::clone(&self.abandoned);
            rayon::spawn(move || {
                // A window nobody will read is skipped; one its consumer (or a helper)
                // already took over is not decoded twice.
                if !abandoned.load(Ordering::Relaxed) {
                    task_window.decode_if_unclaimed(&task_reader);
                }
            });
            self.ahead.push_back(window);
        }
    }

    fn window_bytes(&self, window: &Window) -> u64 {
        let (first, _) = self.reader.locate(window.begin);
        let (last, _) = self.reader.locate(window.end - 1);
        (first..=last)
            .map(|chunk| self.reader.chunk_counts(chunk).1)
            .sum()
    }

    fn load_window(&mut self) -> Result<()> {
        let begin = self.position;
        if self
            .ahead
            .front()
            .is_some_and(|window| window.begin != begin)
        {
            // A seek away from the queued windows: abandon them for fresh ones.
            self.abandoned.store(true, Ordering::Relaxed);
            self.abandoned = Arc::new(AtomicBool::new(false));
            self.ahead.clear();
        }
        let window = match self.ahead.pop_front() {
            Some(window) => {
                let end = window.end;
                self.fill_queue(end);
                window.take(&self.reader, &self.ahead)
            }
            None => {
                let end = self.window_end(begin);
                self.fill_queue(end);
                self.reader.read_range_with(begin, end, false)
            }
        };
        // The previous window's buffers are freed off the consuming thread.
        if let Some(previous) = self.window.take() {
            rayon::spawn(move || drop(previous));
        }
        let window = match window {
            Ok(window) => window,
            Err(error) => {
                // Some chunk of the window is damaged: serve the healthy chunks before it
                // one at a time, so the error surfaces at the damaged chunk itself.
                let (chunk, _) = self.reader.locate(begin);
                let chunk_end = self.reader.chunk_first_record(chunk + 1);
                match self.reader.read_range_with(begin, chunk_end, false) {
                    Ok(window) if chunk_end < self.window_end(begin) => window,
                    Ok(_) => return Err(error),
                    Err(chunk_error) => return Err(chunk_error),
                }
            }
        };
        self.window_start = begin;
        self.window = Some(window);
        Ok(())
    }

    /// Makes sure the record at the current position is decoded, blocking on read-ahead if
    /// needed (callers release interpreter locks around this).
    ///
    /// # Errors
    /// [`Error::Corrupt`](crate::Error::Corrupt) if the needed chunk is damaged.
    pub fn prepare(&mut self) -> Result<bool> {
        if self.position >= self.reader.num_records() {
            return Ok(false);
        }
        if !self.window_covers(self.position) {
            self.load_window()?;
        }
        Ok(true)
    }

    /// The record at the current position, which then advances; `None` at the end.
    pub fn next_record(&mut self) -> Option<Result<&[u8]>> {
        match self.prepare() {
            Ok(false) => None,
            Err(error) => Some(Err(error)),
            Ok(true) => {
                let index = (self.position - self.window_start) as usize;
                self.position += 1;
                Some(Ok(self.window.as_ref().expect("prepared").get(index)))
            }
        }
    }

    /// After a successful [`SequentialReader::prepare`], the current record without
    /// advancing.
    pub fn current(&self) -> Option<&[u8]> {
        if !self.window_covers(self.position) {
            return None;
        }
        let index = (self.position - self.window_start) as usize;
        Some(self.window.as_ref()?.get(index))
    }

    /// Advances by one record (after [`SequentialReader::current`]).
    pub fn advance(&mut self) {
        self.position += 1;
    }
}
