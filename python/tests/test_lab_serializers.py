"""The serializers study: jvm-serializers' published media.1 sizes, round trips of every contender
on media.1-4, the configuration texts, and the whole study at a tiny scale."""

import zlib
from pathlib import Path

import pytest

from shapeshift.lab.study import LabContext
from shapeshift.lab.studies import serializers as study
from shapeshift.lab.studies import serializers_config as config
from shapeshift.lab.studies import serializers_data as media
from shapeshift.lab.studies import serializers_rust
from shapeshift.lab.studies.serializers_contenders import contenders, published_schema_message, row_message
from shapeshift.lab.studies.serializers_report import SIZE_CHECKS

CONTENDERS = {c.name: c for c in contenders()}


def _media1_encoded(name: str) -> bytes:
    return published_schema_message(CONTENDERS[name], media.DATASETS["media.1"]())


@pytest.mark.parametrize(
    "fmt,name", [(fmt, name) for fmt, names in SIZE_CHECKS.items() for name in names if name in CONTENDERS]
)
def test_media1_sizes_equal_the_published_ones(fmt, name):
    data = _media1_encoded(name)
    assert (len(data), len(zlib.compress(data, 6))) == media.PUBLISHED_MEDIA1_SIZES[fmt]


def test_every_published_format_is_checked_for_ours_and_a_peer():
    for fmt, names in SIZE_CHECKS.items():
        present = [n for n in names if n in CONTENDERS]
        assert any(CONTENDERS[n].ours for n in present), fmt
        assert any(not CONTENDERS[n].ours for n in present), fmt


def test_our_thrift_and_protobuf_messages_equal_the_peers_bytes():
    assert _media1_encoded("shapeshift thrift") == _media1_encoded("thrift binary (C)")
    assert _media1_encoded("shapeshift thrift-compact") == _media1_encoded("thrift compact (C)")
    assert _media1_encoded("shapeshift avro") == _media1_encoded("fastavro")
    protobuf_peer = next(n for n in CONTENDERS if n.startswith("protobuf ("))
    assert _media1_encoded("shapeshift protobuf-dynamic") == _media1_encoded(protobuf_peer)


@pytest.mark.parametrize("name", [n for n, c in CONTENDERS.items() if c.typed])
def test_each_typed_arm_writes_its_dict_arms_message(name):
    typed = CONTENDERS[name]
    rows = CONTENDERS[name.removesuffix(" typed")]
    for dataset, build in media.DATASETS.items():
        ref = build()
        assert typed.serialize(ref) == row_message(rows, rows.serialize(rows.forward(ref))), dataset


def test_every_format_with_a_typed_path_has_a_typed_arm():
    families = {c.family for c in CONTENDERS.values() if c.typed}
    assert families == {"json", "msgpack", "cbor", "protobuf", "thrift binary", "thrift compact", "avro"}


@pytest.mark.parametrize("dataset", list(media.DATASETS))
@pytest.mark.parametrize("name", list(CONTENDERS))
def test_every_contender_round_trips_every_value(name, dataset):
    c = CONTENDERS[name]
    ref = media.DATASETS[dataset]()
    try:
        data = c.serialize(c.forward(ref))
    except Exception as error:
        pytest.skip(f"{name} cannot carry MediaContent: {error}")
    assert c.deep(c.deserialize(data)) == ref
    assert c.shallow(c.deserialize(data)) == ref.media


def test_our_protobuf_with_plain_int32_enums_leaves_the_zero_enums_out():
    c = CONTENDERS["shapeshift protobuf-dynamic"]
    plain = row_message(c, c.serialize(c.forward(media.DATASETS["media.1"]())))
    assert len(plain) == media.PUBLISHED_MEDIA1_SIZES["protobuf"][0] - 4  # two (tag, 0) pairs


def test_media2_differs_from_media1_everywhere_the_source_says():
    one, two = media.DATASETS["media.1"](), media.DATASETS["media.2"]()
    assert len(two.images) == 3 and two.media.title is None and two.media.bitrate is None
    assert two.media.copyright.endswith("\U0001D11E") and two.media.player == media.Player.FLASH
    assert one.media.copyright is None and one.media.persons == ["Bill Gates", "Steve Jobs"]


def test_config_texts_hold_the_same_tree_in_every_format():
    import json
    import tomllib

    import yaml

    from shapeshift import yson

    parsers = {fmt: parse for fmt, _, parse in config.parsers()}
    for name, texts in config.documents().items():
        tree = yaml.safe_load(texts["yaml"])
        for fmt, text in texts.items():
            assert parsers[fmt](text.encode()) is not None, (name, fmt)
        assert json.loads(texts["json"]) == tree, name
        assert yson.loads(texts["yson text"].encode()) == tree, name
        assert tomllib.loads(texts["toml"]) == config._without_nulls(tree), name
    xml_tree = config.xml_to_tree(config.CASSANDRA_06_XML)["Storage"]
    assert xml_tree["Keyspaces"][0]["ColumnFamily"][3]["Name"] == "Super1"
    assert xml_tree["Seeds"] == ["127.0.0.1"] and xml_tree["MemtableOperationsInMillions"] == 0.3
    assert xml_tree["InitialToken"] is None and xml_tree["AutoBootstrap"] is False


def test_study_runs_at_a_tiny_scale(tmp_path: Path):
    ctx = LabContext(tmp_path, scale=0.01, quiet=True)
    result = study.run(ctx)
    assert result.name == "serializers"
    figures = result.data["media"]
    assert set(figures) == set(media.DATASETS)
    for records in figures.values():
        assert {"orjson", "protobuf (upb)", "shapeshift json", "fastavro"} <= set(records)
        for record in records.values():
            for column in study.COLUMNS:
                assert 0 < record[column]["min"] <= record[column]["median"]
            assert record["size"] > 0 and record["dfl"] > 0 and record["zstd"] > 0
    assert all(check["equal"] for check in result.data["size_checks"])
    judged = {t.name.split(" faster")[0] for t in result.targets if t.name.startswith("Python")}
    # The typed arm where the format has one, the dict rows where not (YSON), one per family.
    assert judged >= {"Python shapeshift json typed", "Python shapeshift avro typed", "Python shapeshift yson"}
    assert "Python shapeshift json" not in judged
    rust = result.data["rust"]
    assert set(rust["figures"]) == set(media.DATASETS) and set(rust["datasets"]) == {"log", "mesh", "minecraft_savedata", "mk48"}
    for records in rust["figures"].values():
        assert {"ours json", "ours thrift codec", "serde_json", "prost", "apache-avro", "thrift binary",
                "thrift compact", "rmp-serde", "ciborium", "bitcode"} <= set(records)
        assert records["prost"]["size"] > 0 and records["prost"]["+deep"]["median"] > 0
    assert rust["figures"]["media.1"]["prost"]["size"] == 239
    assert rust["figures"]["media.1"]["thrift binary"]["dfl"] == 197
    for records in rust["datasets"].values():
        assert {"ours msgpack", "serde_json", "prost", "thrift binary", "apache-avro", "bitcode"} <= set(records)
        assert all(r["serialize"]["median"] > 0 and r["zstd"] > 0 for r in records.values())
    rust_targets = [t for t in result.targets if t.name.startswith("Rust ")]
    assert len(rust_targets) == 2 * len(serializers_rust.MOST_USED)
    assert set(result.data["ruby"]) == {"array", "hash"}
    assert len(result.data["config"]) == 2
    for chart in result.charts:
        assert (tmp_path / chart).exists()
    assert any("Ruby" in r for r in result.recommendations)


def test_the_rust_side_reads_the_python_fixtures_values():
    import json

    path = Path(__file__).resolve().parents[2] / "crates" / "lab" / "data" / "media_content.json"
    rust_values = json.loads(path.read_text())
    assert list(rust_values) == list(media.DATASETS)
    for name, build in media.DATASETS.items():
        expected = media.to_dict(build())
        for image in expected["images"]:
            image["size"] = media.Size(image["size"]).name
        expected["media"]["player"] = media.Player(expected["media"]["player"]).name
        assert rust_values[name] == expected, name


def _raw_rust(ours_ns: float, most_used_ns: float, fastest_ns: float) -> dict:
    """A bench report with ours, serde_json and sonic-rs on media.1 (JSON) at the given times."""
    def column(ns):
        return {"min_ns": ns, "trials_ns": [ns] * 8, "iterations": 10}

    def result(name, ns):
        row = {c: column(ns) for c in serializers_rust.COLUMNS + ["total"]}
        return {"value": "media.1", "contender": name, **row, "size": 10, "+dfl": 9, "zstd": 8}

    return {
        "trials": 8, "skipped": [], "datasets": [],
        "contenders": [{"name": "ours json", "format": "json", "side": "ours-interface"},
                       {"name": "serde_json", "format": "json", "side": "crate"},
                       {"name": "sonic-rs", "format": "json", "side": "crate"}],
        "results": [result("ours json", ours_ns), result("serde_json", most_used_ns), result("sonic-rs", fastest_ns)],
    }


@pytest.mark.parametrize("ours,most_used,fastest,met", [
    (100, 200, 140, [True, True]),  # faster than serde_json, within 1.5x of sonic-rs
    (100, 200, 50, [True, False]),  # sonic-rs over 1.5x faster
    (300, 200, 150, [False, False]),
])
def test_rust_targets_compare_ours_with_the_most_used_and_the_fastest_crate(ours, most_used, fastest, met):
    targets, table, data = serializers_rust.targets(serializers_rust.summarize(_raw_rust(ours, most_used, fastest)))
    assert [t.met for t in targets] == met
    assert targets[0].measured == pytest.approx(most_used / ours, rel=1e-3)
    assert targets[1].measured == pytest.approx(min(most_used, fastest) / ours, rel=1e-3)
    assert {d["peer"] for d in data if d["kind"] == "most used"} == {"serde_json"}


def test_the_rust_target_judges_the_serde_path_before_the_codec_and_the_interface():
    raw = _raw_rust(100, 200, 140)
    slow, fast = dict(raw["results"][0]), dict(raw["results"][0])
    raw["contenders"] = [{"name": "ours msgpack", "format": "msgpack", "side": "ours-interface"},
                         {"name": "ours msgpack serde", "format": "msgpack", "side": "ours-serde"},
                         {"name": "rmp-serde", "format": "msgpack", "side": "crate"}]
    slow["contender"], fast["contender"] = "ours msgpack", "ours msgpack serde"
    peer = dict(raw["results"][1], contender="rmp-serde")
    for column in ("ser", "+deep"):
        slow[column] = {**slow[column], "trials_ns": [x * 20 for x in slow[column]["trials_ns"]]}
    raw["results"] = [slow, fast, peer]
    targets, _, data = serializers_rust.targets(serializers_rust.summarize(raw))
    assert {d["ours"] for d in data} == {"ours msgpack serde"}
    assert targets[0].met and "ours msgpack serde" in targets[0].name


def test_ratios_pair_the_trials_of_one_round():
    # The host was slow from round 3 on (round 4 on for the peer): each round's ratio is 2 but
    # one, so the paired median is 2 where the ratio of the medians would be 100 / 150.
    peer = {"samples": [100, 100, 100, 300, 300]}
    ours = {"samples": [50, 50, 150, 150, 150]}
    ratio, ci = serializers_rust.paired_ratio(peer, ours)
    assert ratio == 2
    assert ci is None or ci[0] <= 2 <= ci[1]
    assert serializers_rust.paired_ratio({"samples": [2.0] * 8}, {"samples": [1.0] * 8}) == (2.0, (2.0, 2.0))


def test_processes_pool_their_trials_in_order_and_keep_the_least_minimum():
    first, second = _raw_rust(100, 200, 140), _raw_rust(300, 200, 140)
    second["results"][0]["ser"] = {"min_ns": 90, "trials_ns": [300] * 8, "iterations": 10}
    pooled = serializers_rust.pool_runs([first, second])
    ours = pooled["results"][0]
    assert pooled["trials"] == 16
    assert ours["ser"]["trials_ns"] == [100] * 8 + [300] * 8
    assert ours["ser"]["min_ns"] == 90
    assert first["results"][0]["ser"]["trials_ns"] == [100] * 8  # the runs are left as they were
    # Pairing holds per round: ours is 2x faster in the first process, 1.5x slower in the
    # second, and the pooled rounds say both.
    rust = serializers_rust.summarize(pooled)
    ratios = [p / o for p, o in zip(rust["figures"]["media.1"]["serde_json"]["ser"]["samples"],
                                     rust["figures"]["media.1"]["ours json"]["ser"]["samples"])]
    assert sorted(set(round(r, 3) for r in ratios)) == [0.667, 2.0]
    other = _raw_rust(100, 200, 140)
    other["results"][0]["contender"] = "ours msgpack"
    with pytest.raises(ValueError, match="bench runs differ"):
        serializers_rust.pool_runs([first, other])
    # A later process that lacks a case (or a column) the first has is refused too: its trials
    # would be fewer than the others' without a word.
    fewer = _raw_rust(100, 200, 140)
    del fewer["results"][0]
    with pytest.raises(ValueError, match="bench runs differ"):
        serializers_rust.pool_runs([first, fewer])
    with pytest.raises(ValueError, match="bench runs differ"):
        serializers_rust.pool_runs([fewer, first])
    no_ser = _raw_rust(100, 200, 140)
    del no_ser["results"][0]["ser"]
    with pytest.raises(ValueError, match="columns"):
        serializers_rust.pool_runs([first, no_ser])
