//! The row codec of BM2's compiled message (see the module docs of [`super`]).

use shapeshift_types::ValueRef;

use super::*;

/// `Bm2Row`: `id` uint32 (field 1), `data` string (field 2).
#[derive(Clone, Debug)]
pub(crate) struct Bm2 {
    pub(super) id: u64,
}

impl Bm2 {
    #[inline]
    pub(super) fn encode<C: Cell>(&self, values: &[C], out: &mut Vec<u8>) -> bool {
        let [id, data] = values else {
            return false;
        };
        let (Some(id), Some(data)) = (id.uint64(), data.bytes()) else {
            return false;
        };
        if id > self.id {
            return false;
        }
        out.reserve(16 + data.len());
        if id != 0 {
            out.push(tag(1, VARINT));
            put_varint(out, id);
        }
        if !data.is_empty() {
            put_bytes(out, tag(2, LEN), data);
        }
        true
    }

    #[inline]
    pub(super) fn decode<'a>(&self, cursor: &mut Cursor<'a>, refs: &mut Vec<ValueRef<'a>>) -> bool {
        let mut id = 0;
        let mut data: &[u8] = b"";
        let mut last = 0;
        while let Some(tag_byte) = next_tag(cursor, last) {
            cursor.pos += 1;
            last = tag_byte;
            match tag_byte {
                t if t == tag(1, VARINT) => match varint(cursor) {
                    Some(v) if v <= self.id => id = v,
                    _ => return false,
                },
                t if t == tag(2, LEN) => match len_delimited(cursor) {
                    Some(bytes) => data = bytes,
                    None => return false,
                },
                _ => return false,
            }
        }
        refs.extend_from_slice(&[ValueRef::Uint64(id), ValueRef::String(data)]);
        cursor.at_end()
    }
}
