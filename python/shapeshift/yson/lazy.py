"""``loads(..., lazy=True)``: maps whose values are parsed when first read (as yt.yson's
bindings' ``YsonLazyMap``): loading a large row costs finding its entries, not building all
its values."""

from collections.abc import MutableMapping

from shapeshift._native import yson as _native

from .parser import _native_loads, item_spans, load_error
from .yson_types import make_byte_key


class _Unparsed(object):
    """A value's bytes, parsed on first access."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data


class YsonLazyMap(MutableMapping):
    """A YSON map parsed on access: ``attributes`` (parsed at once) and the entries, each value
    parsed when first read. Not a ``dict``; ``dumps`` writes it as a map."""

    def __init__(self, entries, attributes, parse):
        self._entries = entries
        self._parse = parse
        self.attributes = attributes

    def __getitem__(self, key):
        value = self._entries[key]
        if type(value) is _Unparsed:
            value = self._parse(value.data)
            self._entries[key] = value
        return value

    def __setitem__(self, key, value):
        self._entries[key] = value

    def __delitem__(self, key):
        del self._entries[key]

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)

    def __contains__(self, key):
        return key in self._entries

    def has_key(self, key):
        return key in self._entries

    def clear(self):
        self._entries.clear()

    def __copy__(self):
        return YsonLazyMap(dict(self._entries), self.attributes, self._parse)

    def __repr__(self):
        return "YsonLazyMap({!r}, attributes={!r})".format(dict(self.items()), self.attributes)


def lazy_loads(data, yson_type, always_create_attributes, encoding, max_depth):
    """``loads`` for ``lazy=True``: maps (at the top, in a map fragment, or as list-fragment
    items) become ``YsonLazyMap``; other values are parsed at once."""
    def parse(value_bytes):
        return _native_loads(value_bytes, None, always_create_attributes, encoding, max_depth)

    def key_of(raw_key):
        if encoding is None:
            return raw_key
        try:
            return raw_key.decode(encoding)
        except UnicodeDecodeError:
            return make_byte_key(raw_key)

    def node(node_bytes, node_type):
        try:
            attribute_spans, spans = _native.map_spans(node_bytes, node_type, max_depth)
        except _native.YsonError as error:
            raise load_error(error, node_bytes) from None
        if spans is None:
            return parse(node_bytes)
        attributes = {key_of(key): parse(node_bytes[start:end])
                      for key, start, end in attribute_spans or ()}
        entries = {key_of(key): _Unparsed(node_bytes[start:end]) for key, start, end in spans}
        return YsonLazyMap(entries, attributes, parse)

    if yson_type == "list_fragment":
        return iter([node(data[start:end], None) for start, end in item_spans(data, max_depth)])
    return node(data, yson_type)
