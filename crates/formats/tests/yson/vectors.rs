//! Compatibility with YT's own writer: every vector was written by `yt.yson.dumps`
//! (python/tools/gen_yson_vectors.py) in binary, text and pretty form. We must read all three
//! to the same value and write that value back to exactly the same bytes in each format.

use shapeshift_formats::yson::{
    self, from_slice, list_fragment_from_slice, map_fragment_from_slice, to_vec, YsonFormat,
};
use shapeshift_types::Node;

const VECTORS: &str = include_str!("../vectors/yson/vectors.tsv");

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

enum Document {
    Node(Node),
    List(Vec<Node>),
    Map(Vec<(Vec<u8>, Node)>),
}

fn read(yson_type: &str, bytes: &[u8]) -> Document {
    match yson_type {
        "node" => Document::Node(from_slice(bytes).unwrap_or_else(|e| panic!("{e}"))),
        "list_fragment" => {
            Document::List(list_fragment_from_slice(bytes).unwrap_or_else(|e| panic!("{e}")))
        }
        "map_fragment" => {
            Document::Map(map_fragment_from_slice(bytes).unwrap_or_else(|e| panic!("{e}")))
        }
        other => panic!("unknown yson type {other}"),
    }
}

fn write(document: &Document, format: YsonFormat) -> Vec<u8> {
    let mut out = Vec::new();
    match document {
        Document::Node(node) => out = to_vec(node, format),
        Document::List(items) => yson::write_list_fragment(&mut out, items, format).unwrap(),
        Document::Map(entries) => yson::write_map_fragment(&mut out, entries, format).unwrap(),
    }
    out
}

fn vectors() -> impl Iterator<Item = (String, String, [Vec<u8>; 3])> {
    VECTORS.lines().filter(|l| !l.is_empty()).map(|line| {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 5, "malformed vector line");
        (
            fields[0].to_string(),
            fields[1].to_string(),
            [unhex(fields[2]), unhex(fields[3]), unhex(fields[4])],
        )
    })
}

const FORMATS: [YsonFormat; 3] = [YsonFormat::Binary, YsonFormat::Text, YsonFormat::Pretty];

#[test]
fn there_are_many_vectors() {
    assert!(vectors().count() > 500);
}

#[test]
fn every_encoding_written_by_yt_is_written_back_byte_exact_in_every_format() {
    let mut failures = Vec::new();
    for (name, yson_type, encodings) in vectors() {
        for (source_format, source) in FORMATS.iter().zip(&encodings) {
            let document = read(&yson_type, source);
            for (target_format, expected) in FORMATS.iter().zip(&encodings) {
                let written = write(&document, *target_format);
                if &written != expected {
                    failures.push(format!(
                        "{name}: read {source_format:?}, wrote {target_format:?}:\n  ours {:?}\n  yt   {:?}",
                        String::from_utf8_lossy(&written),
                        String::from_utf8_lossy(expected)
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches, first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

#[test]
fn streaming_reader_reads_vectors_like_the_slice_reader() {
    for (name, yson_type, encodings) in vectors() {
        if yson_type != "list_fragment" {
            continue;
        }
        for bytes in &encodings {
            let expected = list_fragment_from_slice(bytes).unwrap();
            // One byte per read: every token crosses a buffer boundary.
            let reader = OneByteReader(bytes);
            let streamed: Vec<Node> =
                yson::FragmentReader::new(reader, yson::YsonType::ListFragment)
                    .collect::<Result<_, _>>()
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(streamed.len(), expected.len(), "{name}");
            for (a, b) in streamed.iter().zip(&expected) {
                assert_eq!(
                    to_vec(a, YsonFormat::Binary),
                    to_vec(b, YsonFormat::Binary),
                    "{name}"
                );
            }
        }
    }
}

struct OneByteReader<'a>(&'a [u8]);

impl std::io::Read for OneByteReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() || buf.is_empty() {
            return Ok(0);
        }
        buf[0] = self.0[0];
        self.0 = &self.0[1..];
        Ok(1)
    }
}
