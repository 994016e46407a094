"""Record files: the sampled rows, one record per row, in ArrayRecord files of every group size
x compression, written and read by ``shapeshift.records`` and by array_record, for the access
pattern the user names:

* ``random``: single records at random positions, one call each (a training loader's lookup);
* ``batch``: one call for a list of random positions (``read(list)``, Grain's ``__getitems__``);
* ``sequential``: the whole file in order (``read_all``).

Each record is the row in MessagePack through ``shapeshift.formats`` (rows as arrays, the
compact self-describing row of our formats); a record file of the user's own records (an
ArrayRecord input) keeps its records as they are."""

from __future__ import annotations

import os
import random
import tempfile
import time
from importlib import metadata

from shapeshift import formats
from shapeshift.advisor.timing import (
    REPEAT, Slice, interleaved_rounds, random_rows, random_sample_text, rows_for, timing_figures,
)
from shapeshift.lab.studies.records import _write
from shapeshift.lab.study import LabContext

GROUP_SIZES = (1, 16, 256)
COMPRESSIONS = ("zstd:3", "snappy", "uncompressed")
ACCESS = ("random", "batch", "sequential")
RECORD_FORMAT = "msgpack"
PILOT_ROWS = 500
# Reads per timed run for the random patterns (all records when fewer).
RANDOM_READS = 1000


def row_records(table, schema: list[dict]) -> list[bytes]:
    """One record per row: the row alone in ``RECORD_FORMAT`` (a record file input: its records)."""
    if table.column_names == ["record"] and str(table.schema.field("record").type) == "binary":
        return table["record"].to_pylist()
    rows = formats.loads(formats.from_arrow(table, "yson", schema), "yson", schema)
    return [formats.dumps([row], RECORD_FORMAT, schema) for row in rows]


def _libraries():
    from shapeshift.records import Reader, Writer

    libraries = {"shapeshift": (Writer, Reader, lambda reader, i: reader.read(i))}
    try:
        from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter
    except ImportError:
        return libraries, "array_record is not installed"
    # array_record's reader has no read(int): one record is read([i]).
    libraries[f"array_record {metadata.version('array-record')}"] = (
        ArrayRecordWriter, ArrayRecordReader, lambda reader, i: reader.read([i])[0])
    return libraries, None


def _access(reader_class, read_one, path: str, access: str, positions: list[int]):
    if access == "random":
        reader = reader_class(path, "readahead_buffer_size:0")
        return lambda: [read_one(reader, i) for i in positions]
    if access == "batch":
        reader = reader_class(path, "readahead_buffer_size:0")
        return lambda: reader.read(positions)
    return lambda: reader_class(path).read_all()


def _configurations(libraries) -> list[tuple[str, str, int]]:
    return [(lib, c, g) for g in GROUP_SIZES for c in COMPRESSIONS for lib in libraries]


def measure(ctx: LabContext, table, schema: list[dict], access: str, budget_s: float) -> dict:
    if access not in ACCESS:
        raise ValueError(f"access is one of {', '.join(ACCESS)}, not {access!r}")
    budget = Slice(budget_s)
    libraries, missing = _libraries()
    skipped = [] if missing is None else [{"section": "records", "what": "array_record", "why": missing}]
    total = table.num_rows
    workdir = tempfile.TemporaryDirectory(prefix="shapeshift-advise-")
    try:
        def pilot(count: int) -> float:
            started = time.perf_counter()
            _run(ctx, table.take(random_rows(total, count)), schema, access, libraries, workdir.name, None, 1)
            return time.perf_counter() - started

        count = rows_for(budget, pilot, PILOT_ROWS, total, REPEAT + 2)
        sample = table.take(random_rows(total, count))
        figures = _run(ctx, sample, schema, access, libraries, workdir.name, budget, REPEAT)
    finally:
        workdir.cleanup()
    reads = min(RANDOM_READS, count) if access == "random" else count
    return {
        "rows": count,
        "of_rows": total,
        "sample": random_sample_text(count, total),
        "access": access,
        "reads_per_run": reads,
        "record_format": RECORD_FORMAT,
        "raw_bytes": figures.pop("raw_bytes"),
        "arms": figures.pop("arms"),
        "skipped": skipped,
    }


def _run(ctx, sample, schema, access, libraries, directory, budget, repeat) -> dict:
    records = row_records(sample, schema)
    count = len(records)
    positions = list(range(count))
    random.Random(1).shuffle(positions)
    if access == "random":
        positions = positions[:RANDOM_READS]
    configurations = _configurations(libraries)
    paths, write_seconds = {}, {}
    for lib, compression, group_size in configurations:
        path = os.path.join(directory, f"{lib.split()[0]}-{compression.replace(':', '')}-g{group_size}.array_record")
        options = f"group_size:{group_size},{compression}"
        write_class = libraries[lib][0]
        started = time.perf_counter()
        _write(write_class, path, options, records)
        write_seconds[(lib, compression, group_size)] = time.perf_counter() - started
        paths[(lib, compression, group_size)] = path
    arms = {
        config: _access(libraries[config[0]][1], libraries[config[0]][2], paths[config], access, positions)
        for config in configurations
    }
    expected = records if access == "sequential" else [records[i] for i in positions]
    for config, fn in arms.items():
        if list(fn()) != expected:
            raise AssertionError(f"{config} read back other records than were written")
    names = {config: f"{config[0]} · {config[1]} · group {config[2]}" for config in configurations}
    with ctx.steps(repeat, f"records: {len(arms)} files of {count:,} records, {access} access") as progress:
        samples = interleaved_rounds(ctx, {names[c]: fn for c, fn in arms.items()}, budget or Slice(0),
                                     progress, repeat=repeat)
    reads = len(positions) if access != "sequential" else count
    return {
        "raw_bytes": sum(map(len, records)),
        "arms": [
            {
                "name": names[config], "library": config[0], "compression": config[1], "group_size": config[2],
                "bytes": os.path.getsize(paths[config]),
                "write_s": write_seconds[config],
                "read": timing_figures(samples[names[config]], reads),
            }
            for config in configurations
        ],
    }
