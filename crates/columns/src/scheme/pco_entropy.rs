//! The entropy-coded form: the block compressed by pcodec (`pco` standalone format),
//! `[3 zero bytes][length u32][pco bytes]`. Usually the smallest scheme (pco detects delta
//! orders, GCDs and float multipliers, then ANS-codes bins), and the slowest to decode.
//! pco reports corrupt input as errors; a panic inside it is still caught and reported,
//! because this is the one decoder in the column we did not write.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pco::standalone::simple_compress;
use pco::ChunkConfig;

use super::{BlockInput, Estimate};
use crate::bytes::ByteReader;
use crate::error::{corrupt, Result};
use crate::value::ColumnValue;

fn compress<T: ColumnValue>(values: &[T]) -> Option<Vec<u8>> {
    simple_compress(values, &ChunkConfig::default()).ok()
}

pub(crate) fn estimate<T: ColumnValue>(input: &BlockInput<'_, T>) -> Option<Estimate> {
    let sample = &input.sample;
    let bytes = compress(&sample.values)?.len();
    Estimate::sampled(bytes, sample.fraction).map(|mut e| {
        e.bytes += 8;
        e
    })
}

pub(crate) fn encode<T: ColumnValue>(input: &BlockInput<'_, T>, out: &mut Vec<u8>) -> bool {
    let Some(bytes) = compress(input.values) else {
        return false;
    };
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&bytes);
    true
}

pub(crate) fn decode<T: ColumnValue>(reader: &mut ByteReader<'_>, out: &mut [T]) -> Result<()> {
    reader.take(3, "pco padding")?;
    let length = reader.count(usize::MAX >> 1, "pco length")?;
    let at = reader.offset();
    let bytes = reader.take(length, "pco data")?;
    let outcome = catch_unwind(AssertUnwindSafe(|| T::pco_decompress_into(bytes, out)));
    match outcome {
        Ok(Ok(progress)) if progress.finished && progress.n_processed == out.len() => Ok(()),
        Ok(Ok(progress)) => Err(corrupt(
            at,
            format!(
                "pco data holds {} values (finished: {}), the block has {}",
                progress.n_processed,
                progress.finished,
                out.len()
            ),
        )),
        Ok(Err(error)) => Err(corrupt(at, format!("pco: {error}"))),
        Err(_) => Err(corrupt(at, "pco panicked on this data")),
    }
}
