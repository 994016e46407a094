"""Spark reads shapeshift's files through the ``shapeshift`` Python data source (local Spark)."""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import pyarrow as pa
import pytest

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java (17): none on PATH and no JAVA_HOME", allow_module_level=True)

from shapeshift import columns, formats  # noqa: E402
from shapeshift import spark as shapeshift_spark  # noqa: E402
from shapeshift.records import ArrayRecordWriter  # noqa: E402

SCHEMA = (
    "[{name=id;type_v3=int64};{name=name;type_v3={type_name=optional;item=utf8}};"
    "{name=score;type_v3=double};{name=tags;type_v3={type_name=list;item=string}}]"
)


def _rows(first: int, count: int) -> list[dict]:
    return [
        {"id": i, "name": None if i % 7 == 0 else f"n{i}", "score": i / 4, "tags": [b"t"] * (i % 3)}
        for i in range(first, first + count)
    ]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    # Python workers must import the same shapeshift as this process.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("shapeshift-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    shapeshift_spark.register(session)
    yield session
    session.stop()


@pytest.mark.parametrize("format", ["yson", "skiff", "thrift-compact", "avro"])
def test_row_formats_read_every_row_across_files(spark, tmp_path, format):
    for part in range(3):
        data = formats.dumps(_rows(part * 100, 100), format=format, schema=SCHEMA)
        (tmp_path / f"part-{part}.{format}").write_bytes(data)
    schema_file = tmp_path / "table.schema"
    schema_file.write_text(SCHEMA)
    df = (
        spark.read.format("shapeshift")
        .option("format", format)
        .option("schema", str(schema_file))
        .load(str(tmp_path / f"part-*.{format}"))
    )
    assert df.columns == ["id", "name", "score", "tags"]
    assert df.rdd.getNumPartitions() == 3
    got = sorted((r.id, r.name, r.score, [bytes(t) for t in r.tags]) for r in df.collect())
    want = sorted((r["id"], r["name"], r["score"], r["tags"]) for r in _rows(0, 300))
    assert got == want
    # A query runs over it like over any table.
    assert df.filter("name IS NULL").count() == sum(1 for i in range(300) if i % 7 == 0)


def test_records_as_binary_rows_with_partitions(spark, tmp_path):
    path = tmp_path / "data.array_record"
    writer = ArrayRecordWriter(str(path), "group_size:16")
    records = [f"record {i}".encode() * (i % 5 + 1) for i in range(1000)]
    for record in records:
        writer.write(record)
    writer.close()
    df = (
        spark.read.format("shapeshift")
        .option("format", "records")
        .option("records_per_partition", "300")
        .load(str(path))
    )
    assert df.rdd.getNumPartitions() == 4
    rows = df.orderBy("index").collect()
    assert [bytes(r.record) for r in rows] == records
    assert [r["index"] for r in rows] == list(range(1000))


def test_column_tables_through_the_adaptive_decoders(spark, tmp_path):
    table = tmp_path / "table"
    table.mkdir()
    n = 200_000
    rng = np.random.default_rng(7)
    values = {
        "day": rng.integers(1, 32, n).astype(np.int64),
        "price": np.round(rng.lognormal(3, 1, n), 2),
    }
    for name, column in values.items():
        (table / f"{name}{shapeshift_spark.COLUMN_SUFFIX}").write_bytes(columns.encode(column, block_size=4096))
    df = (
        spark.read.format("shapeshift")
        .option("format", "columns")
        .option("rows_per_partition", "50000")
        .load(str(table))
    )
    # 50,000 rows rounded down to whole 4,096-value blocks: 49,152 rows per partition.
    assert df.rdd.getNumPartitions() == 5
    got = pa.Table.from_pylist([r.asDict() for r in df.collect()])
    np.testing.assert_array_equal(np.sort(got["day"].to_numpy()), np.sort(values["day"]))
    assert df.groupBy("day").count().count() == 31


def test_bad_input_names_the_file(spark, tmp_path):
    good = formats.dumps(_rows(0, 10), format="yson", schema=SCHEMA)
    (tmp_path / "bad.yson").write_bytes(good[: len(good) // 2])
    df = spark.read.format("shapeshift").option("format", "yson").option("schema", SCHEMA).load(str(tmp_path / "bad.yson"))
    with pytest.raises(Exception, match="bad.yson"):
        df.collect()
    with pytest.raises(Exception, match="option 'format' must be one of"):
        spark.read.format("shapeshift").option("format", "parquetish").load(str(tmp_path / "bad.yson")).schema
    with pytest.raises(Exception, match="needs the YT table schema"):
        spark.read.format("shapeshift").option("format", "skiff").load(str(tmp_path / "bad.yson")).schema
    with pytest.raises(Exception, match="no file matches"):
        spark.read.format("shapeshift").option("format", "records").load(str(tmp_path / "none-*.rec")).schema


def test_engine_study_hash_is_sparks(spark, tmp_path):
    # The engine study groups Q2's rows by Spark's hash on every engine; ours must equal
    # Spark's own on the study's seven columns (strings of every tail length included).
    from pyspark.sql import functions as F

    from shapeshift.lab.engines import data

    table = data.table(3_000, 10, np.random.default_rng(3))
    table = table.set_column(6, "colour", pa.array([("c" * (i % 9)) for i in range(3_000)]))
    path = tmp_path / "t.parquet"
    import pyarrow.parquet as pq

    pq.write_table(table, path)
    frame = spark.read.parquet(str(path))
    spark_hashes = [r[0] for r in frame.select(F.hash(*(F.col(c) for c in data.COLUMNS))).collect()]
    assert list(data.spark_hash(pq.read_table(path))) == spark_hashes


def test_engine_spark_hash_is_sparks_on_every_type_it_takes(spark, tmp_path):
    # shapeshift.sql's built-in spark_hash against Spark's own hash, row by row: ints of every
    # width, longs, doubles (with -0.0 and NaN), booleans, dates, timestamps, strings of every
    # tail length, binary, and nulls (which leave the hash unchanged).
    import datetime

    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    import shapeshift

    n = 600
    rng = np.random.default_rng(11)
    doubles = rng.normal(size=n) * 1e6
    doubles[:4] = [0.0, -0.0, np.nan, np.inf]
    table = pa.table({
        "i8": pa.array(rng.integers(-128, 128, n), pa.int8()),
        "i16": pa.array(rng.integers(-30_000, 30_000, n), pa.int16()),
        "i32": pa.array([None if i % 13 == 0 else int(v) for i, v in enumerate(rng.integers(-2**31, 2**31, n))],
                        pa.int32()),
        "i64": pa.array(rng.integers(-2**62, 2**62, n), pa.int64()),
        "f64": pa.array(doubles),
        "flag": pa.array([i % 3 == 0 for i in range(n)]),
        "day": pa.array([datetime.date(2000, 1, 1) + datetime.timedelta(days=int(d)) for d in rng.integers(0, 9000, n)]),
        "at": pa.array(rng.integers(0, 2**50, n), pa.timestamp("us")),
        "text": pa.array([None if i % 11 == 0 else "é" * (i % 5) + "x" * (i % 9) for i in range(n)]),
        "raw": pa.array([bytes(range(i % 10)) for i in range(n)], pa.binary()),
    })
    path = tmp_path / "types.parquet"
    pq.write_table(table, path)
    frame = spark.read.parquet(str(path)).orderBy("i64")
    columns = table.column_names
    expected = [r[0] for r in frame.select(F.hash(*(F.col(c) for c in columns))).collect()]
    ours = shapeshift.sql(f"SELECT spark_hash({', '.join(columns)}) AS h FROM t ORDER BY i64",
                          tables={"t": str(path)})
    assert ours.column("h").to_pylist() == expected
    # One column at a time too, so a mismatch names its type.
    for column in columns:
        expected = [r[0] for r in frame.select(F.hash(F.col(column))).collect()]
        ours = shapeshift.sql(f"SELECT spark_hash({column}) AS h FROM t ORDER BY i64", tables={"t": str(path)})
        assert ours.column("h").to_pylist() == expected, column
