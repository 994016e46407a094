//! The study's store as the peer servers hold it: the same 100 items as our server's, tiny
//! values and the peer's own MediaContent type, each behind its own lock.

use std::sync::Mutex;

use super::messages::tiny_value;
use super::server::ITEMS;

pub struct PeerStore<M> {
    tiny: Vec<Mutex<Vec<u8>>>,
    media: Vec<Mutex<M>>,
}

impl<M> PeerStore<M> {
    /// Every key's tiny value, and `media()` (media.1 in the peer's types) at every key.
    pub fn new(media: impl Fn() -> M) -> PeerStore<M> {
        PeerStore {
            tiny: (0..ITEMS as i64)
                .map(|k| Mutex::new(tiny_value(k)))
                .collect(),
            media: (0..ITEMS).map(|_| Mutex::new(media())).collect(),
        }
    }

    /// The tiny value's slot at `key`; `None` outside the store.
    pub fn tiny(&self, key: i32) -> Option<&Mutex<Vec<u8>>> {
        usize::try_from(key).ok().and_then(|k| self.tiny.get(k))
    }

    /// The MediaContent value's slot at `key`; `None` outside the store.
    pub fn media(&self, key: i32) -> Option<&Mutex<M>> {
        usize::try_from(key).ok().and_then(|k| self.media.get(k))
    }
}
