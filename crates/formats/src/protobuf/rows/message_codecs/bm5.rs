//! The row codec of BM5's compiled message (see the module docs of [`super`]).

use shapeshift_types::ValueRef;

use super::*;

/// `Bm5Row`: `maybe` optional<string> (field 1), `values` list<double> (2, packed),
/// `pair` struct<foo: int32, bar: string> (3, a message of fields 1 and 2), `dict`
/// dict<int64, string> (4, repeated entries of key 1 and value 2).
#[derive(Clone, Debug)]
pub(crate) struct Bm5 {
    pub(super) foo: Signed,
    /// Binary YSON of the member names, `=` included.
    pub(super) foo_key: Box<[u8]>,
    pub(super) bar_key: Box<[u8]>,
    /// Binary YSON of the absent composite columns.
    pub(super) empty_list: Box<[u8]>,
    pub(super) empty_pair: Box<[u8]>,
    pub(super) empty_dict: Box<[u8]>,
}

impl Bm5 {
    #[inline]
    pub(super) fn encode<C: Cell>(&self, values: &[C], out: &mut Vec<u8>) -> bool {
        let [maybe, list, pair, dict] = values else {
            return false;
        };
        let maybe = if maybe.is_null() {
            None
        } else {
            match maybe.bytes() {
                Some(bytes) => Some(bytes),
                None => return false,
            }
        };
        let start = out.len();
        if let Some(bytes) = maybe {
            put_bytes(out, tag(1, LEN), bytes);
        }
        let written = match (list.owned(), list.composite()) {
            (Some(Value::List(items)), _) => {
                put_doubles(items.len(), items.iter().map(Cell::double), out)
            }
            (None, Some(yson)) => put_yson_doubles(yson, out),
            _ => false,
        } && match (pair.owned(), pair.composite()) {
            (Some(Value::Tuple(members)), _) => match members.as_slice() {
                [foo, bar] => match (foo.int64(), bar.bytes()) {
                    (Some(foo), Some(bar)) => self.put_pair(foo, bar, out),
                    _ => false,
                },
                _ => false,
            },
            (None, Some(yson)) => self.put_yson_pair(yson, out),
            _ => false,
        } && match (dict.owned(), dict.composite()) {
            (Some(Value::Dict(entries)), _) => {
                entries
                    .iter()
                    .all(|(key, value)| match (key.int64(), value.bytes()) {
                        (Some(key), Some(value)) => {
                            put_entry(key, value, out);
                            true
                        }
                        _ => false,
                    })
            }
            (None, Some(yson)) => put_yson_entries(yson, out),
            _ => false,
        };
        if !written {
            out.truncate(start);
        }
        written
    }

    /// The pair's message: its body's length is known before it is written.
    #[inline]
    fn put_pair(&self, foo: i64, bar: &[u8], out: &mut Vec<u8>) -> bool {
        if !self.foo.admits(foo) {
            return false;
        }
        put_entry_at(tag(3, LEN), foo, bar, out);
        true
    }

    /// The pair from its canonical binary YSON: `{"foo"=<int64>;"bar"=<string>;}`.
    fn put_yson_pair(&self, yson: &[u8], out: &mut Vec<u8>) -> bool {
        let mut reader = YsonReader {
            bytes: yson,
            pos: 0,
        };
        let parsed = (|| {
            reader.expect(b"{")?;
            reader.expect(&self.foo_key)?;
            let foo = reader.int64()?;
            reader.expect(b";")?;
            reader.expect(&self.bar_key)?;
            let bar = reader.string()?;
            reader.expect(b";}")?;
            reader.at_end().then_some((foo, bar))
        })();
        match parsed {
            Some((foo, bar)) => self.put_pair(foo, bar, out),
            None => false,
        }
    }

    #[inline]
    pub(super) fn decode<'a>(
        &'a self,
        cursor: &mut Cursor<'a>,
        refs: &mut Vec<ValueRef<'a>>,
        arena: &mut Vec<u8>,
        composites: &mut Vec<(usize, Range<usize>)>,
    ) -> bool {
        let mut maybe = ValueRef::Null;
        let mut list = None;
        let mut pair = None;
        let mut dict_start = None;
        let mut last = 0;
        while let Some(tag_byte) = next_tag(cursor, last) {
            cursor.pos += 1;
            last = tag_byte;
            match tag_byte {
                t if t == tag(1, LEN) => match len_delimited(cursor) {
                    Some(bytes) => maybe = ValueRef::String(bytes),
                    None => return false,
                },
                t if t == tag(2, LEN) => {
                    let Some(run) = len_delimited(cursor) else {
                        return false;
                    };
                    if run.len() % 8 != 0 {
                        return false;
                    }
                    let start = arena.len();
                    arena.reserve(2 + run.len() / 8 * 10);
                    arena.push(b'[');
                    for bits in run.chunks_exact(8) {
                        arena.push(0x03);
                        arena.extend_from_slice(bits);
                        arena.push(b';');
                    }
                    arena.push(b']');
                    list = Some(start..arena.len());
                }
                t if t == tag(3, LEN) => {
                    let Some(body) = len_delimited(cursor) else {
                        return false;
                    };
                    let mut body = Cursor::new(body, 0);
                    let (Some(foo), Some(bar)) = (
                        optional_varint(&mut body, tag(1, VARINT)),
                        optional_bytes(&mut body, tag(2, LEN)),
                    ) else {
                        return false;
                    };
                    let foo = foo as i64;
                    if !body.at_end() || !self.foo.admits(foo) {
                        return false;
                    }
                    let start = arena.len();
                    arena.push(b'{');
                    arena.extend_from_slice(&self.foo_key);
                    yson_binary::int64(arena, foo);
                    arena.push(b';');
                    arena.extend_from_slice(&self.bar_key);
                    yson_binary::string(arena, bar);
                    arena.extend_from_slice(b";}");
                    pair = Some(start..arena.len());
                }
                t if t == tag(4, LEN) => {
                    // A dict is every entry occurrence: the run of them, then nothing else
                    // (the field order stays strictly increasing).
                    let start = arena.len();
                    arena.push(b'[');
                    loop {
                        let Some(body) = len_delimited(cursor) else {
                            return false;
                        };
                        let mut body = Cursor::new(body, 0);
                        let (Some(key), Some(value)) = (
                            optional_varint(&mut body, tag(1, VARINT)),
                            optional_bytes(&mut body, tag(2, LEN)),
                        ) else {
                            return false;
                        };
                        if !body.at_end() {
                            return false;
                        }
                        arena.push(b'[');
                        yson_binary::int64(arena, key as i64);
                        arena.push(b';');
                        yson_binary::string(arena, value);
                        arena.extend_from_slice(b";];");
                        if cursor.bytes.get(cursor.pos) == Some(&tag(4, LEN)) {
                            cursor.pos += 1;
                        } else {
                            break;
                        }
                    }
                    arena.push(b']');
                    dict_start = Some(start..arena.len());
                }
                _ => return false,
            }
        }
        if !cursor.at_end() {
            return false;
        }
        refs.extend_from_slice(&[maybe, ValueRef::Null, ValueRef::Null, ValueRef::Null]);
        for (column, span, empty) in [
            (1, list, &self.empty_list),
            (2, pair, &self.empty_pair),
            (3, dict_start, &self.empty_dict),
        ] {
            match span {
                Some(span) => composites.push((column, span)),
                None => refs[column] = ValueRef::Composite(empty),
            }
        }
        true
    }
}

/// A packed run of `count` doubles (field 2 of `Bm5Row`); nothing when empty.
#[inline]
fn put_doubles(count: usize, items: impl Iterator<Item = Option<f64>>, out: &mut Vec<u8>) -> bool {
    if count == 0 {
        return true;
    }
    out.push(tag(2, LEN));
    put_varint(out, count as u64 * 8);
    out.reserve(count * 8);
    for item in items {
        match item {
            Some(v) => out.extend_from_slice(&v.to_le_bytes()),
            None => return false,
        }
    }
    true
}

/// The doubles from their canonical binary YSON: `[` then `03 <8 bytes> ;` each, `]`.
fn put_yson_doubles(yson: &[u8], out: &mut Vec<u8>) -> bool {
    let [b'[', items @ .., b']'] = yson else {
        return false;
    };
    if items.len() % 10 != 0 {
        return false;
    }
    let items = items.chunks_exact(10);
    if items.clone().any(|item| item[0] != 0x03 || item[9] != b';') {
        return false;
    }
    put_doubles(
        items.len(),
        items.map(|item| {
            Some(f64::from_le_bytes(
                item[1..9].try_into().unwrap_or_default(),
            ))
        }),
        out,
    )
}

/// One dict entry message (field 4 of `Bm5Row`).
#[inline]
fn put_entry(key: i64, value: &[u8], out: &mut Vec<u8>) {
    put_entry_at(tag(4, LEN), key, value, out);
}

/// A nested message `{int64 = 1; bytes = 2}` with tag `tag` (proto3 defaults left out),
/// its length computed before it is written.
#[inline]
fn put_entry_at(tag_byte: u8, number: i64, bytes: &[u8], out: &mut Vec<u8>) {
    let number_len = if number != 0 {
        1 + varint_len(number as u64)
    } else {
        0
    };
    let bytes_len = if bytes.is_empty() {
        0
    } else {
        1 + varint_len(bytes.len() as u64) + bytes.len()
    };
    out.push(tag_byte);
    put_varint(out, (number_len + bytes_len) as u64);
    if number != 0 {
        out.push(tag(1, VARINT));
        put_varint(out, number as u64);
    }
    if !bytes.is_empty() {
        put_bytes(out, tag(2, LEN), bytes);
    }
}

/// The dict's entries from their canonical binary YSON: `[` then `[<int64>;<string>;];`
/// each, `]`.
fn put_yson_entries(yson: &[u8], out: &mut Vec<u8>) -> bool {
    let mut reader = YsonReader {
        bytes: yson,
        pos: 0,
    };
    if reader.expect(b"[").is_none() {
        return false;
    }
    while reader.bytes.get(reader.pos) == Some(&b'[') {
        reader.pos += 1;
        let entry = (|| {
            let key = reader.int64()?;
            reader.expect(b";")?;
            let value = reader.string()?;
            reader.expect(b";];")?;
            Some((key, value))
        })();
        match entry {
            Some((key, value)) => put_entry(key, value, out),
            None => return false,
        }
    }
    reader.expect(b"]").is_some() && reader.at_end()
}

/// Reads the canonical binary YSON the interface's sources write for composite values;
/// `None` for anything else (which the general table then parses).
struct YsonReader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> YsonReader<'a> {
    #[inline]
    fn expect(&mut self, expected: &[u8]) -> Option<()> {
        let end = self.pos.checked_add(expected.len())?;
        (self.bytes.get(self.pos..end)? == expected).then(|| self.pos = end)
    }

    fn at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    /// A varint of at most ten bytes whose value fits 64 bits.
    #[inline]
    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = *self.bytes.get(self.pos)?;
            self.pos += 1;
            if i == 9 && byte > 1 {
                return None;
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Some(value);
            }
        }
        None
    }

    #[inline]
    fn zigzag(&mut self) -> Option<i64> {
        let v = self.varint()?;
        Some(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    #[inline]
    fn int64(&mut self) -> Option<i64> {
        self.expect(&[0x02])?;
        self.zigzag()
    }

    #[inline]
    fn string(&mut self) -> Option<&'a [u8]> {
        self.expect(&[0x01])?;
        let len = usize::try_from(self.zigzag()?).ok()?;
        let end = self.pos.checked_add(len)?;
        let bytes = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(bytes)
    }
}

/// An optional varint member with one-byte tag `tag` at `body` (0 when absent).
#[inline(always)]
fn optional_varint(body: &mut Cursor<'_>, tag: u8) -> Option<u64> {
    if body.bytes.get(body.pos) == Some(&tag) {
        body.pos += 1;
        varint(body)
    } else {
        Some(0)
    }
}

/// An optional bytes member with one-byte tag `tag` at `body` (empty when absent).
#[inline(always)]
fn optional_bytes<'a>(body: &mut Cursor<'a>, tag: u8) -> Option<&'a [u8]> {
    if body.bytes.get(body.pos) == Some(&tag) {
        body.pos += 1;
        len_delimited(body)
    } else {
        Some(b"")
    }
}
