//! The reference C brotli library, the implementation array_record itself links, compiled
//! from the sources bundled in the `brotlic-sys` crate (a snapshot after 1.0.9 with shared
//! dictionaries; it reports version 1.0.9) by `cc` at the release profile's `-O3`. No system
//! package is needed. On the ArrayRecord performance guide's lorem records it decodes as fast as Debian's
//! `libbrotlidec` 1.0.9 and encodes byte-identical streams (see docs/records.md).
//!
//! Why not only the pure-Rust `brotli` crate: for small inputs (one record per chunk) it
//! clears its whole hash table on every call — 8 MiB at quality 7, about a millisecond per
//! record — where C brotli prepares only the buckets a one-shot input touches, and
//! its qualities 0 and 1 differ from C's. Fed in 64 KiB pieces, the C encoder reproduces
//! array_record's streams byte for byte at qualities 2..11 in our tests; at 0 and 1 its
//! output is smaller than array_record's (Riegeli feeds those qualities differently).

use brotlic_sys::{
    BrotliDecoderDecompress,
    BrotliDecoderResult_BROTLI_DECODER_RESULT_SUCCESS as DECODER_RESULT_SUCCESS,
    BrotliEncoderCompressStream, BrotliEncoderCreateInstance, BrotliEncoderDestroyInstance,
    BrotliEncoderHasMoreOutput, BrotliEncoderIsFinished,
    BrotliEncoderOperation_BROTLI_OPERATION_FINISH as OPERATION_FINISH,
    BrotliEncoderOperation_BROTLI_OPERATION_PROCESS as OPERATION_PROCESS,
    BrotliEncoderParameter_BROTLI_PARAM_LGWIN as PARAM_LGWIN,
    BrotliEncoderParameter_BROTLI_PARAM_QUALITY as PARAM_QUALITY,
    BrotliEncoderParameter_BROTLI_PARAM_SIZE_HINT as PARAM_SIZE_HINT, BrotliEncoderSetParameter,
};

/// Input handed to the encoder at a time (Riegeli's default buffer size).
const INPUT_PIECE: usize = 1 << 16;

/// Appends the brotli stream of `data` to `out`.
pub(crate) fn compress_into(data: &[u8], quality: i32, window_log: u32, out: &mut Vec<u8>) {
    // SAFETY: the state is created, used and destroyed here; every pointer handed to the
    // encoder points into `data` or into `out`'s reserved spare capacity, with the sizes
    // passed alongside, and `out`'s length is only extended over bytes the encoder wrote.
    unsafe {
        let state = BrotliEncoderCreateInstance(None, None, std::ptr::null_mut());
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
