//! The row codec of BM1's compiled message (see the module docs of [`super`]).

use shapeshift_types::ValueRef;

use super::*;

/// `Bm1Row`: 1000 columns cycling int8, int16, int32, int64, uint8, uint16, uint32,
/// uint64, float, double; column `i` is field `i + 1`.
#[derive(Clone, Debug)]
pub(crate) struct Bm1 {
    pub(super) int8: Signed,
    pub(super) int16: Signed,
    pub(super) int32: Signed,
    pub(super) uint8: u64,
    pub(super) uint16: u64,
    pub(super) uint32: u64,
    pub(super) columns: usize,
}

/// The wire type of the `k`-th column of BM1's cycle.
const BM1_WIRE: [u8; 10] = [
    VARINT, VARINT, VARINT, VARINT, VARINT, VARINT, VARINT, VARINT, FIXED32, FIXED64,
];

impl Bm1 {
    #[inline]
    pub(super) fn encode<C: Cell>(&self, values: &[C], out: &mut Vec<u8>) -> bool {
        if values.len() != self.columns || values.len() % 10 != 0 {
            return false;
        }
        let start = out.len();
        // At most a 2-byte tag and a 10-byte varint per column.
        out.reserve(values.len() * 12);
        let mut field = 1u32;
        for chunk in values.chunks_exact(10) {
            let ok = self.signed(&chunk[0], self.int8, field, out)
                && self.signed(&chunk[1], self.int16, field + 1, out)
                && self.signed(&chunk[2], self.int32, field + 2, out)
                && self.signed(
                    &chunk[3],
                    Signed {
                        lo: i64::MIN,
                        hi: i64::MAX,
                    },
                    field + 3,
                    out,
                )
                && self.unsigned(&chunk[4], self.uint8, field + 4, out)
                && self.unsigned(&chunk[5], self.uint16, field + 5, out)
                && self.unsigned(&chunk[6], self.uint32, field + 6, out)
                && self.unsigned(&chunk[7], u64::MAX, field + 7, out);
            let ok = ok
                && match (chunk[8].double(), chunk[9].double()) {
                    (Some(float), Some(double)) if fits_f32(float) => {
                        put_tag(out, field + 8, FIXED32);
                        out.extend_from_slice(&(float as f32).to_le_bytes());
                        put_tag(out, field + 9, FIXED64);
                        out.extend_from_slice(&double.to_le_bytes());
                        true
                    }
                    _ => false,
                };
            if !ok {
                out.truncate(start);
                return false;
            }
            field += 10;
        }
        true
    }

    #[inline(always)]
    fn signed<C: Cell>(&self, cell: &C, range: Signed, field: u32, out: &mut Vec<u8>) -> bool {
        match cell.int64() {
            Some(v) if range.admits(v) => {
                if v != 0 {
                    put_tag(out, field, VARINT);
                    put_varint(out, v as u64);
                }
                true
            }
            _ => false,
        }
    }

    #[inline(always)]
    fn unsigned<C: Cell>(&self, cell: &C, hi: u64, field: u32, out: &mut Vec<u8>) -> bool {
        match cell.uint64() {
            Some(v) if v <= hi => {
                if v != 0 {
                    put_tag(out, field, VARINT);
                    put_varint(out, v);
                }
                true
            }
            _ => false,
        }
    }

    #[inline]
    pub(super) fn decode<'a>(&self, cursor: &mut Cursor<'a>, refs: &mut Vec<ValueRef<'a>>) -> bool {
        refs.reserve(self.columns);
        for index in 0..self.columns {
            let k = index % 10;
            let tag = ((index as u32 + 1) << 3) | u32::from(BM1_WIRE[k]);
            let present = match cursor.bytes.get(cursor.pos..) {
                Some([first, ..]) if tag < 0x80 => *first == tag as u8,
                Some([first, second, ..]) => {
                    *first == (tag as u8) | 0x80 && u32::from(*second) == tag >> 7
                }
                _ => false,
            };
            if !present {
                refs.push(match k {
                    0..=3 => ValueRef::Int64(0),
                    4..=7 => ValueRef::Uint64(0),
                    _ => ValueRef::Double(0.0),
                });
                continue;
            }
            cursor.pos += if tag < 0x80 { 1 } else { 2 };
            let view = match k {
                0..=3 => {
                    let Some(v) = varint(cursor) else {
                        return false;
                    };
                    let v = v as i64;
                    let range = match k {
                        0 => self.int8,
                        1 => self.int16,
                        2 => self.int32,
                        _ => Signed {
                            lo: i64::MIN,
                            hi: i64::MAX,
                        },
                    };
                    if !range.admits(v) {
                        return false;
                    }
                    ValueRef::Int64(v)
                }
                4..=7 => {
                    let Some(v) = varint(cursor) else {
                        return false;
                    };
                    let hi = match k {
                        4 => self.uint8,
                        5 => self.uint16,
                        6 => self.uint32,
                        _ => u64::MAX,
                    };
                    if v > hi {
                        return false;
                    }
                    ValueRef::Uint64(v)
                }
                8 => match fixed32(cursor) {
                    Some(bits) => ValueRef::Double(f64::from(f32::from_bits(bits))),
                    None => return false,
                },
                _ => match fixed64(cursor) {
                    Some(bits) => ValueRef::Double(f64::from_bits(bits)),
                    None => return false,
                },
            };
            refs.push(view);
        }
        cursor.at_end()
    }
}
