//! Option strings in ArrayRecord's grammar: `option? ("," option?)*`, `option ::= key (":" value)?`.
//!
//! Writer keys: `group_size:N`, `zstd[:level]`, `brotli[:level]`, `snappy`, `uncompressed`,
//! `window_log:N`, `max_parallelism:auto|N`, `pad_to_block_boundary[:true|false]`,
//! `transpose[:false]`, `saturation_delay_ms:N` (accepted, no effect), `default`, and
//! shapeshift's extensions `zstd_dictionary[:bytes]` and `direct_io[:true|false]`. Reader keys: `readahead_buffer_size`,
//! `max_parallelism`, `index_storage_option`, `footer_prefetch_bytes`.

use crate::compression::Compression;
use crate::error::{Error, Result};

/// How a [`Writer`](crate::Writer) lays out and compresses a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    /// Records per chunk; a reader decodes a whole chunk to get one record.
    pub group_size: u64,
    pub compression: Compression,
    /// zstd/brotli window; `None` takes array_record's default (zstd 20, brotli 22).
    pub window_log: Option<u32>,
    /// Chunks encoded at once; `None` uses every core.
    pub max_parallelism: Option<usize>,
    /// Pad every data chunk to a 64 KiB boundary (array_record's option).
    pub pad_to_block_boundary: bool,
    /// shapeshift extension: train a zstd dictionary of this many bytes on the first records
    /// and compress every chunk with it. Files written so are NOT readable by array_record.
    pub zstd_dictionary: Option<usize>,
    /// shapeshift extension: write the file with `O_DIRECT` (Linux), bypassing the page
    /// cache. The bytes are the same; only how they reach the disk differs (see
    /// docs/records.md, "Writing").
    pub direct_io: bool,
    /// The `max_parallelism` written into the stored option string; `None` records the
    /// parallelism used. array_record's Python writer always records 1, so shapeshift's Python
    /// writer sets 1 for the same footer.
    pub recorded_max_parallelism: Option<usize>,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            group_size: 65536,
            compression: Compression::Zstd { level: 3 },
            window_log: None,
            max_parallelism: None,
            pad_to_block_boundary: false,
            zstd_dictionary: None,
            direct_io: false,
            recorded_max_parallelism: None,
        }
    }
}

/// Default size of a trained dictionary (zstd's own default).
pub const DEFAULT_DICTIONARY_SIZE: usize = 112_640;

fn fail(text: &str, what: impl Into<String>) -> Error {
    Error::Options {
        text: text.to_string(),
        what: what.into(),
    }
}

fn entries(text: &str) -> impl Iterator<Item = (&str, Option<&str>)> {
    text.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| match entry.split_once(':') {
            Some((key, value)) => (key.trim(), Some(value.trim())),
            None => (entry, None),
        })
}

fn integer(text: &str, key: &str, value: Option<&str>, min: i64, max: i64) -> Result<i64> {
    let value = value.ok_or_else(|| fail(text, format!("{key} needs a value")))?;
    let parsed: i64 = value
        .parse()
        .map_err(|_| fail(text, format!("{key}:{value} is not an integer")))?;
    if !(min..=max).contains(&parsed) {
        return Err(fail(
            text,
            format!("{key} must be in {min}..={max}, got {parsed}"),
        ));
    }
    Ok(parsed)
}

fn boolean(text: &str, key: &str, value: Option<&str>) -> Result<bool> {
    match value {
        None | Some("") | Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => Err(fail(
            text,
            format!("{key} takes true or false, got {other}"),
        )),
    }
}

/// Byte counts like `16M`, `1.5k`, `4096`.
fn bytes(text: &str, key: &str, value: Option<&str>) -> Result<u64> {
    let value = value.ok_or_else(|| fail(text, format!("{key} needs a value")))?;
    let (number, scale) = match value.chars().last() {
        Some(suffix) if suffix.is_ascii_alphabetic() => {
            let exponent = match suffix.to_ascii_uppercase() {
                'B' => 0,
                'K' => 1,
                'M' => 2,
                'G' => 3,
                'T' => 4,
                'P' => 5,
                'E' => 6,
                _ => return Err(fail(text, format!("{key}: unknown size suffix {suffix}"))),
            };
            (&value[..value.len() - 1], 1024f64.powi(exponent))
        }
        _ => (value, 1.0),
    };
    let number: f64 = number
        .parse()
        .map_err(|_| fail(text, format!("{key}:{value} is not a size")))?;
    if number.is_nan() || number < 0.0 || number * scale > u64::MAX as f64 {
        return Err(fail(text, format!("{key}:{value} is out of range")));
    }
    Ok((number * scale) as u64)
}

impl WriterOptions {
    /// Parses an option string such as `group_size:1,zstd:3`.
    ///
    /// # Errors
    /// [`Error::Options`] for an unknown key, a malformed or out-of-range value, or a feature
    /// this writer does not implement (`transpose:true`).
    pub fn parse(text: &str) -> Result<WriterOptions> {
        let mut options = WriterOptions::default();
        for (key, value) in entries(text) {
            match key {
                "default" => {}
                "group_size" => {
                    options.group_size = integer(text, key, value, 1, i32::MAX as i64)? as u64
                }
                "max_parallelism" => {
                    options.max_parallelism = match value {
                        Some("auto") => None,
                        _ => Some(integer(text, key, value, 1, i32::MAX as i64)? as usize),
                    }
                }
                "saturation_delay_ms" => {
                    integer(text, key, value, 1, i32::MAX as i64)?;
                }
                "transpose" => {
                    if boolean(text, key, value)? {
                        return Err(fail(
                            text,
                            "shapeshift writes simple chunks only (it reads transposed chunks but does not write them); use transpose:false",
                        ));
                    }
                }
                "transpose_bucket_size" => {}
                "pad_to_block_boundary" => {
                    options.pad_to_block_boundary = boolean(text, key, value)?
                }
                "uncompressed" => options.compression = Compression::None,
                "snappy" => options.compression = Compression::Snappy,
                "zstd" => {
                    let level = match value {
                        None | Some("") => 3,
                        _ => integer(text, key, value, -32, 22)? as i32,
                    };
                    options.compression = Compression::Zstd { level };
                }
                "brotli" => {
                    let level = match value {
                        None | Some("") => 6,
                        _ => integer(text, key, value, 0, 11)? as i32,
                    };
                    options.compression = Compression::Brotli { level };
                }
                "direct_io" => options.direct_io = boolean(text, key, value)?,
                "window_log" => {
                    options.window_log = Some(integer(text, key, value, 10, 31)? as u32)
                }
                "zstd_dictionary" => {
                    options.zstd_dictionary = Some(match value {
                        None | Some("") => DEFAULT_DICTIONARY_SIZE,
                        _ => integer(text, key, value, 256, 1 << 30)? as usize,
                    })
                }
                other => return Err(fail(text, format!("unknown writer option {other:?}"))),
            }
        }
        if options.zstd_dictionary.is_some()
            && !matches!(options.compression, Compression::Zstd { .. })
        {
            return Err(fail(text, "zstd_dictionary needs zstd compression"));
        }
        if let (Some(window_log), Compression::Brotli { .. }) =
            (options.window_log, options.compression)
        {
            if !(10..=24).contains(&window_log) {
                return Err(fail(text, "brotli window_log must be in 10..=24"));
            }
        }
        Ok(options)
    }

    /// The window log actually used (array_record defaults zstd to 20).
    pub fn effective_window_log(&self) -> Option<u32> {
        match self.compression {
            Compression::Zstd { .. } => Some(self.window_log.unwrap_or(20)),
            Compression::Brotli { .. } => self.window_log,
            _ => None,
        }
    }

    /// The canonical option string stored in the footer, in array_record's format.
    pub fn to_canonical_string(&self, parallelism: usize) -> String {
        let mut text = format!(
            "group_size:{},transpose:false,pad_to_block_boundary:{}",
            self.group_size, self.pad_to_block_boundary
        );
        match self.compression {
            Compression::None => text.push_str(",uncompressed"),
            Compression::Brotli { level } => text.push_str(&format!(",brotli:{level}")),
            Compression::Zstd { level } => text.push_str(&format!(",zstd:{level}")),
            Compression::Snappy => text.push_str(",snappy"),
        }
        if let Some(window_log) = self.effective_window_log() {
            text.push_str(&format!(",window_log:{window_log}"));
        }
        text.push_str(&format!(",max_parallelism:{parallelism}"));
        if let Some(size) = self.zstd_dictionary {
            text.push_str(&format!(",zstd_dictionary:{size}"));
        }
        text
    }
}

/// How a [`Reader`](crate::Reader) reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderOptions {
    /// Decoded bytes the sequential reader decodes ahead (array_record's default 16 MiB).
    pub readahead_buffer_size: u64,
    /// Threads for batch and read-ahead decoding; `None` uses every core, 0 or 1 decodes on
    /// the calling thread.
    pub max_parallelism: Option<usize>,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            readahead_buffer_size: 16 << 20,
            max_parallelism: None,
        }
    }
}

impl ReaderOptions {
    /// Parses a reader option string such as `readahead_buffer_size:0,max_parallelism:0`.
    ///
    /// # Errors
    /// [`Error::Options`] for an unknown key or a malformed value.
    pub fn parse(text: &str) -> Result<ReaderOptions> {
        let mut options = ReaderOptions::default();
        for (key, value) in entries(text) {
            match key {
                "readahead_buffer_size" => options.readahead_buffer_size = bytes(text, key, value)?,
                "max_parallelism" => {
                    options.max_parallelism = match value {
                        Some("auto") => None,
                        _ => Some(integer(text, key, value, 0, i32::MAX as i64)? as usize),
                    }
                }
                "index_storage_option" => match value {
                    Some("in_memory") | Some("offloaded") => {}
                    _ => return Err(fail(text, "index_storage_option is in_memory or offloaded")),
                },
                "footer_prefetch_bytes" => {
                    if value != Some("auto") {
                        bytes(text, key, value)?;
                    }
                }
                other => return Err(fail(text, format!("unknown reader option {other:?}"))),
            }
        }
        Ok(options)
    }

    pub(crate) fn parallel(&self) -> bool {
        self.max_parallelism.is_none_or(|threads| threads > 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_array_record_grammar() {
        let options = WriterOptions::parse("group_size:1,zstd:3").unwrap();
        assert_eq!(options.group_size, 1);
        assert_eq!(options.compression, Compression::Zstd { level: 3 });
        assert_eq!(
            options.to_canonical_string(1),
            "group_size:1,transpose:false,pad_to_block_boundary:false,zstd:3,window_log:20,max_parallelism:1"
        );
        assert_eq!(
            WriterOptions::parse("brotli").unwrap().compression,
            Compression::Brotli { level: 6 }
        );
        assert_eq!(WriterOptions::parse("").unwrap(), WriterOptions::default());
        assert!(WriterOptions::parse("zstd:99").is_err());
        assert!(WriterOptions::parse("frobnicate").is_err());
        assert!(WriterOptions::parse("transpose").is_err());
        assert!(WriterOptions::parse("snappy,zstd_dictionary").is_err());
        let direct = WriterOptions::parse("group_size:1,zstd:3,direct_io").unwrap();
        assert!(direct.direct_io && !options.direct_io);
        // How the bytes reach the disk is not part of the file.
        assert_eq!(
            direct.to_canonical_string(1),
            options.to_canonical_string(1)
        );
        assert!(WriterOptions::parse("direct_io:maybe").is_err());
        let reader = ReaderOptions::parse("readahead_buffer_size:1.5M,max_parallelism:0").unwrap();
        assert_eq!(reader.readahead_buffer_size, 1_572_864);
        assert!(!reader.parallel());
    }
}
