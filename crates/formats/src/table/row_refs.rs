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

/// Where one value of a row being decoded lives, before the row's refs are made.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Slot {
    Null,
    Bool(bool),
    Int64(i64),
    Uint64(u64),
    Double(f64),
    /// A string in the scratch buffer, `start..end`.
    String(usize, usize),
    /// Binary YSON of a composite value in the scratch buffer.
    Composite(usize, usize),
    /// Binary YSON of a `yson` value in the scratch buffer.
    Any(usize, usize),
}

impl Slot {
    #[inline]
    pub(crate) fn to_ref(self, scratch: &[u8]) -> ValueRef<'_> {
        match self {
            Slot::Null => ValueRef::Null,
            Slot::Bool(v) => ValueRef::Bool(v),
            Slot::Int64(v) => ValueRef::Int64(v),
            Slot::Uint64(v) => ValueRef::Uint64(v),
            Slot::Double(v) => ValueRef::Double(v),
            Slot::String(s, e) => ValueRef::String(&scratch[s..e]),
            Slot::Composite(s, e) => ValueRef::Composite(&scratch[s..e]),
            Slot::Any(s, e) => ValueRef::Any(&scratch[s..e]),
        }
    }
}

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

    /// The refs of `slots`, pointing into `scratch`.
    #[inline]
    pub(crate) fn loan_slots<'a>(
        &'a mut self,
        slots: &[Slot],
        scratch: &'a [u8],
    ) -> &'a [ValueRef<'a>] {
        let refs = self.loan();
        refs.extend(slots.iter().map(|slot| slot.to_ref(scratch)));
        refs
    }
}
