"""``YsonError``: the error of ``shapeshift.yson``, shaped as ``yt.common.YtError`` (``message``,
``code``, ``attributes``, ``inner_errors``) and an instance of it when ytsaurus-client is
installed, so ``except YtError`` / ``except yt.yson.YsonError`` code catches it either way.
It also subclasses ``ValueError``, which shapeshift's earlier releases raised."""

try:
    from yt.common import YtError
except ImportError:
    class YtError(Exception):
        """What ``yt.common.YtError`` carries, for when ytsaurus-client is not installed."""

        def __init__(self, message="", code=1, attributes=None, inner_errors=None):
            super().__init__(message)
            self.message = message
            self.code = code
            self.attributes = dict(attributes or {})
            self.inner_errors = list(inner_errors or [])

        def __str__(self):
            lines = [self.message]
            for inner in self.inner_errors:
                lines.append("    " + str(inner.get("message", "")))
            return "\n".join(lines)


class YsonError(YtError, ValueError):
    """YSON could not be read or written. ``attributes`` say where: ``offset`` and ``context``
    (in the inner error) when reading, ``row_key_path`` / ``row_index`` when writing."""


class StreamWrap(object):
    """A byte stream read one byte at a time with ``header`` before and ``footer`` after it (as
    ``yt.yson.common.StreamWrap``, which yt's YPath parser hands to ``YsonTokenizer``)."""

    def __init__(self, stream, header, footer):
        self._parts = [_as_bytes(header), None, _as_bytes(footer)]
        self._stream = stream
        self._part = 0
        self._position = 0

    def read(self, n=1):
        if n == 0:
            return b""
        while self._part < 3:
            if self._part == 1:
                byte = self._stream.read(1)
                if byte:
                    return byte
            else:
                part = self._parts[self._part]
                if self._position < len(part):
                    self._position += 1
                    return part[self._position - 1:self._position]
            self._part += 1
            self._position = 0
        return b""


def _as_bytes(text):
    return text.encode("utf-8") if isinstance(text, str) else bytes(text)
