"""The seeded table of the Spark-vs-Comet study (the DataFusion Comet study's schema), as Arrow.

Columns, as the study describes them: ``object_id`` (unique int64), ``guid`` (a random
uuid-like string), ``uni_id`` (int64), ``intercept_at`` (timestamp, microseconds, UTC-less),
``day`` (1-31), ``month`` (1-12) and ``colour`` (one of a small set). Rows are a pure function of
the seed and the row range, so a table split into files is the same rows as the whole, and every
engine of the study reads the same data. Vectorized with numpy: a few million rows per second.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

COLOURS = ("red", "orange", "yellow", "green", "blue", "indigo", "violet")
#: 2024-01-01T00:00:00 in microseconds since the epoch; timestamps fall in the year after it.
EPOCH_2024_US = 1_704_067_200_000_000
YEAR_US = 366 * 24 * 3600 * 1_000_000
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _uuids(random: np.random.Generator, count: int):
    """``count`` uuid-like strings (8-4-4-4-12 lowercase hex, version 4 bits set) as Arrow."""
    import pyarrow as pa

    raw = random.integers(0, 256, size=(count, 16), dtype=np.uint8)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    digits = np.empty((count, 32), dtype=np.uint8)
    digits[:, 0::2] = _HEX[raw >> 4]
    digits[:, 1::2] = _HEX[raw & 0x0F]
    text = np.full((count, 36), ord("-"), dtype=np.uint8)
    for start, end, at in ((0, 8, 0), (8, 12, 9), (12, 16, 14), (16, 20, 19), (20, 32, 24)):
        text[:, at:at + end - start] = digits[:, start:end]
    offsets = np.arange(0, 36 * (count + 1), 36, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(text)])


def batch(seed: int, first: int, count: int):
    """Rows ``first .. first + count`` of the table of ``seed``, as a ``pyarrow.RecordBatch``."""
    import pyarrow as pa

    if first < 0 or count < 0:
        raise ValueError("first and count must be non-negative")
    # One generator per (seed, first row): a file's rows do not depend on the other files.
    random = np.random.Generator(np.random.PCG64([seed, first]))
    object_id = np.arange(first, first + count, dtype=np.int64)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(object_id),
            _uuids(random, count),
            pa.array(random.integers(0, 1_000_000_000, size=count, dtype=np.int64)),
            pa.array(EPOCH_2024_US + random.integers(0, YEAR_US, size=count, dtype=np.int64),
                     type=pa.timestamp("us")),
            pa.array(random.integers(1, 32, size=count, dtype=np.int32)),
            pa.array(random.integers(1, 13, size=count, dtype=np.int32)),
            pa.DictionaryArray.from_arrays(
                pa.array(random.integers(0, len(COLOURS), size=count, dtype=np.int32)),
                pa.array(COLOURS)).cast(pa.string()),
        ],
        names=["object_id", "guid", "uni_id", "intercept_at", "day", "month", "colour"],
    )


def batches(seed: int, rows: int, batch_rows: int = 1 << 20) -> Iterator:
    """The whole table of ``rows`` rows in batches of ``batch_rows``."""
    for first in range(0, rows, batch_rows):
        yield batch(seed, first, min(batch_rows, rows - first))


def write_parquet(directory: str | Path, seed: int, rows: int, files: int,
                  compression: str = "snappy") -> list[Path]:
    """The table split into ``files`` Parquet files (``part-00000.parquet`` ...), as the study
    stores it (snappy by default); returns their paths."""
    import pyarrow.parquet as pq

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    per_file = -(-rows // max(files, 1))
    paths = []
    for index, first in enumerate(range(0, rows, per_file)):
        path = directory / f"part-{index:05d}.parquet"
        count = min(per_file, rows - first)
        with pq.ParquetWriter(path, batch(seed, first, 0).schema, compression=compression) as writer:
            for start in range(first, first + count, 1 << 20):
                writer.write_batch(batch(seed, start, min(1 << 20, first + count - start)))
        paths.append(path)
    return paths
