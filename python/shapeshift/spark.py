"""Spark reads shapeshift's files: a PySpark Python data source named ``shapeshift``.

    >>> from shapeshift import spark as shapeshift_spark
    >>> shapeshift_spark.register(spark)
    >>> df = (spark.read.format("shapeshift")
    ...       .option("format", "skiff").option("schema", "table.schema")
    ...       .load("/data/part-*.skiff"))

One source for every file shapeshift writes, chosen by the ``format`` option:

* a row format of :data:`shapeshift.formats.FORMATS` (``yson``, ``skiff``, ``protobuf``,
  ``msgpack``, ``avro``, ``thrift``, ...): YT table streams, decoded by shapeshift's own codecs
  straight into Arrow (no Python row objects). The ``schema`` option is the YT table schema (YSON
  text, or a path to a file holding it); ``arrow`` streams carry their own.
* ``records``: ArrayRecord files, one row per record with columns ``index`` (long, the record's
  position in its file), ``record`` (binary) and ``file``.
* ``columns``: a directory per table holding one shapeshift column file per column
  (``<column name>.sscol``, all of the same length), read through the adaptive decoders.

``load`` takes a path, a glob, or a comma-separated list of them. Partitions: one per row-format
file (a YT stream has no index to split it by), ``records_per_partition`` records of a record
file (default 65,536), ``rows_per_partition`` rows of a column table (default 1,048,576, rounded
to the column files' block size). Bad files fail the read with the file and shapeshift's
message (format, byte offset, row).

Spark's Python data sources run in Python workers, so this costs what any Python source costs
(Arrow batches cross into the JVM); it is for users whose data outgrew one machine.
"""

from __future__ import annotations

import glob
import os
from typing import Any, Iterator

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

__all__ = ["ShapeshiftDataSource", "register", "COLUMN_SUFFIX"]

#: File name suffix of a column file inside a column table directory.
COLUMN_SUFFIX = ".sscol"
_RECORDS_PER_PARTITION = 65_536
_ROWS_PER_PARTITION = 1 << 20
_BATCH_ROWS = 65_536


def register(spark: Any) -> None:
    """Makes ``spark.read.format("shapeshift")`` available in this session."""
    spark.dataSource.register(ShapeshiftDataSource)


def _paths(option: str | None) -> list[str]:
    if not option:
        raise ValueError("shapeshift: no path given (spark.read.format('shapeshift').load(PATH))")
    paths: list[str] = []
    for part in (p.strip() for p in option.split(",")):
        if not part:
            continue
        matched = sorted(glob.glob(part)) if glob.has_magic(part) else [part]
        if not matched:
            raise FileNotFoundError(f"shapeshift: no file matches {part!r}")
        for path in matched:
            if not os.path.exists(path):
                raise FileNotFoundError(f"shapeshift: {path}: no such file or directory")
            paths.append(path)
    if not paths:
        raise ValueError(f"shapeshift: no path in {option!r}")
    return paths


def _yt_schema(option: str | None, format: str) -> str:
    if not option:
        raise ValueError(
            f"shapeshift: format {format!r} needs the YT table schema: "
            ".option('schema', YSON text or a path to a file holding it)"
        )
    text = option.strip()
    if text[:1] in "[<{":
        return text
    try:
        with open(text, encoding="utf-8") as schema_file:
            return schema_file.read()
    except OSError as error:
        raise ValueError(f"shapeshift: schema option {text!r} is neither YSON text nor a readable file: {error}") from None


def _column_files(table: str) -> list[tuple[str, str]]:
    if not os.path.isdir(table):
        raise ValueError(f"shapeshift: {table}: format 'columns' reads a directory of {COLUMN_SUFFIX} files")
    names = sorted(n for n in os.listdir(table) if n.endswith(COLUMN_SUFFIX))
    if not names:
        raise ValueError(f"shapeshift: {table}: no {COLUMN_SUFFIX} column files in the directory")
    return [(n[: -len(COLUMN_SUFFIX)], os.path.join(table, n)) for n in names]


def _open_column(path: str):
    from shapeshift import columns

    with open(path, "rb") as column_file:
        data = column_file.read()
    try:
        return columns.Column(data)
    except Exception as error:  # the native error names the byte offset and what is wrong
        raise ValueError(f"shapeshift: {path}: {error}") from None


def _arrow_schema(format: str, paths: list[str], yt_schema: str | None):
    import pyarrow as pa

    if format == "records":
        return pa.schema([("index", pa.int64()), ("record", pa.binary()), ("file", pa.string())])
    if format == "columns":
        fields = None
        for table in paths:
            table_fields = [(name, _open_column(path).dtype) for name, path in _column_files(table)]
            if fields is not None and table_fields != fields:
                raise ValueError(f"shapeshift: {table}: its columns differ from those of {paths[0]}")
            fields = table_fields
        return pa.schema([(name, pa.from_numpy_dtype(dtype)) for name, dtype in fields])
    if format == "arrow":
        with pa.ipc.open_stream(paths[0]) as reader:
            return reader.schema
    from shapeshift import formats

    # An empty stream decodes to an empty table of the schema's Arrow types.
    empty = b"" if format != "avro" else _read(paths[0])
    return _without_dictionaries(formats.to_arrow(empty, format, yt_schema)).schema


def _read(path: str) -> bytes:
    with open(path, "rb") as source:
        return source.read()


class _Part(InputPartition):
    """One unit of work: a whole row-format file, or rows ``[start, end)`` of a file/table."""

    def __init__(self, path: str, start: int = 0, end: int = -1) -> None:
        super().__init__((path, start, end))
        self.path, self.start, self.end = path, start, end


class ShapeshiftDataSource(DataSource):
    """``spark.read.format("shapeshift")``: see the module's documentation for the options."""

    @classmethod
    def name(cls) -> str:
        return "shapeshift"

    def _settings(self) -> tuple[str, list[str], str | None]:
        from shapeshift import formats

        format = self.options.get("format")
        known = (*formats.FORMATS, "records", "columns")
        if format not in known:
            raise ValueError(f"shapeshift: option 'format' must be one of {', '.join(known)} (got {format!r})")
        paths = _paths(self.options.get("path") or self.options.get("paths"))
        needs_schema = format not in ("records", "columns", "arrow")
        yt_schema = _yt_schema(self.options.get("schema"), format) if needs_schema else None
        return format, paths, yt_schema

    def schema(self) -> StructType:
        from pyspark.sql.pandas.types import from_arrow_schema

        return from_arrow_schema(_arrow_schema(*self._settings()))

    def reader(self, schema: StructType) -> DataSourceReader:
        format, paths, yt_schema = self._settings()
        return _Reader(format, paths, yt_schema, self.options)


class _Reader(DataSourceReader):
    def __init__(self, format: str, paths: list[str], yt_schema: str | None, options: dict) -> None:
        self.format = format
        self.paths = paths
        self.yt_schema = yt_schema
        self.records_per_partition = int(options.get("records_per_partition", _RECORDS_PER_PARTITION))
        self.rows_per_partition = int(options.get("rows_per_partition", _ROWS_PER_PARTITION))
        if self.records_per_partition <= 0 or self.rows_per_partition <= 0:
            raise ValueError("shapeshift: records_per_partition and rows_per_partition must be positive")

    def partitions(self) -> list[_Part]:
        if self.format == "records":
            from shapeshift.records import ArrayRecordReader

            parts = []
            for path in self.paths:
                reader = ArrayRecordReader(path)
                try:
                    count = reader.num_records()
                finally:
                    reader.close()
                step = self.records_per_partition
                parts.extend(_Part(path, s, min(count, s + step)) for s in range(0, count, step))
            return parts
        if self.format == "columns":
            parts = []
            for table in self.paths:
                first = _open_column(_column_files(table)[0][1])
                step = max(first.block_size, self.rows_per_partition // first.block_size * first.block_size)
                parts.extend(_Part(table, s, min(len(first), s + step)) for s in range(0, len(first), step))
            return parts
        return [_Part(path) for path in self.paths]

    def read(self, partition: _Part) -> Iterator[Any]:
        if self.format == "records":
            yield from _read_records(partition)
        elif self.format == "columns":
            yield from _read_columns(partition)
        elif self.format == "arrow":
            import pyarrow as pa

            with pa.ipc.open_stream(partition.path) as reader:
                yield from reader
        else:
            from shapeshift import formats

            try:
                table = formats.to_arrow(_read(partition.path), self.format, self.yt_schema)
            except formats.FormatError as error:
                raise ValueError(f"shapeshift: {partition.path}: {error}") from None
            if isinstance(table, list):
                raise ValueError(f"shapeshift: {partition.path}: holds {len(table)} tables; read one table per file")
            yield from _without_dictionaries(table).to_batches(max_chunksize=_BATCH_ROWS)


def _plain_type(type):
    """``type`` with dictionary encoding removed at every level: Spark's Arrow vectors do not
    read dictionary-encoded columns (shapeshift's Arrow output keeps YT's dictionaries)."""
    import pyarrow as pa

    if pa.types.is_dictionary(type):
        return _plain_type(type.value_type)
    if pa.types.is_list(type) or pa.types.is_large_list(type):
        return pa.list_(type.value_field.with_type(_plain_type(type.value_type)))
    if pa.types.is_struct(type):
        return pa.struct([f.with_type(_plain_type(f.type)) for f in type])
    return type


def _without_dictionaries(table):
    import pyarrow as pa

    schema = pa.schema([f.with_type(_plain_type(f.type)) for f in table.schema], metadata=table.schema.metadata)
    return table if schema.equals(table.schema) else table.cast(schema)


def _read_records(part: _Part) -> Iterator[Any]:
    import pyarrow as pa

    from shapeshift.records import ArrayRecordReader

    reader = ArrayRecordReader(part.path)
    try:
        for start in range(part.start, part.end, _BATCH_ROWS):
            end = min(part.end, start + _BATCH_ROWS)
            records = reader.read(start, end)
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(range(start, end), pa.int64()),
                    pa.array(records, pa.binary()),
                    pa.array([part.path] * (end - start), pa.string()),
                ],
                names=["index", "record", "file"],
            )
    finally:
        reader.close()


def _read_columns(part: _Part) -> Iterator[Any]:
    import numpy as np
    import pyarrow as pa

    files = _column_files(part.path)
    columns = [(name, _open_column(path)) for name, path in files]
    expected = len(columns[0][1])
    for name, column in columns:
        if len(column) != expected:
            raise ValueError(
                f"shapeshift: {part.path}: column {name!r} holds {len(column)} values, "
                f"{files[0][0]!r} holds {expected}"
            )
    for start in range(part.start, part.end, _BATCH_ROWS):
        rows = np.arange(start, min(part.end, start + _BATCH_ROWS), dtype=np.int64)
        yield pa.RecordBatch.from_arrays(
            [pa.array(column.take(rows)) for _, column in columns], names=[name for name, _ in columns]
        )
