"""YSON for Python: a drop-in replacement of ``yt.yson`` (module and submodules).

The same functions, keyword arguments and classes as ``yt.yson`` (with its C++ bindings), the
same output bytes, and the same kinds of objects back::

    >>> from shapeshift import yson
    >>> yson.dumps({"a": [1, 2.5, None]})
    b'{"a"=[1;2.5;#;];}'
    >>> yson.loads(b'{a=1;b=5u}', always_create_attributes=False)
    {'a': 1, 'b': 5}

Submodules mirror yt.yson's: ``yson_types`` (``YsonInt64``, ``YsonMap``, ``YsonStringProxy``,
``NotUnicodeError``, ...), ``convert`` (``to_yson_type``, ``json_to_yson``, ``yson_to_json``),
``parser`` (``loads``, ``load``, ``YsonParser``), ``writer`` (``dumps``, ``dump``), ``common``
(``YsonError``, a ``yt.common.YtError`` when ytsaurus-client is installed). ``dumps`` also
accepts ``yt.yson``'s own ``Yson*`` objects and any ``Mapping``. The parsing and writing run in
native code (``shapeshift._native.yson``). See docs/formats/yson.md for the type mapping and defaults.
"""

from . import common, convert, lazy, parser, tokenizer, writer, yson_token, yson_types  # noqa: F401
from .common import YsonError
from .convert import json_to_yson, to_yson_type, yson_to_json
from .lazy import YsonLazyMap
from .parser import DEFAULT_MAX_DEPTH, load, loads
from .writer import dump, dumps
from .yson_types import (
    NotUnicodeError, YsonBoolean, YsonDouble, YsonEntity, YsonInt64, YsonList, YsonMap,
    YsonString, YsonStringProxy, YsonType, YsonUint64, YsonUnicode, get_bytes, is_unicode,
    make_byte_key)

# yt.yson says "BINARY" when its C++ bindings are loaded; yt.wrapper requires that for its YSON
# format. shapeshift.yson is native code, with the bindings' options (raw, lazy, ...).
TYPE = "BINARY"
# Parquet/ORC upload through YSON is a feature of yt.yson's bindings that shapeshift lacks.
HAS_PARQUET = False
HAS_ORC = False

__all__ = [
    "loads", "dumps", "load", "dump", "YsonError", "NotUnicodeError", "TYPE",
    "YsonType", "YsonString", "YsonUnicode", "YsonInt64", "YsonUint64", "YsonDouble",
    "YsonBoolean", "YsonList", "YsonMap", "YsonEntity", "YsonStringProxy", "YsonLazyMap",
    "is_unicode", "get_bytes", "make_byte_key", "to_yson_type", "json_to_yson", "yson_to_json",
]


def _loads_from_native_str(string, encoding="utf-8", **kwargs):
    """``loads`` of a ``str`` (encoded first), as yt.yson's helper of that name."""
    if isinstance(string, str):
        string = string.encode(encoding)
    return loads(string, encoding=encoding, **kwargs)


def _dumps_to_native_str(obj, encoding="utf-8", **kwargs):
    """``dumps`` to a ``str``, as yt.yson's helper of that name."""
    return dumps(obj, encoding=encoding, **kwargs).decode(encoding)
