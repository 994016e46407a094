//! ALP-style decimal encoding of floats: a float `x` that is a decimal with `e` fractional
//! digits is stored as the integer `n = round(x * 10^e)`, and decoded as `n / 10^e` (a correctly
//! rounded division, so every double parsed from at most 15 significant digits comes back
//! bit-exact). Every candidate is verified at encode time with the decoder's own arithmetic;
//! values that do not round-trip (NaN, infinities, -0.0, too many digits) become exceptions.
//!
//! `[mode u8: bit 7 = multiply mode, bit 6 = patched digits, bits 0..5 = e][2 zero bytes]
//! [exceptions u32][digits][exception positions u16 LE × exceptions][zero padding to 8]
//! [exception values, raw lanes]`, where the digits (u64 lanes, signed order) are either one
//! packed vector or, with bit 6, `[patches u32][4 zero bytes]` and a patched body (`patched.rs`:
//! packed base at a narrow width, patch positions, packed patch digits) — for skewed decimals
//! such as prices, whose few large values would otherwise widen every value.
//! The exponent is chosen on the sample to minimise packed size plus exception cost; the
//! patch width exactly, from the block's histogram of digit widths.

use super::{BlockInput, Estimate};
use crate::bytes::{lane_from_le, pad8, put_lanes, ByteReader};
use crate::error::{corrupt, Result};
use crate::packed::{frame_of, packed_size, write_packed, PackedView};
use crate::scheme::patched::{self, PatchedBody, SortedPositions};
use crate::value::{as_lanes_mut, ColumnValue, Lane};

const POW10: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];
const INV_POW10: [f64; 19] = [
    1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14,
    1e-15, 1e-16, 1e-17, 1e-18,
];
const MULTIPLY: u8 = 0x80;
const PATCHED: u8 = 0x40;
const EXPONENT_MASK: u8 = 0x3f;
/// Integers beyond 2^52 lose exactness in the f64 arithmetic of the decoder.
const MAX_DIGITS: f64 = 4_503_599_627_370_496.0;

fn max_exponent<T: ColumnValue>() -> usize {
    if T::Lane::BITS == 32 {
        10
    } else {
        18
    }
}

/// `(exponent, multiply mode)` packed as stored.
#[derive(Clone, Copy)]
struct Scale {
    exponent: usize,
    multiply: bool,
}

impl Scale {
    fn byte(self) -> u8 {
        self.exponent as u8 | if self.multiply { MULTIPLY } else { 0 }
    }
}

#[inline(always)]
fn decode_one<T: ColumnValue>(digits: i64, scale: Scale) -> T {
    if scale.multiply {
        T::from_f64(digits as f64 * INV_POW10[scale.exponent])
    } else {
        T::from_f64(digits as f64 / POW10[scale.exponent])
    }
}

#[inline]
fn digits_of<T: ColumnValue>(value: T, scale: Scale) -> Option<i64> {
    let scaled = value.to_f64() * POW10[scale.exponent];
    // NaN fails this comparison too, so it becomes an exception.
    if scaled.is_nan() || scaled.abs() > MAX_DIGITS {
        return None;
    }
    let digits = scaled.round() as i64;
    (decode_one::<T>(digits, scale).to_lane() == value.to_lane()).then_some(digits)
}

/// Bits of the range of `digits`.
fn range_width(digits: impl Iterator<Item = i64>) -> u32 {
    let (mut low, mut high) = (i64::MAX, i64::MIN);
    for d in digits {
        low = low.min(d);
        high = high.max(d);
    }
    if low > high {
        0
    } else {
        (high.wrapping_sub(low) as u64).bits_needed()
    }
}

/// Signed-order key of a digit lane.
#[inline(always)]
fn digit_key(lane: u64) -> u64 {
    lane ^ (1 << 63)
}

/// `(min lane, base width, patches, bytes)` of the best patched layout of `digits` whose range
/// needs `width` bits, if patching beats one packed vector.
fn patch_layout(
    digits: impl Iterator<Item = i64> + Clone,
    width: u32,
) -> Option<(u64, u32, usize)> {
    let low = digits.clone().min()?;
    let mut histogram = [0u32; 65];
    let mut count = 0usize;
    for d in digits {
        histogram[(d.wrapping_sub(low) as u64).bits_needed() as usize] += 1;
        count += 1;
    }
    patched::choose_width(&histogram, count, width, 8)
        .map(|(base_width, _, bytes)| (low as u64, base_width, bytes))
}

/// `(scale, estimated bytes for the whole block)` of the best scale on the sample.
fn choose<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<(Scale, usize)> {
    if !T::FLOAT {
        return None;
    }
    let sample = &input.sample.values;
    let count = input.values.len();
    let mut best: Option<(Scale, usize)> = None;
    let scales = (0..=max_exponent::<T>())
        .flat_map(|exponent| [true, false].map(|multiply| Scale { exponent, multiply }));
    for scale in scales {
        let digits: Vec<Option<i64>> = sample.iter().map(|&v| digits_of(v, scale)).collect();
        let exceptions = digits.iter().filter(|d| d.is_none()).count();
        if exceptions * 2 > sample.len() {
            continue;
        }
        let width = range_width(digits.iter().flatten().copied());
        let exception_share = exceptions as f64 / sample.len() as f64;
        let plain = packed_size(count, width, 8);
        let digits_bytes = match patch_layout(digits.iter().flatten().copied(), width) {
            Some((_, _, sample_bytes)) => {
                let valid = (sample.len() - exceptions).max(1);
                plain.min(8 + (sample_bytes as f64 * count as f64 / valid as f64) as usize)
            }
            None => plain,
        };
        let bytes = 7
            + digits_bytes
            + (exception_share * count as f64 * (2 + T::Lane::BYTES) as f64) as usize;
        if best.is_none_or(|(_, b)| bytes < b) {
            best = Some((scale, bytes));
        }
        if exceptions == 0 && width == 0 {
            break;
        }
    }
    best
}

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    choose(input).map(|(_, bytes)| Estimate {
        bytes,
        exact: false,
    })
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let Some((scale, _)) = choose(input) else {
        return false;
    };
    let values = input.values;
    let mut digits = Vec::with_capacity(values.len());
    let mut positions = Vec::new();
    let mut exceptions = Vec::new();
    let mut filler = None;
    for (index, &value) in values.iter().enumerate() {
        match digits_of(value, scale) {
            Some(d) => {
                filler.get_or_insert(d);
                digits.push(d as u64);
            }
            None => {
                positions.push(index as u16);
                exceptions.push(value.to_lane());
                digits.push(u64::MAX); // patched below with a value inside the range
            }
        }
    }
    if exceptions.len() * 2 > values.len() {
        return false;
    }
    let filler = filler.unwrap_or(0) as u64;
    for &position in &positions {
        digits[position as usize] = filler;
    }
    let (reference, width) = frame_of(&digits, digit_key);
    let patch = patch_layout(digits.iter().map(|&d| d as i64), width);
    out.push(scale.byte() | if patch.is_some() { PATCHED } else { 0 });
    out.extend_from_slice(&[0; 2]);
    out.extend_from_slice(&(exceptions.len() as u32).to_le_bytes());
    match patch {
        Some((low, base_width, _)) => {
            let patches = patched::exception_count(&digits, low, base_width);
            out.extend_from_slice(&(patches as u32).to_le_bytes());
            out.extend_from_slice(&[0; 4]);
            patched::write_body(out, &digits, low, base_width, digit_key);
        }
        None => write_packed(out, &digits, reference, width),
    }
    for position in &positions {
        out.extend_from_slice(&position.to_le_bytes());
    }
    pad8(out);
    put_lanes(out, &exceptions);
    true
}

/// The integer digits: one packed vector, or patched.
enum Digits<'a> {
    Plain(PackedView<'a, u64>),
    Patched(PatchedBody<'a, u64>),
}

impl Digits<'_> {
    fn decode_into(&self, out: &mut [u64]) -> Result<()> {
        match self {
            Digits::Plain(view) => {
                view.decode_into(out);
                Ok(())
            }
            Digits::Patched(body) => body.decode_into(out),
        }
    }

    /// Digits at sorted `positions` into `out` (same length).
    fn take(&self, positions: &[u32], out: &mut [u64]) {
        match self {
            Digits::Plain(view) => view.gather(positions, 0, out),
            Digits::Patched(body) => body.take(positions, out),
        }
    }
}

struct Alp<'a> {
    scale: Scale,
    digits: Digits<'a>,
    positions: SortedPositions<'a>,
    positions_at: usize,
    exceptions: &'a [u8],
    count: usize,
}

fn parse<'a, T: ColumnValue>(reader: &mut ByteReader<'a>, count: usize) -> Result<Alp<'a>> {
    let at = reader.offset();
    if !T::FLOAT {
        return Err(corrupt(at - 1, "ALP block in an integer column"));
    }
    let stored = reader.u8("ALP exponent")?;
    let exponent = (stored & EXPONENT_MASK) as usize;
    if exponent > max_exponent::<T>() {
        return Err(corrupt(at, format!("ALP exponent {exponent} is too large")));
    }
    reader.take(2, "ALP padding")?;
    let exception_count = reader.count(count, "ALP exception count")?;
    let digits = if stored & PATCHED != 0 {
        let patches = reader.count(count, "ALP digit patch count")?;
        reader.take(4, "ALP digit patch padding")?;
        Digits::Patched(PatchedBody::parse(reader, count, patches)?)
    } else {
        Digits::Plain(PackedView::parse(reader, count)?)
    };
    let positions_at = reader.offset();
    let positions =
        SortedPositions::new(reader.take(2 * exception_count, "ALP exception positions")?);
    reader.align8("padding before ALP exceptions")?;
    let exceptions = reader.take(exception_count * T::Lane::BYTES, "ALP exception values")?;
    Ok(Alp {
        scale: Scale {
            exponent,
            multiply: stored & MULTIPLY != 0,
        },
        digits,
        positions,
        positions_at,
        exceptions,
        count: exception_count,
    })
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let alp = parse::<T>(reader, out.len())?;
    let scale = alp.scale;
    if T::Lane::BITS == 64 {
        // Decode digits straight into the output's lanes, then convert in place.
        let lanes = as_lanes_mut(out);
        // SAFETY: T::Lane is u64 here (BITS == 64 and lanes are u32 or u64).
        let lanes: &mut [u64] = unsafe {
            std::slice::from_raw_parts_mut(lanes.as_mut_ptr().cast::<u64>(), lanes.len())
        };
        alp.digits.decode_into(lanes)?;
        if scale.multiply {
            let factor = INV_POW10[scale.exponent];
            for slot in lanes.iter_mut() {
                *slot = (*slot as i64 as f64 * factor).to_bits();
            }
        } else {
            let divisor = POW10[scale.exponent];
            for slot in lanes.iter_mut() {
                *slot = (*slot as i64 as f64 / divisor).to_bits();
            }
        }
    } else {
        let mut digits = vec![0u64; out.len()];
        alp.digits.decode_into(&mut digits)?;
        for (slot, &d) in out.iter_mut().zip(&digits) {
            *slot = decode_one::<T>(d as i64, scale);
        }
    }
    let width = T::Lane::BYTES;
    for index in 0..alp.count {
        let at = alp.positions.at(index);
        let slot = out.get_mut(at).ok_or_else(|| {
            corrupt(
                alp.positions_at + 2 * index,
                format!("ALP exception position {at} outside the block"),
            )
        })?;
        *slot = T::from_lane(lane_from_le(&alp.exceptions[index * width..]));
    }
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
) -> Result<()> {
    let alp = parse::<T>(reader, count)?;
    // Digits in one batch (plain or patched), then scaled in a loop without branches, then
    // the float exceptions merged in with a forward cursor.
    let mut digits = vec![0u64; positions.len()];
    alp.digits.take(positions, &mut digits);
    let exponent = alp.scale.exponent;
    if alp.scale.multiply {
        let factor = INV_POW10[exponent];
        for (slot, &d) in out.iter_mut().zip(&digits) {
            *slot = T::from_f64(d as i64 as f64 * factor);
        }
    } else {
        let divisor = POW10[exponent];
        for (slot, &d) in out.iter_mut().zip(&digits) {
            *slot = T::from_f64(d as i64 as f64 / divisor);
        }
    }
    let width = T::Lane::BYTES;
    alp.positions.for_each_match(positions, |row, exception| {
        out[row] = T::from_lane(lane_from_le(&alp.exceptions[exception * width..]));
    });
    Ok(())
}
