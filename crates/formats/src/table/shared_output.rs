//! An in-memory output that stays reachable after the sink owning it is gone.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

/// An in-memory `Write` for [`open_sink`](crate::registry::open_sink), which takes ownership of its
/// output: clones share one buffer, so the bytes are still there after the sink is
/// finished and dropped.
#[derive(Clone, Debug, Default)]
pub struct SharedOutput(Rc<RefCell<Vec<u8>>>);

impl SharedOutput {
    /// The bytes written so far, moved out (the buffer is left empty).
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl Write for SharedOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
