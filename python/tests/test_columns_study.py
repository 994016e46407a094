"""The columns lab study runs end to end at a tiny scale and reports consistent figures."""

from pathlib import Path

from shapeshift.lab.study import LabContext
from shapeshift.lab.studies import columns as study


def test_study_runs_and_reports_every_system(tmp_path: Path):
    ctx = LabContext(tmp_path, scale=0.01, quiet=True)
    result = study.run(ctx)
    assert result.name == "columns"
    figures = result.data["columns"]
    assert {"uniform_i64", "prices_f64", "l_orderkey", "l_shipdate"} <= set(figures)
    for column in figures.values():
        systems = column["systems"]
        assert set(systems) == {s.name for s in study.systems()}
        for record in systems.values():
            assert record["bytes"] > 0 or column["values"] == 0
            assert set(record["take_seconds"]) == {str(f) for f in study.FRACTIONS}
    assert len(result.targets) == 5
    assert set(result.data["take_1pct_speedup"]) == set(study.OURS)
    assert set(result.data["take_1pct_speedup_300k_columns"]) == set(study.OURS)
    titles = [table.title for table in result.tables]
    assert any(title.startswith("Per column: ours against each peer") for title in titles)
    assert any(title.startswith("Wins and losses") for title in titles)
    for chart in result.charts:
        assert (tmp_path / chart).exists()


def test_spec_lineitem_follows_tpch_domains():
    cols = study.spec_lineitem(20_000)
    assert cols["l_quantity"].min() >= 1 and cols["l_quantity"].max() <= 50
    assert set(cols["l_discount"].round(2)) <= {i / 100 for i in range(11)}
    assert (cols["l_linenumber"] >= 1).all() and (cols["l_linenumber"] <= 7).all()
    assert (cols["l_orderkey"][1:] >= cols["l_orderkey"][:-1]).all()


def test_spec_lineitem_fallback_gives_every_requested_row():
    from shapeshift.lab.studies.columns import spec_lineitem

    for rows in (1, 7, 10_000, 12_345):
        columns = spec_lineitem(rows)
        assert {len(values) for values in columns.values()} == {rows}


def test_real_tables_come_from_the_pinned_packages():
    columns, sources = study.real_tables(limit=3_000)
    assert len(sources) == 2
    assert {"flights.flight", "flights.distance", "flights.distance_per_air_minute"} <= set(columns)
    assert {"weather.temp", "diamonds.price", "movies.rating"} <= set(columns)
    assert {values.size for values in columns.values()} == {3_000}
    assert columns["flights.flight"].dtype.name == "int64"
    assert columns["flights.dep_delay"].dtype.name == "float64"  # nulls became NaN
    assert not any(name.startswith("movies.Action") for name in columns)
