"""Serializers: jvm-serializers' MediaContent table for every format of ``shapeshift.formats``
and the Python libraries users pick, Ruby's Marshal/JSON/eval/YAML round trips, and a Cassandra
configuration in five text formats.

jvm-serializers' columns (its 2010 ``BenchmarkRunner``), per contender and test value:
create = forward step only; ser = forward + serialize; +same = serialize a prebuilt object;
deser = deserialize only; +shal = deserialize + rebuild the Media part; +deep = deserialize +
full rebuild; total = ser + +deep; size; +dfl = size after zlib level 6; plus zstd (level 3).
Each column is timed in trials of up to 2,000 iterations (create: 200,000) and reported as the
minimum trial, as jvm-serializers did, and as the median with its 95% CI. A trial is cut to
``TRIAL_S`` seconds where 2,000 iterations would take longer (YAML), and one round trip per
contender and value is checked for equality with the reference object before timing.
"""

from __future__ import annotations

import ast
import json
import pickle
import random
import statistics
import time
import zlib
from itertools import repeat

from shapeshift.lab.stats import median_ci
from shapeshift.lab.study import LabContext, StudyResult
from shapeshift.lab.studies import serializers_config as config
from shapeshift.lab.studies import serializers_data as media
from shapeshift.lab.studies import serializers_rust
from shapeshift.lab.studies.serializers_contenders import Contender, contenders, published_schema_message

TITLE = "Serializers: jvm-serializers' MediaContent, Ruby's round trips, config formats"

ITERATIONS = 2000  # jvm-serializers' iterations per trial
CREATE_ITERATIONS = 200_000  # create ran 100x the iterations
TRIALS = 20  # jvm-serializers' trials
TRIAL_S = 0.003  # the longest a trial may take (cuts the iterations of slow libraries)
COLUMNS = ["create", "ser", "+same", "deser", "+shal", "+deep"]
TARGET_COLUMNS = ["ser", "+same", "+deep"]

RUBY_ELEMENTS = 10_000
RUBY_ROUND_TRIPS = 100
RUBY_TRIAL_S = 0.15  # a trial's round trips: 100, or fewer when 100 take longer
RUBY_TRIALS = 5
# The Ruby experiment's published real seconds for 100 round trips (Marshal, JSON 1.1.3 with its
# C parser, eval, YAML; MacBook Pro 2.4 GHz Core 2 Duo).
RUBY_SECONDS = {
    "array": {"Marshal": 0.220701, "JSON": 2.288489, "eval": 2.240443, "YAML": 27.810609},
    "hash": {"Marshal": 2.114950, "JSON": 3.881716, "eval": 6.117947, "YAML": 72.370784},
}


class Timed:
    """``fn(arg)`` calibrated to ``n`` calls per trial (at most ``cap``, fewer when ``cap`` calls
    would take over ``trial_s``) and warmed up with one trial."""

    def __init__(self, name: str, fn, arg, *, cap: int, trial_s: float):
        started = time.perf_counter()
        fn(arg)
        estimate = max(time.perf_counter() - started, 1e-7)
        self.name = name
        self.n = n = max(1, min(cap, int(trial_s / estimate)))

        def trial():
            for _ in repeat(None, n):
                fn(arg)

        self.trial = trial
        trial()


def time_interleaved(ctx: LabContext, ops: list[Timed], trials: int) -> list[dict]:
    """Seconds per call of every operation in ``ops``: ``trials`` rounds, each one trial of every
    operation, starting one further along each round, so a slow moment of the machine falls on
    all contenders alike (as the Rust side times them). The collector stays on (building objects
    is part of what a caller pays). Minimum, median and the median's 95% CI over the trials."""
    loads: list[list] = [[] for _ in ops]
    for round_index in range(trials):
        for k in range(len(ops)):
            at = (round_index + k) % len(ops)
            loads[at].append(ctx.sample(ops[at].trial))
    out = []
    for op, op_loads in zip(ops, loads):
        ctx.record(op.name, [l.wall_s for l in op_loads], [l.cpu_s for l in op_loads], op_loads)
        per_call = [l.wall_s / op.n for l in op_loads]
        out.append({
            "iterations": op.n,
            "min": min(per_call),
            "median": statistics.median(per_call),
            "ci": median_ci(per_call),
            "samples": per_call,
        })
    return out


def time_per_call(ctx: LabContext, name: str, fn, arg, *, cap: int, trials: int, trial_s: float) -> dict:
    """Seconds per ``fn(arg)`` call, timed alone (see ``time_interleaved``)."""
    return time_interleaved(ctx, [Timed(name, fn, arg, cap=cap, trial_s=trial_s)], trials)[0]


def _zstd_size(data: bytes) -> int:
    import pyarrow as pa

    return pa.Codec("zstd", compression_level=3).compress(data).size


def _steps(c: Contender) -> dict:
    """The function timed for each column and what it is applied to ("ref", "built" or "data")."""
    forward, serialize, deserialize, shallow, deep = c.forward, c.serialize, c.deserialize, c.shallow, c.deep
    return {
        "create": (forward, "ref"),
        "ser": (lambda obj: serialize(forward(obj)), "ref"),
        "+same": (serialize, "built"),
        "deser": (deserialize, "data"),
        "+shal": (lambda data: shallow(deserialize(data)), "data"),
        "+deep": (lambda data: deep(deserialize(data)), "data"),
    }


def measure_media(ctx: LabContext, chosen: list[Contender], datasets: list[str], trials: int,
                  trial_s: float) -> tuple[dict, dict]:
    """figures[dataset][contender] and the contenders that could not take part (name -> why)."""
    figures: dict[str, dict] = {d: {} for d in datasets}
    refused: dict[str, str] = {}
    with ctx.steps(len(datasets) * len(chosen), "serializers: MediaContent") as progress:
        for dataset in datasets:
            # Every contender's columns on this dataset, calibrated, then timed interleaved.
            ops: list[tuple[str, str, Timed]] = []
            for c in chosen:
                progress.advance(note=f"{dataset} {c.name}")
                if c.name in refused:
                    continue
                ref = media.DATASETS[dataset]()
                try:
                    built = c.forward(ref)
                    data = c.serialize(built)
                    back = c.deep(c.deserialize(data))
                except Exception as error:  # a format that cannot carry MediaContent is reported
                    refused[c.name] = f"{type(error).__name__}: {error}"
                    continue
                if back != ref:
                    raise AssertionError(f"{c.name} does not round-trip {dataset}: {back!r} != {ref!r}")
                args = {"ref": ref, "built": built, "data": data}
                record = {
                    "family": c.family, "ours": c.ours, "checked": c.checked, "typed": c.typed, "api": c.api,
                    "size": len(data), "dfl": len(zlib.compress(data, 6)), "zstd": _zstd_size(data),
                }
                if dataset == "media.1":
                    message = published_schema_message(c, ref)
                    record["message_size"], record["message_dfl"] = len(message), len(zlib.compress(message, 6))
                figures[dataset][c.name] = record
                for column, (fn, on) in _steps(c).items():
                    ops.append((c.name, column, Timed(
                        f"media/{dataset}/{c.name}/{column}", fn, args[on],
                        cap=CREATE_ITERATIONS if column == "create" else ITERATIONS, trial_s=trial_s)))
            timed = time_interleaved(ctx, [op for _, _, op in ops], trials)
            for (name, column, _), figure in zip(ops, timed):
                figures[dataset][name][column] = figure
    return figures, refused


def measure_setup(ctx: LabContext, trials: int, trial_s: float) -> dict:
    """Where our per-message time goes: what a codec's ``dumps([])`` and ``loads`` of an empty
    stream take (opening a sink or source for the schema, framing, headers) in each format."""
    from shapeshift import formats

    out = {}
    for fmt in formats.FORMATS:
        codec = formats.codec(fmt, media.YT_SCHEMA)
        empty = codec.dumps([])
        out[fmt] = {
            "dumps": time_per_call(ctx, f"setup/{fmt}/dumps", codec.dumps, [], cap=ITERATIONS,
                                   trials=trials, trial_s=trial_s),
            "loads": time_per_call(ctx, f"setup/{fmt}/loads", codec.loads, empty, cap=ITERATIONS,
                                   trials=trials, trial_s=trial_s),
            "bytes": len(empty),
        }
    return out


def ruby_data(elements: int = RUBY_ELEMENTS, seed: int = 2008) -> dict:
    """The Ruby experiment's two values: an array of ``elements`` ints and a hash of as many
    string keys to ints."""
    rng = random.Random(seed)
    return {
        "array": [rng.randrange(1_000_000) for _ in range(elements)],
        "hash": {f"key{i}": rng.randrange(1_000_000) for i in range(elements)},
    }


def ruby_round_trippers() -> list[tuple[str, str, object, object]]:
    """(name, Ruby's counterpart, dumps, loads)."""
    import msgpack
    import orjson
    import yaml
    import yt.yson

    from shapeshift import yson as shapeshift_yson

    return [
        ("pickle", "Marshal", lambda v: pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL), pickle.loads),
        ("json (stdlib)", "JSON", json.dumps, json.loads),
        ("orjson", "JSON", orjson.dumps, orjson.loads),
        ("repr + ast.literal_eval", "eval", repr, ast.literal_eval),
        ("PyYAML (C)", "YAML", lambda v: yaml.dump(v, Dumper=yaml.CSafeDumper),
         lambda s: yaml.load(s, Loader=yaml.CSafeLoader)),
        ("msgpack", "", msgpack.packb, msgpack.unpackb),
        ("yt.yson binary", "", lambda v: yt.yson.dumps(v, yson_format="binary"),
         lambda b: yt.yson.loads(b, always_create_attributes=False)),
        ("shapeshift.yson binary", "", lambda v: shapeshift_yson.dumps(v, yson_format="binary"),
         shapeshift_yson.loads),
    ]


def measure_ruby(ctx: LabContext, elements: int, round_trips: int, trials: int, trial_s: float) -> dict:
    values = ruby_data(elements)
    out: dict[str, dict] = {kind: {} for kind in values}
    for kind, value in values.items():
        for name, counterpart, dumps, loads in ruby_round_trippers():
            def round_trip(v, dumps=dumps, loads=loads):
                return loads(dumps(v))

            if round_trip(value) != value:
                raise AssertionError(f"{name} does not round-trip the Ruby experiment's {kind}")
            figure = time_per_call(ctx, f"ruby/{kind}/{name}", round_trip, value,
                                   cap=round_trips, trials=trials, trial_s=trial_s)
            figure["counterpart"] = counterpart
            figure["bytes"] = len(dumps(value))
            out[kind][name] = figure
    return out


def measure_config(ctx: LabContext, trials: int, trial_s: float) -> dict:
    out = {}
    for config_name, texts in config.documents().items():
        rows = {}
        for fmt, parser_name, parse in config.parsers():
            text = texts[fmt].encode()
            rows[f"{fmt} / {parser_name}"] = {
                "format": fmt, "parser": parser_name, "original": fmt in config_name.split("original: ")[1].lower(),
                "bytes": len(text), "lines": len(text.splitlines()),
                **time_per_call(ctx, f"config/{config_name}/{fmt}/{parser_name}", parse, text,
                                cap=ITERATIONS, trials=trials, trial_s=trial_s),
            }
        out[config_name] = {"texts": texts, "parsers": rows}
    return out


def run(ctx: LabContext) -> StudyResult:
    from shapeshift.lab.studies.serializers_report import analyze

    scale = min(ctx.scale, 1.0)
    trials = max(3, round(TRIALS * scale))
    chosen = contenders()
    ctx.progress(f"serializers: MediaContent media.1-4, {len(chosen)} contenders, {trials} trials")
    figures, refused = measure_media(ctx, chosen, list(media.DATASETS), trials, TRIAL_S * scale)
    setup = measure_setup(ctx, trials, TRIAL_S * scale)
    ctx.progress("serializers: Ruby's experiment (10k array and hash, round trips)")
    ruby = measure_ruby(
        ctx, max(100, int(RUBY_ELEMENTS * scale)), RUBY_ROUND_TRIPS, max(3, round(RUBY_TRIALS * scale)),
        RUBY_TRIAL_S * scale,
    )
    ctx.progress("serializers: configuration formats")
    configs = measure_config(ctx, trials, TRIAL_S * scale)
    rust = serializers_rust.measure(ctx, scale)
    return analyze(ctx, figures, refused, setup, ruby, configs, rust)
