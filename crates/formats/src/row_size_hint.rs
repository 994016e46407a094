//! The length of the last row a typed (serde) codec wrote, to size the next row's room at
//! once: rows of a table tend to be alike, and regrowing the output buffer from empty cost a
//! tenth of a small row's time (a 349-byte Thrift MediaContent grew through six reallocations).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Shared by a codec's clones: it is only a hint, so a race costs at most a regrowth.
#[derive(Clone, Debug)]
pub(crate) struct RowSizeHint(Arc<AtomicUsize>);

impl RowSizeHint {
    pub(crate) fn new() -> RowSizeHint {
        RowSizeHint(Arc::new(AtomicUsize::new(128)))
    }

    /// Runs `write` to append one row to `out` with the last row's length reserved first.
    /// On error `out` is cut back to what it held before.
    #[inline]
    pub(crate) fn append<E>(
        &self,
        out: &mut Vec<u8>,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let start = out.len();
        out.reserve(self.0.load(Ordering::Relaxed));
        match write(out) {
            Ok(()) => {
                self.0.store(out.len() - start, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                out.truncate(start);
                Err(e)
            }
        }
    }
}
