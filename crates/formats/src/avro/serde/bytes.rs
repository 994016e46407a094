//! Bytes-like columns (`string`, `utf8`, `uuid`, `decimal`, `yson`) met by a seq of `u8`
//! (how `Vec<u8>` and `[u8; N]` serialize; the items themselves: `crate::byte_items`): the
//! checks every bytes-like value passes when written, and its length put in front.

use super::mismatch;
use crate::avro::codec::{put_long, Plan};
use crate::serde_error::{error, SerdeError};

type Result<T> = std::result::Result<T, SerdeError>;

/// Whether the plan's values are length-prefixed bytes (`fixed` and `decimal` are not).
#[inline]
pub(super) fn prefixed(plan: &Plan) -> bool {
    matches!(plan, Plan::Bytes | Plan::String | Plan::Yson)
}

/// Puts the varint of `v` at `at`, before the bytes written since.
pub(super) fn insert_long(out: &mut Vec<u8>, at: usize, v: i64) {
    let end = out.len();
    put_long(out, v);
    let len = out.len() - end;
    out[at..].rotate_right(len);
}

/// Checks the `count` bytes of `plan` written at `start` (after their length prefix when
/// `prefixed` and the length was known) and completes them.
pub(super) fn finish_bytes(
    plan: &Plan,
    out: &mut Vec<u8>,
    start: usize,
    announced: bool,
) -> Result<()> {
    let bytes = &out[start..];
    let len = bytes.len();
    match plan {
        Plan::Bytes => {}
        Plan::String => {
            if crate::utf8::text(bytes).is_err() {
                return Err(error("bytes that are not UTF-8 into a utf8 column"));
            }
        }
        Plan::Yson => {
            if let Err(e) = crate::yson::from_slice(bytes) {
                return Err(error(format!("bytes that are not one YSON value: {e}")));
            }
        }
        Plan::Fixed(n) if len == *n => {}
        Plan::Decimal {
            width,
            precision,
            scale,
        } if len == *width => {
            if let Err(e) = shapeshift_types::check_decimal_binary(bytes, *precision, *scale) {
                return Err(error(e.message));
            }
            out[start] ^= 0x80;
        }
        Plan::Fixed(n) | Plan::Decimal { width: n, .. } => {
            return Err(error(format!("{len} bytes into {n}-byte fixed values")));
        }
        other => return Err(mismatch("bytes", other)),
    }
    if prefixed(plan) && !announced {
        insert_long(out, start, len as i64);
    }
    Ok(())
}
