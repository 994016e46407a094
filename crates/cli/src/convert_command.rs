//! `shapeshift convert` and `shapeshift cat`: table streams between YSON (binary, text) and
//! Skiff, standard input to standard output.

use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use shapeshift_formats::skiff::{Codec, MappingOptions, SystemFields};
use shapeshift_formats::yson::{Control, TableItem, TableReader, TableWriter, YsonFormat};
use shapeshift_types::TableSchema;

use crate::table_rows::{read_schema, row_from_node, row_to_node};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StreamFormat {
    /// Binary YSON (reading accepts text too).
    Yson,
    /// Text YSON.
    YsonText,
    /// Skiff; needs --schema.
    Skiff,
}

#[derive(Args)]
pub struct ConvertArgs {
    #[arg(long, value_enum)]
    from: StreamFormat,
    #[arg(long, value_enum)]
    to: StreamFormat,
    /// A table schema in YT's YSON form; repeat for several tables (table index = position).
    #[arg(long)]
    schema: Vec<PathBuf>,
    /// Skiff carries `$key_switch`, `$row_index` and `$range_index` system fields.
    #[arg(long)]
    system_columns: bool,
}

#[derive(Args)]
pub struct CatArgs {
    /// The stream's format.
    #[arg(long, value_enum, default_value_t = StreamFormat::Yson)]
    format: StreamFormat,
    /// Table schemas, for Skiff (as for `convert`).
    #[arg(long)]
    schema: Vec<PathBuf>,
    #[arg(long)]
    system_columns: bool,
    /// A file to read instead of standard input.
    file: Option<PathBuf>,
}

/// A table stream event, the common currency of the conversions.
enum Item {
    Row {
        table: usize,
        row: shapeshift_types::Node,
    },
    Control(Control),
}

fn schemas(paths: &[PathBuf], needed: bool) -> Result<Vec<TableSchema>, String> {
    if needed && paths.is_empty() {
        return Err("skiff needs --schema FILE (a table schema in YT's YSON form)".into());
    }
    paths.iter().map(|p| read_schema(p)).collect()
}

fn skiff_codec(schemas: &[TableSchema], system_columns: bool) -> Result<Codec, String> {
    let options = MappingOptions {
        key_switch: system_columns,
        row_index: system_columns,
        range_index: system_columns,
        ..MappingOptions::default()
    };
    Codec::for_table_schemas(schemas, &options).map_err(|e| format!("skiff schema: {e}"))
}

/// Reads `input` in `format`, calling `sink` for every row and control record.
fn read_items(
    input: impl Read,
    format: StreamFormat,
    schemas: &[TableSchema],
    system_columns: bool,
    mut sink: impl FnMut(Item) -> Result<(), String>,
) -> Result<(), String> {
    match format {
        StreamFormat::Yson | StreamFormat::YsonText => {
            let mut reader = TableReader::new(input);
            let mut table = 0usize;
            while let Some(item) = reader.next_item().map_err(|e| e.to_string())? {
                match item {
                    TableItem::Row(row) => sink(Item::Row { table, row })?,
                    TableItem::Control(control) => {
                        if let Control::TableIndex(index) = control {
                            table = usize::try_from(index)
                                .map_err(|_| format!("yson: negative table index {index}"))?;
                        }
                        sink(Item::Control(control))?
                    }
                }
            }
        }
        StreamFormat::Skiff => {
            let codec = skiff_codec(schemas, system_columns)?;
            let mut reader = codec.stream_reader(input);
            let mut table = 0usize;
            let mut expected_row_index: Option<i64> = None;
            let mut row_number = 0u64;
            while let Some(view) = reader.next_row().map_err(|e| e.to_string())? {
                let row = view.to_owned_row().map_err(|e| e.to_string())?;
                let index = row.table_index as usize;
                if index != table {
                    table = index;
                    sink(Item::Control(Control::TableIndex(index as i64)))?;
                }
                if let Some(range) = row.system.range_index {
                    sink(Item::Control(Control::RangeIndex(range)))?;
                }
                if let Some(row_index) = row.system.row_index {
                    if expected_row_index != Some(row_index) {
                        sink(Item::Control(Control::RowIndex(row_index)))?;
                    }
                    expected_row_index = Some(row_index + 1);
                }
                if row.system.key_switch {
                    sink(Item::Control(Control::KeySwitch))?;
                }
                let node = row_to_node(
                    &row.values,
                    &schemas[index],
                    row.system.other_columns.as_deref(),
                    row_number,
                )?;
                row_number += 1;
                sink(Item::Row { table, row: node })?;
            }
        }
    }
    Ok(())
}

/// Writes items into a stream of `format`.
struct ItemWriter<W: Write> {
    target: Target<W>,
    rows: u64,
    pending: SystemFields,
}

enum Target<W: Write> {
    Yson(TableWriter<W>),
    Skiff {
        writer: shapeshift_formats::skiff::RowWriter<W>,
        schemas: Vec<TableSchema>,
        system_columns: bool,
    },
}

impl<W: Write> ItemWriter<W> {
    fn new(
        output: W,
        format: StreamFormat,
        schemas: &[TableSchema],
        system_columns: bool,
    ) -> Result<Self, String> {
        let target = match format {
            StreamFormat::Yson => Target::Yson(TableWriter::new(output, YsonFormat::Binary)),
            StreamFormat::YsonText => Target::Yson(TableWriter::new(output, YsonFormat::Text)),
            StreamFormat::Skiff => {
                let codec = skiff_codec(schemas, system_columns)?;
                let writer = codec.writer(output);
                Target::Skiff {
                    writer,
                    schemas: schemas.to_vec(),
                    system_columns,
                }
            }
        };
        Ok(ItemWriter {
            target,
            rows: 0,
            pending: SystemFields::default(),
        })
    }

    fn write(&mut self, item: Item) -> Result<(), String> {
        match (&mut self.target, item) {
            (Target::Yson(writer), Item::Row { row, .. }) => writer
                .write_row(&row)
                .map_err(|e| format!("writing yson: {e}"))?,
            (Target::Yson(writer), Item::Control(control)) => writer
                .write_control(control)
                .map_err(|e| format!("writing yson: {e}"))?,
            (
                Target::Skiff {
                    writer,
                    schemas,
                    system_columns,
                    ..
                },
                Item::Row { table, row },
            ) => {
                let schema = schemas.get(table).ok_or_else(|| {
                    format!("row {}: table index {table} has no --schema", self.rows)
                })?;
                let (values, others) = row_from_node(&row, schema, self.rows)?;
                let mut system = std::mem::take(&mut self.pending);
                system.other_columns = others;
                if !*system_columns {
                    system.row_index = None;
                    system.range_index = None;
                    system.key_switch = false;
                }
                writer
                    .write_row(table as u16, &values, &system)
                    .map_err(|e| format!("writing skiff: {e}"))?;
            }
            (Target::Skiff { system_columns, .. }, Item::Control(control)) => match control {
                Control::TableIndex(_) => {}
                Control::RowIndex(_) | Control::RangeIndex(_) | Control::KeySwitch
                    if !*system_columns =>
                {
                    return Err(format!(
                        "before row {}: the input has a {control:?} control record, which skiff \
                         carries only in system columns: pass --system-columns",
                        self.rows
                    ))
                }
                Control::RowIndex(index) => self.pending.row_index = Some(index),
                Control::RangeIndex(index) => self.pending.range_index = Some(index),
                Control::KeySwitch => self.pending.key_switch = true,
            },
        }
        Ok(())
    }

    fn finish(self) -> Result<(), String> {
        let mut output = match self.target {
            Target::Yson(writer) => writer.finish().map_err(|e| format!("writing yson: {e}"))?,
            Target::Skiff { writer, .. } => {
                writer.finish().map_err(|e| format!("writing skiff: {e}"))?
            }
        };
        output.flush().map_err(|e| format!("writing output: {e}"))
    }
}

/// Runs `shapeshift convert`.
///
/// # Errors
/// A message naming the format, the row and the problem.
pub fn convert(args: ConvertArgs) -> Result<(), String> {
    let needs_schema = args.from == StreamFormat::Skiff || args.to == StreamFormat::Skiff;
    let schemas = schemas(&args.schema, needs_schema)?;
    let stdout = io::stdout().lock();
    let mut writer = ItemWriter::new(
        BufWriter::new(stdout),
        args.to,
        &schemas,
        args.system_columns,
    )?;
    let stdin = io::stdin().lock();
    read_items(stdin, args.from, &schemas, args.system_columns, |item| {
        let is_row = matches!(item, Item::Row { .. });
        writer.write(item)?;
        writer.rows += is_row as u64;
        Ok(())
    })?;
    writer.finish()
}

/// Runs `shapeshift cat`: one row per line as text YSON, control records as `# ...` lines.
///
/// # Errors
/// As [`convert`].
pub fn cat(args: CatArgs) -> Result<(), String> {
    let schemas = schemas(&args.schema, args.format == StreamFormat::Skiff)?;
    let input: Box<dyn Read> = match &args.file {
        Some(path) => Box::new(io::BufReader::new(
            std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?,
        )),
        None => Box::new(io::stdin().lock()),
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let io_error = |e: io::Error| format!("writing output: {e}");
    read_items(
        input,
        args.format,
        &schemas,
        args.system_columns,
        |item| match item {
            Item::Row { row, .. } => {
                let text = shapeshift_formats::yson::to_vec(&row, YsonFormat::Text);
                out.write_all(&text).map_err(io_error)?;
                out.write_all(b"\n").map_err(io_error)
            }
            Item::Control(control) => {
                let line = match control {
                    Control::TableIndex(i) => format!("# table_index = {i}\n"),
                    Control::RowIndex(i) => format!("# row_index = {i}\n"),
                    Control::RangeIndex(i) => format!("# range_index = {i}\n"),
                    Control::KeySwitch => "# key_switch\n".to_string(),
                };
                out.write_all(line.as_bytes()).map_err(io_error)
            }
        },
    )?;
    out.flush().map_err(io_error)
}
