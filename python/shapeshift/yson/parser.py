"""Reading YSON: ``loads``/``load`` with ``yt.yson``'s signature (node, list and map fragments;
``raw=True`` rows; ``lazy=True`` maps), and ``YsonParser`` for the path-attribute prefix
``yt.wrapper`` reads (``<append=%true>//path``). The parsing runs in native code."""

import gc
import io

from shapeshift._native import yson as _native

from .common import YsonError
from .yson_types import (
    YsonBoolean, YsonDouble, YsonEntity, YsonInt64, YsonList, YsonMap, YsonString,
    YsonStringProxy, YsonUint64, YsonUnicode)

DEFAULT_MAX_DEPTH = _native.DEFAULT_MAX_DEPTH

# The order shapeshift._native.yson expects them in.
_CLASSES = (YsonString, YsonUnicode, YsonInt64, YsonUint64, YsonDouble, YsonBoolean, YsonList,
            YsonMap, YsonEntity, YsonStringProxy)

_ENCODING_SENTINEL = object()
_CONTEXT_BYTES = 16


def load_error(error, data):
    """The native parse error as a ``YsonError`` with yt.yson's details: ``offset``, and the
    bytes around it (``context``, the error at ``context_pos``) in the inner error."""
    message = error.args[0] if error.args else str(error)
    attributes = {}
    if len(error.args) > 1:
        offset = int(error.args[1])
        begin = max(0, offset - _CONTEXT_BYTES)
        attributes = {"offset": offset, "context": bytes(data[begin:offset + _CONTEXT_BYTES]),
                      "context_pos": offset - begin}
    inner = {"message": message, "code": 1, "attributes": attributes, "inner_errors": []}
    return YsonError(message, attributes=dict(attributes), inner_errors=[inner])


def _native_loads(data, yson_type, always_create_attributes, encoding, max_depth):
    # The objects being built cannot form cycles, yet each container allocation counts toward
    # the cyclic collector's thresholds: pausing it makes loads several times faster on large
    # inputs (collections of the growing result are pure waste). Afterwards the young objects
    # (ours among them) are moved to the oldest generation with freeze/unfreeze, two list
    # splices, instead of being walked by the next young collection; skipped when the program
    # froze objects itself, so its frozen set is left alone.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        return _native.loads(data, yson_type, always_create_attributes, encoding, _CLASSES,
                             max_depth)
    except _native.YsonError as error:
        raise load_error(error, data) from None
    finally:
        if collecting:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _as_bytes(string):
    if isinstance(string, bytes):
        return string
    if isinstance(string, str):
        raise TypeError("Only binary strings parsing is supported, got unicode")
    return bytes(string)


def loads(string, yson_type=None, always_create_attributes=True, raw=None,
          encoding=_ENCODING_SENTINEL, lazy=False, max_depth=DEFAULT_MAX_DEPTH):
    """Parses YSON (text or binary) from ``bytes``.

    :param str yson_type: ``"node"`` (default), ``"list_fragment"`` (returns an iterator over
        the items, as yt.yson does) or ``"map_fragment"`` (returns a dict).
    :param bool always_create_attributes: return every value as a ``Yson*`` object (as
        yt.yson does by default); when False, plain ``int``/``float``/``str``/``bool``/``None``/
        ``list``/``dict`` except for values with attributes and uint64s.
    :param bool raw: with ``list_fragment``, an iterator over each item's bytes (with its
        separator) instead of parsed items.
    :param bool lazy: maps come back as ``YsonLazyMap``, whose values are parsed when first read.
    :param encoding: decode strings and keys with it (default ``"utf-8"``; undecodable
        strings come back as ``YsonStringProxy``); ``None`` returns ``bytes``.
    :param int max_depth: nesting limit (lists, maps and attribute maps).
    :raises TypeError: for ``str`` input (YSON is bytes).
    :raises YsonError: on malformed input, with the byte offset and what was expected.
    """
    data = _as_bytes(string)
    if encoding is _ENCODING_SENTINEL:
        encoding = "utf-8"
    if raw:
        if yson_type != "list_fragment":
            raise YsonError("Raw mode is only supported for list fragments")
        return iter(_raw_items(data, max_depth))
    if lazy:
        from .lazy import lazy_loads
        return lazy_loads(data, yson_type, always_create_attributes, encoding, max_depth)
    result = _native_loads(data, yson_type, always_create_attributes, encoding, max_depth)
    if yson_type == "list_fragment":
        return iter(result)
    return result


def item_spans(data, max_depth=DEFAULT_MAX_DEPTH):
    """``(start, end)`` of each item of a list fragment."""
    try:
        return _native.list_fragment_item_spans(data, max_depth)
    except _native.YsonError as error:
        raise load_error(error, data) from None


def _raw_items(data, max_depth):
    starts = [start for start, _ in item_spans(data, max_depth)]
    if not starts:
        return []
    bounds = [0] + starts[1:] + [len(data)]
    return [data[begin:end] for begin, end in zip(bounds, bounds[1:])]


def _read_all(stream):
    if isinstance(stream, io.TextIOBase):
        raise TypeError("Input stream should be binary")
    data = stream.read()
    if isinstance(data, str):
        raise TypeError("Input stream should be binary")
    return data


def load(stream, yson_type=None, always_create_attributes=True, raw=None,
         encoding=_ENCODING_SENTINEL, lazy=False, max_depth=DEFAULT_MAX_DEPTH):
    """Parses YSON read from the binary ``stream``; see :func:`loads`."""
    return loads(_read_all(stream), yson_type=yson_type,
                 always_create_attributes=always_create_attributes, raw=raw,
                 encoding=encoding, lazy=lazy, max_depth=max_depth)


class YsonParser(object):
    """The part of yt.yson's stream parser that yt.wrapper uses: whether the stream starts with
    an attribute map (``_has_attributes``) and reading it (``_parse_attributes``), leaving the
    stream after its ``>`` (as for ``<append=%true>//home/path``)."""

    def __init__(self, stream, encoding, always_create_attributes):
        if isinstance(stream, io.TextIOBase):
            raise TypeError("Only binary streams are supported by YSON parser")
        self._stream = stream
        self._encoding = encoding
        self._always_create_attributes = always_create_attributes
        self._start = stream.tell()
        self._data = stream.read()
        stream.seek(self._start)

    def _has_attributes(self):
        return self._data.lstrip().startswith(b"<")

    def _parse_attributes(self):
        # The attribute map ends at one of the ">" bytes: the first prefix that parses as
        # attributes of an entity is it (paths are short; this is not a hot path).
        at = self._data.find(b">")
        while at != -1:
            try:
                entity = loads(self._data[:at + 1] + b"#", encoding=self._encoding,
                               always_create_attributes=self._always_create_attributes)
            except YsonError:
                at = self._data.find(b">", at + 1)
                continue
            self._stream.seek(self._start + at + 1)
            return dict(entity.attributes)
        raise YsonError("Unterminated attribute map in {!r}".format(self._data[:64]))
