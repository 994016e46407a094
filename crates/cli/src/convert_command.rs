//! `shapeshift convert`, `shapeshift cat` and `shapeshift inspect`: table streams in any
//! format of the common row interface (`shapeshift_formats::table`).
//!
//! Every typed format needs the table schemas (`--schema FILE`, one per table, table index =
//! position). YSON is the one format readable without a schema: YSON to YSON conversion and
//! `cat`/`inspect` of YSON or JSON then work on untyped rows. With `yaml` on either side,
//! `convert` converts one whole document instead (`document_command`).

use std::io::{self, BufWriter, Cursor, Read, Write};
use std::path::PathBuf;

use clap::Args;
use shapeshift_formats::avro::BlockCodec;
use shapeshift_formats::registry::{open_sink_with, open_source_with, FormatKind, FormatOptions};
use shapeshift_formats::table::{value_from_ref, FormatError};
use shapeshift_formats::yson::{Control, TableItem, TableReader, TableWriter, YsonFormat};
use shapeshift_types::{value_to_node, Node, SchemaForm, StructForm, TableSchema};

use crate::document_command::{self, parse_convert_format, ConvertFormat};
use crate::table_rows::read_schema;

/// Parses a format name for clap.
fn parse_format(name: &str) -> Result<FormatKind, String> {
    FormatKind::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = FormatKind::ALL.iter().map(|k| k.name()).collect();
        format!("unknown format '{name}' (one of: {})", names.join(", "))
    })
}

#[derive(Args)]
pub struct ConvertArgs {
    /// Input format: yson, yson-text, skiff, protobuf, protobuf-dynamic, arrow, json,
    /// msgpack, cbor, avro, thrift, thrift-compact; or yaml: then the input is one whole
    /// document (YAML, YSON or JSON), not a table stream, converted to or from YAML.
    #[arg(long, value_parser = parse_convert_format)]
    from: ConvertFormat,
    /// Output format (as --from).
    #[arg(long, value_parser = parse_convert_format)]
    to: ConvertFormat,
    /// A table schema in YT's YSON form; repeat for several tables (table index = position).
    /// Needed unless both formats are YSON.
    #[arg(long)]
    schema: Vec<PathBuf>,
    /// Skiff carries `$key_switch`, `$row_index` and `$range_index` system fields.
    #[arg(long)]
    system_columns: bool,
    /// Avro output: block compression, `null`, `deflate[:0-10]`, `snappy` or
    /// `zstandard[:1-22]` (also `zstd`). Avro input names its own codec.
    #[arg(long, value_parser = BlockCodec::parse, default_value = "null")]
    avro_codec: BlockCodec,
}

#[derive(Args)]
pub struct CatArgs {
    /// The stream's format: yson, yson-text, skiff, protobuf, protobuf-dynamic, arrow, json,
    /// msgpack, cbor, avro, thrift, thrift-compact. (ArrayRecord files: `shapeshift records
    /// cat`.)
    #[arg(long, value_parser = parse_format, default_value = "yson")]
    format: FormatKind,
    /// Table schemas (as for `convert`); needed for every format but YSON.
    #[arg(long)]
    schema: Vec<PathBuf>,
    #[arg(long)]
    system_columns: bool,
    /// A file to read instead of standard input.
    file: Option<PathBuf>,
}

#[derive(Args)]
pub struct InspectArgs {
    /// The file to inspect.
    file: PathBuf,
    /// Its format; sniffed from the bytes when left out.
    #[arg(long, value_parser = parse_format)]
    format: Option<FormatKind>,
    /// Table schemas (as for `convert`); needed for the formats that do not describe
    /// themselves.
    #[arg(long)]
    schema: Vec<PathBuf>,
    #[arg(long)]
    system_columns: bool,
}

fn is_yson(kind: FormatKind) -> bool {
    matches!(kind, FormatKind::Yson | FormatKind::YsonText)
}

fn schemas(paths: &[PathBuf]) -> Result<Vec<TableSchema>, String> {
    paths.iter().map(|p| read_schema(p)).collect()
}

fn need_schemas(paths: &[PathBuf], kind: FormatKind) -> Result<Vec<TableSchema>, String> {
    if paths.is_empty() {
        return Err(format!(
            "{kind} needs --schema FILE (a table schema in YT's YSON form; one per table)"
        ));
    }
    schemas(paths)
}

fn options(system_columns: bool) -> FormatOptions {
    FormatOptions {
        skiff_system_columns: system_columns,
        ..FormatOptions::default()
    }
}

fn format_error(error: FormatError) -> String {
    error.to_string()
}

/// Runs `shapeshift convert`.
///
/// # Errors
/// A message naming the format, the byte offset or row, and the problem.
pub fn convert(args: ConvertArgs) -> Result<(), String> {
    let stdin: Box<dyn Read> = Box::new(io::stdin());
    let stdout: Box<dyn Write> = Box::new(BufWriter::with_capacity(1 << 16, io::stdout()));
    let (from, to) = match (args.from, args.to) {
        (ConvertFormat::Rows(from), ConvertFormat::Rows(to)) => (from, to),
        (from, to) => return document_command::convert(from, to, stdin, stdout),
    };
    if args.schema.is_empty() && is_yson(from) && is_yson(to) {
        return convert_untyped_yson(stdin, stdout, to == FormatKind::YsonText);
    }
    let kind = if args.schema.is_empty() && is_yson(from) {
        to
    } else {
        from
    };
    let schemas = need_schemas(&args.schema, kind)?;
    let options = FormatOptions {
        avro_codec: args.avro_codec,
        ..options(args.system_columns)
    };
    let mut source = open_source_with(from, &schemas, stdin, &options).map_err(format_error)?;
    let mut sink = open_sink_with(to, &schemas, stdout, &options).map_err(format_error)?;
    let mut rows = 0u64;
    // Columns outside a non-strict schema travel too; a format that cannot carry them fails.
    while let Some((row, other_columns)) =
        source.next_row_with_other_columns().map_err(format_error)?
    {
        sink.write_row_with_other_columns(&row.position, row.values, other_columns)
            .map_err(|e| format!("{} (input row {rows})", format_error(e)))?;
        rows += 1;
    }
    sink.finish().map_err(format_error)
}

/// YSON to YSON without a schema: rows and control records as they are.
fn convert_untyped_yson(
    input: Box<dyn Read>,
    output: Box<dyn Write>,
    text: bool,
) -> Result<(), String> {
    let format = if text {
        YsonFormat::Text
    } else {
        YsonFormat::Binary
    };
    let mut reader = TableReader::new(input);
    let mut writer = TableWriter::new(output, format);
    let io_error = |e: io::Error| format!("writing yson: {e}");
    while let Some(item) = reader.next_item().map_err(|e| format!("yson: {e}"))? {
        match item {
            TableItem::Row(row) => writer.write_row(&row).map_err(io_error)?,
            TableItem::Control(control) => writer.write_control(control).map_err(io_error)?,
        }
    }
    writer.finish().map_err(io_error)?.flush().map_err(io_error)
}

fn open_input(file: &Option<PathBuf>) -> Result<Box<dyn Read>, String> {
    Ok(match file {
        Some(path) => Box::new(io::BufReader::new(
            std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?,
        )),
        None => Box::new(io::stdin()),
    })
}

/// Runs `shapeshift cat`: one row per line as text YSON, control records (and position
/// changes) as `# ...` lines.
///
/// # Errors
/// As [`convert`].
pub fn cat(args: CatArgs) -> Result<(), String> {
    let input = open_input(&args.file)?;
    let mut out = BufWriter::new(io::stdout().lock());
    let io_error = |e: io::Error| format!("writing output: {e}");
    if args.schema.is_empty() && is_yson(args.format) {
        let mut reader = TableReader::new(input);
        while let Some(item) = reader.next_item().map_err(|e| format!("yson: {e}"))? {
            let line = match item {
                TableItem::Row(row) => {
                    let mut text = shapeshift_formats::yson::to_vec(&row, YsonFormat::Text);
                    text.push(b'\n');
                    text
                }
                TableItem::Control(control) => control_line(control).into_bytes(),
            };
            out.write_all(&line).map_err(io_error)?;
        }
        return out.flush().map_err(io_error);
    }
    let schemas = need_schemas(&args.schema, args.format)?;
    let mut source = open_source_with(args.format, &schemas, input, &options(args.system_columns))
        .map_err(format_error)?;
    let mut last = shapeshift_formats::table::RowPosition::default();
    let mut expected_row_index: Option<i64> = None;
    while let Some((row, other_columns)) =
        source.next_row_with_other_columns().map_err(format_error)?
    {
        let position = row.position;
        if position.table_index != last.table_index {
            writeln!(out, "# table_index = {}", position.table_index).map_err(io_error)?;
            expected_row_index = None;
        }
        if position.range_index.is_some() && position.range_index != last.range_index {
            writeln!(out, "# range_index = {}", position.range_index.unwrap_or(0))
                .map_err(io_error)?;
        }
        if let Some(index) = position.row_index {
            if expected_row_index != Some(index) {
                writeln!(out, "# row_index = {index}").map_err(io_error)?;
            }
        }
        expected_row_index = position.row_index.and_then(|i| i.checked_add(1));
        if position.key_switch {
            writeln!(out, "# key_switch").map_err(io_error)?;
        }
        last = position;
        let schema = &schemas[position.table_index];
        let mut entries = Vec::with_capacity(schema.columns.len());
        for (value, column) in row.values.iter().zip(&schema.columns) {
            let owned = value_from_ref(*value, &column.ty)
                .and_then(|v| value_to_node(&v, &column.ty, StructForm::Named))
                .map_err(|e| format!("{}: column \"{}\": {e}", args.format, column.name))?;
            entries.push((column.name.as_bytes().to_vec(), owned));
        }
        // Columns outside a non-strict schema are shown after the schema's.
        if let Some(bytes) = other_columns {
            match shapeshift_formats::yson::from_slice(bytes).map(|node| node.value) {
                Ok(shapeshift_types::NodeValue::Map(others)) => entries.extend(others),
                _ => return Err(format!("{}: malformed other columns", args.format)),
            }
        }
        let mut text = shapeshift_formats::yson::to_vec(&Node::map(entries), YsonFormat::Text);
        text.push(b'\n');
        out.write_all(&text).map_err(io_error)?;
    }
    out.flush().map_err(io_error)
}

fn control_line(control: Control) -> String {
    match control {
        Control::TableIndex(i) => format!("# table_index = {i}\n"),
        Control::RowIndex(i) => format!("# row_index = {i}\n"),
        Control::RangeIndex(i) => format!("# range_index = {i}\n"),
        Control::KeySwitch => "# key_switch\n".to_string(),
    }
}

/// Rows per table, reading the whole stream.
fn count_rows(
    kind: FormatKind,
    schemas: &[TableSchema],
    bytes: &[u8],
    system_columns: bool,
) -> Result<Vec<u64>, FormatError> {
    let mut source = open_source_with(
        kind,
        schemas,
        Box::new(Cursor::new(bytes.to_vec())),
        &options(system_columns),
    )?;
    let mut counts = vec![0u64; schemas.len()];
    while let Some(block) = source.next_rows()? {
        counts[block.first.table_index] += block.rows as u64;
    }
    Ok(counts)
}

/// Runs `shapeshift inspect`: the format, the schema and the row count of a file.
///
/// # Errors
/// A message naming the format and position when the file does not read.
pub fn inspect(args: InspectArgs) -> Result<(), String> {
    let bytes = std::fs::read(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    if args.format.is_none() && shapeshift_records::is_record_file(&bytes) {
        println!("format:          ArrayRecord (a Riegeli records file, sniffed)");
        return crate::records_command::run(crate::records_command::RecordsCommand::Info {
            file: args.file,
            json: false,
            no_verify: false,
        });
    }
    let schemas = schemas(&args.schema)?;
    let mut out = io::stdout().lock();
    let io_error = |e: io::Error| format!("writing output: {e}");
    if schemas.is_empty() {
        let kind = match args.format {
            Some(kind) => kind,
            None => *shapeshift_formats::registry::sniff(&bytes)
                .first()
                .ok_or("cannot tell the format: pass --format")?,
        };
        if matches!(kind, FormatKind::Arrow | FormatKind::Avro) {
            return inspect_self_described(kind, &bytes, args.format.is_none(), &mut out);
        }
        if !is_yson(kind) && kind != FormatKind::Json {
            return Err(format!(
                "{kind} does not describe its rows: pass --schema FILE to count them"
            ));
        }
        let (rows, columns) = if kind == FormatKind::Json {
            untyped_json(&bytes)?
        } else {
            untyped_yson(&bytes)?
        };
        let sniffed = if args.format.is_some() {
            ""
        } else {
            " (sniffed)"
        };
        writeln!(out, "format: {kind}{sniffed}").map_err(io_error)?;
        writeln!(
            out,
            "schema: none given; columns seen: {}",
            columns.join(", ")
        )
        .map_err(io_error)?;
        writeln!(out, "rows: {rows}").map_err(io_error)?;
        return Ok(());
    }
    let (kind, counts) = match args.format {
        Some(kind) => (
            kind,
            count_rows(kind, &schemas, &bytes, args.system_columns).map_err(format_error)?,
        ),
        None => {
            let mut first_error = None;
            let mut found = None;
            for kind in shapeshift_formats::registry::sniff(&bytes) {
                match count_rows(kind, &schemas, &bytes, args.system_columns) {
                    Ok(counts) => {
                        found = Some((kind, counts));
                        break;
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            found.ok_or_else(|| {
                format!(
                    "no format reads this file with these schemas; the likeliest failed with: {}",
                    first_error.map(format_error).unwrap_or_default()
                )
            })?
        }
    };
    let sniffed = if args.format.is_some() {
        ""
    } else {
        " (sniffed)"
    };
    writeln!(out, "format: {kind}{sniffed}").map_err(io_error)?;
    for (index, (schema, count)) in schemas.iter().zip(&counts).enumerate() {
        let text =
            shapeshift_formats::yson::to_vec(&schema.to_node(SchemaForm::TypeV3), YsonFormat::Text);
        writeln!(
            out,
            "table {index}: schema: {}",
            String::from_utf8_lossy(&text)
        )
        .map_err(io_error)?;
        writeln!(out, "table {index}: rows: {count}").map_err(io_error)?;
    }
    writeln!(out, "rows: {}", counts.iter().sum::<u64>()).map_err(io_error)?;
    Ok(())
}

/// `inspect` of an Arrow IPC stream or Avro container file without `--schema`: the tables
/// come from the schemas embedded in the file (YT types from the mapping's `yt.type_v3`),
/// and the rows are counted by reading the file with them.
fn inspect_self_described(
    kind: FormatKind,
    bytes: &[u8],
    sniffed: bool,
    out: &mut impl Write,
) -> Result<(), String> {
    let found: Vec<(usize, TableSchema)> = match kind {
        FormatKind::Arrow => shapeshift_formats::arrow::stream_tables(bytes),
        _ => shapeshift_formats::avro::container_tables(bytes)
            .map(|tables| tables.into_iter().map(|(i, t, _)| (i, t)).collect()),
    }
    .map_err(format_error)?;
    if found.is_empty() {
        return Err(format!("{kind}: the file holds no schema"));
    }
    let count = found.iter().map(|(i, _)| i + 1).max().unwrap_or(0);
    let mut schemas: Vec<Option<TableSchema>> = vec![None; count];
    for (index, table) in found {
        match &schemas[index] {
            Some(known) if *known != table => {
                return Err(format!(
                    "{kind}: table {index} appears with two different schemas"
                ))
            }
            _ => schemas[index] = Some(table),
        }
    }
    let present: Vec<bool> = schemas.iter().map(Option::is_some).collect();
    let schemas: Vec<TableSchema> = schemas
        .into_iter()
        .map(|s| s.unwrap_or_else(|| TableSchema::new(Vec::new())))
        .collect();
    let counts = count_rows(kind, &schemas, bytes, false).map_err(format_error)?;
    let io_error = |e: io::Error| format!("writing output: {e}");
    let sniffed = if sniffed { " (sniffed)" } else { "" };
    writeln!(out, "format: {kind}{sniffed}").map_err(io_error)?;
    for (index, ((schema, count), present)) in schemas.iter().zip(&counts).zip(&present).enumerate()
    {
        if !present {
            continue;
        }
        let text =
            shapeshift_formats::yson::to_vec(&schema.to_node(SchemaForm::TypeV3), YsonFormat::Text);
        writeln!(
            out,
            "table {index}: schema (from the file): {}",
            String::from_utf8_lossy(&text)
        )
        .map_err(io_error)?;
        writeln!(out, "table {index}: rows: {count}").map_err(io_error)?;
    }
    writeln!(out, "rows: {}", counts.iter().sum::<u64>()).map_err(io_error)?;
    Ok(())
}

fn push_columns(columns: &mut Vec<String>, keys: impl Iterator<Item = String>) {
    for key in keys {
        if !columns.contains(&key) {
            columns.push(key);
        }
    }
}

fn untyped_yson(bytes: &[u8]) -> Result<(u64, Vec<String>), String> {
    let mut reader = TableReader::new(bytes);
    let (mut rows, mut columns) = (0u64, Vec::new());
    while let Some(item) = reader.next_item().map_err(|e| format!("yson: {e}"))? {
        if let TableItem::Row(row) = item {
            if let shapeshift_types::NodeValue::Map(entries) = &row.value {
                push_columns(
                    &mut columns,
                    entries
                        .iter()
                        .map(|(k, _)| String::from_utf8_lossy(k).into_owned()),
                );
            }
            rows += 1;
        }
    }
    Ok((rows, columns))
}

fn untyped_json(bytes: &[u8]) -> Result<(u64, Vec<String>), String> {
    let (mut rows, mut columns) = (0u64, Vec::new());
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<serde_json::Value>();
    loop {
        let offset = stream.byte_offset();
        match stream.next() {
            None => break,
            Some(Err(e)) => return Err(format!("json: at byte {offset} or after: {e}")),
            Some(Ok(serde_json::Value::Object(map))) => {
                if map.contains_key("$value") {
                    continue;
                }
                push_columns(&mut columns, map.keys().cloned());
                rows += 1;
            }
            Some(Ok(_)) => {
                return Err(format!(
                    "json: at byte {offset}: expected a row (an object)"
                ))
            }
        }
    }
    Ok((rows, columns))
}
