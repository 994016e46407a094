"""A token-level YSON reader (as ``yt.yson.tokenizer.YsonTokenizer``) for text YSON, used by
yt's YPath parser for ranges and columns (``//t{a,b}[#1:#5]``). Values of string and number
tokens are decoded by ``loads``, so they follow the same rules as whole documents."""

import re

from .common import YsonError
from .parser import loads
from .yson_token import (
    CHAR_TO_TOKEN_TYPE, TOKEN_BOOLEAN, TOKEN_DOUBLE, TOKEN_END_OF_STREAM, TOKEN_INT64,
    TOKEN_START_OF_STREAM, TOKEN_STRING, TOKEN_UINT64, YsonToken)

_ENCODING_SENTINEL = object()
_WHITESPACE = re.compile(rb"[ \t\r\n]*")
_QUOTED = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_NUMBER = re.compile(rb"[+-]?[0-9][0-9a-zA-Z.+-]*|[+-]?\.[0-9][0-9eE.+-]*")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_.\-]*")
_PERCENT = re.compile(rb"%[a-z+-]+")


def _read_stream(stream):
    chunks = []
    while True:
        chunk = stream.read(1)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


class YsonTokenizer(object):
    def __init__(self, input_str, encoding=_ENCODING_SENTINEL, output_buffer=None):
        self._data = input_str if isinstance(input_str, bytes) else _read_stream(input_str)
        self._encoding = "utf-8" if encoding is _ENCODING_SENTINEL else encoding
        self._offset = 0
        self._token = YsonToken(type=TOKEN_START_OF_STREAM)

    def _value(self, text):
        return loads(text, encoding=self._encoding, always_create_attributes=False)

    def parse_next(self):
        data = self._data
        at = _WHITESPACE.match(data, self._offset).end()
        if at == len(data):
            self._offset = at
            self._token = YsonToken(type=TOKEN_END_OF_STREAM)
            return
        char = data[at:at + 1]
        for pattern, kind in ((_QUOTED, TOKEN_STRING), (_NUMBER, None), (_IDENTIFIER, TOKEN_STRING),
                              (_PERCENT, None)):
            match = pattern.match(data, at)
            if match:
                value = self._value(match.group())
                if kind is None:
                    kind = (TOKEN_BOOLEAN if isinstance(value, bool) else
                            TOKEN_DOUBLE if isinstance(value, float) else
                            TOKEN_UINT64 if match.group().endswith(b"u") else TOKEN_INT64)
                self._offset = match.end()
                self._token = YsonToken(value=value, type=kind)
                return
        kind = CHAR_TO_TOKEN_TYPE.get(char.decode("latin-1"))
        if kind is None:
            raise YsonError('Unexpected "{0}" at byte {1} while reading tokens'.format(char, at),
                            attributes={"offset": at})
        self._offset = at + 1
        self._token = YsonToken(value=char.decode("latin-1"), type=kind)

    def get_current_token(self):
        return self._token

    def get_current_type(self):
        return self._token.get_type()

    def get_position_info(self):
        return (0, self._offset, self._offset)
