//! The Riegeli hash: HighwayHash-64 keyed with "Riegeli/records\n" twice.

use highway::{HighwayHash, HighwayHasher, Key};

const RIEGELI_KEY: [u64; 4] = [
    0x2f69_6c65_6765_6952,
    0x0a73_6472_6f63_6572,
    0x2f69_6c65_6765_6952,
    0x0a73_6472_6f63_6572,
];

/// HighwayHash-64 of `data` with Riegeli's key.
pub(crate) fn riegeli_hash(data: &[u8]) -> u64 {
    let mut hasher = RiegeliHasher::new();
    hasher.append(data);
    hasher.finish()
}

/// [`riegeli_hash`] of data given in pieces (equal to hashing their concatenation).
pub(crate) struct RiegeliHasher(HighwayHasher);

impl RiegeliHasher {
    pub(crate) fn new() -> RiegeliHasher {
        RiegeliHasher(HighwayHasher::new(Key(RIEGELI_KEY)))
    }

    pub(crate) fn append(&mut self, piece: &[u8]) {
        self.0.append(piece);
    }

    pub(crate) fn finish(self) -> u64 {
        self.0.finalize64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_header_hash_matches_the_specification() {
        // The specification fixes the first 64 bytes of every file; the signature chunk's
        // header hash covers data_size=0, data_hash=hash(""), type 's', decoded size 0.
        let mut rest = Vec::new();
        rest.extend_from_slice(&0u64.to_le_bytes());
        rest.extend_from_slice(&riegeli_hash(b"").to_le_bytes());
        rest.extend_from_slice(&u64::from(b's').to_le_bytes());
        rest.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(riegeli_hash(&rest), 0xa9e1_8792_3cc2_ba91);
        assert_eq!(riegeli_hash(b""), 0x72c3_b1e9_c013_9fe1);
    }

    #[test]
    fn hashing_in_pieces_equals_hashing_the_whole() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for cuts in [
            vec![],
            vec![1],
            vec![31, 32, 33],
            vec![5, 64, 100, 999],
            vec![0, 0, 500],
        ] {
            let mut hasher = RiegeliHasher::new();
            let mut start = 0;
            for &cut in &cuts {
                hasher.append(&data[start..cut]);
                start = cut;
            }
            hasher.append(&data[start..]);
            assert_eq!(hasher.finish(), riegeli_hash(&data), "cut at {cuts:?}");
        }
    }
}
