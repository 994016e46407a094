//! Fragments and tables: a list fragment is a table's row stream, each row a map followed by
//! `;`, with control entities (`<table_index=1>#`, `<row_index=N>#`, `<range_index=N>#`,
//! `<key_switch=%true>#`) between rows.

use std::collections::VecDeque;
use std::io::{self, Read, Write};

use shapeshift_types::{Bytes, Node, NodeValue};

use super::error::YsonError;
use super::parser::{Event, PullParser};
use super::source::ReadSource;
use super::tree::read_value;
use super::writer::Writer;
use super::{YsonFormat, YsonType};

/// Reads the items of a list or map fragment one by one from any reader, in constant memory
/// (besides the item being built).
pub struct FragmentReader<R: Read> {
    parser: PullParser<ReadSource<R>>,
    yson_type: YsonType,
    /// Set once an error was returned: the iterator then ends.
    failed: bool,
}

impl<R: Read> FragmentReader<R> {
    /// A reader of a fragment of kind `yson_type` ([`YsonType::Node`] reads one node as a
    /// single item).
    pub fn new(reader: R, yson_type: YsonType) -> FragmentReader<R> {
        FragmentReader {
            parser: PullParser::from_reader(reader, yson_type),
            yson_type,
            failed: false,
        }
    }

    /// Sets the nesting limit (see [`PullParser::with_max_depth`]).
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.parser = self.parser.with_max_depth(max_depth);
        self
    }

    /// The next item: a list fragment's next node, or for a map fragment the next entry as a
    /// one-entry map `{key=value}`. `None` at the end.
    ///
    /// # Errors
    /// A [`YsonError`] with the offset when the input is malformed or truncated.
    pub fn next_item(&mut self) -> Result<Option<Node>, YsonError> {
        if self.yson_type == YsonType::MapFragment {
            return Ok(self
                .next_entry()?
                .map(|(key, value)| Node::new(NodeValue::Map(vec![(key, value)]))));
        }
        read_value(&mut self.parser)
    }

    /// The next entry of a map fragment. `None` at the end.
    ///
    /// # Errors
    /// A [`YsonError`] with the offset when the input is malformed or truncated, or when this
    /// is not a map fragment.
    pub fn next_entry(&mut self) -> Result<Option<(Bytes, Node)>, YsonError> {
        let offset = self.parser.offset();
        let key = match self.parser.next_event()? {
            None => return Ok(None),
            Some(Event::Key(key)) => key.to_vec(),
            Some(_) => {
                return Err(YsonError::new(
                    offset,
                    "expected a map fragment entry (this fragment is not a map fragment)",
                ))
            }
        };
        match read_value(&mut self.parser)? {
            Some(value) => Ok(Some((key, value))),
            None => Err(YsonError::new(
                self.parser.offset(),
                "expected a value after a key",
            )),
        }
    }

    /// The event parser underneath, for reading items without building nodes.
    pub fn parser(&mut self) -> &mut PullParser<ReadSource<R>> {
        &mut self.parser
    }
}

impl<R: Read> Iterator for FragmentReader<R> {
    type Item = Result<Node, YsonError>;
    /// Ends after the first error.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_item().transpose();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

/// A control record of a table stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// `<table_index=N>#`: the following rows belong to input/output table N.
    TableIndex(i64),
    /// `<row_index=N>#`: the next row's index.
    RowIndex(i64),
    /// `<range_index=N>#`: the following rows come from read range N.
    RangeIndex(i64),
    /// `<key_switch=%true>#`: a reduce key group ends.
    KeySwitch,
}

/// One item of a table stream.
#[derive(Debug, Clone, PartialEq)]
pub enum TableItem {
    Row(Node),
    Control(Control),
}

/// Reads a table stream: rows (maps) and control records.
pub struct TableReader<R: Read> {
    fragments: FragmentReader<R>,
    pending: VecDeque<Control>,
}

impl<R: Read> TableReader<R> {
    pub fn new(reader: R) -> TableReader<R> {
        TableReader {
            fragments: FragmentReader::new(reader, YsonType::ListFragment),
            pending: VecDeque::new(),
        }
    }

    /// The next row or control record; an entity carrying several control attributes yields
    /// them one by one in document order. `None` at the end.
    ///
    /// # Errors
    /// A [`YsonError`] with the offset for malformed input, an item that is neither a map nor
    /// a control entity, or an unknown or mistyped control attribute.
    pub fn next_item(&mut self) -> Result<Option<TableItem>, YsonError> {
        if let Some(control) = self.pending.pop_front() {
            return Ok(Some(TableItem::Control(control)));
        }
        let offset = self.fragments.parser.offset();
        let Some(node) = self.fragments.next_item()? else {
            return Ok(None);
        };
        match node.value {
            NodeValue::Map(_) => Ok(Some(TableItem::Row(node))),
            NodeValue::Entity if !node.attributes.is_empty() => {
                for (key, value) in &node.attributes {
                    let control = match (key.as_slice(), &value.value) {
                        (b"table_index", NodeValue::Int64(i)) => Control::TableIndex(*i),
                        (b"row_index", NodeValue::Int64(i)) => Control::RowIndex(*i),
                        (b"range_index", NodeValue::Int64(i)) => Control::RangeIndex(*i),
                        (b"key_switch", NodeValue::Bool(true)) => Control::KeySwitch,
                        _ => {
                            return Err(YsonError::new(
                                offset,
                                format!(
                                    "expected a control attribute (table_index, row_index, range_index as int64, key_switch=%true), found \"{}\" of kind {}",
                                    String::from_utf8_lossy(key),
                                    value.kind()
                                ),
                            ))
                        }
                    };
                    self.pending.push_back(control);
                }
                Ok(self.pending.pop_front().map(TableItem::Control))
            }
            _ => Err(YsonError::new(
                offset,
                format!(
                    "expected a row (map) or a control entity, found {}",
                    node.kind()
                ),
            )),
        }
    }

    /// The event parser underneath: the fast path for reading rows without building nodes.
    pub fn parser(&mut self) -> &mut PullParser<ReadSource<R>> {
        self.fragments.parser()
    }
}

impl<R: Read> Iterator for TableReader<R> {
    type Item = Result<TableItem, YsonError>;
    /// Ends after the first error.
    fn next(&mut self) -> Option<Self::Item> {
        if self.fragments.failed {
            return None;
        }
        let item = self.next_item().transpose();
        self.fragments.failed = matches!(item, Some(Err(_)));
        item
    }
}

/// Writes a table stream (a list fragment) of rows and control records.
pub struct TableWriter<W: Write> {
    writer: Writer<W>,
}

impl<W: Write> TableWriter<W> {
    pub fn new(sink: W, format: YsonFormat) -> TableWriter<W> {
        TableWriter {
            writer: Writer::new(sink, format, YsonType::ListFragment),
        }
    }

    /// Writes one row.
    ///
    /// # Errors
    /// The sink's error.
    pub fn write_row(&mut self, row: &Node) -> io::Result<()> {
        self.writer.write_node(row)
    }

    /// Writes a control record.
    ///
    /// # Errors
    /// The sink's error.
    pub fn write_control(&mut self, control: Control) -> io::Result<()> {
        let writer = &mut self.writer;
        writer.begin_attributes()?;
        match control {
            Control::TableIndex(i) => {
                writer.key(b"table_index")?;
                writer.int64(i)?;
            }
            Control::RowIndex(i) => {
                writer.key(b"row_index")?;
                writer.int64(i)?;
            }
            Control::RangeIndex(i) => {
                writer.key(b"range_index")?;
                writer.int64(i)?;
            }
            Control::KeySwitch => {
                writer.key(b"key_switch")?;
                writer.bool(true)?;
            }
        }
        writer.end_attributes()?;
        writer.entity()
    }

    /// The event writer: write a row as `begin_map`, `key`, values, `end_map`.
    pub fn events(&mut self) -> &mut Writer<W> {
        &mut self.writer
    }

    /// Flushes and returns the sink.
    ///
    /// # Errors
    /// The sink's error, or `InvalidInput` when a row written with events is incomplete.
    pub fn finish(self) -> io::Result<W> {
        self.writer.finish()
    }
}
