//! The reference C brotli library (system `libbrotlienc`/`libbrotlidec`, 1.0.9 here), the
//! implementation array_record itself links.
//!
//! Why not only the pure-Rust `brotli` crate: for small inputs (one record per chunk) it
//! clears its whole hash table on every call — 8 MiB at quality 7, about a millisecond per
//! record — where C brotli prepares only the buckets a one-shot input touches, and its
//! its qualities 0 and 1 differ from C's. Fed in 64 KiB pieces, the C encoder reproduces
//! array_record's streams byte for byte at qualities 2..11 in our tests; at 0 and 1 its
//! output is smaller than array_record's (Riegeli feeds those qualities differently).

use std::os::raw::{c_int, c_void};

#[repr(C)]
struct EncoderState {
    _private: [u8; 0],
}

const OPERATION_PROCESS: c_int = 0;
const OPERATION_FINISH: c_int = 2;
const PARAM_QUALITY: c_int = 1;
const PARAM_LGWIN: c_int = 2;
const PARAM_SIZE_HINT: c_int = 5;
const DECODER_RESULT_SUCCESS: c_int = 1;

#[link(name = "brotlienc")]
extern "C" {
    fn BrotliEncoderCreateInstance(
        alloc: *const c_void,
        free: *const c_void,
        opaque: *mut c_void,
    ) -> *mut EncoderState;
    fn BrotliEncoderDestroyInstance(state: *mut EncoderState);
    fn BrotliEncoderSetParameter(state: *mut EncoderState, param: c_int, value: u32) -> c_int;
    fn BrotliEncoderCompressStream(
        state: *mut EncoderState,
        op: c_int,
        available_in: *mut usize,
        next_in: *mut *const u8,
        available_out: *mut usize,
        next_out: *mut *mut u8,
        total_out: *mut usize,
    ) -> c_int;
    fn BrotliEncoderHasMoreOutput(state: *mut EncoderState) -> c_int;
    fn BrotliEncoderIsFinished(state: *mut EncoderState) -> c_int;
}

#[link(name = "brotlidec")]
extern "C" {
    fn BrotliDecoderDecompress(
        encoded_size: usize,
        encoded: *const u8,
        decoded_size: *mut usize,
        decoded: *mut u8,
    ) -> c_int;
}

/// Input handed to the encoder at a time (Riegeli's default buffer size).
const INPUT_PIECE: usize = 1 << 16;

/// Appends the brotli stream of `data` to `out`.
pub(crate) fn compress_into(data: &[u8], quality: i32, window_log: u32, out: &mut Vec<u8>) {
    // SAFETY: the state is created, used and destroyed here; every pointer handed to the
    // encoder points into `data` or into `out`'s reserved spare capacity, with the sizes
    // passed alongside, and `out`'s length is only extended over bytes the encoder wrote.
    unsafe {
        let state =
            BrotliEncoderCreateInstance(std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
        assert!(!state.is_null(), "brotli encoder allocation failed");
        BrotliEncoderSetParameter(state, PARAM_QUALITY, quality as u32);
        BrotliEncoderSetParameter(state, PARAM_LGWIN, window_log);
        BrotliEncoderSetParameter(
            state,
            PARAM_SIZE_HINT,
            data.len().min(u32::MAX as usize) as u32,
        );
        let mut offset = 0usize;
        loop {
            let piece_end = (offset + INPUT_PIECE).min(data.len());
            let op = if piece_end == data.len() {
                OPERATION_FINISH
            } else {
                OPERATION_PROCESS
            };
            let mut available_in = piece_end - offset;
            let mut next_in = data.as_ptr().add(offset);
            loop {
                out.reserve(available_in / 2 + 1024);
                let start = out.len();
                let mut available_out = out.capacity() - start;
                let mut next_out = out.as_mut_ptr().add(start);
                let ok = BrotliEncoderCompressStream(
                    state,
                    op,
                    &mut available_in,
                    &mut next_in,
                    &mut available_out,
                    &mut next_out,
                    std::ptr::null_mut(),
                );
                assert!(ok != 0, "brotli encoder failed on in-memory input");
                out.set_len(next_out.offset_from(out.as_ptr()) as usize);
                let done = if op == OPERATION_FINISH {
                    BrotliEncoderIsFinished(state) != 0
                } else {
                    available_in == 0 && BrotliEncoderHasMoreOutput(state) == 0
                };
                if done {
                    break;
                }
            }
            offset = piece_end;
            if op == OPERATION_FINISH {
                break;
            }
        }
        BrotliEncoderDestroyInstance(state);
    }
}

/// Decodes a whole brotli stream into `out`; succeeds only if the stream is complete,
/// valid, and decodes to exactly `out.len()` bytes.
pub(crate) fn decompress_exact(payload: &[u8], out: &mut [u8]) -> Result<(), String> {
    let mut decoded = out.len();
    // SAFETY: the decoder reads `payload.len()` bytes and writes at most `decoded` (the
    // capacity of `out`) bytes, reporting how many it wrote.
    let result = unsafe {
        BrotliDecoderDecompress(
            payload.len(),
            payload.as_ptr(),
            &mut decoded,
            out.as_mut_ptr(),
        )
    };
    if result != DECODER_RESULT_SUCCESS {
        return Err(format!(
            "brotli data is corrupt or decodes to more than the declared {} bytes",
            out.len()
        ));
    }
    if decoded != out.len() {
        return Err(format!(
            "brotli data decoded to {decoded} bytes, {} were declared",
            out.len()
        ));
    }
    Ok(())
}
