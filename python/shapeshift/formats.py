"""Every row format of shapeshift from Python: rows as dicts, one-shot or streaming, pyarrow in/out.

    >>> from shapeshift import formats
    >>> schema = [{"name": "id", "type_v3": "int64"}, {"name": "name", "type_v3": "utf8"}]
    >>> data = formats.dumps([{"id": 1, "name": "a"}], format="msgpack", schema=schema)
    >>> formats.loads(data, format="msgpack", schema=schema)
    [{'id': 1, 'name': 'a'}]

``format`` is any name of :data:`FORMATS` (the registry's formats: ``yson``, ``yson-text``,
``skiff``, ``protobuf``, ``protobuf-dynamic``, ``arrow``, ``json``, ``msgpack``, ``cbor``,
``avro``, and any added later). ``schema`` is a YT table schema (a list of
``{"name": ..., "type_v3": ...}`` column dicts, legacy ``type``/``required`` columns too, or
its YSON text such as ``"<strict=%false>[{name=a;type_v3=int64}]"``), a list of table schemas
(one per table index), or a pyarrow schema.

``avro_datums=True`` (format ``avro``) reads and writes raw Avro datums of the first table back
to back, with no container header: the form of a message whose schema both ends hold, as
``fastavro.schemaless_writer`` writes it.

Values follow the column types as YT's Python client gives them: int, float, bool, bytes for
``string`` (str for ``utf8``/``json``), None for null, list, dict for structs, tuple for
tuples, ``(name or index, value)`` for variants, dict for dicts, ``[v]`` for a present value of
an optional of a nullable type, Python objects for ``yson`` columns, the binary bytes of
decimals (str or :class:`decimal.Decimal` accepted when writing). Row positions are the keys
``@table_index`` (when there are several tables; it picks the table when writing),
``@row_index``, ``@range_index`` and ``@key_switch``; columns outside a non-strict schema are
plain keys. See docs/formats/python.md.

Bad input raises :class:`FormatError` (a ``ValueError``) with ``format``, ``offset`` (byte, or
None), ``row`` (0-based, or None) and ``message``.
"""

from __future__ import annotations

from typing import Any, BinaryIO, Iterable

from shapeshift import _native

_native_formats = _native.formats

FormatError = _native_formats.FormatError
Reader = _native_formats.Reader
Writer = _native_formats.Writer
Codec = _native_formats.Codec
TypedCodec = _native_formats.TypedCodec
FORMATS: tuple[str, ...] = tuple(_native_formats.format_names())

__all__ = [
    "FORMATS", "Codec", "FormatError", "Reader", "Writer", "TypedCodec",
    "codec", "typed_codec", "loads", "dumps", "load", "dump", "convert", "to_arrow", "from_arrow",
]


def _is_arrow(obj: Any) -> bool:
    return hasattr(obj, "__arrow_c_stream__") or type(obj).__module__.startswith("pyarrow")


def _arrow_ipc(obj: Any) -> bytes:
    """An Arrow IPC stream of a pyarrow Table/RecordBatch/schema or any ``__arrow_c_stream__``."""
    import pyarrow as pa

    if isinstance(obj, pa.Schema):
        batches, schema = [], obj
    elif isinstance(obj, (pa.Table, pa.RecordBatch)):
        batches, schema = obj.to_batches(), obj.schema
    else:
        reader = pa.RecordBatchReader.from_stream(obj)
        batches, schema = reader, reader.schema
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _schema(schema: Any) -> Any:
    if schema is None:
        raise TypeError("a schema is needed: a YT table schema, a list of them, or a pyarrow schema")
    if _is_arrow(schema) or hasattr(schema, "__arrow_c_schema__"):
        import pyarrow as pa

        return _native_formats.arrow_stream_schemas(_arrow_ipc(pa.schema(schema)))
    return schema


def codec(format: str, schema: Any, *, skiff_system_columns: bool = False, avro_datums: bool = False) -> Codec:
    """A :class:`Codec`: ``format`` and ``schema`` prepared once, with ``dumps(rows,
    table_index=0)`` and ``loads(data)`` as the functions below, for many small calls (the
    schema is not parsed again on each)."""
    return Codec(format, _schema(schema), skiff_system_columns=skiff_system_columns, avro_datums=avro_datums)


def loads(data: bytes, format: str, schema: Any, *, skiff_system_columns: bool = False,
          avro_datums: bool = False) -> list[dict]:
    """Every row of ``data`` as a dict."""
    return _native_formats.loads(data, format, _schema(schema), skiff_system_columns=skiff_system_columns,
                                 avro_datums=avro_datums)


def dumps(rows: Iterable[dict] | Any, format: str, schema: Any = None, *, table_index: int = 0,
          skiff_system_columns: bool = False, avro_datums: bool = False) -> bytes:
    """Rows as bytes of ``format``.

    ``rows`` is an iterable of dicts, or a pyarrow Table (anything with ``__arrow_c_stream__``),
    whose schema is used when ``schema`` is None. ``table_index`` is the table of rows without
    ``@table_index``.
    """
    if _is_arrow(rows):
        if avro_datums:
            raise ValueError("avro_datums applies to rows given as dicts, not to a pyarrow Table")
        return from_arrow(rows, format, schema)
    return _native_formats.dumps(rows, format, _schema(schema), table_index=table_index,
                                 skiff_system_columns=skiff_system_columns, avro_datums=avro_datums)


def load(stream: BinaryIO | bytes, format: str, schema: Any, *, skiff_system_columns: bool = False,
         avro_datums: bool = False) -> Reader:
    """A streaming :class:`Reader` of row dicts over a binary file object (or bytes)."""
    if isinstance(stream, (bytearray, memoryview)):
        stream = bytes(stream)
    return Reader(stream, format, _schema(schema), skiff_system_columns=skiff_system_columns,
                  avro_datums=avro_datums)


def dump(rows: Iterable[dict], stream: BinaryIO, format: str, schema: Any, *, table_index: int = 0,
         skiff_system_columns: bool = False, avro_datums: bool = False) -> None:
    """Writes rows to a binary file object and ends the stream."""
    with Writer(stream, format, _schema(schema), table_index=table_index,
                skiff_system_columns=skiff_system_columns, avro_datums=avro_datums) as writer:
        writer.write_rows(rows)


def convert(data: bytes, source: str, target: str, schema: Any) -> bytes:
    """``data`` in format ``source`` re-encoded as ``target``, with no Python row objects."""
    return _native_formats.convert(data, source, target, _schema(schema))


def to_arrow(data: bytes, format: str, schema: Any):
    """The rows of ``data`` as a pyarrow Table (a list of Tables, one per Arrow stream, when the
    data holds several tables)."""
    import pyarrow as pa

    ipc = convert(data, format, "arrow", schema)
    tables = []
    source = pa.BufferReader(ipc)
    while source.tell() < len(ipc):
        tables.append(pa.ipc.open_stream(source).read_all())
    return tables[0] if len(tables) == 1 else tables


def from_arrow(table: Any, format: str, schema: Any = None) -> bytes:
    """A pyarrow Table (or anything with ``__arrow_c_stream__``) as bytes of ``format``; the
    table schema is the Arrow schema's (its ``yt.type_v3`` field metadata where present)
    unless ``schema`` is given."""
    ipc = _arrow_ipc(table)
    schema = _native_formats.arrow_stream_schemas(ipc) if schema is None else _schema(schema)
    return _native_formats.convert(ipc, "arrow", format, schema)


def typed_codec(format: str, schema: Any, cls: type) -> TypedCodec:
    """A codec of one row as an instance of dataclass ``cls``, made once: ``encode(obj)`` gives
    the row's message, ``decode(data)`` the instance (built without calling ``__init__``, then
    ``__post_init__`` where the class has one), through the format's serde path with no dicts
    in between. ``cls``'s fields are the schema's columns by name, each nested struct a
    dataclass whose fields are its members; annotations map to YT types as ``int`` (or an
    ``IntEnum``/int-valued ``Enum``) for integer and date types, ``float`` for ``float`` and
    ``double``, ``bool``, ``str`` for ``utf8``, ``json`` and ``string``, ``bytes`` for
    ``string``, ``list[T]`` for ``list<T>``, ``dict[K, V]`` for ``dict<K, V>`` (scalar keys),
    ``T | None`` for ``optional<T>``. A member or field
    without its counterpart, or an annotation that does not fit its type, is a ``TypeError``
    here, not a surprise later.

    Formats with a typed path: json, msgpack, cbor, protobuf, protobuf-dynamic, thrift,
    thrift-compact, avro (raw datums). The bytes are those :func:`dumps` writes for the same
    row, without the u32 frame of Protobuf and Thrift rows. Bad input raises
    :class:`FormatError` with the member path (``media.persons[1]: expected a str, got int``).
    """
    return TypedCodec(format, schema, _describe(cls, ()))


def _describe(tp: Any, within: tuple) -> tuple:
    """``tp`` as the typed codec's description: nested tuples of kinds (see plan.rs)."""
    import dataclasses
    import enum
    import types
    import typing

    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        items = [a for a in args if a is not type(None)]
        if len(items) == 1 and len(args) == 2:
            return ("optional", _describe(items[0], within))
        raise TypeError(f"{tp!r}: a union other than `T | None` has no YT type on the typed path")
    if origin is list and len(args) == 1:
        return ("list", _describe(args[0], within))
    if origin is dict and len(args) == 2:
        return ("dict", _describe(args[0], within), _describe(args[1], within))
    if isinstance(tp, type):
        if dataclasses.is_dataclass(tp):
            if tp in within:
                raise TypeError(f"{tp.__name__} contains itself; a YT type is finite")
            hints = typing.get_type_hints(tp)
            return ("struct", tp, {f.name: _describe(hints[f.name], within + (tp,))
                                   for f in dataclasses.fields(tp)})
        if issubclass(tp, enum.Enum):
            return ("int", tp)
        for kind in (bool, int, float, str, bytes):
            if tp is kind:
                return (kind.__name__,) if kind is not int else ("int", None)
    raise TypeError(f"{tp!r} is not a type the typed path carries: int, float, bool, str, bytes, "
                    "an int enum, list[...], dict[..., ...], ... | None, or a dataclass")
