//! Patched bit-packing (PFOR, as in FastPFor): most values are packed at a narrow width `b`
//! above the block minimum; the few that need more bits are exceptions stored apart.
//! `[3 zero bytes][exceptions u32][packed base][exception positions u16 LE × exceptions]
//! [packed exception values]`. Exception slots in the base hold offset 0; positions are
//! increasing in-block indices (blocks have at most 65536 values, so u16 suffices).
//! The width is chosen exactly from the block's histogram of bit widths.

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::packed::{frame_of, packed_size, write_packed, PackedView};
use crate::statistics::BlockStats;
use crate::value::{as_lanes_mut, order_key, ColumnValue, Lane};

/// `(base width, exception count, bytes)` of the cheapest patched layout, if it has
/// exceptions at all and beats plain bit-packing.
fn choose<L: Lane>(stats: &BlockStats<L>) -> Option<(u32, usize, usize)> {
    let count = stats.count;
    let plain = packed_size(count, stats.range_width, L::BYTES);
    let mut best: Option<(u32, usize, usize)> = None;
    let mut exceptions = 0usize;
    for width in (0..stats.range_width).rev() {
        exceptions += stats.width_histogram[width as usize + 1] as usize;
        if exceptions * 8 > count {
            break;
        }
        let bytes = 7
            + packed_size(count, width, L::BYTES)
            + 2 * exceptions
            + 7
            + packed_size(exceptions, stats.range_width, L::BYTES);
        if bytes < plain && best.is_none_or(|(_, _, b)| bytes < b) {
            best = Some((width, exceptions, bytes));
        }
    }
    best
}

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    choose(&input.stats).and_then(|(_, _, bytes)| Estimate::exact(bytes))
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let Some((width, _, _)) = choose(&input.stats) else {
        return false;
    };
    let min = input.stats.min;
    let mut base = input.lanes.to_vec();
    let mut positions = Vec::new();
    let mut exceptions = Vec::new();
    for (index, slot) in base.iter_mut().enumerate() {
        if slot.wrapping_sub_(min).bits_needed() > width {
            positions.push(index as u16);
            exceptions.push(*slot);
            *slot = min;
        }
    }
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(exceptions.len() as u32).to_le_bytes());
    write_packed(out, &base, min, width);
    for position in &positions {
        out.extend_from_slice(&position.to_le_bytes());
    }
    let (reference, exception_width) = frame_of(&exceptions, order_key::<T>);
    write_packed(out, &exceptions, reference, exception_width);
    true
}

struct Patched<'a, L: Lane> {
    base: PackedView<'a, L>,
    positions: &'a [u8],
    positions_at: usize,
    exceptions: PackedView<'a, L>,
    count: usize,
}

fn parse<'a, L: Lane>(reader: &mut ByteReader<'a>, count: usize) -> Result<Patched<'a, L>> {
    reader.take(3, "patched padding")?;
    let exception_count = reader.count(count, "exception count")?;
    let base = PackedView::parse(reader, count)?;
    let positions_at = reader.offset();
    let positions = reader.take(2 * exception_count, "exception positions")?;
    let exceptions = PackedView::parse(reader, exception_count)?;
    Ok(Patched {
        base,
        positions,
        positions_at,
        exceptions,
        count: exception_count,
    })
}

fn position(positions: &[u8], index: usize) -> usize {
    u16::from_le_bytes([positions[2 * index], positions[2 * index + 1]]) as usize
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    let patched = parse::<T::Lane>(reader, out.len())?;
    let out = as_lanes_mut(out);
    patched.base.decode_into(out);
    for index in 0..patched.count {
        let at = position(patched.positions, index);
        let slot = out.get_mut(at).ok_or_else(|| {
            corrupt(
                patched.positions_at + 2 * index,
                format!("exception position {at} outside the block"),
            )
        })?;
        *slot = patched.exceptions.get(index);
    }
    Ok(())
}

pub(crate) fn gather<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[usize],
    out: &mut Vec<T>,
) -> Result<()> {
    let patched = parse::<T::Lane>(reader, count)?;
    let mut next = 0usize;
    for &wanted in positions {
        while next < patched.count && position(patched.positions, next) < wanted {
            next += 1;
        }
        let lane = if next < patched.count && position(patched.positions, next) == wanted {
            patched.exceptions.get(next)
        } else {
            patched.base.get(wanted)
        };
        out.push(T::from_lane(lane));
    }
    Ok(())
}
