"""One engine in its own process: ``python -m shapeshift.lab.engines.worker ENGINE DATA_DIR``
(``DATA_DIR/parquet`` holds the Parquet files, ``DATA_DIR/skiff`` and ``DATA_DIR/arrow`` their
copies as YT tables in Skiff and in our Arrow row format).

The engine study starts one worker per engine and keeps it for the whole run (session start is
reported apart, as in the study). Requests arrive as JSON lines on standard input and answers
leave as JSON lines on the original standard output; everything else the engine prints (Spark's
logs) goes to standard error. Requests:

* ``{"op": "check", "query": "q1"}``: run the query, answer the canonical result's digest
  and row count (the study compares digests across engines before timing anything);
* ``{"op": "run", "query": "q1", "sink": "noop" | "parquet", "out": PATH}``: run it into the
  sink; answer wall seconds, CPU seconds of this process tree, and its peak memory;
* ``{"op": "plan", "query": "q1"}``: the physical plan as text (Spark: to check Comet runs it);
* ``{"op": "quit"}``.

Queries as in the DataFusion Comet vs Spark study: Q1 ``groupBy(day, month, colour).count()
.sort(month, day)``; Q2 ``hash(all seven columns) % HASH_SCALE``, ``groupBy(hash).count()
.sort(desc(count))``. shapeshift's engine has Spark's ``hash`` built in (``spark_hash``, in
Rust); the other engines without it compute the same Murmur3 through a vectorised numpy
function (``data.spark_hash``) registered as a UDF, so every engine forms the same groups.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

HASH_SCALE = 1000
COMET_PACKAGE = "org.apache.datafusion:comet-spark-spark4.1_2.13:1.2.0"
ENGINES = ("spark", "comet", "spark-skiff", "datafusion", "duckdb", "polars",
           "shapeshift", "shapeshift-skiff", "shapeshift-arrow")

Q1_SQL = (
    "SELECT day, month, colour, count(*) AS count FROM t "
    "GROUP BY day, month, colour ORDER BY month, day"
)
Q2_SQL = (
    "SELECT h AS hash, count(*) AS count FROM ("
    "SELECT spark_hash(object_id, guid, uni_id, intercept_at, day, month, colour) % {scale} AS h FROM t) "
    "GROUP BY h ORDER BY count DESC"
).format(scale=HASH_SCALE)
# Reading the table into the engine: every row and column, for shapeshift's engine over Parquet
# and over our formats (the goal that a YT table in Skiff or Arrow rows reads at most 1.2x
# Parquet's time). Checked by a content checksum of every column, independent of row order
# (a digest of 3M rows in Python would take minutes).
READ_SQL = "SELECT * FROM t"
READ_CHECK_SQL = (
    "SELECT count(*) AS n, sum(arrow_cast(spark_hash(object_id, guid, uni_id, intercept_at, day, month, colour), "
    "'Int64')) AS checksum FROM t"
)


def canonical_digest(table) -> tuple[str, int]:
    """A digest of a result independent of row order among ties and of column types."""
    rows = sorted(tuple(str(v) for v in row.values()) for row in table.to_pylist())
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16], len(rows)


class ProcessTree:
    """CPU seconds and resident memory of a process and its descendants (Spark's JVM)."""

    def __init__(self, pid: int | None = None) -> None:
        import psutil

        self.root = psutil.Process(pid)

    def processes(self, descendants_only: bool = False):
        try:
            children = self.root.children(recursive=True)
        except Exception:
            children = []
        return children if descendants_only else [self.root, *children]

    def cpu(self, descendants_only: bool = False) -> float:
        total = 0.0
        for process in self.processes(descendants_only):
            try:
                times = process.cpu_times()
                total += times.user + times.system
            except Exception:
                pass
        return total

    def rss(self) -> int:
        total = 0
        for process in self.processes():
            try:
                total += process.memory_info().rss
            except Exception:
                pass
        return total


class _PeakMemory:
    """Samples the tree's resident memory every 20 ms while a query runs."""

    def __init__(self, tree: ProcessTree) -> None:
        self.tree, self.peak, self._stop = tree, tree.rss(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self.tree.rss())

    def __enter__(self) -> "_PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.tree.rss())


# ---------------------------------------------------------------------------------------
# Engines: each answers `result(query)` (a pyarrow Table), `sink(query, kind, out)` and `plan`.


class SparkEngine:
    """Spark over the Parquet files, or (``source="skiff"``) over their Skiff copies in
    ``DATA_DIR/skiff`` through shapeshift's Spark data source."""

    def __init__(self, data_dir: str, comet: bool, source: str = "parquet") -> None:
        from pyspark.sql import SparkSession

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            SparkSession.builder.master("local[2]")
            .appName("shapeshift-engine-" + ("comet" if comet else "spark"))
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "4g")
            .config("spark.sql.shuffle.partitions", "2")
        )
        if comet:
            # Spark refuses a relative ivy directory.
            cache = Path(os.environ.get("SHAPESHIFT_CACHE", Path.cwd() / ".cache")).resolve() / "ivy"
            builder = (
                builder.config("spark.jars.packages", COMET_PACKAGE)
                .config("spark.jars.ivy", str(cache))
                .config("spark.plugins", "org.apache.spark.CometPlugin")
                .config("spark.memory.offHeap.enabled", "true")
                .config("spark.memory.offHeap.size", "2g")
                .config("spark.shuffle.manager", "org.apache.spark.sql.comet.execution.shuffle.CometShuffleManager")
                .config("spark.comet.exec.shuffle.enabled", "true")
                .config("spark.comet.explain.fallback.enabled", "false")
            )
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        if source == "parquet":
            self.table = self.spark.read.parquet(data_dir)
        else:
            from shapeshift import spark as shapeshift_spark
            from shapeshift.lab.engines.data import YT_SCHEMA

            shapeshift_spark.register(self.spark)
            self.table = (
                self.spark.read.format("shapeshift").option("format", source).option("schema", YT_SCHEMA)
                .load(str(Path(data_dir).parent / source / f"*.{source}"))
            )

    def frame(self, query: str):
        from pyspark.sql import functions as F

        if query == "q1":
            return self.table.groupBy("day", "month", "colour").count().sort("month", "day")
        hashed = self.table.withColumn(
            "hash",
            F.hash(*(F.col(c) for c in ("object_id", "guid", "uni_id", "intercept_at", "day", "month", "colour")))
            % HASH_SCALE,
        )
        return hashed.groupBy("hash").count().sort(F.desc("count"))

    def result(self, query: str):
        return self.frame(query).toArrow()

    def sink(self, query: str, kind: str, out: str) -> None:
        writer = self.frame(query).write.mode("overwrite")
        if kind == "noop":
            writer.format("noop").save()
        else:
            writer.parquet(out)

    def plan(self, query: str) -> str:
        return self.frame(query)._jdf.queryExecution().executedPlan().toString()


class ArrowSqlEngine:
    """DataFusion (pip), DuckDB, Polars: SQL over the Parquet files, Spark's hash as a UDF."""

    def __init__(self, name: str, data_dir: str) -> None:
        self.name, self.files = name, sorted(str(p) for p in Path(data_dir).glob("*.parquet"))
        from shapeshift.lab.engines.data import spark_hash

        if name == "datafusion":
            import datafusion
            import pyarrow as pa

            self.ctx = datafusion.SessionContext()
            self.ctx.register_parquet("t", data_dir)

            def udf(*columns):
                batch = pa.record_batch(list(columns), names=list(_HASHED))
                return pa.array(spark_hash(batch))

            self.ctx.register_udf(
                datafusion.udf(udf, [pa.int64(), pa.string(), pa.int64(), pa.timestamp("us"), pa.int32(), pa.int32(), pa.string()],
                               pa.int32(), "immutable", name="spark_hash")
            )
        elif name == "duckdb":
            import duckdb
            import pyarrow as pa

            self.db = duckdb.connect()
            self.db.execute("SET threads TO 2")
            files = ", ".join(f"'{f}'" for f in self.files)
            self.db.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet([{files}])")

            # DuckDB reads the parameter count from the signature, so seven named parameters.
            def udf(object_id, guid, uni_id, intercept_at, day, month, colour):
                columns = [object_id, guid, uni_id, intercept_at, day, month, colour]
                columns = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in columns]
                return pa.array(spark_hash(pa.record_batch(columns, names=list(_HASHED))))

            self.db.create_function(
                "spark_hash", udf,
                ["BIGINT", "VARCHAR", "BIGINT", "TIMESTAMP", "INTEGER", "INTEGER", "VARCHAR"],
                "INTEGER", type="arrow",
            )
        elif name == "polars":
            import polars as pl

            self.pl = pl
            self.lazy = pl.scan_parquet(self.files)
            self.spark_hash = spark_hash
        else:
            raise ValueError(f"unknown engine {name!r}")

    def result(self, query: str):
        if self.name == "datafusion":
            return self.ctx.sql(Q1_SQL if query == "q1" else Q2_SQL).to_arrow_table()
        if self.name == "duckdb":
            return self.db.sql(Q1_SQL if query == "q1" else Q2_SQL).to_arrow_table()
        return self._polars(query).collect().to_arrow()

    def _polars(self, query: str):
        pl = self.pl
        if query == "q1":
            return self.lazy.group_by("day", "month", "colour").agg(pl.len().alias("count")).sort("month", "day")
        spark_hash = self.spark_hash

        def hashed(frame):
            h = spark_hash(frame.to_arrow())
            # Java's remainder: the sign of the dividend (numpy's fmod), as Spark computes it.
            import numpy as np

            return frame.select(pl.Series("hash", np.fmod(h, HASH_SCALE)))

        return (
            self.lazy.select(_HASHED)
            .map_batches(hashed, schema={"hash": pl.Int32})
            .group_by("hash").agg(pl.len().alias("count")).sort("count", descending=True)
        )

    def sink(self, query: str, kind: str, out: str) -> None:
        _sink(self.result(query), kind, out)

    def plan(self, query: str) -> str:
        if self.name == "polars":
            return self._polars(query).explain()
        return ""


class ShapeshiftEngine:
    """shapeshift's engine (a ``shapeshift.Session``, DataFusion inside) over the Parquet files or
    over their copies in one of our row formats, read by our readers."""

    def __init__(self, data_dir: str, source: str) -> None:
        from shapeshift import Session
        from shapeshift.lab.engines.data import YT_SCHEMA

        # Registered once, like the other engines' tables (DataFusion's context, DuckDB's view).
        if source == "parquet":
            self.session = Session({"t": str(Path(data_dir) / "*.parquet")})
        else:
            files = str(Path(data_dir).parent / source / f"*.{source}")
            self.session = Session({"t": files}, formats={"t": source}, schemas={"t": YT_SCHEMA})

    def result(self, query: str):
        return self.session.sql({"q1": Q1_SQL, "q2": Q2_SQL, "read": READ_SQL}[query])

    def check(self, query: str):
        """The table the `check` op digests: the read query's is its checksum."""
        return self.session.sql(READ_CHECK_SQL) if query == "read" else self.result(query)

    def sink(self, query: str, kind: str, out: str) -> None:
        _sink(self.result(query), kind, out)

    def plan(self, query: str) -> str:
        return ""


def _sink(table, kind: str, out: str) -> None:
    """An Arrow result into the run's sink: materialised already (noop), or a Parquet file."""
    if kind == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, out)


_HASHED = ("object_id", "guid", "uni_id", "intercept_at", "day", "month", "colour")


def open_engine(name: str, data_dir: str):
    if name in ("spark", "comet"):
        return SparkEngine(data_dir, comet=name == "comet")
    if name == "spark-skiff":
        return SparkEngine(data_dir, comet=False, source="skiff")
    if name.startswith("shapeshift"):
        return ShapeshiftEngine(data_dir, source=name.partition("-")[2] or "parquet")
    return ArrowSqlEngine(name, data_dir)


def main(argv: list[str]) -> int:
    name, root = argv
    data_dir = str(Path(root) / "parquet")
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the engine prints goes to standard error
    sys.stdout = sys.stderr
    tree = ProcessTree()
    started = time.perf_counter()
    try:
        engine = open_engine(name, data_dir)
    except Exception as error:  # reported, and the study goes on without this engine
        answers.write(json.dumps({"ready": False, "error": f"{type(error).__name__}: {error}"}) + "\n")
        return 1
    answers.write(json.dumps({"ready": True, "start_s": time.perf_counter() - started}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        try:
            if op == "quit":
                break
            if op == "check":
                checked = getattr(engine, "check", engine.result)
                digest, rows = canonical_digest(checked(request["query"]))
                answer = {"digest": digest, "rows": rows}
            elif op == "plan":
                answer = {"plan": engine.plan(request["query"])}
            elif op == "run":
                # Back-to-back runs until `min_s` of them or `most` runs: a query of tens of
                # milliseconds is timed several times per sample, so one scheduler hiccup does not
                # make the sample; the sample is their median.
                min_s, most = float(request.get("min_s", 0.0)), max(1, int(request.get("most", 1)))
                walls: list[float] = []
                cpu0 = tree.cpu()
                with _PeakMemory(tree) as memory:
                    while not walls or (len(walls) < most and sum(walls) < min_s):
                        t0 = time.perf_counter()
                        engine.sink(request["query"], request["sink"], request.get("out", ""))
                        walls.append(time.perf_counter() - t0)
                answer = {"wall_s": statistics.median(walls), "cpu_s": (tree.cpu() - cpu0) / len(walls),
                          "peak_rss": memory.peak, "runs": len(walls)}
            else:
                answer = {"error": f"unknown op {op!r}"}
        except Exception as error:
            answer = {"error": f"{type(error).__name__}: {error}"}
        answers.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
