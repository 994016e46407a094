"""ArrayRecord files: ``shapeshift.records`` against pip ``array_record`` on the ArrayRecord performance guide's
benchmark (65,536 lorem-ipsum records of 200 words), both libraries in the same run.

Measures compressed size for zstd 1/3/5/7, brotli 1/3/5/7, snappy and uncompressed at
group_size 1 and 256; write time; random individual and batch access (Reader and
DataSource); sequential ``read()`` and ``read_all()``; two Grain pipelines over each
library's data source; and shapeshift's zstd dictionary extension at group_size 1 (not
readable by array_record).
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile

from shapeshift.lab.stats import format_ci
from shapeshift.lab.study import (
    Comparison, LabContext, StudyResult, Table, Target, paired_comparison, worst_of,
)

TITLE = "ArrayRecord files: shapeshift.records vs array_record"

LEVELED = [("zstd", level) for level in (1, 3, 5, 7)] + [("brotli", level) for level in (1, 3, 5, 7)]
COMPRESSIONS = [f"{name}:{level}" for name, level in LEVELED] + ["snappy", "uncompressed"]
GROUP_SIZES = [1, 256]
# Access benchmarks use level 3, as the ArrayRecord performance guide does.
ACCESS_COMPRESSIONS = ["zstd:3", "brotli:3", "snappy", "uncompressed"]
# The access compressions are written this many times by each library (median reported, and
# judged by the writing target); the other levels of the sweep once each, for their sizes and
# a one-write time: brotli 5 and 7 alone took a third of the study at three rounds.
WRITE_ROUNDS = 3
# Speedup goals over array_record, per access operation and for writing.
ACCESS_GOALS = {
    "individual Reader": 3.0, "individual DataSource": 3.0,
    "batch Reader": 2.0, "batch DataSource": 2.0,
    "sequential g1": 1.5, "sequential g256": 1.5,
    "read_all g1": 2.0, "read_all g256": 2.0,
}
WRITE_GOAL = 2.0
# The first access operation on each file (group_size 1, then 256), in the order they run.
FIRST_ON_FILE = ("individual Reader", "sequential g256")
# Seconds (at scale 1) the study may spend re-running comparisons that could not rank the sides.
RERUN_BUDGET_S = 20.0


def _records(count: int) -> list[bytes]:
    from lorem_text import lorem

    random.seed(2002)
    return [lorem.words(200).encode("utf-8") for _ in range(count)]


def _write(writer_class, path: str, options: str, records: list[bytes]) -> None:
    """Writes `records` to a file."""
    writer = writer_class(path, options)
    write = writer.write
    for record in records:
        write(record)
    writer.close()


def _believe(comparison: Comparison) -> str:
    believe, why = comparison.believe
    return f"{believe}: {why}" if comparison.disagree else believe


def _qps(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def _grain_loader(source, records: int, prefetch_buffer_size: int):
    import grain

    sampler = grain.samplers.IndexSampler(
        num_records=records, shuffle=True, seed=3, num_epochs=1, shard_options=grain.sharding.NoSharding())
    return grain.DataLoader(
        data_source=source, sampler=sampler, worker_count=0,
        read_options=grain.ReadOptions(num_threads=16, prefetch_buffer_size=prefetch_buffer_size))


def _grain_pipelines(ctx: LabContext, paths: dict, count: int, sources: dict) -> list[list]:
    """What a Grain user sees: the same shuffled pipelines over each library's data source
    (zstd:3, group_size 1), records per second, median of 3 interleaved rounds. Grain's
    own per-record work is part of every figure."""
    import logging

    import grain

    logging.getLogger("absl").setLevel(logging.ERROR)  # Grain warns that jax is absent
    pipelines = {
        # MapDataset reads a batch's records with one __getitems__ call per batch.
        "MapDataset shuffle + batch(256)": (
            ctx.rows(16384, minimum=512),
            lambda source, n: grain.MapDataset.source(source)[:n].shuffle(seed=1).batch(256),
        ),
        # DataLoader (no worker processes) reads record by record on its prefetch threads.
        "DataLoader, worker_count=0": (ctx.rows(4096, minimum=256), lambda source, n: _grain_loader(source, n, 500)),
        # Grain counts the ready elements of its prefetch buffer on every element it returns,
        # so a buffer a fast source keeps full costs up to 500 checks per record.
        "DataLoader, worker_count=0, prefetch_buffer_size=64": (
            ctx.rows(4096, minimum=256), lambda source, n: _grain_loader(source, n, 64)),
    }
    rows = []
    for name, (records, build) in pipelines.items():
        records = min(records, count)
        loads: dict[str, list] = {lib: [] for lib in sources}
        opened = {lib: source([paths[(lib, "zstd:3", 1)]]) for lib, source in sources.items()}
        for round_index in range(3):
            order = list(opened.items()) if round_index % 2 == 0 else list(opened.items())[::-1]
            for lib, source in order:
                seen = []
                load = ctx.sample(lambda source=source: seen.append(
                    sum(1 if isinstance(item, bytes) else len(item) for item in build(source, records))))
                loads[lib].append(load)
                assert seen == [records], (name, lib, seen)
        for lib in sources:
            ctx.record(f"grain/{name}, {records} records/{lib}", [l.wall_s for l in loads[lib]],
                       [l.cpu_s for l in loads[lib]], loads[lib])
        ours, peer = (_qps(records, statistics.median(l.wall_s for l in loads[lib])) for lib in sources)
        comparison = paired_comparison(*sources, loads)
        rows.append([name, f"{records:,}", f"{ours:,.0f}", f"{peer:,.0f}", f"{ours / peer:.2f}x",
                     format_ci(comparison.wall), format_ci(comparison.cpu), _believe(comparison)])
    return rows


def run(ctx: LabContext) -> StudyResult:
    from array_record.python.array_record_data_source import ArrayRecordDataSource
    from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

    from shapeshift.records import DataSource, Reader, Writer

    import numpy as np

    cores = len(os.sched_getaffinity(0))
    count = ctx.rows(65536, minimum=512)
    ctx.progress(f"records: generating {count} lorem records")
    records = _records(count)
    raw_bytes = sum(len(record) for record in records)
    workdir = tempfile.TemporaryDirectory(prefix="shapeshift-records-")
    libs = {"shapeshift": Writer, "array_record": ArrayRecordWriter}
    paths: dict[tuple[str, str, int], str] = {}
    sizes: dict[tuple[str, str, int], int] = {}
    write_seconds: dict[tuple[str, str, int], float] = {}
    write_cpu_seconds: dict[tuple[str, str, int], float] = {}
    write_comparisons: dict[tuple[str, int], Comparison] = {}
    progress = ctx.steps(len(GROUP_SIZES) * len(COMPRESSIONS) + len(ACCESS_COMPRESSIONS) + 2, "records")

    def round_path(lib: str, compression: str, group_size: int, round_index: int) -> str:
        return os.path.join(workdir.name, f"{lib}-{group_size}-{compression.replace(':', '')}-{round_index}.ar")

    # Compressed sizes and write times: the access compressions written WRITE_ROUNDS times by
    # each library, the libraries alternating which goes first (the median of each); the other
    # levels once each.
    for group_index, group_size in enumerate(GROUP_SIZES):
        for compression_index, compression in enumerate(COMPRESSIONS):
            options = f"group_size:{group_size},{compression}"
            key = (compression, group_size)
            rounds = WRITE_ROUNDS if compression in ACCESS_COMPRESSIONS else 1
            write_loads: dict[str, list] = {lib: [] for lib in libs}
            # Which library goes first alternates round by round, and from one configuration
            # to the next (the levels written once are not all led by the same library).
            first = (group_index + compression_index) % 2
            for round_index in range(rounds):
                order = list(libs.items())
                if (round_index + first) % 2:
                    order.reverse()
                for lib, writer_class in order:
                    # A new file every round, written after deleting the previous round's,
                    # so both libraries' buffered writes take recently freed page-cache
                    # pages, as any write does on a machine that is not a VM (on the lab's
                    # VM pages free for a while cost ~5x more; see docs/records.md).
                    path = round_path(lib, *key, round_index)
                    if round_index > 0:
                        os.remove(round_path(lib, *key, round_index - 1))
                    write_loads[lib].append(ctx.sample(
                        lambda writer_class=writer_class, path=path: _write(writer_class, path, options, records)))
                    size = os.path.getsize(path)
                    if lib == "shapeshift" and (lib, *key) in sizes and sizes[(lib, *key)] != size:
                        raise AssertionError(f"shapeshift wrote {options} as {size} bytes, earlier {sizes[(lib, *key)]}")
                    sizes[(lib, *key)] = size
            if rounds > 1:
                write_comparisons[key] = paired_comparison("shapeshift", "array_record", write_loads)
            for lib in libs:
                loads = write_loads[lib]
                ctx.record(f"write/{options}/{lib}", [l.wall_s for l in loads], [l.cpu_s for l in loads], loads)
                write_seconds[(lib, *key)] = statistics.median(l.wall_s for l in loads)
                write_cpu_seconds[(lib, *key)] = statistics.median(l.cpu_s for l in loads)
                path = round_path(lib, *key, rounds - 1)
                if compression in ACCESS_COMPRESSIONS:
                    paths[(lib, *key)] = path
                else:
                    os.remove(path)
            progress.advance(
                note=f"{options}: {100 * sizes[('shapeshift', *key)] / raw_bytes:.2f}% vs "
                f"{100 * sizes[('array_record', *key)] / raw_bytes:.2f}%, write "
                f"{write_seconds[('array_record', *key)] / write_seconds[('shapeshift', *key)]:.2f}x"
            )

    # shapeshift's dictionary extension at group_size 1.
    dictionary_path = os.path.join(workdir.name, "shapeshift-dictionary.ar")
    dictionary_options = "group_size:1,zstd:3,zstd_dictionary"
    dictionary_write = ctx.sample(lambda: _write(Writer, dictionary_path, dictionary_options, records)).wall_s
    dictionary_size = os.path.getsize(dictionary_path)

    rng = np.random.default_rng(42)
    permutation = [int(v) for v in rng.permutation(count)]
    individual = permutation[: min(count, ctx.rows(4096, minimum=256))]
    repeat = 3

    access: dict[tuple[str, str, str], float] = {}
    # CPU seconds of the whole process (every thread) per record: what an operation costs
    # regardless of how many cores were free while it ran.
    cpu_per_record: dict[tuple[str, str, str], float] = {}

    comparisons: dict[tuple[str, str], Comparison] = {}

    def measure_pair(compression: str, op: str, fns: dict, operations: int, warmup: int) -> None:
        """Both libraries on the same operation, interleaved: `warmup` untimed runs each, then
        `repeat` rounds alternating which library goes first (more while the paired ratio
        cannot be ranked against 1 and the operation's goal, within the study's budget)."""
        comparison = ctx.compare(f"{compression}/{op}", fns, repeat=repeat, warmup=warmup, goal=ACCESS_GOALS[op])
        comparisons[(compression, op)] = comparison
        for lib, side in comparison.sides.items():
            access[(lib, compression, op)] = _qps(operations, side.median)
            cpu_per_record[(lib, compression, op)] = 1e6 * statistics.median(side.cpu_samples) / operations

    for compression in ACCESS_COMPRESSIONS:
        ops: dict[str, dict] = {}
        for lib in libs:
            path1 = paths[(lib, compression, 1)]
            path256 = paths[(lib, compression, 256)]
            if lib == "shapeshift":
                reader = Reader(path1, "readahead_buffer_size:0")
                source = DataSource([path1])
                open_reader = Reader
                read_one = reader.read
            else:
                reader = ArrayRecordReader(path1, "readahead_buffer_size:0,max_parallelism:0")
                source = ArrayRecordDataSource([path1])
                open_reader = ArrayRecordReader
                # array_record's reader has no read(int): one record is read([i]).
                read_one = lambda i, reader=reader: reader.read([i])  # noqa: E731
            batch_reader = open_reader(path1)

            def sequential(path, open_reader=open_reader):
                def run_sequential():
                    read = open_reader(path).read
                    for _ in range(count):
                        read()
                return run_sequential

            def read_all(path, open_reader=open_reader):
                return lambda: open_reader(path).read_all()

            ops[lib] = {
                "individual Reader": (lambda read_one=read_one: [read_one(i) for i in individual], len(individual)),
                "individual DataSource": (lambda source=source: [source[i] for i in individual], len(individual)),
                "batch Reader": (lambda batch_reader=batch_reader: batch_reader.read(permutation), count),
                "batch DataSource": (lambda source=source: source.__getitems__(permutation), count),
                "sequential g1": (sequential(path1), count),
                "sequential g256": (sequential(path256), count),
                "read_all g1": (read_all(path1), count),
                "read_all g256": (read_all(path256), count),
            }
            if lib == "shapeshift":
                assert batch_reader.read(permutation[:100]) == [records[i] for i in permutation[:100]]
        for op in ops["shapeshift"]:
            operations = ops["shapeshift"][op][1]
            # One untimed run for the first operation on each file (its pages, the readers'
            # code); the operations after it read what that run warmed.
            warmup = 1 if op in FIRST_ON_FILE else 0
            measure_pair(compression, op, {lib: ops[lib][op][0] for lib in libs}, operations, warmup)
        progress.advance(note=f"access benchmarks, {compression}")

    grain_rows = _grain_pipelines(ctx, paths, count, {"shapeshift": DataSource, "array_record": ArrayRecordDataSource})
    progress.advance(note="Grain pipelines")
    dictionary_reader = Reader(dictionary_path, "readahead_buffer_size:0")
    assert dictionary_reader.read(permutation[:100]) == [records[i] for i in permutation[:100]]
    for op, fn, operations in (
        ("individual Reader", lambda: [dictionary_reader.read(i) for i in individual], len(individual)),
        ("batch Reader", lambda: dictionary_reader.read(permutation), count),
    ):
        summary = ctx.time(fn, repeat=repeat, warmup=1, name=f"zstd:3+dictionary/{op}/shapeshift")
        access[("shapeshift", "zstd:3+dictionary", op)] = _qps(operations, summary.median)
    progress.advance(note="dictionary extension access")
    progress.close()
    workdir.cleanup()

    # Tables.
    size_rows = []
    size_ratios = []
    for group_size in GROUP_SIZES:
        for compression in COMPRESSIONS:
            ours = sizes[("shapeshift", compression, group_size)]
            peer = sizes[("array_record", compression, group_size)]
            ratio = ours / peer
            size_ratios.append((compression, group_size, ratio))
            size_rows.append([
                group_size, compression,
                f"{100 * ours / raw_bytes:.2f}%", f"{100 * peer / raw_bytes:.2f}%", f"{100 * (ratio - 1):+.2f}%",
                f"{write_seconds[('shapeshift', compression, group_size)]:.2f}",
                f"{write_seconds[('array_record', compression, group_size)]:.2f}",
                f"{write_seconds[('array_record', compression, group_size)] / write_seconds[('shapeshift', compression, group_size)]:.2f}x",
                f"{write_cpu_seconds[('shapeshift', compression, group_size)]:.2f}",
                f"{write_cpu_seconds[('array_record', compression, group_size)]:.2f}",
                f"{write_seconds[('array_record', compression, group_size)] * cores / write_cpu_seconds[('shapeshift', compression, group_size)]:.2f}x",
            ])
    size_rows.append([
        1, "zstd:3 + zstd_dictionary (extension)", f"{100 * dictionary_size / raw_bytes:.2f}%", "not readable", "",
        f"{dictionary_write:.2f}", "", "", "", "", "",
    ])

    operations = ["individual Reader", "individual DataSource", "batch Reader", "batch DataSource",
                  "sequential g1", "sequential g256", "read_all g1", "read_all g256"]
    access_rows = []
    for compression in ACCESS_COMPRESSIONS:
        for op in operations:
            ours = access[("shapeshift", compression, op)]
            peer = access[("array_record", compression, op)]
            comparison = comparisons[(compression, op)]
            access_rows.append([
                compression, op, f"{ours:,.0f}", f"{peer:,.0f}", f"{ours / peer:.2f}x",
                format_ci(comparison.wall), format_ci(comparison.cpu), _believe(comparison),
            ])
    cpu_rows = []
    for compression in ACCESS_COMPRESSIONS:
        for op in operations:
            ours = cpu_per_record[("shapeshift", compression, op)]
            peer = cpu_per_record[("array_record", compression, op)]
            # The most this operation could gain over array_record's measured time if our CPU
            # time were spread over every core with no waiting.
            peer_wall_us = 1e6 / access[("array_record", compression, op)]
            ceiling = f"{peer_wall_us * cores / ours:.2f}x" if ours > 0 else ""
            cpu_rows.append([compression, op, f"{ours:.2f}", f"{peer:.2f}", f"{peer / ours:.2f}x" if ours > 0 else "", ceiling])
    for op in ("individual Reader", "batch Reader"):
        ours = access[("shapeshift", "zstd:3+dictionary", op)]
        access_rows.append(["zstd:3 + dictionary (extension)", op, f"{ours:,.0f}", "", "", "", "", ""])

    def worst(label, ops):
        return worst_of(
            f"{label} (paired; worst of {', '.join(ops)} x {len(ACCESS_COMPRESSIONS)} compressions)",
            [comparisons[(c, op)] for c in ACCESS_COMPRESSIONS for op in ops],
            ACCESS_GOALS[ops[0]],
        )

    batch_target = worst("batch random access", ["batch Reader", "batch DataSource"])
    read_all_target = worst("read_all", ["read_all g1", "read_all g256"])
    sequential_target = worst("sequential read()", ["sequential g1", "sequential g256"])
    individual_target = worst("individual access", ["individual Reader", "individual DataSource"])
    writing_target = worst_of(f"writing (paired; worst of {', '.join(ACCESS_COMPRESSIONS)} x both group sizes)", list(write_comparisons.values()), WRITE_GOAL)
    worst_size = max(ratio for _, _, ratio in size_ratios)
    worst_size_config = max(size_ratios, key=lambda item: item[2])
    targets = [
        Target("largest size excess vs array_record (%)", 100 * (worst_size - 1), 0.5, "%", lower_is_better=True,
               timed=False),
        batch_target, read_all_target, sequential_target, individual_target, writing_target,
    ]

    charts = []
    for group_size in GROUP_SIZES:
        charts.append(ctx.bar_chart(
            f"records_size_g{group_size}.svg",
            f"Compressed size, group_size {group_size} (% of raw records)",
            COMPRESSIONS,
            {lib: [100 * sizes[(lib, c, group_size)] / raw_bytes for c in COMPRESSIONS] for lib in libs},
            "% of raw size",
        ))
    charts.append(ctx.bar_chart(
        "records_access_zstd.svg",
        "Reads per second, zstd:3 (group_size 1 unless noted)",
        operations,
        {lib: [access[(lib, "zstd:3", op)] for op in operations] for lib in libs},
        "records / s",
        log=True,
    ))

    met = sum(target.verdict == "met" for target in targets)
    unresolved = sum(target.verdict == "unresolved" for target in targets)
    plain_g1 = sizes[("shapeshift", "zstd:3", 1)]
    plain_g256 = sizes[("shapeshift", "zstd:3", 256)]
    summary = (
        f"{count:,} records of 200 lorem words ({raw_bytes / 1e6:.1f} MB). {met} of {len(targets)} targets met, {unresolved} unresolved. "
        f"Sizes: largest excess over array_record {100 * (worst_size - 1):+.2f}% "
        f"({worst_size_config[0]}, group_size {worst_size_config[1]}). "
        f"Speedups (paired), worst case over compressions: batch {batch_target.measured:.2f}x, "
        f"read_all {read_all_target.measured:.2f}x, sequential {sequential_target.measured:.2f}x, "
        f"individual {individual_target.measured:.2f}x, writing {writing_target.measured:.2f}x. "
        f"The zstd dictionary extension stores group_size 1 in {100 * dictionary_size / raw_bytes:.1f}% of raw "
        f"(plain zstd:3 {100 * plain_g1 / raw_bytes:.1f}%, group_size 256 {100 * plain_g256 / raw_bytes:.1f}%). "
        f"Our reads decode on a thread pool over {cores} cores: parallel speedups shrink when other "
        "work holds the cores (the load line above says how much it did)."
    )
    recommendations = [
        f"For random access keep group_size 1: group_size 256 saves {100 * (plain_g1 - plain_g256) / raw_bytes:.0f} points "
        f"of size but every single read decodes 256 records.",
        f"If only shapeshift reads the files, zstd_dictionary at group_size 1 cuts the file to "
        f"{dictionary_size / plain_g1:.0%} of plain zstd:3 while keeping one-record reads "
        f"({access[('shapeshift', 'zstd:3+dictionary', 'individual Reader')]:,.0f} vs "
        f"{access[('shapeshift', 'zstd:3', 'individual Reader')]:,.0f} reads/s).",
        "Use batch reads (reader.read(list) / __getitems__) rather than single reads: they decode in parallel.",
        "In Grain, batch over a MapDataset (one __getitems__ per batch) where possible; with a thread-prefetching "
        "DataLoader give it a smaller prefetch buffer (ReadOptions(prefetch_buffer_size=64)), since Grain's bookkeeping "
        "grows with the number of ready elements in the buffer (see the Grain table).",
    ]
    return StudyResult(
        name="records",
        title=TITLE,
        summary=summary,
        tables=[
            Table("Compressed size (% of raw) and write time (s), same records, same run",
                  ["group_size", "compression", "shapeshift", "array_record", "size difference",
                   "shapeshift write s", "array_record write s", "write speedup",
                   "shapeshift write CPU s", "array_record write CPU s", f"ceiling on {cores} cores"], size_rows,
                  note=f"Sizes are whole files (multiples of 64 KiB). Times are the median of {WRITE_ROUNDS} writes per library, the libraries alternating, "
                       f"for {', '.join(ACCESS_COMPRESSIONS)} (the writing target's configurations); one write each for the other levels. "
                       "Write CPU is the process CPU time (all threads): ours encodes on the pool while Python appends, so its wall time can drop below its CPU time when cores are free; "
                       "array_record writes on one thread. The ceiling is array_record's write time times the cores divided by our CPU time: "
                       "the speedup our writer would show with every core busy and nothing waiting. Both libraries call the same zstd and brotli encoders, "
                       "so where the CPU times are equal the ceiling is about the number of cores."),
            Table(f"Reads per second (median of {repeat} runs after a warm-up, the two libraries interleaved); group_size 1 unless the operation says g256",
                  ["compression", "operation", "shapeshift", "array_record", "speedup",
                   "paired speedup, mean ± 95% CI", "CPU-time speedup, mean ± 95% CI", "which to believe"], access_rows,
                  note=f"Individual access times {len(individual):,} random single reads; batch reads all {count:,} records in random order. "
                       "Both libraries pay the interpreter's cost of one call per record in sequential read() and one bytes object per record everywhere; "
                       "with uncompressed files that cost is most of the time for both. Parallel decoding needs idle cores: see the load average in the summary."),
            Table("Grain pipelines over each library's data source (zstd:3, group_size 1): records per second, median of 3 interleaved rounds",
                  ["pipeline", "records", "shapeshift DataSource", "ArrayRecordDataSource", "speedup",
                   "paired speedup, mean ± 95% CI", "CPU-time speedup, mean ± 95% CI", "which to believe"], grain_rows,
                  note="pip grain 0.2.18; Grain's own per-record work (iterators, prefetch bookkeeping) is in every figure. "
                       "The DataLoader without worker processes spends most of its time in Grain itself. With its default 500-element "
                       "prefetch buffer it also counts the buffer's ready elements on every record it returns, so a source fast enough "
                       "to keep the buffer full pays the most bookkeeping: there the faster source gains nothing and can come out behind. "
                       "With a 64-element buffer the source's speed shows."),
            Table("CPU time per record (microseconds, all threads of the process, median of the same runs)",
                  ["compression", "operation", "shapeshift", "array_record", "array_record / shapeshift", f"speedup ceiling on {cores} cores"], cpu_rows,
                  note="Process CPU time does not depend on how many cores were free, so this table compares the work each "
                       "library does even on a loaded machine; the reads-per-second table shows what that work became in "
                       "wall time. Python's own per-call and per-object costs are included for both. The ceiling is array_record's "
                       "wall time per record times the cores divided by our CPU time per record: the speedup we would show if all our work "
                       "ran in parallel on every core with no waiting. Where it is under a target, the target cannot be met on this machine "
                       "without doing less work per record; with brotli most of that work is the same C decoder array_record calls."),
        ],
        charts=charts,
        targets=targets,
        recommendations=recommendations,
        data={
            "records": count,
            "raw_bytes": raw_bytes,
            "sizes": {f"{lib}|{c}|{g}": size for (lib, c, g), size in sizes.items()},
            "write_seconds": {f"{lib}|{c}|{g}": s for (lib, c, g), s in write_seconds.items()},
            "write_cpu_seconds": {f"{lib}|{c}|{g}": s for (lib, c, g), s in write_cpu_seconds.items()},
            "access_qps": {f"{lib}|{c}|{op}": q for (lib, c, op), q in access.items()},
            "cpu_us_per_record": {f"{lib}|{c}|{op}": v for (lib, c, op), v in cpu_per_record.items()},
            "dictionary": {"size": dictionary_size, "write_seconds": dictionary_write},
            "comparisons": {f"{c}|{op}": v.as_dict() for (c, op), v in comparisons.items()},
            "write_comparisons": {f"{c}|{g}": v.as_dict() for (c, g), v in write_comparisons.items()},
            "cores": cores,
            "grain": grain_rows,
            "write_rounds": {c: WRITE_ROUNDS if c in ACCESS_COMPRESSIONS else 1 for c in COMPRESSIONS},
        },
    )
