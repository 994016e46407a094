"""Rows between jobs and over the wire: every row format of ``shapeshift.formats`` on a sample
of the user's rows, on its fast path (Arrow in, Arrow out: no Python objects per value) and
through the common interface with rows as dicts, beside the Python peer libraries for the same
format that are installed, all in the same interleaved rounds.

Per arm: bytes, zstd bytes (level 3), write and read rows/s with their samples."""

from __future__ import annotations

import io
import json
import time
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Callable

from shapeshift import formats
from shapeshift.advisor.timing import (
    REPEAT, Slice, interleaved_rounds, random_rows, random_sample_text, rows_for, timing_figures,
)
from shapeshift.lab.study import LabContext

ZSTD_LEVEL = 3
PILOT_ROWS = 300
# Formats the advisor leaves out: protobuf-dynamic is protobuf's bytes by another code path.
SAME_BYTES_AS = {"protobuf-dynamic": "protobuf"}


@dataclass
class Arm:
    """One way of moving the rows: a format through one library and path."""

    format: str
    library: str  # "shapeshift" or the peer's package name and version
    path: str  # "arrow" (table in, table out) or "dicts" (Python row dicts in and out)
    write: Callable[[], bytes]
    read: Callable[[bytes], Any]

    @property
    def name(self) -> str:
        return f"{self.format} · {self.library} · {self.path}"


def _version(package: str) -> str:
    try:
        return f"{package} {metadata.version(package)}"
    except metadata.PackageNotFoundError:
        return package


def zstd_size(data: bytes) -> int:
    import pyarrow as pa

    return len(pa.Codec("zstd", compression_level=ZSTD_LEVEL).compress(data, asbytes=True))


def _ipc_stream(table) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _peer_arms(fmt: str, table, rows: list[dict], ours_avro: bytes | None) -> list[Arm]:
    """The installed Python peers for ``fmt`` (none for formats with no Python library here)."""
    arms = []
    if fmt == "arrow":
        import pyarrow as pa

        arms.append(Arm(fmt, _version("pyarrow"), "arrow", lambda: _ipc_stream(table),
                        lambda data: pa.ipc.open_stream(pa.BufferReader(data)).read_all()))
    if fmt in ("yson", "yson-text"):
        try:
            import yt.yson as yt_yson
        except ImportError:
            yt_yson = None
        if yt_yson is not None:
            spelling = "binary" if fmt == "yson" else "text"
            arms.append(Arm(
                fmt, _version("ytsaurus-yson"), "dicts",
                lambda: yt_yson.dumps(rows, yson_format=spelling, yson_type="list_fragment"),
                lambda data: list(yt_yson.loads(data, yson_type="list_fragment")),
            ))
    if fmt == "json":
        try:
            import orjson
        except ImportError:
            orjson = None
        if orjson is not None:
            arms.append(Arm(fmt, _version("orjson"), "dicts",
                            lambda: b"\n".join(map(orjson.dumps, rows)),
                            lambda data: [orjson.loads(line) for line in data.splitlines()]))
        encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
        decoder = json.JSONDecoder()
        arms.append(Arm(fmt, "json (stdlib)", "dicts",
                        lambda: "\n".join(map(encoder.encode, rows)).encode(),
                        lambda data: [decoder.decode(line) for line in data.decode().splitlines()]))
    if fmt == "msgpack":
        try:
            import msgpack
        except ImportError:
            msgpack = None
        if msgpack is not None:
            def write_msgpack():
                packer = msgpack.Packer()
                return b"".join(map(packer.pack, rows))

            arms.append(Arm(fmt, _version("msgpack"), "dicts", write_msgpack,
                            lambda data: list(msgpack.Unpacker(io.BytesIO(data), raw=False))))
    if fmt == "cbor":
        try:
            import cbor2
        except ImportError:
            cbor2 = None
        if cbor2 is not None:
            def read_cbor(data):
                source = io.BytesIO(data)
                decoder = cbor2.CBORDecoder(source)
                out = []
                while source.tell() < len(data):
                    out.append(decoder.decode())
                return out

            arms.append(Arm(fmt, _version("cbor2"), "dicts",
                            lambda: b"".join(map(cbor2.dumps, rows)), read_cbor))
    if fmt == "avro" and ours_avro is not None:
        try:
            import fastavro
        except ImportError:
            fastavro = None
        if fastavro is not None:
            header = fastavro.reader(io.BytesIO(ours_avro))
            schema, codec = fastavro.parse_schema(header.writer_schema), header.codec

            def write_avro():
                sink = io.BytesIO()
                fastavro.writer(sink, schema, rows, codec=codec)
                return sink.getvalue()

            arms.append(Arm(fmt, _version("fastavro"), "dicts", write_avro,
                            lambda data: list(fastavro.reader(io.BytesIO(data)))))
    return arms


def _our_arms(fmt: str, table, rows: list[dict], schema: list[dict]) -> list[Arm]:
    return [
        Arm(fmt, "shapeshift", "arrow", lambda: formats.from_arrow(table, fmt, schema),
            lambda data: formats.to_arrow(data, fmt, schema)),
        Arm(fmt, "shapeshift", "dicts", lambda: formats.dumps(rows, fmt, schema),
            lambda data: formats.loads(data, fmt, schema)),
    ]


def _why(arm: Arm, error: Exception, table, rows: list[dict], schema: list[dict]) -> str:
    """Why ``arm`` failed, naming the first column it cannot hold when one alone fails."""
    if isinstance(error, formats.FormatError):
        where = f" at row {error.row}" if error.row is not None else ""
        return f"{arm.name}: {error.message}{where}"
    for column in schema:
        name = column["name"]
        single = [{name: r.get(name)} for r in rows[:50]]
        try:
            peers = _peer_arms(arm.format, table.select([name]).slice(0, 50), single, None)
            one = next((a for a in peers if a.library == arm.library), None)
            if one is not None:
                one.read(one.write())
        except Exception as column_error:  # the peer's own error for that column
            return (f"{arm.library} cannot hold column {name} ({column.get('type_v3')!s:.60}): "
                    f"{type(column_error).__name__}: {column_error}")
    return f"{arm.name}: {type(error).__name__}: {error}"


def _arms(table, rows, schema, skipped: list[dict]) -> list[Arm]:
    arms = []
    ours_avro = None
    for fmt in formats.FORMATS:
        if fmt in SAME_BYTES_AS:
            continue
        for arm in _our_arms(fmt, table, rows, schema):
            try:
                data = arm.write()
                arm.read(data)
            except Exception as error:  # a format that cannot hold these rows is skipped
                skipped.append({"section": "rows", "what": arm.name, "why": _why(arm, error, table, rows, schema)})
                continue
            if fmt == "avro" and arm.path == "arrow":
                ours_avro = data
            arms.append(arm)
        for arm in _peer_arms(fmt, table, rows, ours_avro):
            try:
                arm.read(arm.write())
            except Exception as error:
                skipped.append({"section": "rows", "what": arm.name, "why": _why(arm, error, table, rows, schema)})
                continue
            arms.append(arm)
    return arms


def _dict_rows(table, schema) -> list[dict]:
    return formats.loads(formats.from_arrow(table, "yson", schema), "yson", schema)


def measure(ctx: LabContext, table, schema: list[dict], budget_s: float) -> dict:
    """The rows section: sample, arms, figures, and what was skipped."""
    budget = Slice(budget_s)
    skipped: list[dict] = []
    total = table.num_rows
    pilot_names: set[str] = set()

    def pilot(count: int) -> float:
        sample = table.take(random_rows(total, count))
        started = time.perf_counter()
        arms = _arms(sample, _dict_rows(sample, schema), schema, skipped)
        for arm in arms:  # a second pass: the first one paid for imports and first calls
            arm.read(arm.write())
        pilot_names.update(a.name for a in arms)
        return (time.perf_counter() - started) / 2

    count = rows_for(budget, pilot, PILOT_ROWS, total, REPEAT + 3)
    indices = random_rows(total, count)
    sample = table.take(indices)
    rows = _dict_rows(sample, schema)
    arms = [a for a in _arms(sample, rows, schema, skipped) if a.name in pilot_names]
    encoded = {arm.name: arm.write() for arm in arms}
    progress = ctx.steps(2 * REPEAT, f"rows: {len(arms)} ways on {count:,} rows")
    with progress:
        writes = interleaved_rounds(ctx, {a.name: a.write for a in arms}, Slice(budget.left / 2), progress)
        reads = interleaved_rounds(
            ctx, {a.name: (lambda a=a: a.read(encoded[a.name])) for a in arms}, Slice(budget.left), progress)
    figures = []
    for arm in arms:
        data = encoded[arm.name]
        figures.append({
            "name": arm.name, "format": arm.format, "library": arm.library, "path": arm.path,
            "bytes": len(data), "zstd_bytes": zstd_size(data),
            "write": timing_figures(writes[arm.name], count),
            "read": timing_figures(reads[arm.name], count),
        })
    return {
        "rows": count,
        "of_rows": total,
        "sample": random_sample_text(count, total),
        "zstd_level": ZSTD_LEVEL,
        "arms": figures,
        "skipped": list({s["what"]: s for s in skipped}.values()),
    }
