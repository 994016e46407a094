//! The formats a table can be registered in, their names, and how a file's format is told
//! from its name or first bytes.

use std::fmt;
use std::io::Read;
use std::path::Path;

use shapeshift_formats::registry::{self, FormatKind};

/// How the files of a table are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    /// Parquet, by DataFusion's reader (row groups in parallel, column and row-group pruning).
    Parquet,
    /// Arrow IPC files (`ARROW1` magic), by DataFusion's reader.
    ArrowFile,
    /// CSV with a header line, by DataFusion's reader (schema inferred).
    Csv,
    /// JSON lines (any objects), by DataFusion's reader (schema inferred).
    JsonLines,
    /// A YT table stream in one of our row formats, by our readers (schema from a YT schema
    /// file, or from the file itself for Arrow streams and Avro).
    Rows(FormatKind),
    /// ArrayRecord files: one row per record, columns `index` and `record`.
    Records,
    /// ArrayRecord files whose records each hold one row in a row format (`records+msgpack`,
    /// `records+yson`, ...), decoded into the columns of a YT schema.
    RecordRows(FormatKind),
}

impl TableFormat {
    /// The format named `name`: `parquet`, `arrow-file`, `csv`, `jsonl` (or `ndjson`),
    /// `records`, `records+` a row format's name, or a row format's name (`yson`, `skiff`,
    /// `arrow`, `json`, ...).
    pub fn from_name(name: &str) -> Option<TableFormat> {
        let name = name.to_ascii_lowercase();
        if let Some(row_format) = name.strip_prefix("records+") {
            return FormatKind::from_name(row_format).map(TableFormat::RecordRows);
        }
        match name.as_str() {
            "parquet" => Some(TableFormat::Parquet),
            "arrow-file" | "arrow_file" | "ipc" => Some(TableFormat::ArrowFile),
            "csv" => Some(TableFormat::Csv),
            "jsonl" | "ndjson" => Some(TableFormat::JsonLines),
            "records" | "array-record" | "array_record" | "arrayrecord" => {
                Some(TableFormat::Records)
            }
            other => FormatKind::from_name(other).map(TableFormat::Rows),
        }
    }

    /// Every name [`TableFormat::from_name`] knows, for messages.
    pub fn names() -> Vec<&'static str> {
        let mut names = vec![
            "parquet",
            "arrow-file",
            "csv",
            "jsonl",
            "records",
            "records+FORMAT",
        ];
        names.extend(FormatKind::ALL.iter().map(|k| k.name()));
        names
    }

    /// The format a file's extension names, if it names one (`.json` is left to
    /// [`TableFormat::detect`]: JSON lines or YT's JSON rows depend on a schema).
    pub fn from_extension(path: &Path) -> Option<TableFormat> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match extension.as_str() {
            "parquet" | "pq" => TableFormat::Parquet,
            "csv" => TableFormat::Csv,
            "jsonl" | "ndjson" => TableFormat::JsonLines,
            "yson" => TableFormat::Rows(FormatKind::Yson),
            "skiff" => TableFormat::Rows(FormatKind::Skiff),
            "avro" => TableFormat::Rows(FormatKind::Avro),
            "msgpack" | "mpk" => TableFormat::Rows(FormatKind::Msgpack),
            "cbor" => TableFormat::Rows(FormatKind::Cbor),
            "pb" | "protobuf" => TableFormat::Rows(FormatKind::Protobuf),
            "thrift" => TableFormat::Rows(FormatKind::Thrift),
            "array_record" | "arrayrecord" | "riegeli" | "records" => TableFormat::Records,
            _ => return None,
        })
    }

    /// The format of `path`: its extension when it names one, else its first bytes
    /// (ArrayRecord, Parquet, Arrow file and stream, Avro, JSON and YSON; the binary row
    /// formats without a signature need an extension or an explicit format).
    /// `has_schema` tells a `.json` file of YT rows (a schema given) from JSON lines.
    ///
    /// # Errors
    /// When the file cannot be read, or nothing in it tells its format.
    pub fn detect(path: &Path, has_schema: bool) -> Result<TableFormat, String> {
        if let Some(format) = TableFormat::from_extension(path) {
            return Ok(format);
        }
        let mut head = Vec::with_capacity(4096);
        std::fs::File::open(path)
            .and_then(|f| f.take(4096).read_to_end(&mut head))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if shapeshift_records::is_record_file(&head) {
            return Ok(TableFormat::Records);
        }
        if head.starts_with(b"PAR1") {
            return Ok(TableFormat::Parquet);
        }
        if head.starts_with(b"ARROW1") {
            return Ok(TableFormat::ArrowFile);
        }
        let is_json = path.extension().is_some_and(|e| e == "json");
        match registry::sniff(&head).first() {
            Some(FormatKind::Json) if !has_schema => Ok(TableFormat::JsonLines),
            _ if is_json && !has_schema => Ok(TableFormat::JsonLines),
            _ if is_json => Ok(TableFormat::Rows(FormatKind::Json)),
            // Only the formats with a signature of their own; binary rows without one
            // (Skiff, Protobuf, Thrift, MessagePack, CBOR) could be any of them.
            Some(&kind @ (FormatKind::Avro | FormatKind::Arrow)) => Ok(TableFormat::Rows(kind)),
            Some(&kind @ (FormatKind::Yson | FormatKind::YsonText)) if has_schema => {
                Ok(TableFormat::Rows(kind))
            }
            _ => Err(format!(
                "{}: cannot tell the format from the name or the bytes; add :FORMAT ({})",
                path.display(),
                TableFormat::names().join(", ")
            )),
        }
    }
}

impl fmt::Display for TableFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableFormat::Parquet => f.write_str("parquet"),
            TableFormat::ArrowFile => f.write_str("arrow-file"),
            TableFormat::Csv => f.write_str("csv"),
            TableFormat::JsonLines => f.write_str("jsonl"),
            TableFormat::Rows(kind) => f.write_str(kind.name()),
            TableFormat::Records => f.write_str("records"),
            TableFormat::RecordRows(kind) => write!(f, "records+{}", kind.name()),
        }
    }
}
