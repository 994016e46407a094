//! Compares ways of hashing a file's 64 KiB blocks (HighwayHash, the Riegeli chunk hash):
//! straight from the map, after copying into a reused buffer, and straight from the map
//! with software prefetch ahead. Used to choose how prepare verifies chunks that span blocks.
//! `cargo run --release -p shapeshift-records --example hash_speed -- FILE [REPEAT]`

use std::time::Instant;

use highway::{HighwayHash, HighwayHasher, Key};

const BLOCK: usize = 1 << 16;
const CHUNK_BLOCKS: usize = 6;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: hash_speed FILE [REPEAT]")?;
    let repeat: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(5);
    let file = std::fs::File::open(&path)?;
    let key = Key([1, 2, 3, 4]);
    let mut buffer = Vec::with_capacity(CHUNK_BLOCKS * BLOCK);
    for round in 0..repeat {
        for variant in ["map", "copy", "prefetch"] {
            // SAFETY: the file is not modified while mapped (a benchmark input).
            let map = unsafe { memmap2::MmapOptions::new().populate().map(&file)? };
            let start = Instant::now();
            let mut total = 0u64;
            for group in map.chunks(CHUNK_BLOCKS * BLOCK) {
                let mut hasher = HighwayHasher::new(key);
                match variant {
                    "map" => {
                        for block in group.chunks(BLOCK) {
                            hasher.append(&block[24..]);
                        }
                    }
                    "copy" => {
                        buffer.clear();
                        for block in group.chunks(BLOCK) {
                            buffer.extend_from_slice(&block[24..]);
                        }
                        hasher.append(&buffer);
                    }
                    _ => {
                        for block in group.chunks(BLOCK) {
                            let piece = &block[24..];
                            for (i, page) in piece.chunks(4096).enumerate() {
                                let ahead = (i + 2) * 4096;
                                if ahead < piece.len() {
                                    let end = (ahead + 4096).min(piece.len());
                                    for line in (ahead..end).step_by(64) {
                                        prefetch(&piece[line]);
                                    }
                                }
                                hasher.append(page);
                            }
                        }
                    }
                }
                total ^= hasher.finalize64();
            }
            let seconds = start.elapsed().as_secs_f64();
            println!(
                "round {round} {variant:9} {:7.2} ms  {:6.2} GB/s  ({total:x})",
                seconds * 1e3,
                map.len() as f64 / seconds / 1e9
            );
        }
    }
    Ok(())
}

fn prefetch(byte: &u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; any address is allowed.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            byte as *const u8 as *const i8,
        )
    };
}
