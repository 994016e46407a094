"""Spark's ``hash(col, ...)`` in numpy, so engines without it group Q2's rows as Spark does.

Spark SQL's ``hash`` is Murmur3 x86 32-bit with seed 42, chained over the columns: each
column's hash is seeded with the previous one (nulls leave it unchanged). Per type, as Spark's
``Murmur3HashFunction`` does it:

* int, date: ``hashInt`` (one 4-byte block, length 4);
* long, timestamp (microseconds): ``hashLong`` (low word, then high word, length 8);
* string: ``hashUnsafeBytes`` — 4-byte little-endian blocks, then *each remaining byte mixed
  as a whole block* (sign-extended), a quirk of Spark's that differs from reference Murmur3.

Vectorised over a column; strings as the rows of a padded byte matrix (``hash_bytes``);
``data._hash_strings`` builds it from an Arrow string column's buffers.
"""

from __future__ import annotations

import numpy as np

SEED = 42
_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_k1(k1: np.ndarray) -> np.ndarray:
    k1 = k1 * _C1
    k1 = _rotl(k1, 15)
    return k1 * _C2


def _mix_h1(h1: np.ndarray, k1: np.ndarray) -> np.ndarray:
    h1 = h1 ^ k1
    h1 = _rotl(h1, 13)
    return h1 * np.uint32(5) + np.uint32(0xE6546B64)


def _fmix(h1: np.ndarray, length: int | np.ndarray) -> np.ndarray:
    h1 = h1 ^ np.asarray(length, dtype=np.uint32)
    h1 = h1 ^ (h1 >> np.uint32(16))
    h1 = h1 * np.uint32(0x85EBCA6B)
    h1 = h1 ^ (h1 >> np.uint32(13))
    h1 = h1 * np.uint32(0xC2B2AE35)
    return h1 ^ (h1 >> np.uint32(16))


def hash_int(values: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Spark's ``hashInt`` of int32 values (uint32 seeds and result)."""
    with np.errstate(over="ignore"):
        return _fmix(_mix_h1(seed, _mix_k1(values.astype(np.int32).view(np.uint32))), 4)


def hash_long(values: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Spark's ``hashLong`` of int64 values."""
    words = values.astype(np.int64).view(np.uint64)
    low = (words & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    high = (words >> np.uint64(32)).astype(np.uint32)
    with np.errstate(over="ignore"):
        h1 = _mix_h1(seed, _mix_k1(low))
        h1 = _mix_h1(h1, _mix_k1(high))
        return _fmix(h1, 8)


def hash_bytes(matrix: np.ndarray, lengths: np.ndarray | int, seed: np.ndarray) -> np.ndarray:
    """Spark's ``hashUnsafeBytes`` of the strings in the rows of a uint8 matrix, row ``i``'s
    string its first ``lengths[i]`` bytes (the rest is padding; an int: every row's length)."""
    rows, width = matrix.shape
    uniform = np.ndim(lengths) == 0
    lengths = np.asarray(lengths, dtype=np.int64)
    aligned = lengths - lengths % 4
    most_aligned = int(aligned.max()) if rows else 0
    h1 = seed.copy()
    with np.errstate(over="ignore"):
        # Every block's k1 at once (k1 depends on its block alone); only h1 is chained.
        if most_aligned:
            blocks = _mix_k1(np.ascontiguousarray(matrix[:, :most_aligned]).view("<u4"))
            for j in range(blocks.shape[1]):
                mixed = _mix_h1(h1, blocks[:, j])
                h1 = mixed if uniform else np.where(4 * (j + 1) <= aligned, mixed, h1)
        # The tail bytes: each mixed as a whole (sign-extended) block, Spark's quirk.
        first_tail = int(aligned.min()) if rows else 0
        if width > first_tail:
            tails = _mix_k1(matrix[:, first_tail:].astype(np.int8).astype(np.int32).view(np.uint32))
            for position in range(first_tail, width):
                mixed = _mix_h1(h1, tails[:, position - first_tail])
                h1 = mixed if uniform else np.where((position >= aligned) & (position < lengths), mixed, h1)
        return _fmix(h1, lengths)


def seed_for(rows: int) -> np.ndarray:
    return np.full(rows, SEED, dtype=np.uint32)


def as_signed(hashes: np.ndarray) -> np.ndarray:
    """Spark's ``hash`` is a signed int."""
    return hashes.view(np.int32)
