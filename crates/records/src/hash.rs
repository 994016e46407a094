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
    let mut hasher = HighwayHasher::new(Key(RIEGELI_KEY));
    hasher.append(data);
    hasher.finalize64()
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
}
