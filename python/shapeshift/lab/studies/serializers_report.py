"""The serializers study's report: jvm-serializers' table per test value, medians with CIs, the
check of media.1's published sizes, the Python target, Ruby's round trips and the configuration
formats, with recommendations computed from the figures."""

from __future__ import annotations

import math

from shapeshift.lab.study import LabContext, StudyResult, Table, Target
from shapeshift.lab.studies import serializers_data as media
from shapeshift.lab.studies import serializers_rust
from shapeshift.lab.studies.serializers import COLUMNS, RUBY_SECONDS, TARGET_COLUMNS

# Encoders of jvm-serializers' own schemas, and the published format they are checked against.
SIZE_CHECKS = {
    "protobuf": ["protobuf (upb)", "protobuf (python)", "protobuf (cpp)", "shapeshift protobuf-dynamic",
                 "shapeshift protobuf", "shapeshift protobuf typed"],
    "thrift binary": ["thrift binary (C)", "shapeshift thrift", "shapeshift thrift typed"],
    "thrift compact": ["thrift compact (C)", "shapeshift thrift-compact", "shapeshift thrift-compact typed"],
    "avro": ["fastavro", "shapeshift avro", "shapeshift avro typed"],
}


def _ns(seconds: float) -> float:
    return seconds * 1e9


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}"


def _median_ci(figure: dict) -> str:
    ci = figure["ci"]
    text = _us(figure["median"])
    return text + (f" ({_us(ci[0])}–{_us(ci[1])})" if ci else "")


def _total(record: dict, key: str) -> float:
    return record["ser"][key] + record["+deep"][key]


def _jvm_table(dataset: str, records: dict) -> Table:
    ranked = sorted(records, key=lambda n: _total(records[n], "min"))
    return Table(
        f"{dataset}: jvm-serializers' columns (ns, minimum over trials)",
        ["contender", *COLUMNS, "total", "size", "+dfl", "zstd"],
        [[name, *(_ns(records[name][c]["min"]) for c in COLUMNS), _ns(_total(records[name], "min")),
          records[name]["size"], records[name]["dfl"], records[name]["zstd"]] for name in ranked],
        note="As jvm-serializers: time per object of the fastest trial; total = ser + +deep; "
        "+dfl = zlib level 6; zstd level 3. Ordered by total.",
    )


def _median_table(dataset: str, records: dict) -> Table:
    ranked = sorted(records, key=lambda n: _total(records[n], "median"))
    return Table(
        f"{dataset}: medians over trials (µs, with the median's 95% CI)",
        ["contender", "ser", "+same", "deser", "+deep", "total (median)", "iterations per trial", "API"],
        [[name, *(_median_ci(records[name][c]) for c in ("ser", "+same", "deser", "+deep")),
          _us(_total(records[name], "median")), records[name]["+deep"]["iterations"], records[name]["api"]]
         for name in ranked],
    )


def size_check(figures: dict) -> tuple[Table, list[dict]]:
    """media.1 sizes of every encoder of jvm-serializers' schemas (our row formats: the message
    inside YT's framing) against the published ones."""
    records = figures.get("media.1", {})
    rows, checks = [], []
    for fmt, names in SIZE_CHECKS.items():
        published = media.PUBLISHED_MEDIA1_SIZES[fmt]
        for name in names:
            record = records.get(name)
            if record is None:
                continue
            size, dfl = record["message_size"], record["message_dfl"]
            checks.append({"format": fmt, "encoder": name, "size": size, "dfl": dfl,
                           "published": published, "equal": (size, dfl) == published})
            rows.append([fmt, name, f"{published[0]}/{published[1]}", f"{size}/{dfl}",
                         "equal" if (size, dfl) == published else "DIFFERENT"])
    return Table("media.1 sizes against jvm-serializers' published ones (size/+dfl)",
                 ["format", "encoder", "published", "measured", "check"], rows,
                 note="Our row formats frame each row (a u32 length before it); the figure is the "
                 "message inside the frame. Our Protobuf is checked with the enums as optional<int32>, "
                 "the presence of media.proto's required enums (with plain int32, proto3 leaves the "
                 "two zero enums of media.1 out: 4 bytes fewer)."), checks


def python_targets(figures: dict) -> tuple[list[Target], Table, list[dict]]:
    """Per format: shapeshift.formats against the fastest Python library of that format, on ser,
    +same and +deep, the worst test value and column deciding. The arm judged is the typed path
    (dataclasses in and out, as msgspec and the message classes of protobuf and thrift) where
    the format has one, else the dict rows, as the Rust target judges the serde path; every
    arm's ratios are in the table."""
    targets, rows, data = [], [], []
    first = next(iter(figures.values()), {})
    families = sorted({r["family"] for r in first.values() if r["checked"]})
    for family in families:
        arms = [n for n, r in first.items() if r["checked"] and r["family"] == family]
        judged = [n for n in arms if first[n].get("typed")] or arms
        for ours_name in arms:
            worst = None
            for dataset, records in figures.items():
                peers = {n: r for n, r in records.items() if r["family"] == family and not r["ours"]}
                if not peers or ours_name not in records:
                    continue
                for column in TARGET_COLUMNS:
                    best = min(peers, key=lambda n: peers[n][column]["median"])
                    ratio, ci = serializers_rust.paired_ratio(peers[best][column], records[ours_name][column])
                    entry = {"family": family, "ours": ours_name, "dataset": dataset, "column": column,
                             "peer": best, "ratio": ratio, "ci": ci}
                    data.append(entry)
                    rows.append([family, ours_name, dataset, column, best,
                                 _us(records[ours_name][column]["median"]),
                                 _us(peers[best][column]["median"]), f"{ratio:.2f}"])
                    if worst is None or ratio < worst["ratio"]:
                        worst = entry
            if worst is None or ours_name not in judged:
                continue
            targets.append(Target(
                f"Python {ours_name} faster than the fastest {family} library on ser, +same and "
                f"+deep (worst: {worst['column']} on {worst['dataset']} vs {worst['peer']})",
                round(worst["ratio"], 3), 1.0, "x", ci=worst["ci"],
            ))
    table = Table(
        "shapeshift.formats against the fastest Python library of the same format (medians; peer / ours "
        "is the median of the per-round ratios)",
        ["format", "ours", "value", "column", "fastest peer", "ours µs", "peer µs", "peer / ours"],
        rows, note="Above 1: ours is faster. The target per format is the lowest ratio.",
    )
    return targets, table, data


def _setup_table(setup: dict, figures: dict) -> Table:
    records = figures.get("media.1", {})
    rows = []
    for fmt, r in setup.items():
        ours = records.get(f"shapeshift {fmt}")
        if ours is None:
            continue
        same, deser = ours["+same"]["median"], ours["deser"]["median"]
        rows.append([fmt, _us(r["dumps"]["median"]), _us(same), f"{100 * r['dumps']['median'] / same:.0f}%",
                     _us(r["loads"]["median"]), _us(deser), f"{100 * r['loads']['median'] / deser:.0f}%",
                     r["bytes"]])
    return Table(
        "Where shapeshift.formats' time per message goes (media.1, medians, µs)",
        ["format", "dumps([])", "+same", "share", "loads(empty)", "deser", "share", "empty stream bytes"],
        rows, note="dumps([]) and loads of an empty stream: the cost of a call before any row "
        "(opening a sink or source for the schema, stream header and end); the rest of +same "
        "and deser is the row itself (Python dicts to values to bytes, and back).",
    )


def _ruby_table(ruby: dict) -> Table:
    rows = []
    for kind, results in ruby.items():
        base = results["pickle"]["median"]
        for name, r in sorted(results.items(), key=lambda item: item[1]["median"]):
            published = RUBY_SECONDS[kind].get(r["counterpart"])
            ruby_ratio = published / RUBY_SECONDS[kind]["Marshal"] if published else math.nan
            rows.append([kind, name, r["counterpart"] or "–", r["bytes"], r["min"] * 100,
                         f"{r['median'] * 100:.3f}" + (f" ({r['ci'][0] * 100:.3f}–{r['ci'][1] * 100:.3f})" if r["ci"] else ""),
                         f"{r['median'] / base:.1f}x", f"{ruby_ratio:.1f}x" if published else "–",
                         f"{published:.2f}" if published else "–"])
    return Table(
        "Ruby's experiment: seconds per 100 round trips (dump + load)",
        ["value", "library", "Ruby's", "bytes", "s, min", "s, median (95% CI)", "vs pickle",
         "Ruby's vs Marshal", "Ruby's s"],
        rows, note="Ruby's figures: real seconds of 100 round trips on a 2.4 GHz Core 2 Duo, "
        "as published; ours are measured per round trip and multiplied by 100.",
    )


def _config_tables(configs: dict) -> list[Table]:
    tables = []
    for name, result in configs.items():
        parsers = result["parsers"]
        fastest = min(p["median"] for p in parsers.values())
        tables.append(Table(
            f"{name}: in five formats",
            ["format", "parser", "bytes", "lines", "parse µs, min", "parse µs, median (95% CI)", "vs fastest"],
            [[p["format"] + (" (original)" if p["original"] else ""), p["parser"], p["bytes"], p["lines"],
              _us(p["min"]), _median_ci(p), f"{p['median'] / fastest:.1f}x"]
             for p in sorted(parsers.values(), key=lambda p: p["median"])],
            note="The other formats are written from the original's tree by their maintained writers.",
        ))
    return tables


def _charts(ctx: LabContext, figures: dict) -> list[str]:
    from shapeshift.lab.charts import scatter_panels

    names = []
    for dataset, records in figures.items():
        filename = f"serializers_{dataset.replace('.', '_')}.svg"
        scatter_panels(
            ctx.out_dir / filename,
            f"{dataset}: time against size (medians; red: shapeshift)",
            {
                "ser µs": {n: (r["size"], r["ser"]["median"] * 1e6) for n, r in records.items()},
                "+deep µs": {n: (r["size"], r["+deep"]["median"] * 1e6) for n, r in records.items()},
            },
            "bytes", highlight={n for n, r in records.items() if r["ours"]},
        )
        names.append(filename)
    return names


def _recommendations(figures: dict, ruby: dict, configs: dict) -> list[str]:
    out = []
    for dataset, records in figures.items():
        ranked = sorted(records, key=lambda n: _total(records[n], "median"))
        a, b = ranked[0], ranked[1]
        smallest = min(records, key=lambda n: records[n]["size"])
        smallest_dfl = min(records, key=lambda n: records[n]["dfl"])
        out.append(
            f"{dataset}: the fastest round trip (ser + +deep, median) is {a} "
            f"({_us(_total(records[a], 'median'))} µs, {_total(records[b], 'median') / _total(records[a], 'median'):.2f}x "
            f"ahead of {b}); the smallest is {smallest} ({records[smallest]['size']} bytes), "
            f"after deflate {smallest_dfl} ({records[smallest_dfl]['dfl']} bytes)."
        )
    media1 = figures.get("media.1", {})
    for family in sorted({r["family"] for r in media1.values()}):
        members = {n: r for n, r in media1.items() if r["family"] == family}
        if len(members) > 1:
            best = min(members, key=lambda n: _total(members[n], "median"))
            others = ", ".join(f"{n} {_total(r, 'median') / _total(members[best], 'median'):.1f}x"
                               for n, r in members.items() if n != best)
            out.append(f"{family} from Python (media.1): {best} has the lowest total; the others take {others} its time.")
    for kind, results in ruby.items():
        fastest = min(results, key=lambda n: results[n]["median"])
        yaml_ratio = results["PyYAML (C)"]["median"] / results["pickle"]["median"]
        ruby_ratio = RUBY_SECONDS[kind]["YAML"] / RUBY_SECONDS[kind]["Marshal"]
        out.append(
            f"Ruby's {kind}: {fastest} is the fastest round trip; PyYAML's C loader takes "
            f"{yaml_ratio:.0f}x pickle's time (Ruby's YAML took {ruby_ratio:.0f}x Marshal's)."
        )
    for name, result in configs.items():
        parsers = result["parsers"]
        fastest = min(parsers.values(), key=lambda p: p["median"])
        smallest = min(parsers.values(), key=lambda p: p["bytes"])
        xml = next(p for p in parsers.values() if p["format"] == "xml")
        yaml_ = next(p for p in parsers.values() if p["format"] == "yaml")
        out.append(
            f"{name}: {fastest['format']} read by {fastest['parser']} parses fastest "
            f"({_us(fastest['median'])} µs); {smallest['format']} is the smallest ({smallest['bytes']} bytes); "
            f"XML ({xml['bytes']} bytes) parses {yaml_['median'] / xml['median']:.1f}x as fast as "
            f"YAML ({yaml_['bytes']} bytes) with the parsers Python ships or users pick."
        )
    return out


def analyze(ctx: LabContext, figures: dict, refused: dict, setup: dict, ruby: dict, configs: dict,
            rust: dict) -> StudyResult:
    tables = []
    for dataset, records in figures.items():
        tables += [_jvm_table(dataset, records), _median_table(dataset, records)]
    sizes, checks = size_check(figures)
    targets, target_table, target_data = python_targets(figures)
    rust_targets, rust_target_table, rust_target_data = serializers_rust.targets(rust)
    tables = ([sizes, target_table, _setup_table(setup, figures)] + tables
              + [rust_target_table] + serializers_rust.tables(rust) + serializers_rust.dataset_tables(rust) + [_ruby_table(ruby)] + _config_tables(configs))
    if refused or rust["skipped"]:
        tables.append(Table("Contenders that could not carry MediaContent", ["contender", "error"],
                            [[n, why] for n, why in {**refused, **rust["skipped"]}.items()]))
    met = sum(t.met for t in targets)
    rust_met = sum(t.met for t in rust_targets)
    equal = sum(c["equal"] for c in checks)
    contenders = len(next(iter(figures.values()), {}))
    hash_yaml = ruby["hash"]["PyYAML (C)"]["median"] / ruby["hash"]["pickle"]["median"]
    summary = (
        f"{contenders} contenders on jvm-serializers' MediaContent media.1-4 "
        f"({sum(1 for r in next(iter(figures.values()), {}).values() if r['ours'])} of them ours). "
        f"media.1 sizes equal the published ones for {equal} of {len(checks)} encoders of "
        f"jvm-serializers' schemas. shapeshift.formats is faster than the fastest Python library "
        f"of its format on ser, +same and +deep for {met} of {len(targets)} formats (medians). "
        f"Rust: {rust_met} of {len(rust_targets)} targets met (our codec of each format against the "
        f"most used and the fastest crate of the format, ser and +deep, medians). "
        f"Ruby's experiment: a PyYAML (C) round trip of the 10k hash takes {hash_yaml:.0f}x pickle's."
    )
    return StudyResult(
        name="serializers",
        title="Serializers: jvm-serializers' MediaContent, Ruby's round trips, config formats",
        summary=summary,
        tables=tables,
        charts=_charts(ctx, figures),
        targets=targets + rust_targets,
        recommendations=_recommendations(figures, ruby, configs) + serializers_rust.recommendations(rust),
        data={"media": _without_samples(figures), "refused": refused, "size_checks": checks,
              "python_target": target_data, "rust": serializers_rust.without_samples(rust),
              "rust_target": rust_target_data, "setup": setup, "ruby": ruby,
              "config": {n: c["parsers"] for n, c in configs.items()}},
    )


def _without_samples(figures: dict) -> dict:
    """The figures for the JSON (samples stay in lab.json's measurements)."""
    return {
        dataset: {name: {k: ({kk: vv for kk, vv in v.items() if kk != "samples"} if isinstance(v, dict) else v)
                         for k, v in record.items()} for name, record in records.items()}
        for dataset, records in figures.items()
    }
