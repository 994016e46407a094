//! Table streams and the event writer: control records, rows, streaming reads in constant
//! memory, writer misuse.

use shapeshift_formats::yson::{
    count_list_fragment_items, from_slice, to_vec, Control, Event, FragmentReader, PullParser,
    TableItem, TableReader, TableWriter, Writer, YsonFormat, YsonType,
};
use shapeshift_types::{Node, NodeValue};

fn row(i: i64) -> Node {
    Node::map([
        ("id", Node::int64(i)),
        ("name", Node::string(format!("row {i}"))),
    ])
}

#[test]
fn table_streams_round_trip_rows_and_controls() {
    for format in [YsonFormat::Binary, YsonFormat::Text, YsonFormat::Pretty] {
        let mut writer = TableWriter::new(Vec::new(), format);
        writer.write_control(Control::TableIndex(1)).unwrap();
        writer.write_row(&row(0)).unwrap();
        writer.write_control(Control::RowIndex(10)).unwrap();
        writer.write_control(Control::RangeIndex(2)).unwrap();
        writer.write_row(&row(1)).unwrap();
        writer.write_control(Control::KeySwitch).unwrap();
        {
            let events = writer.events();
            events.begin_map().unwrap();
            events.key(b"id").unwrap();
            events.int64(2).unwrap();
            events.key(b"name").unwrap();
            events.string(b"row 2").unwrap();
            events.end_map().unwrap();
        }
        let bytes = writer.finish().unwrap();
        let items: Vec<TableItem> = TableReader::new(&bytes[..])
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            items,
            vec![
                TableItem::Control(Control::TableIndex(1)),
                TableItem::Row(row(0)),
                TableItem::Control(Control::RowIndex(10)),
                TableItem::Control(Control::RangeIndex(2)),
                TableItem::Row(row(1)),
                TableItem::Control(Control::KeySwitch),
                TableItem::Row(row(2)),
            ]
        );
        assert_eq!(count_list_fragment_items(&bytes).unwrap(), 7);
    }
}

#[test]
fn control_records_are_spelled_as_yt_writes_them() {
    let mut writer = TableWriter::new(Vec::new(), YsonFormat::Text);
    writer.write_control(Control::TableIndex(1)).unwrap();
    writer.write_control(Control::KeySwitch).unwrap();
    assert_eq!(
        writer.finish().unwrap(),
        b"<\"table_index\"=1;>#;\n<\"key_switch\"=%true;>#;\n"
    );
}

#[test]
fn several_controls_on_one_entity_are_yielded_in_order() {
    let items: Vec<TableItem> = TableReader::new(&b"<range_index=1;row_index=5>#;{a=1}"[..])
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        items,
        vec![
            TableItem::Control(Control::RangeIndex(1)),
            TableItem::Control(Control::RowIndex(5)),
            TableItem::Row(Node::map([("a", Node::int64(1))])),
        ]
    );
}

#[test]
fn table_reader_rejects_what_is_not_a_row_or_a_control() {
    for (input, expected) in [
        (&b"1;"[..], "a row (map) or a control entity"),
        (&b"<foo=1>#;"[..], "control attribute"),
        (&b"<row_index=x>#;"[..], "control attribute"),
        (&b"{a=1};{b="[..], "a value"),
    ] {
        let error = TableReader::new(input)
            .find_map(|item| item.err())
            .unwrap_or_else(|| panic!("{:?} should fail", String::from_utf8_lossy(input)));
        assert!(error.to_string().contains(expected), "{error}");
    }
}

#[test]
fn map_fragments_stream_entries() {
    let mut reader = FragmentReader::new(&b"a=1;b=[2];"[..], YsonType::MapFragment);
    assert_eq!(
        reader.next_entry().unwrap(),
        Some((b"a".to_vec(), Node::int64(1)))
    );
    assert_eq!(
        reader.next_item().unwrap(),
        Some(Node::map([("b", Node::list(vec![Node::int64(2)]))]))
    );
    assert_eq!(reader.next_entry().unwrap(), None);
}

/// A reader producing a long list fragment on the fly: reading it must not hold it in memory.
struct Rows {
    remaining: u64,
    pending: Vec<u8>,
}

impl std::io::Read for Rows {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() {
            if self.remaining == 0 {
                return Ok(0);
            }
            self.remaining -= 1;
            self.pending = to_vec(&row(self.remaining as i64), YsonFormat::Binary);
            self.pending.push(b';');
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

#[test]
fn streaming_reads_long_fragments_item_by_item() {
    let rows = 200_000;
    let mut parser = PullParser::from_reader(
        Rows {
            remaining: rows,
            pending: Vec::new(),
        },
        YsonType::ListFragment,
    );
    let mut maps = 0u64;
    let mut id_sum = 0i64;
    while let Some(event) = parser.next_event().unwrap() {
        match event {
            Event::BeginMap => maps += 1,
            Event::Int64(v) => id_sum += v,
            _ => {}
        }
    }
    assert_eq!(maps, rows);
    assert_eq!(id_sum, (0..rows as i64).sum::<i64>());
}

#[test]
fn writer_refuses_misuse() {
    let mut writer = Writer::new(Vec::new(), YsonFormat::Text, YsonType::Node);
    assert!(writer.key(b"a").is_err());
    writer.begin_map().unwrap();
    assert!(writer.int64(1).is_err(), "a value where a key is expected");
    assert!(writer.end_list().is_err());
    writer.key(b"a").unwrap();
    assert!(writer.end_map().is_err(), "a key without a value");
    writer.int64(1).unwrap();
    writer.end_map().unwrap();
    assert!(writer.int64(2).is_err(), "a second top-level node");
    assert_eq!(writer.finish().unwrap(), b"{\"a\"=1;}");

    let writer = Writer::new(Vec::new(), YsonFormat::Text, YsonType::Node);
    assert!(writer.finish().is_err(), "no node written");
    let mut writer = Writer::new(Vec::new(), YsonFormat::Text, YsonType::Node);
    writer.begin_attributes().unwrap();
    writer.key(b"x").unwrap();
    writer.int64(1).unwrap();
    writer.end_attributes().unwrap();
    assert!(writer.begin_attributes().is_err(), "two attribute maps");
    writer.entity().unwrap();
    assert_eq!(writer.finish().unwrap(), b"<\"x\"=1;>#");
}

#[test]
fn pretty_indent_is_configurable() {
    let node = from_slice(b"{a=[1]}").unwrap();
    let mut writer = Writer::new(Vec::new(), YsonFormat::Pretty, YsonType::Node).with_indent(2);
    writer.write_node(&node).unwrap();
    assert_eq!(writer.finish().unwrap(), b"{\n  \"a\" = [\n    1;\n  ];\n}");
    assert!(matches!(node.value, NodeValue::Map(_)));
}
