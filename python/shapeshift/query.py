"""SQL over files in every format shapeshift reads, and over Arrow data in memory.

    >>> import shapeshift
    >>> shapeshift.sql("SELECT colour, count(*) AS n FROM t GROUP BY colour",
    ...                tables={"t": "data/*.parquet"})          # a pyarrow.Table
    >>> session = shapeshift.Session({"t": "data/*.parquet"})   # tables kept for many queries

A table is a path or glob (Parquet, Arrow IPC files, CSV, JSON lines, ArrayRecord files, or a
YT table stream in any row format of ``shapeshift.formats``), or any object with
``__arrow_c_stream__`` (a pyarrow Table or RecordBatchReader, a polars DataFrame, ...). The
format of a file is told from its extension or first bytes unless ``formats`` names it; row
formats that do not describe themselves need a YT table schema in ``schemas`` (as
``shapeshift.formats`` takes them). Arrow data crosses the C stream interface both ways, without
copies through Python objects. Built on Apache DataFusion (its SQL dialect).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from shapeshift import _native
from shapeshift.formats import _schema

_native_sql = _native.sql


class Session:
    """Tables registered once and queried many times: the files' listing, footers and schemas
    are read at registration, not again per query (``shapeshift.sql`` is a one-query Session).

        >>> session = shapeshift.Session({"t": "data/*.parquet"})
        >>> session.sql("SELECT count(*) FROM t")                   # a pyarrow.Table
    """

    def __init__(self, tables: Mapping[str, Any] | None = None, *, formats: Mapping[str, str] | None = None,
                 schemas: Mapping[str, Any] | None = None) -> None:
        self._native = _native_sql.Session()
        if tables:
            self.register(tables, formats=formats, schemas=schemas)
        elif formats or schemas:
            raise ValueError("formats/schemas name tables not in tables: no tables given")

    def register(self, tables: Mapping[str, Any], *, formats: Mapping[str, str] | None = None,
                 schemas: Mapping[str, Any] | None = None) -> None:
        """Adds ``tables`` ({name: path, glob or Arrow stream object}); ``formats`` and
        ``schemas`` name the format and YT schema of file tables that need them."""
        formats = dict(formats or {})
        schemas = dict(schemas or {})
        unknown = (set(formats) | set(schemas)) - set(tables)
        if unknown:
            raise ValueError(f"formats/schemas name tables not in tables: {sorted(unknown)}")
        for name, source in tables.items():
            if isinstance(source, (str, os.PathLike)):
                schema = schemas.get(name)
                self._native.register_files(name, os.fspath(source), formats.get(name),
                                            None if schema is None else _schema(schema))
            elif hasattr(source, "__arrow_c_stream__"):
                if name in formats or name in schemas:
                    raise ValueError(f"table {name}: formats/schemas apply to files, not Arrow data")
                self._native.register_stream(name, source.__arrow_c_stream__())
            else:
                raise TypeError(f"table {name}: a path, a glob or an object with __arrow_c_stream__ "
                                f"expected, got {type(source).__name__}")

    def sql(self, query: str, *, arrow: bool = True) -> Any:
        """Runs ``query`` and returns a ``pyarrow.Table``; with ``arrow=False`` the result object
        itself, which has ``__arrow_c_stream__`` (for consumers other than pyarrow; it can be
        exported once)."""
        result = self._native.sql(query)
        if not arrow:
            return result
        import pyarrow as pa

        return pa.table(result)


def sql(query: str, tables: Mapping[str, Any], *, formats: Mapping[str, str] | None = None,
        schemas: Mapping[str, Any] | None = None, arrow: bool = True) -> Any:
    """Runs ``query`` over ``tables`` ({name: path, glob or Arrow stream object}) and returns a
    ``pyarrow.Table``; with ``arrow=False`` the result object itself, which has
    ``__arrow_c_stream__`` (for consumers other than pyarrow; it can be exported once)."""
    return Session(tables, formats=formats, schemas=schemas).sql(query, arrow=arrow)
