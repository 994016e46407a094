"""RPC: does the wire format change RPC throughput? CASSANDRA-1735 against CASSANDRA-1765.

CASSANDRA-1735 measured a MessagePack RPC beating Thrift's by +15% random reads and +21% random
writes; in CASSANDRA-1765 the project lead found "no significant advantage". Here one server
(Rust, tokio, on 127.0.0.1, ``shapeshift bench rpc-server``) holds 100 items, tiny 16-byte values
or jvm-serializers' MediaContent, and answers get/put requests framed by a 4-byte length, the
messages in any of our formats; only the format changes between runs. Apache Thrift's own
server (its ``TServer``, binary and compact protocols) and tonic's gRPC server (HTTP/2, prost
messages) run the same store in the same run.

``shapeshift bench rpc`` drives each server with a closed-loop load generator (C concurrent
clients, random keys, random reads, random writes, a 90/10 mix) bounded in requests and time,
and reports per run: requests/s, p50/p99 latency from every request's latency, bytes per
request on the wire, the server process's CPU per request (all its threads, from /proc) and,
for our server, the time it spent in the codec. Rounds are interleaved (each round runs every
server once); figures are medians over rounds with the median's 95% CI, and every round's
machine load is recorded.
"""

from __future__ import annotations

from collections import defaultdict

from shapeshift.lab.study import LabContext, StudyResult
from shapeshift.lab.studies import rpc_report as report

TITLE = "RPC: does the wire format change throughput (CASSANDRA-1735 vs 1765)?"

OUR_CODECS = ["msgpack", "thrift", "thrift-compact", "protobuf", "json", "yson", "cbor", "avro"]
PEERS = ["thrift-server", "thrift-server-compact", "grpc-tonic"]
WORKLOADS = ["read", "write", "mixed"]
CLIENTS = [1, 4, 16, 64, 100]
# MediaContent at three client counts (the low, middle and high end) keeps the study near 90 s.
MEDIA_CLIENTS = [1, 16, 100]
ROUNDS = 6  # the fewest with a distribution-free 95% CI of the median
RUN_MS = 30  # time limit of one measured run at scale 1
MAX_REQUESTS = 200_000  # request bound of one run (the time limit ends it first here)
WARMUP = 5  # untimed requests per client before each run


def plan(scale: float) -> dict:
    """Grid and bounds at ``scale``: below 0.5 a reduced grid (tests), every server kept."""
    small = scale < 0.5
    return {
        "rounds": 2 if small else ROUNDS,
        "run_ms": max(5, round(RUN_MS * min(scale, 4.0))),
        "clients": [1, 4] if small else CLIENTS,
        "media_clients": [1] if small else MEDIA_CLIENTS,
    }


def _measure(ctx: LabContext, grid: dict) -> list[dict]:
    records, loads = [], []
    for round_index in range(grid["rounds"]):
        args = ["bench", "rpc", "--duration-ms", str(grid["run_ms"]), "--requests", str(MAX_REQUESTS),
                "--warmup", str(WARMUP), "--seed", str(round_index + 1)]
        for codec in OUR_CODECS:
            args += ["--codec", codec]
        for peer in PEERS:
            args += ["--peer", peer]
        for workload in WORKLOADS:
            args += ["--workload", workload]
        for clients in grid["clients"]:
            args += ["--clients", str(clients)]
        for clients in grid["media_clients"]:
            args += ["--media-clients", str(clients)]
        ctx.progress(f"rpc: round {round_index + 1}/{grid['rounds']}")
        raw, load = ctx.native(*args)
        loads.append(load)
        for r in raw:
            r["round"] = round_index
            r["others_share"] = load.others_share
            r["contender"] = f"{r['server']} {r['codec']}"
        records.extend(raw)
    # One wall-time sample per run and round, with the round's load (the runs share a process).
    by_run = defaultdict(list)
    for r in records:
        by_run[(r["contender"], r["values"], r["workload"], r["clients"])].append(r)
    for (contender, values, workload, clients), runs in by_run.items():
        ctx.record(f"{values}/{workload}/{contender}/x{clients}", [1.0 / r["requests_per_s"] for r in runs],
                   loads=[loads[r["round"]] for r in runs], unit="s/request")
    return records


def run(ctx: LabContext) -> StudyResult:
    grid = plan(ctx.scale)
    ctx.progress(f"rpc: {len(OUR_CODECS)} codecs + {len(PEERS)} peers, {grid['rounds']} rounds of "
                 f"{grid['run_ms']} ms runs")
    records = _measure(ctx, grid)
    return report.analyze(ctx, records, grid)
