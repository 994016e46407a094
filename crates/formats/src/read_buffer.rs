//! How a streaming reader's buffer grows: one rule for the YSON reader, the MessagePack and
//! CBOR reader (`tree`) and the framed Protobuf and Thrift reader (`table::framing`). A leaf
//! module: it imports nothing of the crate.
//!
//! A buffer is zeroed as it grows, so it starts small: a one-row read must not pay for zeroing
//! the buffer a long stream wants (1 MiB per call was most of a one-row YSON read, 256 KiB 28%
//! of a one-row CBOR `loads`). It doubles up to the size the reader prefers once the input has
//! outlasted the buffer (a stream: bytes were consumed and more are wanted), and up to the
//! reader's limit when the bytes it must keep fill it (a record longer than the buffer).

/// The first length of a streaming reader's buffer (or the preferred size, if smaller).
pub(crate) const START_BYTES: usize = 16 << 10;

/// The buffer's first length for a reader that prefers `preferred` bytes.
pub(crate) fn start_len(preferred: usize) -> usize {
    preferred.clamp(1, START_BYTES)
}

/// The buffer's next length at a refill (`len` when it need not grow): doubled up to `max`
/// when the bytes to keep fill it (`full`), else doubled up to `preferred` once the input
/// has outlasted the buffer (`streaming`: the buffer's first byte is past the input's
/// first; "reads filled the buffer" would stop at a pipe's 64 KiB).
pub(crate) fn grown_len(
    len: usize,
    full: bool,
    streaming: bool,
    preferred: usize,
    max: usize,
) -> usize {
    if full {
        len.saturating_mul(2).min(max).max(len)
    } else if streaming && len < preferred {
        len.saturating_mul(2).min(preferred)
    } else {
        len
    }
}
