"""Conversions between plain Python values, the ``Yson*`` classes and YT's JSON representation
(``{"$value": ..., "$attributes": ..., "$type": ...}``), as ``yt.yson.convert`` does them."""

import copy

from .common import YsonError
from .yson_types import (
    YsonBoolean, YsonDouble, YsonEntity, YsonInt64, YsonList, YsonMap, YsonString,
    YsonStringProxy, YsonType, YsonUint64, YsonUnicode, get_bytes)

_MAX_UINT64 = 2 ** 64
_MIN_INT64 = -2 ** 63
_MAX_INT64 = 2 ** 63


def _wrap(value):
    """``value`` as the ``Yson*`` instance of its type (``YsonEntity`` for anything else)."""
    if isinstance(value, str):
        return YsonUnicode(value)
    if isinstance(value, bytes):
        return YsonString(value)
    if value is True or value is False:
        return YsonBoolean(value)
    if isinstance(value, int):
        if value < _MIN_INT64 or value >= _MAX_UINT64:
            raise TypeError("Integer {0} cannot be represented in YSON since it is out of range "
                            "[-2^63, 2^64 - 1])".format(value))
        if value >= _MAX_INT64 or isinstance(value, YsonUint64):
            return YsonUint64(value)
        return YsonInt64(value)
    if isinstance(value, float):
        return YsonDouble(value)
    if isinstance(value, list):
        return YsonList(value)
    if isinstance(value, dict):
        return YsonMap(value)
    return YsonEntity()


def to_yson_type(value, attributes=None, always_create_attributes=True, encoding="utf-8"):
    """``value`` wrapped in its ``Yson*`` class, carrying ``attributes``. A value that already is
    a ``Yson*`` object is copied when attributes are given; with ``always_create_attributes=False``
    and no attributes, ``value`` comes back as it is."""
    if attributes is None and not always_create_attributes:
        return value
    if isinstance(value, YsonType):
        if attributes is not None:
            value = copy.deepcopy(value)
            value.attributes = attributes
        return value
    result = _wrap(value)
    result.attributes = attributes if attributes is not None else {}
    return result


def json_to_yson(json_tree, use_byte_strings=None):
    """YT's JSON representation (``$value``/``$attributes``, ``$$`` escaping a leading ``$`` in
    keys) to ``Yson*`` objects."""
    def literal(text):
        return text.encode("ascii") if use_byte_strings else text

    def key_of(key):
        if use_byte_strings:
            key = key if isinstance(key, bytes) else key.encode("ascii")
        else:
            key = key if isinstance(key, str) else key.decode("ascii")
        if key.startswith(literal("$")):
            if not key.startswith(literal("$$")):
                raise YsonError("Keys should not start with single dollar sign")
            key = key[1:]
        return key

    value_key, attributes_key = literal("$value"), literal("$attributes")
    has_attributes = isinstance(json_tree, dict) and value_key in json_tree
    value = json_tree[value_key] if has_attributes else json_tree
    if isinstance(value, list):
        result = YsonList(json_to_yson(item, use_byte_strings) for item in value)
    elif isinstance(value, dict):
        result = YsonMap((key_of(key), json_to_yson(item, use_byte_strings))
                         for key, item in value.items())
    elif value is None:
        result = YsonEntity()
    elif isinstance(value, (str, bytes, bool, int, float)):
        result = _wrap(value)
    else:
        raise YsonError("Unknown type: {!r}".format(type(value)))
    if has_attributes and json_tree.get(attributes_key):
        result.attributes = json_to_yson(json_tree[attributes_key], use_byte_strings)
    return result


def _type_name(value):
    if isinstance(value, YsonType):
        name = value.get_yson_type_str()
        if name is not None:
            return name
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "double"
    if isinstance(value, (str, bytes)):
        return "string"
    raise RuntimeError("Failed to perform yson to json conversion of {!r}, unknown type {!r} to "
                       "annotate with types".format(value, type(value)))


def _plain_scalar(value, use_byte_strings):
    """The JSON-ready scalar of a (possibly ``Yson*``) scalar."""
    if isinstance(value, YsonStringProxy):
        raw = get_bytes(value)
        return raw if use_byte_strings else raw.decode("utf-8")
    if isinstance(value, bytes):
        return get_bytes(value) if use_byte_strings else value.decode("utf-8")
    if isinstance(value, bool) or isinstance(value, YsonBoolean):
        return bool(value)
    for base in (str, int, float):
        if isinstance(value, base):
            return base(value) if isinstance(value, YsonType) else value
    if isinstance(value, YsonType):
        raise RuntimeError("Failed to perform yson to json conversion of {!r}".format(value))
    return value


def yson_to_json(yson_tree, print_attributes=True, annotate_with_types=False, use_byte_strings=False):
    """``Yson*`` objects (or plain values) to YT's JSON representation: attributes as
    ``{"$attributes": ..., "$value": ...}`` (unless ``print_attributes=False``), keys starting
    with ``$`` escaped as ``$$``, strings decoded as UTF-8 (kept as bytes with
    ``use_byte_strings``), scalars as ``{"$type": ..., "$value": ...}`` with ``annotate_with_types``."""
    def key_of(key):
        if isinstance(key, YsonStringProxy):
            key = get_bytes(key)
        if isinstance(key, bytes):
            key = key.decode("ascii")
        key = str(key)
        return "$" + key if key.startswith("$") else key

    def convert(value, annotate, attributes_done=False):
        container = isinstance(value, (list, dict, YsonEntity)) or value is None
        annotate_here = annotate and not container
        attributes = getattr(value, "attributes", None) if isinstance(value, YsonType) else None
        if attributes and print_attributes and not attributes_done:
            result = {
                "$attributes": {key_of(k): convert(v, annotate) for k, v in attributes.items()},
                "$value": convert(value, annotate and not annotate_here, attributes_done=True),
            }
            if annotate_here:
                result["$type"] = _type_name(value)
            return result
        if isinstance(value, list):
            return [convert(item, annotate) for item in value]
        if isinstance(value, dict):
            return {key_of(k): convert(v, annotate) for k, v in value.items()}
        if value is None or isinstance(value, YsonEntity):
            return None
        plain = _plain_scalar(value, use_byte_strings)
        return {"$type": _type_name(value), "$value": plain} if annotate_here else plain

    return convert(yson_tree, annotate_with_types)
