//! How a streaming reader's buffer grows: one rule for the YSON reader, the MessagePack and
//! CBOR reader (`tree`) and the framed Protobuf and Thrift reader (`table::framing`). A leaf
//! module: it imports nothing of the crate.
//!
//! A buffer is zeroed as it grows, so it starts small: a one-row read must not pay for zeroing
//! the buffer a long stream wants (1 MiB per call was most of a one-row YSON read, 256 KiB 28%
//! of a one-row CBOR `loads`). It doubles up to the size the reader prefers while reads keep
//! filling it (a stream), and up to the reader's limit when the bytes it must keep fill it (a
//! record longer than the buffer).

/// The first length of a streaming reader's buffer (or the preferred size, if smaller).
pub(crate) const START_BYTES: usize = 4 << 10;

/// The buffer's first length for a reader that prefers `preferred` bytes.
pub(crate) fn start_len(preferred: usize) -> usize {
    preferred.clamp(1, START_BYTES)
}

/// The buffer's next length at a refill (`len` when it need not grow): doubled up to `max`
/// when the bytes to keep fill it (`full`), else doubled up to `preferred` when the reads
/// before this refill had filled it (`read_full`: more input is likely waiting).
pub(crate) fn grown_len(
    len: usize,
    full: bool,
    read_full: bool,
    preferred: usize,
    max: usize,
) -> usize {
    if full {
        len.saturating_mul(2).min(max).max(len)
    } else if read_full && len < preferred {
        len.saturating_mul(2).min(preferred)
    } else {
        len
    }
}
