//! ALP-RD ("real doubles", after the ALP paper's fallback for floats without decimal
//! structure): every lane is split at a bit position `r` into a left part (`lane >> r`, at
//! most 16 bits: sign, exponent and the top of the mantissa) and a right part (the low `r`
//! bits). Left parts repeat a lot (a few exponents), right parts are close to random; each
//! part is a nested vector encoded by the selection engine (a cascade): the left part usually
//! becomes a dictionary or bit-packed codes with an entropy stage, the right part bit-packed
//! at `r` bits.
//!
//! `[r u8][6 zero bytes][nested left parts: u32 × n][nested right parts: lane × n]`.
//!
//! `r` is chosen on the sample: the fewest `r + ⌈log2 distinct left parts⌉` bits per value.

use hashbrown::HashSet;

use super::{nested, BlockInput, Cascaded, Encoding, Nest};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::value::{as_lanes, as_lanes_mut, ColumnValue, Lane};

/// The left part has at most this many bits (it is a `u32` vector).
const MAX_LEFT_BITS: u32 = 16;

/// The split position with the fewest estimated bits per value on the sample.
fn choose_split<T: ColumnValue>(input: &BlockInput<'_, T>) -> u32 {
    let bits = T::Lane::BITS;
    let lanes: Vec<T::Lane> = input.sample.values.iter().map(|v| v.to_lane()).collect();
    let mut best = (u32::MAX, bits - MAX_LEFT_BITS);
    for left_bits in 1..=MAX_LEFT_BITS {
        let right = bits - left_bits;
        let distinct = lanes
            .iter()
            .map(|&lane| (lane.to_u64() >> right) as u32)
            .collect::<HashSet<_>>()
            .len();
        let code_bits = (distinct.max(1) as u64 - 1).bits_needed();
        let cost = right + code_bits;
        if cost < best.0 {
            best = (cost, right);
        }
    }
    best.1
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, nest: &Nest) -> Option<Cascaded> {
    if !T::FLOAT {
        return None;
    }
    let right_bits = choose_split(input);
    let mask = (1u64 << right_bits) - 1;
    let left: Vec<u32> = input
        .lanes
        .iter()
        .map(|&lane| (lane.to_u64() >> right_bits) as u32)
        .collect();
    let right: Vec<<T::Lane as Lane>::Unsigned> = input
        .lanes
        .iter()
        .map(|&lane| T::Lane::truncate_u64(lane.to_u64() & mask))
        .map(<<T::Lane as Lane>::Unsigned as ColumnValue>::from_lane)
        .collect();
    let mut out = vec![
        Encoding::RealDoubles.tag(),
        right_bits as u8,
        0,
        0,
        0,
        0,
        0,
        0,
    ];
    let left = nested::write(&mut out, &left, &nest.child(nested::SMALL_CODES));
    let right = nested::write(&mut out, &right, &nest.child(nested::LEAVES));
    Some(Cascaded {
        bytes: out,
        decode_ns: left.decode_ns + right.decode_ns,
        random_access: left.random_access && right.random_access,
    })
}

fn parse<'a, T: ColumnValue>(
    reader: &mut ByteReader<'a>,
    count: usize,
    level: u8,
) -> Result<(u32, nested::View<'a>, nested::View<'a>)> {
    let at = reader.offset();
    if !T::FLOAT {
        return Err(corrupt(at - 1, "real-doubles block in an integer column"));
    }
    let right_bits = reader.u8("real-doubles split")? as u32;
    if right_bits >= T::Lane::BITS || right_bits + MAX_LEFT_BITS < T::Lane::BITS {
        return Err(corrupt(
            at,
            format!("real-doubles split at bit {right_bits}"),
        ));
    }
    reader.take(6, "real-doubles padding")?;
    let left = nested::View::parse(reader, count, level)?;
    let right = nested::View::parse(reader, count, level)?;
    Ok((right_bits, left, right))
}

pub(crate) fn decode<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    out: &mut [T],
    level: u8,
) -> Result<()> {
    let (right_bits, left, right) = parse::<T>(reader, out.len(), level)?;
    // The right parts go straight into the output's lanes, the left parts are OR-ed on top.
    let lanes = as_lanes_mut(out);
    right.decode(as_unsigned_mut::<T>(lanes))?;
    let mut lefts = vec![0u32; lanes.len()];
    left.decode(&mut lefts)?;
    for (slot, &l) in lanes.iter_mut().zip(&lefts) {
        *slot = T::Lane::truncate_u64(slot.to_u64() | (l as u64) << right_bits);
    }
    Ok(())
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
    level: u8,
) -> Result<()> {
    let (right_bits, left, right) = parse::<T>(reader, count, level)?;
    let lanes = as_lanes_mut(out);
    right.take(positions, as_unsigned_mut::<T>(lanes))?;
    let mut lefts = vec![0u32; positions.len()];
    left.take(positions, &mut lefts)?;
    for (slot, &l) in lanes.iter_mut().zip(&lefts) {
        *slot = T::Lane::truncate_u64(slot.to_u64() | (l as u64) << right_bits);
    }
    Ok(())
}

/// Views lanes as the unsigned value type of the same width (identical layout).
fn as_unsigned_mut<T: ColumnValue>(lanes: &mut [T::Lane]) -> &mut [<T::Lane as Lane>::Unsigned] {
    // SAFETY: `Unsigned` is `u32` or `u64`, the lane type itself (checked by its
    // `ColumnValue<Lane = Self>` bound and `as_lanes`' size/alignment assertions).
    let _ = as_lanes::<<T::Lane as Lane>::Unsigned>;
    unsafe { std::slice::from_raw_parts_mut(lanes.as_mut_ptr().cast(), lanes.len()) }
}
