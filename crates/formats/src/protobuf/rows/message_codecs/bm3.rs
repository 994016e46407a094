//! The row codec of BM3's compiled message (see the module docs of [`super`]).

use shapeshift_types::ValueRef;

use super::*;

/// `Bm3Row`: id, counter (int64), user (string), score (double), active (bool), country
/// (string), created (timestamp), code (int32), ratio (float), comment (utf8): fields 1..10.
#[derive(Clone, Debug)]
pub(crate) struct Bm3 {
    pub(super) created: u64,
    pub(super) code: Signed,
}

impl Bm3 {
    #[inline]
    pub(super) fn encode<C: Cell>(&self, values: &[C], out: &mut Vec<u8>) -> bool {
        let [id, counter, user, score, active, country, created, code, ratio, comment] = values
        else {
            return false;
        };
        let (
            Some(id),
            Some(counter),
            Some(user),
            Some(score),
            Some(active),
            Some(country),
            Some(created),
            Some(code),
            Some(ratio),
            Some(comment),
        ) = (
            id.int64(),
            counter.int64(),
            user.bytes(),
            score.double(),
            active.boolean(),
            country.bytes(),
            created.uint64(),
            code.int64(),
            ratio.double(),
            comment.bytes(),
        )
        else {
            return false;
        };
        if created > self.created
            || !self.code.admits(code)
            || !fits_f32(ratio)
            || crate::utf8::text(comment).is_err()
        {
            return false;
        }
        // Tags, varints and lengths: well under 80 bytes.
        out.reserve(80 + user.len() + country.len() + comment.len());
        if id != 0 {
            out.push(tag(1, VARINT));
            put_varint(out, id as u64);
        }
        if counter != 0 {
            out.push(tag(2, VARINT));
            put_varint(out, counter as u64);
        }
        if !user.is_empty() {
            put_bytes(out, tag(3, LEN), user);
        }
        out.push(tag(4, FIXED64));
        out.extend_from_slice(&score.to_le_bytes());
        if active {
            out.extend_from_slice(&[tag(5, VARINT), 1]);
        }
        if !country.is_empty() {
            put_bytes(out, tag(6, LEN), country);
        }
        if created != 0 {
            out.push(tag(7, VARINT));
            put_varint(out, created);
        }
        if code != 0 {
            out.push(tag(8, VARINT));
            put_varint(out, code as u64);
        }
        out.push(tag(9, FIXED32));
        out.extend_from_slice(&(ratio as f32).to_le_bytes());
        if !comment.is_empty() {
            put_bytes(out, tag(10, LEN), comment);
        }
        true
    }

    #[inline]
    pub(super) fn decode<'a>(&self, cursor: &mut Cursor<'a>, refs: &mut Vec<ValueRef<'a>>) -> bool {
        let mut row = [
            ValueRef::Int64(0),
            ValueRef::Int64(0),
            ValueRef::String(b""),
            ValueRef::Double(0.0),
            ValueRef::Bool(false),
            ValueRef::String(b""),
            ValueRef::Uint64(0),
            ValueRef::Int64(0),
            ValueRef::Double(0.0),
            ValueRef::String(b""),
        ];
        let mut last = 0;
        while let Some(tag_byte) = next_tag(cursor, last) {
            cursor.pos += 1;
            last = tag_byte;
            let view = match tag_byte {
                t if t == tag(1, VARINT) || t == tag(2, VARINT) => match varint(cursor) {
                    Some(v) => ValueRef::Int64(v as i64),
                    None => return false,
                },
                t if t == tag(3, LEN) || t == tag(6, LEN) => match len_delimited(cursor) {
                    Some(bytes) => ValueRef::String(bytes),
                    None => return false,
                },
                t if t == tag(4, FIXED64) => match fixed64(cursor) {
                    Some(bits) => ValueRef::Double(f64::from_bits(bits)),
                    None => return false,
                },
                t if t == tag(5, VARINT) => match varint(cursor) {
                    Some(v) => ValueRef::Bool(v != 0),
                    None => return false,
                },
                t if t == tag(7, VARINT) => match varint(cursor) {
                    Some(v) if v <= self.created => ValueRef::Uint64(v),
                    _ => return false,
                },
                t if t == tag(8, VARINT) => match varint(cursor) {
                    Some(v) if self.code.admits(v as i64) => ValueRef::Int64(v as i64),
                    _ => return false,
                },
                t if t == tag(9, FIXED32) => match fixed32(cursor) {
                    Some(bits) => ValueRef::Double(f64::from(f32::from_bits(bits))),
                    None => return false,
                },
                t if t == tag(10, LEN) => match len_delimited(cursor) {
                    Some(bytes) if crate::utf8::text(bytes).is_ok() => ValueRef::String(bytes),
                    _ => return false,
                },
                _ => return false,
            };
            row[usize::from(tag_byte >> 3) - 1] = view;
        }
        refs.extend_from_slice(&row);
        cursor.at_end()
    }
}
