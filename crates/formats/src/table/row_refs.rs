//! A reusable buffer of [`ValueRef`]s for sources that hand out rows borrowing themselves.
//!
//! A source's row borrows the source (its input buffer, its per-row scratch), so the slice of
//! `ValueRef`s it returns must live in the source too, typed with a lifetime that changes on
//! every call. [`RefsBuffer`] keeps one allocation for that slice across rows: it stores
//! `ValueRef<'static>` and lends itself out, emptied, as a `Vec<ValueRef<'a>>` for the
//! borrow `'a` of one call.
//!
//! Why that is sound: `ValueRef<'a>` and `ValueRef<'static>` have the same layout (lifetimes
//! are erased), `ValueRef` has no destructor, the vector is cleared before every loan (so no
//! reference of an earlier borrow is ever read), and the loan holds `&'a mut self`, so nothing
//! else can reach the storage while the refs are alive. Dropping the buffer with stale refs
//! inside only frees the allocation.

use shapeshift_types::ValueRef;

/// See the module docs.
#[derive(Default)]
pub(crate) struct RefsBuffer {
    storage: Vec<ValueRef<'static>>,
}

impl RefsBuffer {
    /// The buffer, emptied, as a vector of refs of lifetime `'a`.
    #[inline]
    pub(crate) fn loan<'a>(&'a mut self) -> &'a mut Vec<ValueRef<'a>> {
        self.storage.clear();
        let storage: *mut Vec<ValueRef<'static>> = &mut self.storage;
        // SAFETY: see the module docs: same layout, empty, exclusively borrowed for 'a.
        unsafe { &mut *storage.cast::<Vec<ValueRef<'a>>>() }
    }
}
