"""Skiff, YTsaurus's schema-driven binary row format.

Rows are dicts ``column name -> value``. A schema is any of:

- a YT table schema: a list of column dicts (``{"name": "a", "type_v3": "int64"}`` or the
  legacy ``{"name": "a", "type": "int64", "required": True}``), or its YSON text
  (``"<strict=%true>[{name=a;type_v3=int64}]"``); the Skiff schema is then derived the way
  YT does it (see docs/formats/skiff.md);
- a list of such table schemas (one per table index);
- a Skiff schema (``{"wire_type": "tuple", "children": [...]}``), a list of them, or a whole
  ``skiff`` format (``"<table_skiff_schemas=[...]; skiff_schema_registry={...}>skiff"``),
  optionally with ``table_schemas=`` so values take their column types' shapes.

Values: ints for every integer wire type (int128/256 too), float, bool, bytes for strings
(str for ``utf8``/``json`` columns), Python objects for ``yson`` (attributes as
``{"$attributes": {...}, "$value": ...}``), None for null, ``[v]`` for a present value of an
optional whose item is itself nullable, list, dict for structs (tuple when the Skiff children
are unnamed), tuple for tuples, ``(name or index, value)`` for variants, dict for dicts (a list
of pairs when a key is unhashable), ``decimal.Decimal`` for decimals, 16 bytes for uuids.

System fields are keys starting with ``@``: ``@table_index`` (present when there are several
tables; selects the table when dumping), ``@row_index``, ``@range_index``, ``@key_switch``
(when the schema has them). ``$other_columns`` and ``$sparse_columns`` are merged into the
row dict as ordinary keys.

Errors on bad input raise :class:`SkiffDecodeError` (a ``ValueError``) whose message names the
byte offset, row and column.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO, Iterable, Iterator

from shapeshift import _native

Codec = _native.skiff.Codec
SkiffDecodeError = _native.skiff.SkiffDecodeError

__all__ = ["Codec", "SkiffDecodeError", "load", "loads", "dump", "dumps"]


def _codec(schema: Any, options: dict) -> Codec:
    if isinstance(schema, Codec):
        if options:
            raise TypeError("schema options cannot be combined with a compiled Codec")
        return schema
    return Codec(schema, **options)


def loads(data: bytes, schema: Any, **options: Any) -> list[dict]:
    """All rows of ``data`` as dicts.

    ``options``: ``table_schemas``, ``registry``, and for table schemas ``key_switch``,
    ``row_index``, ``range_index``, ``other_columns`` (default: when the schema is not
    strict), ``widen_integers``. ``schema`` may also be a compiled :class:`Codec`.
    """
    return _codec(schema, options).loads(bytes(data))


def load(stream_or_bytes: BinaryIO | bytes, schema: Any, **options: Any) -> Iterator[dict]:
    """Rows read one by one from a binary stream (or bytes), as dicts."""
    codec = _codec(schema, options)
    if isinstance(stream_or_bytes, (bytes, bytearray, memoryview)):
        stream_or_bytes = io.BytesIO(bytes(stream_or_bytes))
    return iter(codec.reader(stream_or_bytes))


def dumps(rows: Iterable[dict], schema: Any, *, table_index: int = 0, **options: Any) -> bytes:
    """Rows (dicts) as Skiff bytes. ``table_index`` is used for rows without ``@table_index``."""
    return _codec(schema, options).dumps(rows, table_index)


def dump(rows: Iterable[dict], stream: BinaryIO, schema: Any, *, table_index: int = 0, **options: Any) -> None:
    """Writes rows (dicts) as Skiff to a binary stream."""
    _codec(schema, options).dump(rows, stream, table_index)
