//! Object container files: one container per run of a table, read and written block by block.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Write};

use serde_json::Value as Json;
use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::table::row_arena::{check_row, owned_value, RowArena};
use crate::table::{FormatError, RowPosition, RowRef, RowSink, RowSource};

use crate::avro::codec::{put_long, Reader};
use crate::avro::{codec, error, BlockCodec, RowCodec, BLOCK_BYTES, FORMAT, MAGIC};

struct OpenContainer {
    table_index: usize,
    codec: RowCodec,
    sync: [u8; 16],
    /// How its blocks are compressed.
    compression: BlockCodec,
}

struct ContainerSink {
    output: Box<dyn Write>,
    schemas: Vec<TableSchema>,
    container: Option<OpenContainer>,
    block: Vec<u8>,
    block_rows: u64,
    rows: u64,
    wrote_header: bool,
    compression: BlockCodec,
}

fn sync_marker(schema_json: &str, table_index: usize) -> [u8; 16] {
    let mut marker = [0u8; 16];
    for (i, half) in marker.chunks_mut(8).enumerate() {
        let mut hasher = DefaultHasher::new();
        (schema_json, table_index, i).hash(&mut hasher);
        half.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    marker
}

impl ContainerSink {
    fn io(&self, e: std::io::Error) -> FormatError {
        error(None, Some(self.rows), format!("write: {e}"))
    }

    fn flush_block(&mut self) -> Result<(), FormatError> {
        let Some(container) = &self.container else {
            return Ok(());
        };
        if self.block_rows == 0 {
            return Ok(());
        }
        let compressed = match container.compression {
            BlockCodec::Null => None,
            codec => Some(
                codec
                    .compress(&self.block)
                    .map_err(|e| error(None, Some(self.rows), e))?,
            ),
        };
        let data = compressed.as_deref().unwrap_or(&self.block);
        let mut head = Vec::with_capacity(20);
        put_long(&mut head, self.block_rows as i64);
        put_long(&mut head, data.len() as i64);
        let sync = container.sync;
        let result = self
            .output
            .write_all(&head)
            .and_then(|()| self.output.write_all(data))
            .and_then(|()| self.output.write_all(&sync));
        result.map_err(|e| self.io(e))?;
        self.block.clear();
        self.block_rows = 0;
        Ok(())
    }

    fn start_container(
        &mut self,
        table_index: usize,
        system_fields: bool,
    ) -> Result<(), FormatError> {
        self.flush_block()?;
        let codec = RowCodec::compile(&self.schemas[table_index], system_fields);
        let schema_json = codec.schema_json();
        let sync = sync_marker(&schema_json, table_index);
        let mut header = MAGIC.to_vec();
        let table = table_index.to_string();
        let metadata: [(&str, &[u8]); 3] = [
            ("avro.schema", schema_json.as_bytes()),
            ("avro.codec", self.compression.name().as_bytes()),
            ("yt.table_index", table.as_bytes()),
        ];
        put_long(&mut header, metadata.len() as i64);
        for (key, value) in metadata {
            put_long(&mut header, key.len() as i64);
            header.extend_from_slice(key.as_bytes());
            put_long(&mut header, value.len() as i64);
            header.extend_from_slice(value);
        }
        header.push(0);
        header.extend_from_slice(&sync);
        self.output.write_all(&header).map_err(|e| self.io(e))?;
        self.wrote_header = true;
        self.container = Some(OpenContainer {
            table_index,
            codec,
            sync,
            compression: self.compression,
        });
        Ok(())
    }

    fn write_values(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let needs_system =
            position.row_index.is_some() || position.range_index.is_some() || position.key_switch;
        let fits = self.container.as_ref().is_some_and(|c| {
            c.table_index == position.table_index && (c.codec.system_fields || !needs_system)
        });
        if !fits {
            self.start_container(position.table_index, needs_system)?;
        }
        let Some(container) = &self.container else {
            unreachable!("a container was started above")
        };
        let rows = self.rows;
        for (plan, (value, column)) in container
            .codec
            .plans
            .iter()
            .zip(values.iter().zip(&container.codec.schema.columns))
        {
            plan.encode(value, &mut self.block)
                .map_err(|e| error(None, Some(rows), format!("column {:?}: {e}", column.name)))?;
        }
        container.codec.encode_position(position, &mut self.block);
        self.block_rows += 1;
        self.rows += 1;
        if self.block.len() >= BLOCK_BYTES {
            self.flush_block()?;
        }
        Ok(())
    }

    fn table(&self, position: &RowPosition) -> Result<&TableSchema, FormatError> {
        self.schemas.get(position.table_index).ok_or_else(|| {
            error(
                None,
                Some(self.rows),
                format!("table index {} out of range", position.table_index),
            )
        })
    }
}

impl RowSink for ContainerSink {
    fn write_row(
        &mut self,
        position: &RowPosition,
        values: &[ValueRef<'_>],
    ) -> Result<(), FormatError> {
        let table = self.table(position)?;
        if values.len() != table.columns.len() {
            return Err(error(
                None,
                Some(self.rows),
                "row length differs from the schema",
            ));
        }
        let owned = values
            .iter()
            .zip(&table.columns)
            .map(|(v, c)| {
                owned_value(v, &c.ty, FORMAT).map_err(|e| {
                    error(
                        None,
                        Some(self.rows),
                        format!("column {:?}: {}", c.name, e.message),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.write_values(position, &owned)
    }

    fn write_owned_row(
        &mut self,
        position: &RowPosition,
        values: &[Value],
    ) -> Result<(), FormatError> {
        let table = self.table(position)?;
        check_row(values, table, FORMAT).map_err(|e| FormatError {
            row: Some(self.rows),
            ..e
        })?;
        self.write_values(position, values)
    }

    fn finish(&mut self) -> Result<(), FormatError> {
        if !self.wrote_header && !self.schemas.is_empty() {
            // An empty file still has its header, so readers know the schema.
            self.start_container(0, false)?;
        }
        self.flush_block()?;
        self.output.flush().map_err(|e| self.io(e))
    }
}

struct ContainerSource {
    input: BufReader<Box<dyn Read>>,
    offset: u64,
    schemas: Vec<TableSchema>,
    container: Option<OpenContainer>,
    block: Vec<u8>,
    /// The file offset of the current block's data.
    block_offset: u64,
    /// The block's data was compressed: `block` positions are not file offsets.
    block_compressed: bool,
    /// A compressed block as read (reused).
    packed: Vec<u8>,
    block_pos: usize,
    block_rows_left: u64,
    rows: u64,
    row: RowArena,
}

impl ContainerSource {
    fn fail(&self, offset: u64, message: impl Into<String>) -> FormatError {
        error(Some(offset), Some(self.rows), message)
    }

    /// An error at byte `at` of the current block's (decompressed) data: the file offset
    /// itself for an uncompressed block, else the compressed block's offset with `at` named.
    fn block_error(&self, at: u64, message: impl Into<String>) -> FormatError {
        let message = message.into();
        if self.block_compressed {
            self.fail(
                self.block_offset,
                format!("at byte {at} of the decompressed block: {message}"),
            )
        } else {
            self.fail(self.block_offset + at, message)
        }
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), FormatError> {
        self.input.read_exact(buf).map_err(|e| {
            self.fail(
                self.offset,
                format!("input ends or fails inside a {}-byte field: {e}", buf.len()),
            )
        })?;
        self.offset += buf.len() as u64;
        Ok(())
    }

    fn read_long(&mut self) -> Result<i64, FormatError> {
        let start = self.offset;
        let mut z = 0u64;
        for i in 0..10 {
            let mut b = [0u8; 1];
            self.read_exact(&mut b)?;
            if i == 9 && b[0] > 1 {
                return Err(self.fail(start, "varint longer than 64 bits"));
            }
            z |= u64::from(b[0] & 0x7f) << (7 * i);
            if b[0] < 0x80 {
                return Ok(((z >> 1) as i64) ^ -((z & 1) as i64));
            }
        }
        Err(self.fail(start, "varint longer than 10 bytes"))
    }

    /// Reads `len` bytes, allocating only as the input delivers them.
    fn read_bytes(&mut self, len: i64, into: &mut Vec<u8>) -> Result<(), FormatError> {
        let start = self.offset;
        let len =
            u64::try_from(len).map_err(|_| self.fail(start, format!("negative length {len}")))?;
        into.clear();
        let read = (&mut self.input)
            .take(len)
            .read_to_end(into)
            .map_err(|e| self.fail(start, format!("read: {e}")))?;
        self.offset += read as u64;
        if (read as u64) < len {
            return Err(self.fail(
                self.offset,
                format!("input ends inside a field of {len} bytes"),
            ));
        }
        Ok(())
    }

    /// `Some(true)` at a container header, `Some(false)` at a block, `None` at the end.
    fn peek_header(&mut self) -> Result<Option<bool>, FormatError> {
        let offset = self.offset;
        let rows = self.rows;
        let available = self
            .input
            .fill_buf()
            .map_err(|e| error(Some(offset), Some(rows), format!("read: {e}")))?;
        // A block count is a non-negative varint: its first byte is never 'O' (0x4F, the
        // whole varint -40), so that byte alone tells a header.
        Ok(available.first().map(|b| *b == MAGIC[0]))
    }

    fn read_header(&mut self) -> Result<(), FormatError> {
        let start = self.offset;
        let mut magic = [0u8; 4];
        self.read_exact(&mut magic)?;
        if &magic != MAGIC {
            return Err(self.fail(start, "not an Avro object container (bad magic)"));
        }
        let mut schema_text = None;
        let mut codec = None;
        let mut table_index = None;
        let mut key = Vec::new();
        let mut value = Vec::new();
        loop {
            let count_offset = self.offset;
            let mut count = self.read_long()?;
            if count == 0 {
                break;
            }
            if count < 0 {
                count = count
                    .checked_neg()
                    .ok_or_else(|| self.fail(count_offset, "bad block count"))?;
                self.read_long()?;
            }
            for _ in 0..count {
                let len = self.read_long()?;
                self.read_bytes(len, &mut key)?;
                let len = self.read_long()?;
                self.read_bytes(len, &mut value)?;
                match key.as_slice() {
                    b"avro.schema" => schema_text = Some(value.clone()),
                    b"avro.codec" => codec = Some(value.clone()),
                    b"yt.table_index" => table_index = Some(value.clone()),
                    _ => {}
                }
            }
        }
        let mut sync = [0u8; 16];
        self.read_exact(&mut sync)?;
        let compression = match codec {
            None => BlockCodec::Null,
            Some(name) => std::str::from_utf8(&name)
                .ok()
                .and_then(BlockCodec::from_name)
                .ok_or_else(|| {
                    self.fail(
                        start,
                        format!(
                            "unsupported codec {:?} (null, deflate, snappy and zstandard are read)",
                            String::from_utf8_lossy(&name)
                        ),
                    )
                })?,
        };
        let table_index = match table_index {
            None => 0,
            Some(text) => std::str::from_utf8(&text)
                .ok()
                .and_then(|t| t.parse::<usize>().ok())
                .ok_or_else(|| self.fail(start, "bad yt.table_index"))?,
        };
        let table = self.schemas.get(table_index).ok_or_else(|| {
            self.fail(
                start,
                format!(
                    "table index {table_index} but the stream has {} tables",
                    self.schemas.len()
                ),
            )
        })?;
        let schema_text =
            schema_text.ok_or_else(|| self.fail(start, "container without avro.schema"))?;
        let schema: Json = serde_json::from_slice(&schema_text)
            .map_err(|e| self.fail(start, format!("avro.schema is not JSON: {e}")))?;
        // Compared by what decides the encoding, so files of other writers (which drop
        // unknown properties and name records their way) are read too.
        let wanted = codec::structural(&schema);
        let codec = [false, true]
            .into_iter()
            .map(|system| RowCodec::compile(table, system))
            .find(|codec| codec::structural(&codec.avro_schema) == wanted)
            .ok_or_else(|| {
                self.fail(
                    start,
                    format!("the file's schema differs from the table's: {schema}"),
                )
            })?;
        self.container = Some(OpenContainer {
            table_index,
            codec,
            sync,
            compression,
        });
        Ok(())
    }

    /// Reads headers and blocks up to a block with rows left; `false` at the end.
    fn fill_block(&mut self) -> Result<bool, FormatError> {
        while self.block_rows_left == 0 {
            if self.container.is_some() && self.block_pos != self.block.len() {
                return Err(self.block_error(self.block_pos as u64, "trailing bytes in a block"));
            }
            match self.peek_header()? {
                None => {
                    if self.container.is_none() {
                        return Err(self.fail(self.offset, "empty input: no container header"));
                    }
                    return Ok(false);
                }
                Some(true) => self.read_header()?,
                Some(false) if self.container.is_none() => {
                    return Err(self.fail(self.offset, "not an Avro object container (bad magic)"))
                }
                Some(false) => {
                    let start = self.offset;
                    let count = self.read_long()?;
                    let size = self.read_long()?;
                    if count < 0 || size < 0 {
                        return Err(
                            self.fail(start, format!("block with {count} rows of {size} bytes"))
                        );
                    }
                    let compression = self
                        .container
                        .as_ref()
                        .map_or(BlockCodec::Null, |c| c.compression);
                    if compression == BlockCodec::Null {
                        let mut block = std::mem::take(&mut self.block);
                        self.read_bytes(size, &mut block)?;
                        self.block = block;
                    } else {
                        let mut packed = std::mem::take(&mut self.packed);
                        self.read_bytes(size, &mut packed)?;
                        let data_offset = self.offset - size as u64;
                        let result = compression.decompress(&packed, &mut self.block);
                        self.packed = packed;
                        result.map_err(|e| {
                            self.fail(data_offset, format!("{} block: {e}", compression.name()))
                        })?;
                    }
                    self.block_offset = self.offset - size as u64;
                    self.block_pos = 0;
                    self.block_compressed = compression != BlockCodec::Null;
                    let mut sync = [0u8; 16];
                    let sync_offset = self.offset;
                    self.read_exact(&mut sync)?;
                    if self.container.as_ref().is_some_and(|c| c.sync != sync) {
                        return Err(self.fail(sync_offset, "sync marker differs from the header's"));
                    }
                    self.block_rows_left = count as u64;
                }
            }
        }
        Ok(true)
    }
}

impl RowSource for ContainerSource {
    fn next_row(&mut self) -> Result<Option<RowRef<'_>>, FormatError> {
        if !self.fill_block()? {
            return Ok(None);
        }
        let Some(container) = &self.container else {
            unreachable!("a block is read inside a container")
        };
        let base = if self.block_compressed {
            0
        } else {
            self.block_offset
        };
        let mut reader = Reader::new(&self.block[self.block_pos..], base + self.block_pos as u64);
        let decoded = container.codec.decode(&mut reader);
        let (values, mut position) =
            decoded.map_err(|e| self.block_error(e.offset.saturating_sub(base), e.message))?;
        self.block_pos += reader.pos;
        self.block_rows_left -= 1;
        position.table_index = container.table_index;
        self.row.clear();
        for (value, column) in values.iter().zip(&container.codec.schema.columns) {
            self.row.push_value(value, &column.ty, FORMAT)?;
        }
        self.rows += 1;
        Ok(Some(RowRef {
            position,
            values: self.row.views(),
        }))
    }
}

/// Reads rows from Avro object container files (one per run of a table, back to back).
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn source(
    schemas: &[TableSchema],
    input: Box<dyn Read>,
) -> Result<Box<dyn RowSource>, FormatError> {
    Ok(Box::new(ContainerSource {
        input: BufReader::with_capacity(BLOCK_BYTES, input),
        offset: 0,
        schemas: schemas.to_vec(),
        container: None,
        block: Vec::new(),
        block_offset: 0,
        block_compressed: false,
        packed: Vec::new(),
        block_pos: 0,
        block_rows_left: 0,
        rows: 0,
        row: RowArena::default(),
    }))
}

/// Writes rows as Avro object container files (one per run of a table).
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn sink(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
) -> Result<Box<dyn RowSink>, FormatError> {
    sink_with_codec(schemas, output, BlockCodec::Null)
}

/// Writes rows as Avro object container files whose blocks are compressed with `codec`
/// (`avro.codec` in each header).
///
/// # Errors
/// Never at construction; kept fallible for the common constructor shape.
pub fn sink_with_codec(
    schemas: &[TableSchema],
    output: Box<dyn Write>,
    codec: BlockCodec,
) -> Result<Box<dyn RowSink>, FormatError> {
    Ok(Box::new(ContainerSink {
        output,
        schemas: schemas.to_vec(),
        container: None,
        block: Vec::new(),
        block_rows: 0,
        rows: 0,
        wrote_header: false,
        compression: codec,
    }))
}
