"""ArrayRecord-compatible record files, fast.

Drop-in for array_record's Python API under its names (``ArrayRecordWriter``,
``ArrayRecordReader``, ``ArrayRecordDataSource``; ``Writer``, ``Reader`` and ``DataSource`` are
the same classes): switching is changing an import. The defaults and the option string stored in
the file are array_record's (``group_size:1`` unless given); errors are the exception classes
array_record raises, or subclasses of them (``CorruptRecordsError`` is a RuntimeError too).
Files are readable by array_record both ways, except those written with the
``zstd_dictionary`` option (shapeshift's extension, see docs/records.md).

    from shapeshift.records import Writer, Reader, DataSource

    writer = Writer("data.array_record", "group_size:1,zstd:3")
    writer.write(b"record")
    writer.close()
    reader = Reader("data.array_record")
    reader.read([0])          # batch access; reader.read(0, 1) a range; reader.read() the next
    DataSource(["data.array_record"])[0]

Decoding releases the GIL; batches (``read(list)``, ``read_all``, ``__getitems__``) decode
chunks in parallel on all cores.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
import os
import re
import threading
from typing import Any, Iterator, Sequence, SupportsIndex, Union

from shapeshift._native import records as _native

Writer = ArrayRecordWriter = _native.Writer
Reader = ArrayRecordReader = _native.Reader
CorruptRecordsError = _native.CorruptRecordsError
# A record index or range outside the file: an IndexError, and the ValueError / RuntimeError
# array_record's data source / batch reads raise, so code written against either catches it.
RecordIndexError = _native.RecordIndexError

__all__ = [
    "ArrayRecordWriter",
    "ArrayRecordReader",
    "ArrayRecordDataSource",
    "Writer",
    "Reader",
    "DataSource",
    "FileInstruction",
    "CorruptRecordsError",
    "RecordIndexError",
]


@dataclasses.dataclass(frozen=True)
class FileInstruction:
    """Records ``skip .. skip + take`` of ``filename`` (like array_record's)."""

    filename: str
    skip: int
    take: int
    examples_in_shard: int = -1


PathLike = Union[str, "os.PathLike[str]", FileInstruction]


@dataclasses.dataclass(frozen=True)
class _ReadInstruction:
    filename: str
    start: int
    end: int

    @property
    def num_records(self) -> int:
        return self.end - self.start


def _read_instruction(path: Any) -> _ReadInstruction:
    if hasattr(path, "filename") and hasattr(path, "skip") and hasattr(path, "take"):
        return _ReadInstruction(os.fspath(path.filename), path.skip, path.skip + path.take)
    text = os.fspath(path)
    match = re.fullmatch(r"(.*)\[(\d+):(\d+)\]", text)
    if match:
        return _ReadInstruction(match.group(1), int(match.group(2)), int(match.group(3)))
    return _ReadInstruction(text, 0, Reader(text).num_records())


class ArrayRecordDataSource:
    """Random access to the records of one or more files, in the order given.

    ``DataSource(paths, reader_options=None)``: ``paths`` is a path, a ``FileInstruction``,
    ``"file[start:end]"``, or a sequence of them; ``reader_options`` a dict of reader options
    (as array_record's). Supports ``len``, ``ds[i]``, ``ds.__getitems__(keys)`` (what Grain
    calls), iteration, pickling (readers reopen lazily) and ``with``.
    """

    def __init__(self, paths: PathLike | Sequence[PathLike], reader_options: dict[str, str] | None = None):
        if isinstance(paths, (str, os.PathLike, FileInstruction)) or hasattr(paths, "filename"):
            paths = [paths]
        elif isinstance(paths, Sequence):
            if len(paths) == 0:
                raise ValueError("Paths sequence can not be of 0 length")
        else:
            raise ValueError("paths must be a path, a FileInstruction or a sequence of them")
        options = reader_options or {}
        self._reader_options_string = ",".join(f"{key}:{value}" for key, value in options.items())
        self._read_instructions = [_read_instruction(path) for path in paths]
        self._paths = [instruction.filename for instruction in self._read_instructions]
        self._num_records = sum(instruction.num_records for instruction in self._read_instructions)
        self._prefix_sums = list(itertools.accumulate(i.num_records for i in self._read_instructions))
        self._readers: list[Any] = [None] * len(self._read_instructions)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._num_records

    def __iter__(self) -> Iterator[bytes]:
        for index in range(self._num_records):
            yield self[index]

    def __enter__(self) -> "ArrayRecordDataSource":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._readers = [None] * len(self._read_instructions)

    def _reader(self, reader_index: int) -> Any:
        reader = self._readers[reader_index]
        if reader is not None:
            return reader
        with self._lock:
            reader = self._readers[reader_index]
            if reader is None:
                options = "readahead_buffer_size:0"
                if self._reader_options_string:
                    options += "," + self._reader_options_string
                reader = Reader(self._read_instructions[reader_index].filename, options)
                self._readers[reader_index] = reader
        return reader

    def _locate(self, record_key: SupportsIndex) -> tuple[int, int]:
        key = record_key.__index__()
        if key < 0 or key >= self._num_records:
            raise RecordIndexError(f"record key {key} is not in [0, {self._num_records})")
        reader_index = bisect.bisect_right(self._prefix_sums, key)
        previous = self._prefix_sums[reader_index - 1] if reader_index > 0 else 0
        return reader_index, key - previous + self._read_instructions[reader_index].start

    def __getitem__(self, record_key: SupportsIndex) -> bytes:
        reader_index, position = self._locate(record_key)
        return self._reader(reader_index).read(position)

    def __getitems__(self, record_keys: Sequence[SupportsIndex]) -> list[bytes]:
        if len(self._read_instructions) == 1 and self._read_instructions[0].start == 0:
            keys = [key.__index__() for key in record_keys]
            for key in keys:
                if key < 0 or key >= self._num_records:
                    raise RecordIndexError(f"record key {key} is not in [0, {self._num_records})")
            return self._reader(0).read(keys)
        per_reader: dict[int, tuple[list[int], list[int]]] = {}
        for slot, key in enumerate(record_keys):
            reader_index, position = self._locate(key)
            positions, slots = per_reader.setdefault(reader_index, ([], []))
            positions.append(position)
            slots.append(slot)
        records: list[bytes] = [b""] * len(record_keys)
        for reader_index, (positions, slots) in per_reader.items():
            for slot, record in zip(slots, self._reader(reader_index).read(positions)):
                records[slot] = record
        return records

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_readers"]
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._readers = [None] * len(self._read_instructions)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        digest = hashlib.sha256("".join(self._paths).encode("utf-8")).hexdigest()
        return f"ArrayRecordDataSource(hash_of_paths={digest})"


DataSource = ArrayRecordDataSource
