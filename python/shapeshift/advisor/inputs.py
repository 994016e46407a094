"""The user's data as a pyarrow Table, and its schema in YT's type model (type_v3).

Readers by file name (sniffed when the name says nothing): Parquet, Arrow IPC file or stream
(Feather v2), CSV/TSV, JSON lines (pyarrow); any row format of ``shapeshift.formats`` with a
schema; ArrayRecord files (``shapeshift.records``: one binary column ``record``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shapeshift import formats

# File suffixes of our row formats (the name of the format where it is not the suffix).
ROW_FORMAT_SUFFIXES = {
    ".yson": "yson", ".skiff": "skiff", ".msgpack": "msgpack", ".cbor": "cbor", ".avro": "avro",
    ".protobuf": "protobuf", ".pb": "protobuf", ".thrift": "thrift",
}
RECORD_SUFFIXES = (".array_record", ".arrayrecord", ".ar")
ARROW_SUFFIXES = (".arrow", ".feather", ".ipc", ".arrows")
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
CSV_SUFFIXES = (".csv", ".tsv", ".txt")


class InputError(ValueError):
    """Input that cannot be measured: the message names the file, and the row or column."""


@dataclass
class Input:
    """What ``advise`` measures: the table, where it came from, its YT schema."""

    table: Any  # pyarrow.Table
    source: str  # file name, or a description of the object passed in
    reader: str  # how it was read ("parquet", "csv", "yson with schema", ...)
    schema: list[dict]  # YT columns: {"name": ..., "type_v3": ...}
    schema_origin: str  # "inferred from the Arrow schema" or the schema file
    notes: list[str] = field(default_factory=list)  # conversions made to read the data
    dropped: list[dict] = field(default_factory=list)  # columns no YT type holds


def type_text(type_v3: Any) -> str:
    """A type_v3 as one short line: ``optional<list<int64>>``, ``struct<x:int64>``."""
    if isinstance(type_v3, (str, bytes)):
        return type_v3.decode() if isinstance(type_v3, bytes) else type_v3
    name = type_v3.get("type_name")
    if name in ("optional", "list", "tagged"):
        return f"{name}<{type_text(type_v3['item'])}>"
    if name in ("struct", "variant") and "members" in type_v3:
        inner = ",".join(f"{m['name']}:{type_text(m['type'])}" for m in type_v3["members"])
        return f"{name}<{inner}>"
    if name in ("tuple", "variant"):
        return f"{name}<{','.join(type_text(e['type']) for e in type_v3['elements'])}>"
    if name == "dict":
        return f"dict<{type_text(type_v3['key'])},{type_text(type_v3['value'])}>"
    if name == "decimal":
        return f"decimal({type_v3['precision']},{type_v3['scale']})"
    return str(name)


def _plain(node: Any) -> Any:
    """A YSON node as plain Python (str keys and names, no YSON attribute wrappers)."""
    if isinstance(node, bytes):
        return node.decode("utf-8", "replace")
    if isinstance(node, dict):
        return {_plain(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    return node


def infer_schema(table) -> list[dict]:
    """The YT schema shapeshift's Arrow mapping gives ``table``'s Arrow schema."""
    from shapeshift import yson

    try:
        [text] = formats._native_formats.arrow_stream_schemas(formats._arrow_ipc(table.schema))
    except formats.FormatError as error:
        raise InputError(f"the Arrow schema has no YT equivalent: {error}") from error
    return [{"name": c["name"], "type_v3": c["type_v3"]} for c in _plain(list(yson.loads(text)))]


def read_schema_file(path: str | os.PathLike) -> list[dict]:
    """A YT schema from a file: JSON (a list of columns) or YSON text."""
    from shapeshift import yson

    text = Path(path).read_bytes()
    try:
        node = json.loads(text)
    except ValueError:
        try:
            node = _plain(yson.loads(text))
        except Exception as error:  # any parse failure is the same user error
            raise InputError(f"{path}: not a schema in JSON or YSON ({error})") from error
    if not isinstance(node, list) or not all(isinstance(c, dict) and "name" in c for c in node):
        raise InputError(f"{path}: a schema is a list of columns, each with a name and a type_v3")
    for index, column in enumerate(node):
        if "type_v3" not in column and "type" not in column:
            raise InputError(f"{path}: column {index} ({column['name']}) has no type_v3")
    return node


def _sniff(head: bytes) -> str | None:
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"ARROW1"):
        return "arrow-file"
    if head[:4] == b"\xff\xff\xff\xff":
        return "arrow-stream"
    if head.lstrip()[:1] == b"{":
        return "json"
    return None


def _read_row_format(path: Path, fmt: str, schema: list[dict] | None):
    if schema is None:
        raise InputError(f"{path}: {fmt} rows carry no schema; give one with --schema FILE")
    try:
        table = formats.to_arrow(path.read_bytes(), fmt, schema)
    except formats.FormatError as error:
        where = f"row {error.row}" if error.row is not None else f"byte {error.offset}"
        raise InputError(f"{path}: not {fmt} rows of the schema given, at {where}: {error.message}") from error
    if isinstance(table, list):
        raise InputError(f"{path}: holds {len(table)} tables; advise measures one table per file")
    return table


def _read_records(path: Path):
    import pyarrow as pa

    from shapeshift import records

    try:
        reader = records.Reader(str(path))
        data = reader.read_all()
    except Exception as error:  # the records library's errors name the chunk
        raise InputError(f"{path}: not a readable record file: {error}") from error
    return pa.table({"record": pa.array(data, pa.binary())})


def read_path(path: str | os.PathLike, schema: list[dict] | None = None) -> tuple[Any, str]:
    """The table in ``path`` and the name of the reader that read it."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.feather as feather
    import pyarrow.json as pjson
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    suffix = path.suffix.lower()
    with open(path, "rb") as file:
        head = file.read(8)
    kind = None
    if suffix == ".parquet" or head.startswith(b"PAR1"):
        kind = "parquet"
    elif suffix in ARROW_SUFFIXES:
        kind = "arrow"
    elif suffix in RECORD_SUFFIXES:
        kind = "records"
    elif suffix in ROW_FORMAT_SUFFIXES:
        kind = ROW_FORMAT_SUFFIXES[suffix]
    elif suffix in JSON_SUFFIXES:
        kind = "json"
    elif suffix in CSV_SUFFIXES:
        kind = "csv"
    else:
        sniffed = _sniff(head)
        kind = {"arrow-file": "arrow", "arrow-stream": "arrow"}.get(sniffed, sniffed)
        if kind is None:
            raise InputError(
                f"{path}: unknown kind of file (suffix {suffix or 'none'}): expected Parquet, Arrow "
                f"IPC/Feather, CSV, JSON lines, a record file, or rows of "
                f"{', '.join(formats.FORMATS)} with --schema"
            )
    try:
        if kind == "parquet":
            return pq.read_table(path), "parquet"
        if kind == "arrow":
            try:
                return feather.read_table(path), "arrow ipc file"
            except pa.ArrowInvalid:
                with pa.OSFile(str(path)) as source:
                    return pa.ipc.open_stream(source).read_all(), "arrow ipc stream"
        if kind == "json":
            return pjson.read_json(path), "json lines"
        if kind == "csv":
            options = pcsv.ParseOptions(delimiter="\t" if suffix == ".tsv" else ",")
            return pcsv.read_csv(path, parse_options=options), "csv"
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as error:
        raise InputError(f"{path}: not readable as {kind}: {error}") from error
    if kind == "records":
        return _read_records(path), "record file (one binary column: record)"
    return _read_row_format(path, kind, schema), f"{kind} with schema"


def _holdable(column):
    """``column`` in a type shapeshift's Arrow mapping takes, and what was changed ("" if
    nothing): time zones dropped (the values stay UTC instants), dictionaries decoded,
    large and view types narrowed, half floats widened."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_timestamp(kind) and (kind.tz is not None or kind.unit in ("ms", "ns")):
        # YT timestamps count microseconds; seconds map to datetime.
        unit = "s" if kind.unit == "s" else "us"
        changes = [f"time zone {kind.tz} dropped (values are UTC instants)"] if kind.tz else []
        if unit != kind.unit:
            changes.append(f"{kind.unit} timestamps as microseconds" + (" (truncated)" if kind.unit == "ns" else ""))
        return column.cast(pa.timestamp(unit), safe=False), ", ".join(changes)
    if pa.types.is_date64(kind):
        return column.cast(pa.date32()), "date64 as date32 (days)"
    if pa.types.is_dictionary(kind):
        return column.dictionary_decode(), "dictionary decoded"
    if pa.types.is_large_string(kind) or getattr(pa.types, "is_string_view", lambda _: False)(kind):
        return column.cast(pa.string()), f"{kind} read as string"
    if pa.types.is_large_binary(kind) or getattr(pa.types, "is_binary_view", lambda _: False)(kind):
        return column.cast(pa.binary()), f"{kind} read as binary"
    if pa.types.is_float16(kind):
        return column.cast(pa.float32()), "float16 widened to float32"
    return column, ""


def normalize(table, source: str) -> tuple[Any, list[str], list[dict]]:
    """The table in types every format can be asked for, notes on what changed, and the
    columns dropped because no YT type holds them (each naming the column and its type)."""
    import pyarrow as pa

    notes, dropped, keep = [], [], []
    for index, field in enumerate(table.schema):
        column, change = table.column(index), ""
        if not field.name:  # YT columns have names; CSV row-name columns often do not
            field = field.with_name(f"column_{index}")
            notes.append(f"column {index} has no name: called {field.name}")
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks() if column.num_chunks else pa.array([], field.type)
        try:
            column, change = _holdable(column)
            formats.from_arrow(pa.table({field.name: column}).slice(0, 1), "yson")
        except (ValueError, pa.ArrowNotImplementedError) as error:  # FormatError, ArrowInvalid too
            dropped.append({"section": "input", "what": f"column {field.name} ({field.type})",
                            "why": f"{source}: no YT type holds Arrow type {field.type}: {error}"})
            continue
        if change:
            notes.append(f"column {field.name}: {change}")
        keep.append((field.name, column))
    return pa.table(dict(keep)), notes, dropped


def _check_fit(table, schema: list[dict], origin: str) -> None:
    """Every column of the schema is in the table and the other way round, and the rows
    convert to the schema's types (the first row or column that does not is named)."""
    names = [c["name"] for c in schema]
    missing = [n for n in names if n not in table.column_names]
    extra = [n for n in table.column_names if n not in names]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"columns in the schema but not the data: {', '.join(missing)}")
        if extra:
            parts.append(f"columns in the data but not the schema: {', '.join(extra)}")
        raise InputError(f"the schema from {origin} does not fit: " + "; ".join(parts))
    try:
        formats.from_arrow(table.select(names).slice(0, 10_000), "yson", schema)
    except formats.FormatError as error:
        row = f" at row {error.row}" if error.row is not None else ""
        raise InputError(f"the schema from {origin} does not fit the data{row}: {error.message}") from error


def load(source: Any, schema: Any = None) -> Input:
    """The table to advise on: a path, a pyarrow Table/RecordBatch, or anything with
    ``__arrow_c_stream__``; ``schema`` a schema file path or a list of YT columns."""
    import pyarrow as pa

    schema_columns, origin = None, "inferred from the Arrow schema"
    if isinstance(schema, (str, os.PathLike)):
        schema_columns, origin = read_schema_file(schema), f"schema file {schema}"
    elif schema is not None:
        schema_columns, origin = list(schema), "the schema given"
    if isinstance(source, (str, os.PathLike)):
        table, reader = read_path(source, schema_columns)
        name = str(source)
    elif isinstance(source, pa.Table):
        table, reader, name = source, "pyarrow table", "pyarrow Table"
    elif isinstance(source, pa.RecordBatch):
        table, reader, name = pa.Table.from_batches([source]), "pyarrow record batch", "pyarrow RecordBatch"
    elif hasattr(source, "__arrow_c_stream__"):
        table = pa.RecordBatchReader.from_stream(source).read_all()
        reader, name = "arrow c stream", type(source).__name__
    else:
        raise InputError(f"cannot read a {type(source).__name__}: give a path, a pyarrow Table or "
                         "an object with __arrow_c_stream__")
    if table.num_rows == 0:
        raise InputError(f"{name}: the table has no rows (columns: {', '.join(table.column_names) or 'none'})")
    if table.num_columns == 0:
        raise InputError(f"{name}: the table has no columns")
    table, notes, dropped = normalize(table.combine_chunks(), name)
    if table.num_columns == 0:
        raise InputError(f"{name}: no column has a type a YT schema can hold: "
                         + "; ".join(d["why"] for d in dropped))
    if schema_columns is None:
        schema_columns = infer_schema(table)
    else:
        _check_fit(table, schema_columns, origin)
        table = table.select([c["name"] for c in schema_columns])
    return Input(table, name, reader, schema_columns, origin, notes, dropped)
