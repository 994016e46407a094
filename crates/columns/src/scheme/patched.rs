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

/// `(base width, exception count, bytes)` of the cheapest patched layout of `count` values
/// whose bit widths above their minimum are counted in `histogram`, if it has exceptions at
/// all and beats plain bit-packing at `range_width`. Shared with ALP's patched digits.
pub(crate) fn choose_width(
    histogram: &[u32; 65],
    count: usize,
    range_width: u32,
    lane_bytes: usize,
) -> Option<(u32, usize, usize)> {
    let plain = packed_size(count, range_width, lane_bytes);
    let mut best: Option<(u32, usize, usize)> = None;
    let mut exceptions = 0usize;
    for width in (0..range_width).rev() {
        exceptions += histogram[width as usize + 1] as usize;
        if exceptions * 8 > count {
            break;
        }
        let bytes = 7
            + packed_size(count, width, lane_bytes)
            + 2 * exceptions
            + 7
            + packed_size(exceptions, range_width, lane_bytes);
        if bytes < plain && best.is_none_or(|(_, _, b)| bytes < b) {
            best = Some((width, exceptions, bytes));
        }
    }
    best
}

fn choose<L: Lane>(stats: &BlockStats<L>) -> Option<(u32, usize, usize)> {
    choose_width(
        &stats.width_histogram,
        stats.count,
        stats.range_width,
        L::BYTES,
    )
}

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    choose(&input.stats).and_then(|(_, _, bytes)| Estimate::exact(bytes))
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let Some((width, exceptions, _)) = choose(&input.stats) else {
        return false;
    };
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(exceptions as u32).to_le_bytes());
    write_body(out, input.lanes, input.stats.min, width, order_key::<T>);
    true
}

/// Writes `[packed base][exception positions u16 LE][packed exception values]`: values more
/// than `width` bits above `min` become exceptions (their base slot holds offset 0). The
/// caller writes the exception count first (`exception_count`).
pub(crate) fn write_body<L: Lane>(
    out: &mut Vec<u8>,
    lanes: &[L],
    min: L,
    width: u32,
    key: impl Fn(L) -> L,
) {
    let mut base = lanes.to_vec();
    let mut positions = Vec::new();
    let mut exceptions = Vec::new();
    for (index, slot) in base.iter_mut().enumerate() {
        if slot.wrapping_sub_(min).bits_needed() > width {
            positions.push(index as u16);
            exceptions.push(*slot);
            *slot = min;
        }
    }
    write_packed(out, &base, min, width);
    for position in &positions {
        out.extend_from_slice(&position.to_le_bytes());
    }
    let (reference, exception_width) = frame_of(&exceptions, key);
    write_packed(out, &exceptions, reference, exception_width);
}

/// How many of `lanes` `write_body` turns into exceptions.
pub(crate) fn exception_count<L: Lane>(lanes: &[L], min: L, width: u32) -> usize {
    lanes
        .iter()
        .filter(|lane| lane.wrapping_sub_(min).bits_needed() > width)
        .count()
}

/// A parsed patched body: base values with exceptions patched over them.
pub(crate) struct PatchedBody<'a, L: Lane> {
    base: PackedView<'a, L>,
    positions: &'a [u8],
    positions_at: usize,
    exceptions: PackedView<'a, L>,
    count: usize,
}

impl<'a, L: Lane> PatchedBody<'a, L> {
    /// Parses a body of `count` values with `exception_count` exceptions (already bounded by
    /// `count` by the caller).
    pub(crate) fn parse(
        reader: &mut ByteReader<'a>,
        count: usize,
        exception_count: usize,
    ) -> Result<Self> {
        let base = PackedView::parse(reader, count)?;
        let positions_at = reader.offset();
        let positions = reader.take(2 * exception_count, "exception positions")?;
        let exceptions = PackedView::parse(reader, exception_count)?;
        Ok(PatchedBody {
            base,
            positions,
            positions_at,
            exceptions,
            count: exception_count,
        })
    }

    fn position(&self, index: usize) -> usize {
        u16::from_le_bytes([self.positions[2 * index], self.positions[2 * index + 1]]) as usize
    }

    /// Decodes every value into `out` (its length is the body's value count).
    pub(crate) fn decode_into(&self, out: &mut [L]) -> Result<()> {
        self.base.decode_into(out);
        for index in 0..self.count {
            let at = self.position(index);
            let slot = out.get_mut(at).ok_or_else(|| {
                corrupt(
                    self.positions_at + 2 * index,
                    format!("exception position {at} outside the block"),
                )
            })?;
            *slot = self.exceptions.get(index);
        }
        Ok(())
    }

    /// Value at `wanted`; `next` is a cursor into the exceptions that callers reading sorted
    /// positions keep between calls (start at 0), so a gather is linear, not quadratic.
    #[inline]
    pub(crate) fn get(&self, wanted: usize, next: &mut usize) -> L {
        while *next < self.count && self.position(*next) < wanted {
            *next += 1;
        }
        if *next < self.count && self.position(*next) == wanted {
            self.exceptions.get(*next)
        } else {
            self.base.get(wanted)
        }
    }
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    reader.take(3, "patched padding")?;
    let exceptions = reader.count(out.len(), "exception count")?;
    let body = PatchedBody::<T::Lane>::parse(reader, out.len(), exceptions)?;
    body.decode_into(as_lanes_mut(out))
}

pub(crate) fn gather<T: ColumnValue>(
    reader: &mut ByteReader<'_>,
    count: usize,
    positions: &[usize],
    out: &mut Vec<T>,
) -> Result<()> {
    reader.take(3, "patched padding")?;
    let exceptions = reader.count(count, "exception count")?;
    let body = PatchedBody::<T::Lane>::parse(reader, count, exceptions)?;
    let mut next = 0usize;
    out.extend(
        positions
            .iter()
            .map(|&wanted| T::from_lane(body.get(wanted, &mut next))),
    );
    Ok(())
}
