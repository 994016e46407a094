//! Byte-packing (Druid's "VSize" idea with a frame of reference):
//! `[bytes_per_value u8][6 zero bytes][reference u64 LE][count × bytes_per_value offsets LE]`.
//! Slightly larger than bit-packing, but trivially random-accessible and a good input for LZ4.

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::value::{as_lanes_mut, ColumnValue, Lane};

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    let per_value = input.stats.range_width.div_ceil(8) as usize;
    Estimate::exact(15 + input.lanes.len() * per_value)
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let per_value = input.stats.range_width.div_ceil(8) as usize;
    write(out, input.lanes, input.stats.min, per_value);
    true
}

/// Writes the payload with an explicit reference and width (the baseline uses reference 0).
pub(crate) fn write<L: Lane>(out: &mut Vec<u8>, lanes: &[L], reference: L, per_value: usize) {
    out.push(per_value as u8);
    out.extend_from_slice(&[0; 6]);
    out.extend_from_slice(&reference.to_u64().to_le_bytes());
    out.reserve(lanes.len() * per_value);
    for &lane in lanes {
        let offset = lane.wrapping_sub_(reference).to_u64();
        out.extend_from_slice(&offset.to_le_bytes()[..per_value]);
    }
}

struct View<'a, L> {
    per_value: usize,
    reference: L,
    data: &'a [u8],
}

fn parse<'a, L: Lane>(reader: &mut ByteReader<'a>, count: usize) -> Result<View<'a, L>> {
    let at = reader.offset();
    let per_value = reader.u8("bytes per value")? as usize;
    if per_value > L::BYTES {
        return Err(corrupt(
            at,
            format!("{per_value} bytes per value for {}-byte values", L::BYTES),
        ));
    }
    reader.take(6, "byte-packed padding")?;
    let reference = L::truncate_u64(reader.u64("byte-packed reference")?);
    let data = reader.take(count * per_value, "byte-packed values")?;
    Ok(View {
        per_value,
        reference,
        data,
    })
}

/// The hot loop, monomorphised per width so the compiler emits fixed-size loads.
fn unpack<const K: usize, L: Lane>(data: &[u8], reference: L, out: &mut [L]) {
    for (slot, bytes) in out.iter_mut().zip(data.chunks_exact(K)) {
        let mut word = [0u8; 8];
        word[..K].copy_from_slice(bytes);
        *slot = L::truncate_u64(u64::from_le_bytes(word)).wrapping_add_(reference);
    }
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let view = parse::<T::Lane>(reader, out.len())?;
    let out = as_lanes_mut(out);
    let (data, reference) = (view.data, view.reference);
    match view.per_value {
        0 => out.fill(reference),
        1 => unpack::<1, _>(data, reference, out),
        2 => unpack::<2, _>(data, reference, out),
        3 => unpack::<3, _>(data, reference, out),
        4 => unpack::<4, _>(data, reference, out),
        5 => unpack::<5, _>(data, reference, out),
        6 => unpack::<6, _>(data, reference, out),
        7 => unpack::<7, _>(data, reference, out),
        _ => unpack::<8, _>(data, reference, out),
    }
    Ok(())
}

/// The random-access loop, monomorphised per width like `unpack`.
fn pick<const K: usize, L: Lane>(data: &[u8], reference: L, positions: &[u32], out: &mut [L]) {
    for (slot, &position) in out.iter_mut().zip(positions) {
        let start = position as usize * K;
        let mut word = [0u8; 8];
        word[..K].copy_from_slice(&data[start..start + K]);
        *slot = L::truncate_u64(u64::from_le_bytes(word)).wrapping_add_(reference);
    }
}

pub(crate) fn take<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[u32],
    out: &mut [T],
) -> Result<()> {
    let view = parse::<T::Lane>(reader, count)?;
    let out = as_lanes_mut(out);
    let (data, reference) = (view.data, view.reference);
    match view.per_value {
        0 => out.fill(reference),
        1 => pick::<1, _>(data, reference, positions, out),
        2 => pick::<2, _>(data, reference, positions, out),
        3 => pick::<3, _>(data, reference, positions, out),
        4 => pick::<4, _>(data, reference, positions, out),
        5 => pick::<5, _>(data, reference, positions, out),
        6 => pick::<6, _>(data, reference, positions, out),
        7 => pick::<7, _>(data, reference, positions, out),
        _ => pick::<8, _>(data, reference, positions, out),
    }
    Ok(())
}
