//! The study's one framing: each message is a 4-byte big-endian length, then that many bytes
//! of payload (the layout of Apache Thrift's framed transport). A reader refuses a length over
//! its maximum before allocating anything, and tells a clean end of stream (between frames)
//! from a truncated one (inside a header or payload).

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest payload a server accepts by default: 1 MiB (a MediaContent request is ~300
/// bytes).
pub const DEFAULT_MAX_FRAME: usize = 1 << 20;

/// Bytes of the length prefix.
pub const HEADER_BYTES: usize = 4;

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("frame of {length} bytes exceeds the maximum of {max} bytes")]
    TooLarge { length: usize, max: usize },
    #[error("truncated frame: the stream ended after {got} of the {expected} bytes of its {part}")]
    Truncated {
        part: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("frame i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads one frame's payload; `None` when the stream ends cleanly before a frame starts.
///
/// # Errors
/// [`FrameError::TooLarge`] when the header announces more than `max` bytes (nothing more is
/// read), [`FrameError::Truncated`] when the stream ends inside a frame, or the I/O error.
pub async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> Result<Option<Vec<u8>>, FrameError> {
    let mut header = [0u8; HEADER_BYTES];
    let got = read_full(reader, &mut header).await?;
    if got == 0 {
        return Ok(None);
    }
    if got < HEADER_BYTES {
        return Err(FrameError::Truncated {
            part: "header",
            got,
            expected: HEADER_BYTES,
        });
    }
    let length = u32::from_be_bytes(header) as usize;
    if length > max {
        return Err(FrameError::TooLarge { length, max });
    }
    let mut payload = vec![0u8; length];
    let got = read_full(reader, &mut payload).await?;
    if got < length {
        return Err(FrameError::Truncated {
            part: "payload",
            got,
            expected: length,
        });
    }
    Ok(Some(payload))
}

/// Writes one frame (header and payload; the caller flushes).
///
/// # Errors
/// The I/O error, or [`FrameError::TooLarge`] for a payload over 4 GiB - 1.
pub async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &mut W,
    payload: &[u8],
) -> Result<(), FrameError> {
    let length = u32::try_from(payload.len()).map_err(|_| FrameError::TooLarge {
        length: payload.len(),
        max: u32::MAX as usize,
    })?;
    writer.write_all(&length.to_be_bytes()).await?;
    writer.write_all(payload).await?;
    Ok(())
}

/// Fills `buf` unless the stream ends first; the bytes read.
async fn read_full<R: AsyncRead + Unpin>(reader: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]).await? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn frames_round_trip_and_a_clean_end_is_none() {
        run(async {
            let mut wire = Vec::new();
            write_frame(&mut wire, b"hello").await.unwrap();
            write_frame(&mut wire, b"").await.unwrap();
            assert_eq!(&wire[..4], &[0, 0, 0, 5]);
            let mut reader = &wire[..];
            assert_eq!(
                read_frame(&mut reader, 16).await.unwrap().unwrap(),
                b"hello"
            );
            assert_eq!(read_frame(&mut reader, 16).await.unwrap().unwrap(), b"");
            assert!(read_frame(&mut reader, 16).await.unwrap().is_none());
        });
    }

    #[test]
    fn an_oversized_length_is_refused_before_allocating() {
        run(async {
            let wire = [0xff, 0xff, 0xff, 0xff, 1, 2, 3];
            let err = read_frame(&mut &wire[..], DEFAULT_MAX_FRAME)
                .await
                .unwrap_err();
            assert!(matches!(
                err,
                FrameError::TooLarge {
                    length: 0xffff_ffff,
                    max: DEFAULT_MAX_FRAME
                }
            ));
            assert!(err.to_string().contains("exceeds the maximum"), "{err}");
        });
    }

    #[test]
    fn truncated_headers_and_payloads_are_errors_saying_so() {
        run(async {
            let err = read_frame(&mut &[0u8, 0][..], 16).await.unwrap_err();
            assert!(
                matches!(
                    err,
                    FrameError::Truncated {
                        part: "header",
                        got: 2,
                        expected: 4
                    }
                ),
                "{err}"
            );
            let err = read_frame(&mut &[0u8, 0, 0, 9, b'a', b'b'][..], 16)
                .await
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    FrameError::Truncated {
                        part: "payload",
                        got: 2,
                        expected: 9
                    }
                ),
                "{err}"
            );
        });
    }
}
