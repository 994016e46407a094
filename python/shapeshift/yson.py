"""YSON for Python: a drop-in replacement of ``yt.yson``'s ``loads``/``dumps``/``load``/``dump``.

The same keyword arguments as ``yt.yson`` (its C++ bindings), the same output bytes, and the
same kinds of objects back, of the classes defined here (``YsonInt64``, ``YsonUint64``,
``YsonEntity``, ``YsonMap``, ... behave as ``yt.yson``'s classes of the same names)::

    >>> from shapeshift import yson
    >>> yson.dumps({"a": [1, 2.5, None]})
    b'{"a"=[1;2.5;#;];}'
    >>> yson.loads(b'{a=1;b=5u}', always_create_attributes=False)
    {'a': 1, 'b': 5}

``dumps`` also accepts ``yt.yson``'s own ``Yson*`` objects. The parsing and writing run in
native code (``shapeshift._native.yson``), straight between bytes and Python objects.
See docs/yson.md for the type mapping and the defaults.
"""

import gc
import sys

from shapeshift._native import yson as _native

__all__ = [
    "loads", "dumps", "load", "dump", "YsonError",
    "YsonType", "YsonString", "YsonUnicode", "YsonInt64", "YsonUint64", "YsonDouble",
    "YsonBoolean", "YsonList", "YsonMap", "YsonEntity", "YsonStringProxy",
    "is_unicode", "get_bytes", "make_byte_key", "to_yson_type",
]

YsonError = _native.YsonError
DEFAULT_MAX_DEPTH = _native.DEFAULT_MAX_DEPTH


class YsonType(object):
    """Base of the classes that can carry YSON attributes (a dict in ``.attributes``)."""

    def __getattr__(self, attribute):
        if attribute == "attributes":
            self.__dict__[attribute] = {}
            return self.__dict__[attribute]
        raise AttributeError('Attribute "{0}" not found'.format(attribute))

    def has_attributes(self):
        try:
            return "attributes" in self.__dict__ and self.attributes is not None and self.attributes != {}
        except Exception:
            return False

    def __eq__(self, other):
        try:
            has_attributes = other.has_attributes()
        except AttributeError:
            has_attributes = False
        if has_attributes:
            return self.attributes == other.attributes
        return not self.has_attributes()

    def __ne__(self, other):
        return not (self == other)

    def to_str(self, base_type, str_func):
        if self.has_attributes():
            return str_func({"value": base_type(self), "attributes": self.attributes})
        return str_func(base_type(self))

    def base_hash(self, type_):
        if self.has_attributes():
            raise TypeError("unhashable type: YSON has non-trivial attributes")
        return hash(type_(self))

    def get_yson_type_str(self):
        return None


class YsonString(bytes, YsonType):
    """A YSON string kept as bytes (``encoding=None``)."""

    def __eq__(self, other):
        if not isinstance(other, (bytes, str)):
            return NotImplemented
        return bytes(self) == bytes(other) and YsonType.__eq__(self, other)

    def __ne__(self, other):
        return not (self == other)

    def __hash__(self):
        return self.base_hash(bytes)

    def __repr__(self):
        return self.to_str(bytes, repr)

    def get_yson_type_str(self):
        return "string"


class YsonUnicode(str, YsonType):
    """A YSON string decoded to ``str``."""

    def __eq__(self, other):
        if not isinstance(other, str):
            return NotImplemented
        return str(self) == str(other) and YsonType.__eq__(self, other)

    def __ne__(self, other):
        return not (self == other)

    def __hash__(self):
        return self.base_hash(str)

    def __repr__(self):
        return self.to_str(str, repr)

    def get_yson_type_str(self):
        return "string"


class YsonStringProxy(YsonType):
    """A YSON string that is not valid in the requested encoding; the bytes are in ``_bytes``."""

    def __repr__(self):
        value = "<YsonStringProxy>{!r}".format(self._bytes)
        if self.has_attributes():
            return repr({"attributes": self.attributes, "value": value})
        return value

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __hash__(self):
        return hash(self._bytes)

    def __eq__(self, other):
        if isinstance(other, bytes):
            return self._bytes == bytes(other) and YsonType.__eq__(self, other)
        if isinstance(other, YsonStringProxy):
            return self._bytes == other._bytes and YsonType.__eq__(self, other)
        return NotImplemented

    def __ne__(self, other):
        return not (self == other)

    def get_yson_type_str(self):
        return "string"


def is_unicode(x):
    return isinstance(x, str)


def get_bytes(x, encoding="utf8"):
    """The bytes of a str (encoded), bytes, or string proxy."""
    if isinstance(x, str):
        return x.encode(encoding)
    if isinstance(x, YsonStringProxy) or _is_yt(x, "YsonStringProxy"):
        return x._bytes
    if isinstance(x, bytes):
        return x
    raise TypeError("get_bytes() expected str, bytes or YsonStringProxy, got <{}>{!r}".format(type(x), x))


def make_byte_key(s):
    proxy = YsonStringProxy()
    proxy._bytes = s
    return proxy


class _YsonIntegerBase(int, YsonType):
    def __eq__(self, other):
        if not isinstance(other, int):
            return NotImplemented
        return int(self) == int(other) and YsonType.__eq__(self, other)

    def __ne__(self, other):
        return not (self == other)

    def __hash__(self):
        return self.base_hash(int)

    def __repr__(self):
        return self.to_str(int, repr)

    def __str__(self):
        return self.to_str(int, str)


class YsonInt64(_YsonIntegerBase):
    def get_yson_type_str(self):
        return "int64"


class YsonUint64(_YsonIntegerBase):
    """An unsigned YSON integer (``5u``); always returned for uint64 so it writes back as one."""

    def get_yson_type_str(self):
        return "uint64"


class YsonDouble(float, YsonType):
    def __eq__(self, other):
        if not isinstance(other, float):
            return NotImplemented
        return float(self) == float(other) and YsonType.__eq__(self, other)

    def __ne__(self, other):
        return not (self == other)

    def __hash__(self):
        return self.base_hash(float)

    def __repr__(self):
        return self.to_str(float, repr)

    def __str__(self):
        return self.to_str(float, str)

    def get_yson_type_str(self):
        return "double"


class YsonBoolean(int, YsonType):
    def __eq__(self, other):
        if not isinstance(other, int):
            return NotImplemented
        return (int(self) == 0) == (int(other) == 0) and YsonType.__eq__(self, other)

    def __ne__(self, other):
        return not (self == other)

    def __hash__(self):
        return self.base_hash(bool)

    def __repr__(self):
        return "true" if self else "false"

    def __str__(self):
        return self.__repr__()

    def get_yson_type_str(self):
        return "bool"


class YsonList(list, YsonType):
    def __eq__(self, other):
        if not isinstance(other, list):
            return NotImplemented
        return list(self) == list(other) and YsonType.__eq__(self, other)

    def __ne__(self, other):
        return not (self == other)

    def __hash__(self):
        raise TypeError('unhashable type "YsonList"')

    def __repr__(self):
        return self.to_str(list, repr)

    def __str__(self):
        return self.to_str(list, str)


class YsonMap(dict, YsonType):
    def __eq__(self, other):
        if not isinstance(other, dict):
            return NotImplemented
        return dict(self) == dict(other) and YsonType.__eq__(self, other)

    def __ne__(self, other):
        return not (self == other)

    def __hash__(self):
        raise TypeError('unhashable type "YsonMap"')

    def __repr__(self):
        return self.to_str(dict, repr)

    def __str__(self):
        return self.to_str(dict, str)


class YsonEntity(YsonType):
    """YSON's ``#``; equal to ``None`` when it has no attributes."""

    def __init__(self, value=None):
        if value is not None:
            assert isinstance(value, YsonEntity)
            self.attributes = value.attributes

    def __eq__(self, other):
        if other is None and not self.attributes:
            return True
        if not isinstance(other, YsonEntity):
            return NotImplemented
        return YsonType.__eq__(self, other)

    def __ne__(self, other):
        return not (self == other)

    def __bool__(self):
        return False

    def __repr__(self):
        if self.attributes:
            return repr({"value": "YsonEntity", "attributes": self.attributes})
        return "YsonEntity"

    def __str__(self):
        return self.__repr__()

    __hash__ = None


def to_yson_type(value, attributes=None, always_create_attributes=True):
    """``value`` as an instance of the matching ``Yson*`` class, with ``attributes``."""
    if isinstance(value, YsonType):
        result = value
    elif value is None:
        result = YsonEntity()
    elif isinstance(value, bool):
        result = YsonBoolean(value)
    elif isinstance(value, int):
        result = YsonUint64(value) if value >= 2 ** 63 else YsonInt64(value)
    elif isinstance(value, float):
        result = YsonDouble(value)
    elif isinstance(value, str):
        result = YsonUnicode(value)
    elif isinstance(value, bytes):
        result = YsonString(value)
    elif isinstance(value, list):
        result = YsonList(value)
    elif isinstance(value, dict):
        result = YsonMap(value)
    else:
        raise TypeError("cannot convert {!r} to a YSON type".format(value))
    if attributes is not None:
        result.attributes = attributes
    elif always_create_attributes:
        result.attributes = {}
    return result


_CLASSES = (YsonString, YsonUnicode, YsonInt64, YsonUint64, YsonDouble, YsonBoolean, YsonList,
            YsonMap, YsonEntity, YsonStringProxy)
_OUR_KINDS = ((YsonUint64,), (YsonInt64,), (YsonBoolean,), (YsonStringProxy,), (YsonEntity,))
_kinds_cache = [None, None]


def _is_yt(x, name):
    module = sys.modules.get("yt.yson.yson_types")
    return module is not None and isinstance(x, getattr(module, name))


def _kinds():
    """The classes dumps recognises: ours, plus yt.yson's when yt.yson is loaded (then its
    objects can exist; if it is not loaded, importing it would only cost time)."""
    module = sys.modules.get("yt.yson.yson_types")
    if module is None:
        return _OUR_KINDS
    if _kinds_cache[0] is not module:
        _kinds_cache[0] = module
        _kinds_cache[1] = tuple(
            ours + (getattr(module, name),)
            for ours, name in zip(_OUR_KINDS, ("YsonUint64", "YsonInt64", "YsonBoolean",
                                              "YsonStringProxy", "YsonEntity")))
    return _kinds_cache[1]


_ENCODING_SENTINEL = object()


def loads(string, yson_type=None, always_create_attributes=True, raw=None,
          encoding=_ENCODING_SENTINEL, lazy=False, max_depth=DEFAULT_MAX_DEPTH):
    """Parses YSON (text or binary) from ``bytes``.

    :param str yson_type: ``"node"`` (default), ``"list_fragment"`` (returns an iterator over
        the items, as yt.yson does) or ``"map_fragment"`` (returns a dict).
    :param bool always_create_attributes: return every value as a ``Yson*`` object (as
        yt.yson does by default); when False, plain ``int``/``float``/``str``/``bool``/``None``/
        ``list``/``dict`` except for values with attributes and uint64s.
    :param encoding: decode strings and keys with it (default ``"utf-8"``; undecodable
        strings come back as ``YsonStringProxy``); ``None`` returns ``bytes``.
    :param int max_depth: nesting limit (lists, maps and attribute maps).
    :raises YsonError: on malformed input, with the byte offset and what was expected.
    """
    if raw:
        raise YsonError("raw mode is not supported by shapeshift.yson")
    if lazy:
        raise YsonError("lazy parsing is not supported by shapeshift.yson")
    if encoding is _ENCODING_SENTINEL:
        encoding = "utf-8"
    if isinstance(string, str):
        string = string.encode(encoding or "utf-8")
    elif not isinstance(string, bytes):
        string = bytes(string)
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
        result = _native.loads(string, yson_type, always_create_attributes, encoding, _CLASSES,
                               max_depth)
    finally:
        if collecting:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
    if yson_type == "list_fragment":
        return iter(result)
    return result


def load(stream, yson_type=None, always_create_attributes=True, raw=None,
         encoding=_ENCODING_SENTINEL, lazy=False, max_depth=DEFAULT_MAX_DEPTH):
    """Parses YSON read from the binary ``stream``; see :func:`loads`."""
    return loads(stream.read(), yson_type=yson_type,
                 always_create_attributes=always_create_attributes, raw=raw,
                 encoding=encoding, lazy=lazy, max_depth=max_depth)


def dumps(object, yson_format=None, yson_type=None, indent=None, ignore_inner_attributes=False,
          encoding="utf-8", sort_keys=False, check_circular=True):
    """Serializes ``object`` to YSON ``bytes``, byte-exact with ``yt.yson.dumps``.

    :param str yson_format: ``"text"`` (default), ``"binary"`` or ``"pretty"``.
    :param str yson_type: ``"node"`` (default), ``"list_fragment"`` (``object`` is an
        iterable of items) or ``"map_fragment"`` (``object`` is a dict).
    :param int indent: spaces per level in pretty format (default 4).
    :param bool ignore_inner_attributes: write only the top-level value's attributes.
    :param str encoding: how ``str`` values and keys are encoded.
    :param bool sort_keys: write map entries in key order.
    :param bool check_circular: raise on an object that contains itself.
    :raises YsonError: for values YSON cannot hold (ints out of range, non-string keys, ...).
    """
    if indent is None:
        indent = 4
    elif not isinstance(indent, int):
        indent = len(indent)
    return _native.dumps(object, yson_format, yson_type, indent, ignore_inner_attributes,
                         encoding, sort_keys, check_circular, _kinds())


def dump(object, stream, yson_format=None, yson_type=None, indent=None,
         ignore_inner_attributes=False, encoding="utf-8", sort_keys=False, check_circular=True):
    """Serializes ``object`` as YSON to the binary ``stream``; see :func:`dumps`."""
    stream.write(dumps(object, yson_format=yson_format, yson_type=yson_type, indent=indent,
                       ignore_inner_attributes=ignore_inner_attributes, encoding=encoding,
                       sort_keys=sort_keys, check_circular=check_circular))
