"""SQL over files in every format shapeshift reads, and over Arrow data in memory.

    >>> import shapeshift
    >>> shapeshift.sql("SELECT colour, count(*) AS n FROM t GROUP BY colour",
    ...                tables={"t": "data/*.parquet"})          # a pyarrow.Table

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


def sql(query: str, tables: Mapping[str, Any], *, formats: Mapping[str, str] | None = None,
        schemas: Mapping[str, Any] | None = None, arrow: bool = True) -> Any:
    """Runs ``query`` over ``tables`` ({name: path, glob or Arrow stream object}) and returns a
    ``pyarrow.Table``; with ``arrow=False`` the result object itself, which has
    ``__arrow_c_stream__`` (for consumers other than pyarrow; it can be exported once)."""
    formats = dict(formats or {})
    schemas = dict(schemas or {})
    unknown = (set(formats) | set(schemas)) - set(tables)
    if unknown:
        raise ValueError(f"formats/schemas name tables not in tables: {sorted(unknown)}")
    files, streams = [], []
    for name, source in tables.items():
        if isinstance(source, (str, os.PathLike)):
            schema = schemas.get(name)
            files.append((name, os.fspath(source), formats.get(name),
                          None if schema is None else _schema(schema)))
        elif hasattr(source, "__arrow_c_stream__"):
            if name in formats or name in schemas:
                raise ValueError(f"table {name}: formats/schemas apply to files, not Arrow data")
            streams.append((name, source.__arrow_c_stream__()))
        else:
            raise TypeError(f"table {name}: a path, a glob or an object with __arrow_c_stream__ "
                            f"expected, got {type(source).__name__}")
    result = _native_sql.sql(query, files, streams)
    if not arrow:
        return result
    import pyarrow as pa

    return pa.table(result)
