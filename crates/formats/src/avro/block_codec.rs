//! The compression of object container blocks (`avro.codec` in a container's header).
//!
//! The Avro spec's codecs, as other implementations write them:
//! - `null`: the block's datums as they are;
//! - `deflate`: raw DEFLATE (RFC 1951, no zlib header or checksum);
//! - `snappy`: raw Snappy, then the 4-byte big-endian CRC-32 (IEEE) of the uncompressed
//!   datums, which the reader checks;
//! - `zstandard`: one Zstandard frame.
//!
//! Invariant of decompression: the output is never larger than [`MAX_BLOCK_BYTES`], and it
//! grows only as the decompressor actually produces bytes (Snappy's declared length is
//! checked against that limit and against what its input can expand to before anything is
//! allocated), so a hostile block cannot make the reader allocate more than it holds.

use std::io::Read;

/// The largest decompressed block accepted (Avro writers cut blocks far smaller: about
/// 64 KiB by default; Java's largest sync interval is 1 GiB of *compressed* data, never
/// reached in practice).
pub const MAX_BLOCK_BYTES: usize = 256 << 20;

/// How the blocks of an object container are compressed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BlockCodec {
    #[default]
    Null,
    /// Raw DEFLATE at `level` (0..=10, miniz's scale; 6 is zlib's default).
    Deflate {
        level: u8,
    },
    Snappy,
    /// Zstandard at `level` (1..=22; 3 is zstd's default).
    Zstandard {
        level: i32,
    },
}

impl BlockCodec {
    /// DEFLATE at the default level.
    pub const DEFLATE: BlockCodec = BlockCodec::Deflate { level: 6 };
    /// Zstandard at the default level.
    pub const ZSTANDARD: BlockCodec = BlockCodec::Zstandard { level: 3 };

    /// The name written as `avro.codec`.
    pub fn name(self) -> &'static str {
        match self {
            BlockCodec::Null => "null",
            BlockCodec::Deflate { .. } => "deflate",
            BlockCodec::Snappy => "snappy",
            BlockCodec::Zstandard { .. } => "zstandard",
        }
    }

    /// The codec of an `avro.codec` name (default levels), `None` for one not supported.
    pub fn from_name(name: &str) -> Option<BlockCodec> {
        Some(match name {
            "null" => BlockCodec::Null,
            "deflate" => BlockCodec::DEFLATE,
            "snappy" => BlockCodec::Snappy,
            "zstandard" | "zstd" => BlockCodec::ZSTANDARD,
            _ => return None,
        })
    }

    /// The codec of a command-line spec: a name as [`BlockCodec::from_name`] takes, with an
    /// optional `:level` for `deflate` (0..=10) and `zstandard`/`zstd` (1..=22), e.g.
    /// `zstd:7`, `deflate:9`, `snappy`.
    ///
    /// # Errors
    /// A message naming the spec when the name is unknown, the level is not a number in its
    /// codec's range, or a level is given to a codec without levels.
    pub fn parse(spec: &str) -> Result<BlockCodec, String> {
        let (name, level) = match spec.split_once(':') {
            Some((name, level)) => (name, Some(level)),
            None => (spec, None),
        };
        let codec = BlockCodec::from_name(name).ok_or_else(|| {
            format!("avro codec \"{spec}\": unknown (null, deflate, snappy, zstandard)")
        })?;
        let Some(level) = level else {
            return Ok(codec);
        };
        let bad_level = |range: &str| format!("avro codec \"{spec}\": level must be {range}");
        match codec {
            BlockCodec::Deflate { .. } => match level.parse::<u8>() {
                Ok(level) if level <= 10 => Ok(BlockCodec::Deflate { level }),
                _ => Err(bad_level("0..=10")),
            },
            BlockCodec::Zstandard { .. } => match level.parse::<i32>() {
                Ok(level) if (1..=22).contains(&level) => Ok(BlockCodec::Zstandard { level }),
                _ => Err(bad_level("1..=22")),
            },
            BlockCodec::Null | BlockCodec::Snappy => {
                Err(format!("avro codec \"{spec}\": {name} has no levels"))
            }
        }
    }

    /// Compresses a block of datums (`Null`: a copy).
    ///
    /// # Errors
    /// A message when the compressor fails (Snappy: a block over its 4 GiB limit).
    pub fn compress(self, block: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            BlockCodec::Null => Ok(block.to_vec()),
            BlockCodec::Deflate { level } => {
                Ok(miniz_oxide::deflate::compress_to_vec(block, level.min(10)))
            }
            BlockCodec::Snappy => {
                let mut out = snap::raw::Encoder::new()
                    .compress_vec(block)
                    .map_err(|e| format!("snappy: {e}"))?;
                out.extend_from_slice(&crc32fast::hash(block).to_be_bytes());
                Ok(out)
            }
            BlockCodec::Zstandard { level } => {
                zstd::bulk::compress(block, level).map_err(|e| format!("zstandard: {e}"))
            }
        }
    }

    /// Decompresses a block into `out` (cleared first).
    ///
    /// # Errors
    /// A message for malformed compressed data, a Snappy checksum mismatch, or output over
    /// [`MAX_BLOCK_BYTES`].
    pub fn decompress(self, block: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        let too_large = || format!("block decompresses to more than {MAX_BLOCK_BYTES} bytes");
        match self {
            BlockCodec::Null => out.extend_from_slice(block),
            BlockCodec::Deflate { .. } => {
                *out = miniz_oxide::inflate::decompress_to_vec_with_limit(block, MAX_BLOCK_BYTES)
                    .map_err(|e| match e.status {
                    miniz_oxide::inflate::TINFLStatus::HasMoreOutput => too_large(),
                    status => format!("deflate: malformed data ({status:?})"),
                })?;
            }
            BlockCodec::Snappy => {
                let Some(split) = block.len().checked_sub(4) else {
                    return Err("snappy block shorter than its 4-byte checksum".into());
                };
                let (data, checksum) = block.split_at(split);
                let length = snap::raw::decompress_len(data)
                    .map_err(|e| format!("snappy: malformed length: {e}"))?;
                // A Snappy element of n bytes copies at most 64, so data of n bytes can
                // only declare about 32 n bytes honestly.
                if length > MAX_BLOCK_BYTES || length > data.len().saturating_mul(32) + 64 {
                    return Err(format!(
                        "snappy block of {} bytes declares {length} bytes",
                        data.len()
                    ));
                }
                out.resize(length, 0);
                let written = snap::raw::Decoder::new()
                    .decompress(data, out)
                    .map_err(|e| format!("snappy: {e}"))?;
                out.truncate(written);
                let expected =
                    u32::from_be_bytes([checksum[0], checksum[1], checksum[2], checksum[3]]);
                let actual = crc32fast::hash(out);
                if expected != actual {
                    return Err(format!(
                        "snappy block checksum {expected:08x} but the data hashes to {actual:08x}"
                    ));
                }
            }
            BlockCodec::Zstandard { .. } => {
                let decoder = zstd::stream::read::Decoder::new(block)
                    .map_err(|e| format!("zstandard: {e}"))?;
                decoder
                    .take(MAX_BLOCK_BYTES as u64 + 1)
                    .read_to_end(out)
                    .map_err(|e| format!("zstandard: {e}"))?;
                if out.len() > MAX_BLOCK_BYTES {
                    return Err(too_large());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips_and_names_itself() {
        let block: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for codec in [
            BlockCodec::Null,
            BlockCodec::DEFLATE,
            BlockCodec::Snappy,
            BlockCodec::ZSTANDARD,
        ] {
            let packed = codec.compress(&block).unwrap();
            let mut back = Vec::new();
            codec.decompress(&packed, &mut back).unwrap();
            assert_eq!(back, block, "{codec:?}");
            assert_eq!(BlockCodec::from_name(codec.name()), Some(codec));
        }
    }

    #[test]
    fn specs_parse_with_levels_and_reject_what_they_cannot_mean() {
        assert_eq!(
            BlockCodec::parse("zstd:7"),
            Ok(BlockCodec::Zstandard { level: 7 })
        );
        assert_eq!(BlockCodec::parse("deflate"), Ok(BlockCodec::DEFLATE));
        assert_eq!(
            BlockCodec::parse("deflate:0"),
            Ok(BlockCodec::Deflate { level: 0 })
        );
        assert_eq!(BlockCodec::parse("snappy"), Ok(BlockCodec::Snappy));
        assert_eq!(BlockCodec::parse("null"), Ok(BlockCodec::Null));
        for bad in [
            "lz4",
            "zstd:0",
            "zstd:23",
            "zstd:x",
            "deflate:11",
            "snappy:1",
            "",
        ] {
            let error = BlockCodec::parse(bad).unwrap_err();
            assert!(error.contains(&format!("\"{bad}\"")), "{bad}: {error}");
        }
    }

    #[test]
    fn snappy_checksum_and_declared_length_are_checked() {
        let block = b"hello hello hello hello".to_vec();
        let mut packed = BlockCodec::Snappy.compress(&block).unwrap();
        let last = packed.len() - 1;
        packed[last] ^= 1;
        let mut out = Vec::new();
        let e = BlockCodec::Snappy
            .decompress(&packed, &mut out)
            .unwrap_err();
        assert!(e.contains("checksum"), "{e}");
        // A varint length of 2^31 in a 5-byte block.
        let hostile = [0x80, 0x80, 0x80, 0x80, 0x08, 0, 0, 0, 0];
        let e = BlockCodec::Snappy
            .decompress(&hostile, &mut out)
            .unwrap_err();
        assert!(e.contains("declares"), "{e}");
        assert!(BlockCodec::Snappy.decompress(&[1, 2], &mut out).is_err());
    }

    #[test]
    fn garbage_is_an_error_for_every_compressing_codec() {
        let mut out = Vec::new();
        for codec in [
            BlockCodec::DEFLATE,
            BlockCodec::Snappy,
            BlockCodec::ZSTANDARD,
        ] {
            assert!(
                codec.decompress(&[0xFF; 40], &mut out).is_err(),
                "{codec:?}"
            );
        }
    }
}
