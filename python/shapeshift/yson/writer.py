"""Writing YSON: ``dumps``/``dump`` with ``yt.yson``'s signature and byte-identical output.
The writing runs in native code; errors name where in the value they arose (``row_key_path``,
``row_index``), as yt.yson's do."""

import sys

from shapeshift._native import yson as _native

from .common import YsonError
from .yson_types import YsonBoolean, YsonEntity, YsonInt64, YsonStringProxy, YsonType, YsonUint64

_OUR_KINDS = ((YsonUint64,), (YsonInt64,), (YsonBoolean,), (YsonStringProxy,), (YsonEntity,))
_kinds_cache = [None, None]
_MAX_PATH_DEPTH = 1024


def _kinds():
    """The classes dumps recognises: ours, plus yt.yson's when yt.yson is loaded (then its
    objects can exist; if it is not loaded, importing it would only cost time)."""
    module = sys.modules.get("yt.yson.yson_types")
    if module is None or module.__name__ == __name__.rsplit(".", 1)[0] + ".yson_types":
        return _OUR_KINDS
    if _kinds_cache[0] is not module:
        _kinds_cache[0] = module
        _kinds_cache[1] = tuple(
            ours + (getattr(module, name),)
            for ours, name in zip(_OUR_KINDS, ("YsonUint64", "YsonInt64", "YsonBoolean",
                                              "YsonStringProxy", "YsonEntity")))
    return _kinds_cache[1]


def _parts(value):
    """``(path segment, child)`` for the attributes and items of ``value``."""
    attributes = value.__dict__.get("attributes") if isinstance(value, YsonType) else None
    if isinstance(attributes, dict):
        for key, child in attributes.items():
            yield "@" + _segment(key), child
    if isinstance(value, dict):
        for key, child in value.items():
            yield _segment(key), child
    elif isinstance(value, (list, tuple)):
        for index, child in enumerate(value):
            yield str(index), child


def _segment(key):
    if isinstance(key, YsonStringProxy):
        key = key._bytes
    if isinstance(key, bytes):
        return key.decode("utf-8", "replace")
    return str(key)


def _failing_path(value, dump_one):
    """The path (``/3/a/@attr``) to the innermost part of ``value`` that fails on its own: only
    computed after a failure, so writing stays a single native pass."""
    path = ""
    seen = set()
    while id(value) not in seen and len(seen) < _MAX_PATH_DEPTH:
        seen.add(id(value))
        for segment, child in _parts(value):
            try:
                dump_one(child)
            except (YsonError, _native.YsonError, TypeError, ValueError):
                path += "/" + segment
                value = child
                break
        else:
            return path
    return path


def _dump_error(error, obj, yson_type, dump_one):
    attributes = {}
    if yson_type == "list_fragment":
        for index, row in enumerate(obj if isinstance(obj, (list, tuple)) else ()):
            try:
                dump_one(row)
            except (YsonError, _native.YsonError, TypeError, ValueError):
                attributes["row_index"] = index
                path = _failing_path(row, dump_one)
                if path:
                    attributes["row_key_path"] = path
                break
    elif yson_type in (None, "node"):
        path = _failing_path(obj, dump_one)
        if path:
            attributes["row_key_path"] = path
    message = error.args[0] if error.args else str(error)
    return YsonError(message, attributes=attributes)


def dumps(object, yson_format=None, yson_type=None, indent=None, ignore_inner_attributes=False,
          encoding="utf-8", sort_keys=False, check_circular=True):
    """Serializes ``object`` to YSON ``bytes``, byte-exact with ``yt.yson.dumps``.

    :param str yson_format: ``"text"`` (default), ``"binary"`` or ``"pretty"``.
    :param str yson_type: ``"node"`` (default), ``"list_fragment"`` (``object`` is an
        iterable of items) or ``"map_fragment"`` (``object`` is a dict).
    :param int indent: spaces per level in pretty format (default 4).
    :param bool ignore_inner_attributes: write only the top-level value's attributes.
    :param str encoding: how ``str`` values and keys are encoded; with ``None`` only bytes are
        accepted (as in yt.yson).
    :param bool sort_keys: write map entries in key order.
    :param bool check_circular: raise on an object that contains itself.
    :raises YsonError: for values YSON cannot hold (ints out of range, non-string keys, ...),
        with ``row_key_path`` / ``row_index`` in its attributes.
    """
    if indent is None:
        indent = 4
    elif not isinstance(indent, int):
        indent = len(indent)
    kinds = _kinds()
    try:
        return _native.dumps(object, yson_format, yson_type, indent, ignore_inner_attributes,
                             encoding, sort_keys, check_circular, kinds)
    except _native.YsonError as error:
        if yson_type not in (None, "node", "list_fragment", "map_fragment") or \
                yson_format not in (None, "text", "binary", "pretty"):
            raise YsonError(str(error.args[0])) from None

        def dump_one(value):
            _native.dumps(value, yson_format, None, indent, ignore_inner_attributes, encoding,
                          sort_keys, check_circular, kinds)
        raise _dump_error(error, object, yson_type, dump_one) from None


def dump(object, stream, yson_format=None, yson_type=None, indent=None,
         ignore_inner_attributes=False, encoding="utf-8", sort_keys=False, check_circular=True):
    """Serializes ``object`` as YSON to the binary ``stream``; see :func:`dumps`."""
    stream.write(dumps(object, yson_format=yson_format, yson_type=yson_type, indent=indent,
                       ignore_inner_attributes=ignore_inner_attributes, encoding=encoding,
                       sort_keys=sort_keys, check_circular=check_circular))
