"""Adaptive per-block numeric columns ("shape-shifting" columns).

A 1-D numpy array of int32, int64, uint32, uint64, float32 or float64 is cut into blocks of
``block_size`` values (4096..65536, a power of two); each block gets the encoding that suits
it best for the chosen ``target`` (zero, constant, bit-packing, byte-packing, run-length,
delta, dictionary, patched bit-packing, ALP for decimals, pco, LZ4/zstd-wrapped, unencoded).

    >>> import numpy as np
    >>> from shapeshift import columns
    >>> data = columns.encode(np.arange(100_000, dtype=np.int64), target="balanced")
    >>> col = columns.Column(data)
    >>> col.get(12_345), len(col), col.composition()
    (12345, 100000, {'delta': 1, ...})

Encoding and decoding release the GIL. The byte layout is described in docs/columns.md.
"""

from __future__ import annotations

import numpy as np

from shapeshift._native import columns as _native

__all__ = ["encode", "encode_baseline", "Column", "TARGETS", "BLOCK_SIZES", "DTYPES"]

TARGETS = ("smaller", "balanced", "faster")
BLOCK_SIZES = (4096, 8192, 16384, 32768, 65536)
DTYPES = {
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}


def _as_column_array(values) -> np.ndarray:
    array = np.ascontiguousarray(values)
    if array.ndim != 1:
        raise ValueError(f"expected a 1-D array, got {array.ndim} dimensions")
    if array.dtype.newbyteorder("=") not in DTYPES.values():
        raise TypeError(
            f"unsupported dtype {array.dtype}: use int32, int64, uint32, uint64, float32 or float64"
        )
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


def encode(values, target: str = "balanced", block_size: int = 65536) -> bytes:
    """Encode a 1-D numeric array; ``target`` is "smaller", "balanced" or "faster"."""
    return _native.encode(_as_column_array(values), target, block_size)


def encode_baseline(values) -> bytes:
    """Encode like Druid's default numeric columns (byte-packing + LZ4, blocks of 8192)."""
    return _native.encode_baseline(_as_column_array(values))


class Column:
    """A decoded view of an encoded column; construction validates all checksums."""

    __slots__ = ("_native",)

    def __init__(self, data: bytes | bytearray | memoryview):
        self._native = _native.Column(bytes(data) if not isinstance(data, bytes) else data)

    @property
    def dtype(self) -> np.dtype:
        return DTYPES[self._native.value_type]

    @property
    def nbytes(self) -> int:
        """Encoded size in bytes."""
        return self._native.nbytes

    @property
    def block_size(self) -> int:
        return self._native.block_size

    @property
    def block_count(self) -> int:
        return self._native.block_count

    @property
    def target(self) -> str:
        """The writer's target ("smaller", "balanced", "faster" or "baseline")."""
        return self._native.target

    def __len__(self) -> int:
        return len(self._native)

    def to_numpy(self) -> np.ndarray:
        """Decode every value into a new array."""
        return self._native.to_numpy()

    def take(self, indices) -> np.ndarray:
        """Values at sorted (non-decreasing) row indices."""
        rows = np.ascontiguousarray(indices, dtype=np.int64)
        if rows.ndim != 1:
            raise ValueError("indices must be 1-D")
        return self._native.take(rows)

    def get(self, index: int):
        """The value at one row (negative indices count from the end)."""
        if index < 0:
            index += len(self)
        if index < 0:
            raise IndexError("row index out of range")
        return self._native.get(index)

    def composition(self) -> dict[str, int]:
        """Number of blocks per encoding name."""
        return self._native.composition()

    def block_encodings(self) -> list[str]:
        """Encoding name of every block, in order."""
        return self._native.block_encodings()

    def __repr__(self) -> str:
        return (
            f"Column(dtype={self.dtype}, len={len(self)}, nbytes={self.nbytes}, "
            f"composition={self.composition()})"
        )
