"""YSON tokens (as ``yt.yson.yson_token``), for token-level readers such as yt's YPath parser."""

from .common import YsonError

(TOKEN_LITERAL, TOKEN_SLASH, TOKEN_AMPERSAND, TOKEN_AT, TOKEN_ASTERISK, TOKEN_START_OF_STREAM,
 TOKEN_END_OF_STREAM, TOKEN_RANGE, TOKEN_SEMICOLON, TOKEN_EQUALS, TOKEN_LEFT_BRACE,
 TOKEN_RIGHT_BRACE, TOKEN_HASH, TOKEN_LEFT_BRACKET, TOKEN_RIGHT_BRACKET, TOKEN_LEFT_ANGLE,
 TOKEN_RIGHT_ANGLE, TOKEN_LEFT_PARENTHESIS, TOKEN_RIGHT_PARENTHESIS, TOKEN_COLON, TOKEN_COMMA,
 TOKEN_STRING, TOKEN_INT64, TOKEN_UINT64, TOKEN_DOUBLE, TOKEN_BOOLEAN, TOKEN_SPECIAL) = range(27)

_NAMES = ("Literal", "Slash", "Ampersand", "At", "Asterisk", "Start-of-stream", "End-of-stream",
          "Range", "Semicolon", "Equals", "Left-brace", "Right-brace", "Hash", "Left-bracket",
          "Right-bracket", "Left-angle", "Right-angle", "Left-parenthesis", "Right-parenthesis",
          "Colon", "Comma", "String", "Int64", "Uint64", "Double", "Boolean", "Special")

CHAR_TO_TOKEN_TYPE = {
    ";": TOKEN_SEMICOLON, "=": TOKEN_EQUALS, "{": TOKEN_LEFT_BRACE, "}": TOKEN_RIGHT_BRACE,
    "#": TOKEN_HASH, "[": TOKEN_LEFT_BRACKET, "]": TOKEN_RIGHT_BRACKET, "<": TOKEN_LEFT_ANGLE,
    ">": TOKEN_RIGHT_ANGLE, "(": TOKEN_LEFT_PARENTHESIS, ")": TOKEN_RIGHT_PARENTHESIS,
    ":": TOKEN_COLON, ",": TOKEN_COMMA, "/": TOKEN_SLASH, "@": TOKEN_AT, "&": TOKEN_AMPERSAND,
    "*": TOKEN_ASTERISK,
}


def char_to_token_type(char_or_byte):
    """The token type of a one-character token (a byte value), else ``TOKEN_END_OF_STREAM``."""
    return CHAR_TO_TOKEN_TYPE.get(chr(char_or_byte), TOKEN_END_OF_STREAM)


def token_type_to_string(token):
    return "Unknown" if token is None else _NAMES[token]


def _flatten(types):
    if isinstance(types, (list, tuple, set)):
        return [item for inner in types for item in _flatten(inner)]
    return [types]


class YsonToken(object):
    def __init__(self, value="", type=TOKEN_END_OF_STREAM):
        self._value = value
        self._type = type

    def get_value(self):
        return self._value

    def get_type(self):
        return self._type

    def expect_type(self, type_or_types):
        expected = _flatten(type_or_types)
        if self._type in expected:
            return
        names = [token_type_to_string(token) for token in expected]
        if self._type == TOKEN_END_OF_STREAM:
            raise YsonError("Unexpected end of stream; expected types are {0}".format(names))
        raise YsonError('Unexpected token "{0}" of type {1}; expected types are {2}'.format(
            self._value, token_type_to_string(self._type), names))

    def __str__(self):
        return str(self._value)
