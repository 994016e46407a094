//! Test helpers: a tiny YSON *text* reader for writing expected nodes as literals (the real
//! codec lives in shapeshift-formats; the types layer must not depend on it), and
//! order-insensitive comparison of nodes.

#![allow(dead_code)]

use shapeshift_types::{Node, NodeValue};

/// Parses YSON text (the subset tests need: all node kinds, attributes, quoted strings with
/// C escapes). Panics on malformed input: it only ever reads literals written in tests.
pub fn yson(text: &str) -> Node {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let node = p.node();
    p.ws();
    assert_eq!(p.i, p.s.len(), "trailing text in {text:?}");
    node
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> u8 {
        self.ws();
        self.s[self.i]
    }

    fn expect(&mut self, c: u8) {
        assert_eq!(self.peek() as char, c as char, "at {}", self.i);
        self.i += 1;
    }

    fn node(&mut self) -> Node {
        let attributes = if self.peek() == b'<' {
            self.i += 1;
            self.entries(b'>')
        } else {
            Vec::new()
        };
        let value = match self.peek() {
            b'{' => {
                self.i += 1;
                NodeValue::Map(self.entries(b'}'))
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if self.peek() == b']' {
                        self.i += 1;
                        break;
                    }
                    items.push(self.node());
                    if self.peek() == b';' {
                        self.i += 1;
                    }
                }
                NodeValue::List(items)
            }
            b'#' => {
                self.i += 1;
                NodeValue::Entity
            }
            b'%' => {
                let word = self.word();
                match word.as_str() {
                    "%true" => NodeValue::Bool(true),
                    "%false" => NodeValue::Bool(false),
                    "%nan" => NodeValue::Double(f64::NAN),
                    "%inf" => NodeValue::Double(f64::INFINITY),
                    "%-inf" => NodeValue::Double(f64::NEG_INFINITY),
                    other => panic!("bad literal {other}"),
                }
            }
            b'"' => NodeValue::String(self.quoted()),
            c if c == b'-' || c == b'+' || c.is_ascii_digit() => {
                let word = self.word();
                if let Some(u) = word.strip_suffix('u') {
                    NodeValue::Uint64(u.parse().unwrap())
                } else if word.contains(['.', 'e', 'E']) {
                    NodeValue::Double(word.parse().unwrap())
                } else {
                    NodeValue::Int64(word.parse().unwrap())
                }
            }
            _ => NodeValue::String(self.word().into_bytes()),
        };
        Node { attributes, value }
    }

    fn entries(&mut self, close: u8) -> Vec<(Vec<u8>, Node)> {
        let mut entries = Vec::new();
        loop {
            if self.peek() == close {
                self.i += 1;
                return entries;
            }
            let key = if self.peek() == b'"' {
                self.quoted()
            } else {
                self.word().into_bytes()
            };
            self.expect(b'=');
            entries.push((key, self.node()));
            if self.peek() == b';' {
                self.i += 1;
            }
        }
    }

    fn word(&mut self) -> String {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"_.-+%/".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        assert!(self.i > start, "expected a word at {start}");
        String::from_utf8(self.s[start..self.i].to_vec()).unwrap()
    }

    fn quoted(&mut self) -> Vec<u8> {
        self.expect(b'"');
        let mut out = Vec::new();
        loop {
            let c = self.s[self.i];
            self.i += 1;
            match c {
                b'"' => return out,
                b'\\' => {
                    let e = self.s[self.i];
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'x' => {
                            let hex = std::str::from_utf8(&self.s[self.i..self.i + 2]).unwrap();
                            out.push(u8::from_str_radix(hex, 16).unwrap());
                            self.i += 2;
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
    }
}

/// The node with every map's (and attribute list's) entries sorted by key, recursively:
/// YSON maps are unordered for type descriptions and schemas.
pub fn normalized(node: &Node) -> Node {
    fn sorted(entries: &[(Vec<u8>, Node)]) -> Vec<(Vec<u8>, Node)> {
        let mut out: Vec<_> = entries
            .iter()
            .map(|(k, v)| (k.clone(), normalized(v)))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
    Node {
        attributes: sorted(&node.attributes),
        value: match &node.value {
            NodeValue::Map(entries) => NodeValue::Map(sorted(entries)),
            NodeValue::List(items) => NodeValue::List(items.iter().map(normalized).collect()),
            other => other.clone(),
        },
    }
}

/// Bytes from hex text.
pub fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}
