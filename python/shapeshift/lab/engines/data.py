"""The DataFusion Comet vs Spark study's table, generated with a seed, as Parquet files.

Columns as in the study: ``object_id`` (long, unique), ``guid`` (a uuid-like 36-character
string, random), ``uni_id`` (long), ``intercept_at`` (timestamp, microseconds, in 2024),
``day`` (int 1-31), ``month`` (int 1-12), ``colour`` (one of a small set). Files are written
with Snappy like the study's (Spark's default), ``rows`` split evenly over ``files``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

COLOURS = ("red", "orange", "yellow", "green", "blue", "indigo", "violet", "black")
COLUMNS = ("object_id", "guid", "uni_id", "intercept_at", "day", "month", "colour")
#: The table's YT schema, for copies in shapeshift's row formats.
YT_SCHEMA = (
    "[{name=object_id;type_v3=int64};{name=guid;type_v3=utf8};{name=uni_id;type_v3=int64};"
    "{name=intercept_at;type_v3=timestamp64};{name=day;type_v3=int32};{name=month;type_v3=int32};"
    "{name=colour;type_v3=utf8}]"
)
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_START_2024_US = 1_704_067_200_000_000
_YEAR_US = 366 * 86_400 * 1_000_000


def guids(rng: np.random.Generator, rows: int) -> np.ndarray:
    """``rows`` random uuid-like strings (8-4-4-4-12 hex digits) as a (rows, 36) uint8 matrix."""
    nibbles = rng.integers(0, 16, size=(rows, 32), dtype=np.uint8)
    matrix = np.empty((rows, 36), dtype=np.uint8)
    digits = [i for i in range(36) if i not in (8, 13, 18, 23)]
    matrix[:, digits] = _HEX[nibbles]
    matrix[:, [8, 13, 18, 23]] = ord("-")
    return matrix


def table(rows: int, first_id: int, rng: np.random.Generator):
    """One piece of the table as a pyarrow Table."""
    import pyarrow as pa

    matrix = guids(rng, rows)
    offsets = np.arange(0, 36 * (rows + 1), 36, dtype=np.int32)
    guid = pa.Array.from_buffers(pa.string(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(matrix.tobytes())])
    colour_codes = rng.integers(0, len(COLOURS), rows).astype(np.int32)
    colour = pa.DictionaryArray.from_arrays(pa.array(colour_codes), pa.array(COLOURS)).cast(pa.string())
    return pa.table(
        {
            "object_id": pa.array(np.arange(first_id, first_id + rows, dtype=np.int64)),
            "guid": guid,
            "uni_id": pa.array(rng.integers(0, 10_000_000, rows, dtype=np.int64)),
            "intercept_at": pa.array(
                _START_2024_US + rng.integers(0, _YEAR_US, rows, dtype=np.int64), pa.timestamp("us")
            ),
            "day": pa.array(rng.integers(1, 32, rows, dtype=np.int32)),
            "month": pa.array(rng.integers(1, 13, rows, dtype=np.int32)),
            "colour": colour,
        }
    )


def generate(directory: str | Path, rows: int, files: int = 8, seed: int = 2026) -> list[Path]:
    """Writes ``files`` Parquet files of the study's table holding ``rows`` rows in all; returns
    their paths. An existing complete set with the same parameters is reused."""
    import pyarrow.parquet as pq

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stamp = directory / f".complete-{rows}-{files}-{seed}"
    paths = [directory / f"part-{i:03d}.parquet" for i in range(files)]
    if stamp.exists() and all(p.exists() for p in paths):
        return paths
    for stale in directory.glob("*"):
        stale.unlink()
    rng = np.random.default_rng(seed)
    first = 0
    for i, path in enumerate(paths):
        count = rows // files + (1 if i < rows % files else 0)
        pq.write_table(table(count, first, rng), path, compression="snappy", row_group_size=1 << 20)
        first += count
    stamp.touch()
    return paths


def copy_as(parquet_paths: list[Path], format: str, directory: str | Path) -> list[Path]:
    """The same rows, file for file, as YT table streams in ``format`` (shapeshift's codec,
    from Arrow); reused while the Parquet files are unchanged."""
    import pyarrow.parquet as pq

    from shapeshift import formats

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stamp = directory / (".complete-" + "-".join(f"{p.name}:{p.stat().st_mtime_ns}" for p in parquet_paths[:1]) + f"-{len(parquet_paths)}")
    paths = [directory / (p.stem + "." + format) for p in parquet_paths]
    if stamp.exists() and all(p.exists() for p in paths):
        return paths
    for stale in directory.glob("*"):
        stale.unlink()
    for source, target in zip(parquet_paths, paths):
        target.write_bytes(formats.from_arrow(pq.read_table(source), format, YT_SCHEMA))
    stamp.touch()
    return paths


# Strings up to this long (of several lengths) are hashed in one pass, padded to the longest.
PADDED_STRING_MOST = 32
# Rows hashed per vectorised pass: each step's arrays stay in the cache.
HASH_CHUNK_ROWS = 8192


def spark_hash(batch) -> np.ndarray:
    """Spark's ``hash(object_id, guid, uni_id, intercept_at, day, month, colour)`` of a pyarrow
    Table or RecordBatch of the study's columns (no nulls), as int32."""
    import pyarrow as pa

    from shapeshift.lab.engines import murmur3

    rows = batch.num_rows
    if rows > HASH_CHUNK_ROWS:
        # A whole table at once ran ~3x slower per row: each step's temporaries left the cache.
        return np.concatenate([spark_hash(batch.slice(start, HASH_CHUNK_ROWS))
                               for start in range(0, rows, HASH_CHUNK_ROWS)])
    h = murmur3.seed_for(rows)
    h = murmur3.hash_long(batch.column("object_id").to_numpy(), h)
    h = _hash_strings(batch.column("guid"), h)
    h = murmur3.hash_long(batch.column("uni_id").to_numpy(), h)
    intercept = batch.column("intercept_at").cast(pa.int64()).to_numpy()
    h = murmur3.hash_long(intercept, h)
    h = murmur3.hash_int(batch.column("day").to_numpy(), h)
    h = murmur3.hash_int(batch.column("month").to_numpy(), h)
    h = _hash_strings(batch.column("colour"), h)
    return murmur3.as_signed(h)


def _hash_strings(column, seed: np.ndarray) -> np.ndarray:
    """``hashUnsafeBytes`` of a pyarrow string column straight from its buffers: one vectorised
    pass over short strings padded to the longest, else one pass per distinct length."""
    import pyarrow as pa

    from shapeshift.lab.engines import murmur3

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if column.null_count:
        raise ValueError("the study's columns hold no nulls")
    wide = pa.types.is_large_string(column.type) or pa.types.is_large_binary(column.type)
    rows = len(column)
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int64 if wide else np.int32)
    offsets = offsets[column.offset : column.offset + rows + 1].astype(np.int64)
    data = np.frombuffer(column.buffers()[2], dtype=np.uint8) if rows else np.empty(0, np.uint8)
    lengths = np.diff(offsets)
    if not rows:
        return seed.copy()
    shortest, longest = int(lengths.min()), int(lengths.max())
    if shortest == longest:
        # One length: the strings lie back to back (no nulls), a matrix as they are.
        matrix = data[offsets[0] : offsets[-1]].reshape(rows, longest)
        return murmur3.hash_bytes(matrix, longest, seed)
    if longest <= PADDED_STRING_MOST:
        # Short strings of several lengths: one pass over them padded to the longest.
        index = np.minimum(offsets[:-1, None] + np.arange(longest), len(data) - 1)
        return murmur3.hash_bytes(data[index], lengths, seed)
    out = np.empty(rows, dtype=np.uint32)
    for length in np.unique(lengths):
        picked = np.flatnonzero(lengths == length)
        matrix = data[offsets[picked][:, None] + np.arange(int(length))]
        out[picked] = murmur3.hash_bytes(matrix.reshape(len(picked), int(length)), int(length), seed[picked])
    return out


def default_rows(scale: float) -> int:
    return max(100_000, int(float(os.environ.get("ENGINE_ROWS", 3_000_000)) * scale))
