"""The ``Yson*`` classes of ``shapeshift.yson`` (as ``yt.yson.yson_types``): Python values that
can carry YSON attributes (a dict in ``.attributes``), and the string proxy for strings that are
not valid in the requested encoding."""

import sys

from .common import YtError


def _is_yt(x, name):
    """Whether ``x`` is an instance of yt.yson's class ``name`` (only if yt.yson is loaded)."""
    module = sys.modules.get("yt.yson.yson_types")
    return module is not None and module.__name__ != __name__ and isinstance(x, getattr(module, name))

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


class NotUnicodeError(YtError, TypeError):
    """A ``str`` operation on a ``YsonStringProxy`` (a string that is not valid UTF-8)."""


class YsonString(bytes, YsonType):
    """A YSON string kept as bytes (``encoding=None``)."""

    def is_unicode(self):
        return False

    def get_bytes(self):
        return bytes(self)

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

    def is_unicode(self):
        return True

    def get_bytes(self, encoding="utf-8"):
        return self.encode(encoding)

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


def _not_unicode(name):
    def refuse(self, *args, **kwargs):
        shown = self._bytes if len(self._bytes) < 50 else self._bytes[:50] + b"..."
        raise NotUnicodeError('Method "{}" is not allowed: YSON string "{}" could not be decoded '
                              "to Unicode, see https://ytsaurus.tech/docs/en/api/python/userdoc"
                              "#python3_strings".format(name, shown))
    refuse.__name__ = name
    return refuse


# What a string proxy still answers; every other str method raises NotUnicodeError.
_PROXY_OWN_METHODS = {
    "get_bytes", "is_unicode", "__hash__", "__eq__", "__ne__", "__repr__", "__format__",
    "__class__", "__new__", "__init__", "__getattr__", "__setattr__", "__getattribute__",
    "__copy__", "__deepcopy__", "__init_subclass__", "__subclasshook__", "__reduce__",
    "__reduce_ex__", "__sizeof__", "__dir__", "__delattr__",
}


def _refuse_str_methods(cls):
    for name in dir(str):
        if callable(getattr(str, name)) and name not in _PROXY_OWN_METHODS:
            setattr(cls, name, _not_unicode(name))
    cls.__radd__ = _not_unicode("__radd__")
    cls.__rmul__ = _not_unicode("__rmul__")
    return cls


@_refuse_str_methods
class YsonStringProxy(YsonType):
    """A YSON string that is not valid in the requested encoding; the bytes are in ``_bytes``.
    It compares and hashes as those bytes; ``str`` operations raise ``NotUnicodeError``."""

    def __init__(self, value=None):
        if value is not None:
            self._bytes = bytes(value)

    def is_unicode(self):
        return False

    def get_bytes(self):
        return self._bytes

    def __format__(self, format_spec):
        return repr(self)

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


