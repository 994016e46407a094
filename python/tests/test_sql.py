"""shapeshift.sql: SQL over files in our formats and over Arrow data, results as pyarrow."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import shapeshift
from shapeshift import formats

SCHEMA = [
    {"name": "id", "type_v3": "int64"},
    {"name": "colour", "type_v3": "utf8"},
    {"name": "score", "type_v3": {"type_name": "optional", "item": "double"}},
]
ROWS = [{"id": i, "colour": ["red", "blue", "green"][i % 3], "score": None if i % 4 == 0 else i / 2}
        for i in range(200)]
Q1 = "SELECT colour, count(*) AS n, sum(score) AS total FROM t GROUP BY colour ORDER BY colour"


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name in ("skiff", "msgpack", "arrow", "avro"):
        path = tmp_path / f"rows.{name}"
        path.write_bytes(formats.dumps(ROWS, format=name, schema=SCHEMA))
        paths[name] = path
    table = pa.Table.from_pylist(ROWS, schema=pa.schema(
        [("id", pa.int64(), False), ("colour", pa.string(), False), ("score", pa.float64())]))
    paths["parquet"] = tmp_path / "rows.parquet"
    pq.write_table(table, paths["parquet"])
    return paths, table


def test_every_source_gives_the_parquet_answer(files):
    paths, table = files
    expected = shapeshift.sql(Q1, tables={"t": paths["parquet"]})
    assert isinstance(expected, pa.Table)
    assert expected.column("n").to_pylist() == [67, 66, 67]  # blue, green, red
    for name in ("skiff", "msgpack"):
        got = shapeshift.sql(Q1, tables={"t": str(paths[name])}, schemas={"t": SCHEMA})
        assert got.equals(expected), name
    for name in ("arrow", "avro"):  # they carry their own schema
        assert shapeshift.sql(Q1, tables={"t": paths[name]}).equals(expected), name
    assert shapeshift.sql(Q1, tables={"t": table}).equals(expected)
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=50))
    assert shapeshift.sql(Q1, tables={"t": reader}).equals(expected)


def test_result_is_an_arrow_c_stream_exported_once(files):
    paths, _ = files
    result = shapeshift.sql("SELECT id FROM t WHERE id < 3 ORDER BY id",
                            tables={"t": paths["parquet"]}, arrow=False)
    assert pa.RecordBatchReader.from_stream(result).read_all().column("id").to_pylist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="already exported"):
        result.__arrow_c_stream__()


def test_joins_files_and_memory(files):
    paths, table = files
    colours = pa.table({"colour": ["red", "blue"], "code": [1, 2]})
    got = shapeshift.sql("SELECT c.code, count(*) AS n FROM t JOIN c ON t.colour = c.colour "
                         "GROUP BY c.code ORDER BY c.code",
                         tables={"t": paths["skiff"], "c": colours}, formats={"t": "skiff"},
                         schemas={"t": SCHEMA})
    assert got.to_pylist() == [{"code": 1, "n": 67}, {"code": 2, "n": 67}]


def test_errors_are_clear(files, tmp_path):
    paths, _ = files
    with pytest.raises(ValueError, match="SELEC"):
        shapeshift.sql("SELEC 1", tables={"t": paths["parquet"]})
    with pytest.raises(ValueError, match="table t: .*missing.parquet"):
        shapeshift.sql("SELECT 1", tables={"t": tmp_path / "missing.parquet"})
    with pytest.raises(ValueError, match="skiff does not describe its rows"):
        shapeshift.sql("SELECT 1", tables={"t": paths["skiff"]})
    with pytest.raises(ValueError, match="unknown format 'nope'"):
        shapeshift.sql("SELECT 1", tables={"t": paths["skiff"]}, formats={"t": "nope"})
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        shapeshift.sql("SELECT 1", tables={"t": 42})
    wrong = [{"name": "id", "type_v3": "utf8"}]
    with pytest.raises(ValueError, match="rows.msgpack"):
        shapeshift.sql("SELECT * FROM t", tables={"t": paths["msgpack"]}, schemas={"t": wrong})


def test_a_session_keeps_its_tables_between_queries(files):
    paths, table = files
    session = shapeshift.Session({"t": paths["parquet"], "m": table})
    first = session.sql(Q1)
    # Tables held in memory are registered once too: a second query reads them again.
    assert session.sql(Q1.replace("FROM t", "FROM m")).equals(first)
    session.register({"s": paths["skiff"]}, formats={"s": "skiff"}, schemas={"s": SCHEMA})
    assert session.sql(Q1.replace("FROM t", "FROM s")).equals(first)
    assert session.sql("SELECT count(*) AS n FROM t").column("n").to_pylist() == [200]
    with pytest.raises(ValueError, match="not in tables"):
        session.register({"x": paths["parquet"]}, schemas={"y": SCHEMA})
    with pytest.raises(ValueError, match="table 'datafusion.public.nope' not found|nope"):
        session.sql("SELECT * FROM nope")


def test_record_files_of_rows_are_tables_of_their_columns(files, tmp_path):
    """ArrayRecord files of one row per record (``records+FORMAT``) are queried by their columns."""
    from shapeshift.records import Writer

    paths, _ = files
    expected = shapeshift.sql(Q1, tables={"t": paths["parquet"]})
    for name in ("msgpack", "yson", "skiff"):
        path = tmp_path / f"rows-{name}.array_record"
        writer = Writer(str(path), "group_size:8")
        for row in ROWS:
            writer.write(formats.dumps([row], format=name, schema=SCHEMA))
        writer.close()
        got = shapeshift.sql(Q1, tables={"t": path}, formats={"t": f"records+{name}"}, schemas={"t": SCHEMA})
        assert got.equals(expected), name
    with pytest.raises(Exception, match="need a YT schema"):
        shapeshift.sql(Q1, tables={"t": path}, formats={"t": "records+skiff"})
