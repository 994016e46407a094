"""The rpc study's figures: medians and CIs per run, tables, curves, targets and the verdict on
CASSANDRA-1735 (a MessagePack RPC +15% reads, +21% writes over Thrift's) against CASSANDRA-1765
("no significant advantage")."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

from shapeshift.lab.charts import line_panels
from shapeshift.lab.stats import median_ci, ratio_interval, summarize
from shapeshift.lab.study import LabContext, StudyResult, Table, Target

FIELDS = ["requests_per_s", "p50_us", "p99_us", "bytes_per_request", "request_bytes", "response_bytes",
          "server_cpu_ns_per_request", "codec_cpu_ns_per_request", "codec_share",
          "codec_wall_ns_per_request", "codec_wall_share"]
OURS = "shapeshift"
THRIFT_PEER = "apache-thrift thrift"
GRPC_PEER = "tonic protobuf"
CASSANDRA_1735 = {"read": 0.15, "write": 0.21}  # MessagePack over Thrift, as published
# A difference under this share is "no significant advantage" even when its CI excludes 1.
NEGLIGIBLE = 0.05
GOAL_READS_PER_CORE = 100_000
VALUE_TITLES = {"tiny": "tiny 16-byte values", "media": "MediaContent values"}


def _figure(samples: list[float]) -> dict | None:
    if not samples:
        return None
    return {"median": statistics.median(samples), "ci": median_ci(samples), "samples": samples}


def summarize_runs(records: list[dict]) -> dict:
    """(contender, values, workload, clients) -> medians and CIs over rounds of every field,
    with the per-round requests/s kept by round for paired ratios."""
    groups = defaultdict(list)
    for r in records:
        groups[(r["contender"], r["values"], r["workload"], r["clients"])].append(r)
    out = {}
    for key, runs in groups.items():
        entry = {f: _figure([r[f] for r in runs if r.get(f) is not None]) for f in FIELDS}
        entry["server"], entry["codec"] = runs[0]["server"], runs[0]["codec"]
        entry["by_round"] = {r["round"]: r["requests_per_s"] for r in runs}
        entry["cpu_by_round"] = {r["round"]: r["server_cpu_ns_per_request"] for r in runs}
        out[key] = entry
    return out


def best_levels(runs: dict) -> dict:
    """(contender, values, workload) -> the client count with the highest median requests/s."""
    best = {}
    for (contender, values, workload, clients), entry in runs.items():
        key = (contender, values, workload)
        rate = entry["requests_per_s"]["median"]
        if key not in best or rate > runs[(*key, best[key])]["requests_per_s"]["median"]:
            best[key] = clients
    return best


def paired_ratio_at_best(runs: dict, best: dict, a: str, b: str, values: str, workload: str,
                         cpu: bool = False) -> dict | None:
    """Max requests/s of ``a`` over ``b`` (each at its best client count), paired round by round;
    with ``cpu``, ``b``'s server CPU per request over ``a``'s at the same client counts (above 1:
    ``a`` costs its server less per request)."""
    if (a, values, workload) not in best or (b, values, workload) not in best:
        return None
    field = "cpu_by_round" if cpu else "by_round"
    ra = runs[(a, values, workload, best[(a, values, workload)])][field]
    rb = runs[(b, values, workload, best[(b, values, workload)])][field]
    if cpu:
        ra, rb = rb, ra
    ratios = [ra[i] / rb[i] for i in sorted(set(ra) & set(rb)) if rb[i] > 0]
    if not ratios:
        return None
    summary = summarize(ratios)
    ci = ratio_interval(summary)
    centre = math.exp(statistics.fmean(math.log(x) for x in ratios))
    return {"ratio": centre, "ci": ci, "rounds": len(ratios), "samples": ratios}


def _number(x: float, digits: int) -> str:
    return f"{x:,.0f}" if abs(x) >= 10 ** (digits - 1) else f"{x:.{digits}g}"


def _fmt(figure: dict | None, scale: float = 1.0, digits: int = 3) -> str:
    if figure is None:
        return "—"
    text = _number(figure["median"] * scale, digits)
    if figure["ci"]:
        low, high = figure["ci"]
        text += f" [{_number(low * scale, digits)}–{_number(high * scale, digits)}]"
    return text


def _pct(ratio: dict | None) -> str:
    if ratio is None:
        return "—"
    text = f"{(ratio['ratio'] - 1) * 100:+.1f}%"
    if ratio["ci"]:
        text += f" [{(ratio['ci'][0] - 1) * 100:+.1f}, {(ratio['ci'][1] - 1) * 100:+.1f}]"
    return text


def _contenders(runs: dict, values: str) -> list[str]:
    names = sorted({c for (c, v, _, _) in runs if v == values})
    return sorted(names, key=lambda c: (not c.startswith(OURS), c))


def throughput_table(runs: dict, best: dict, values: str, workloads: list[str]) -> Table:
    rows = []
    for contender in _contenders(runs, values):
        row = [contender]
        for workload in workloads:
            clients = best.get((contender, values, workload))
            entry = runs.get((contender, values, workload, clients))
            row.append(f"{_fmt(entry['requests_per_s'])} @{clients}" if entry else "—")
        rows.append(row)
    return Table(
        f"{VALUE_TITLES[values]}: maximum requests/s (median over rounds [95% CI] @ clients)",
        ["server and format", *workloads], rows,
        note="The maximum over client counts of the median requests/s of a closed-loop run. "
        "shapeshift: our tokio server, only the message format changes; apache-thrift: Thrift's "
        "TServer (one thread per connection) with the code its compiler generates; tonic: tonic's "
        "gRPC server (HTTP/2, prost messages, the code tonic-prost-build generates), one channel "
        "per client.",
    )


def detail_table(runs: dict, best: dict, values: str, workload: str) -> Table:
    rows = []
    for contender in _contenders(runs, values):
        clients = best.get((contender, values, workload))
        entry = runs.get((contender, values, workload, clients))
        if entry is None:
            continue
        cpu = entry["server_cpu_ns_per_request"]
        per_core = 1e9 / cpu["median"] if cpu and cpu["median"] > 0 else math.nan
        rows.append([
            contender, clients, _fmt(entry["p50_us"]), _fmt(entry["p99_us"]),
            f"{entry['request_bytes']['median']:.0f} + {entry['response_bytes']['median']:.0f}",
            _fmt(cpu, 1e-3), f"{per_core:,.0f}", _fmt(entry["codec_cpu_ns_per_request"], 1e-3),
            _fmt(entry["codec_share"], 100, 2),
        ])
    return Table(
        f"{VALUE_TITLES[values]}, {workload}: at each server's best client count",
        ["server and format", "clients", "p50 µs", "p99 µs", "bytes/request (request + response)",
         "server CPU µs/request", "requests/s per server core", "codec CPU µs/request",
         "codec % of server CPU"], rows,
        note="Bytes: frames on the wire, 4-byte length included (tonic: every byte through the "
        "client's socket, HTTP/2 frames and headers included). Server CPU: all the server "
        "process's threads (/proc schedstat) over the run, per request; requests/s per core = 1 s "
        "of CPU over it. Codec CPU: the decode and encode calls our server makes per request, timed "
        "apart on one thread's CPU clock (preemption not counted); its share is that over the "
        "server's CPU per request. The Thrift peer's codec runs inside its generated processor.",
    )


def verdict(runs: dict, best: dict, kinds: list[str]) -> tuple[list[dict], list[str], Table]:
    """Per value kind and workload: MessagePack over Thrift binary on our server (1735's
    experiment), the spread of all our formats, and the reading of 1735 against 1765."""
    findings, sentences, rows = [], [], []
    for values in kinds:
        ours = [c for c in _contenders(runs, values) if c.startswith(OURS)]
        for workload in ("read", "write", "mixed"):
            if not any((c, values, workload) in best for c in ours):
                continue
            msgpack = paired_ratio_at_best(runs, best, f"{OURS} msgpack", f"{OURS} thrift", values, workload)
            msgpack_cpu = paired_ratio_at_best(runs, best, f"{OURS} msgpack", f"{OURS} thrift", values, workload,
                                               cpu=True)
            rates = {c: runs[(c, values, workload, best[(c, values, workload)])]["requests_per_s"]["median"]
                     for c in ours if (c, values, workload) in best}
            fastest, slowest = max(rates, key=rates.get), min(rates, key=rates.get)
            spread = paired_ratio_at_best(runs, best, fastest, slowest, values, workload)
            throughput_moved = _significant(msgpack)
            cpu_moved = _significant(msgpack_cpu)
            # A throughput difference counts when the server's CPU per request, the figure other
            # processes' load moves least, differs the same way.
            significant = throughput_moved and cpu_moved and (msgpack["ratio"] > 1) == (msgpack_cpu["ratio"] > 1)
            reading = "1735" if significant else ("1765" if not (throughput_moved or cpu_moved) else "unsettled")
            spread_matters = bool(spread and spread["ci"] and spread["ci"][0] > 1 + NEGLIGIBLE)
            findings.append({"values": values, "workload": workload, "msgpack_over_thrift": msgpack,
                             "msgpack_cpu_advantage": msgpack_cpu, "reading": reading,
                             "fastest": fastest, "slowest": slowest, "spread": spread,
                             "msgpack_significant": significant, "format_matters": spread_matters})
            published = CASSANDRA_1735.get(workload)
            rows.append([VALUE_TITLES[values], workload, _pct(msgpack),
                         f"+{published * 100:.0f}%" if published is not None else "—", _pct(msgpack_cpu),
                         f"{fastest.split(' ', 1)[1]} / {slowest.split(' ', 1)[1]}: {_pct(spread)}",
                         reading])
        kind_findings = [f for f in findings if f["values"] == values]
        if not kind_findings:
            continue
        spread_max = max((f["spread"]["ratio"] for f in kind_findings if f["spread"]), default=1.0)
        parts = []
        moved = [f for f in kind_findings if f["reading"] == "1735"]
        if moved:
            parts.append("the wire format changes throughput — MessagePack over Thrift on the same server "
                         + ", ".join(f"{f['workload']} {_pct(f['msgpack_over_thrift'])}" for f in moved)
                         + " (CASSANDRA-1735: +15% reads, +21% writes)")
        same = [f["workload"] for f in kind_findings if f["reading"] == "1765"]
        if same:
            parts.append(f"no significant difference between MessagePack and Thrift in {', '.join(same)} "
                         "(CASSANDRA-1765's reading)")
        unsettled = [f for f in kind_findings if f["reading"] == "unsettled"]
        if unsettled:
            parts.append("unsettled on this machine in " + ", ".join(
                f"{f['workload']} (throughput {_pct(f['msgpack_over_thrift'])}, server CPU per request "
                f"thrift/msgpack {_pct(f['msgpack_cpu_advantage'])})" for f in unsettled)
                + ": throughput and server CPU per request disagree")
        sentences.append(f"{VALUE_TITLES[values]}: " + "; ".join(parts)
                         + f". Fastest over slowest of our formats: up to {spread_max:.2f}x.")
    table = Table(
        "CASSANDRA-1735 vs 1765: MessagePack over Thrift binary on the same server (max requests/s)",
        ["values", "workload", "msgpack / thrift − 1 [95% CI]", "1735 published",
         "server CPU per request, thrift / msgpack − 1", "fastest / slowest of our formats", "reading"], rows,
        note=f"Ratios paired round by round, each format at its best client count. A difference "
        f"counts when its CI excludes 0 and it is at least {NEGLIGIBLE:.0%}. Reading 1735: throughput "
        f"and server CPU per request both differ, the same way; 1765: neither differs; unsettled: "
        f"only one does (on a loaded machine, throughput moves with the load generator's share of "
        f"the cores, server CPU per request much less).",
    )
    return findings, sentences, table


def _significant(ratio: dict | None) -> bool:
    return bool(ratio and ratio["ci"] and not ratio["ci"][0] <= 1.0 <= ratio["ci"][1]
                and abs(ratio["ratio"] - 1) >= NEGLIGIBLE)


def targets(runs: dict, best: dict) -> tuple[list[Target], dict]:
    out, data = [], {}
    per_core = []
    for (contender, values, workload, clients), entry in runs.items():
        cpu = entry["server_cpu_ns_per_request"]
        if contender.startswith(OURS) and values == "tiny" and workload == "read" and cpu and cpu["median"] > 0:
            per_core.append((1e9 / cpu["median"], contender, clients, cpu["ci"]))
    if per_core:
        rate, contender, clients, ci = max(per_core)
        out.append(Target(
            f"tiny reads per server core, our best codec ({contender}, {clients} clients)",
            round(rate), GOAL_READS_PER_CORE, "req/s per core",
            ci=(1e9 / ci[1], 1e9 / ci[0]) if ci else None,
        ))
        data["reads_per_core"] = {"rate": rate, "contender": contender, "clients": clients}
    ours = [c for (c, v, w) in best if c.startswith(OURS) and v == "tiny" and w == "read"]
    if not ours:
        return out, data
    fastest = max(ours, key=lambda c: runs[(c, "tiny", "read", best[(c, "tiny", "read")])]["requests_per_s"]["median"])
    for peer, title, key in ((THRIFT_PEER, "Apache Thrift's server", "ours_over_thrift_server"),
                             (GRPC_PEER, "tonic's gRPC server", "ours_over_tonic")):
        ratio = paired_ratio_at_best(runs, best, fastest, peer, "tiny", "read")
        if ratio:
            out.append(Target(
                f"our server ({fastest}) ahead of {title} on small unary requests "
                "(tiny reads, max requests/s)", round(ratio["ratio"], 3), 1.0, "x", ci=ratio["ci"],
            ))
            data[key] = {"fastest": fastest, **ratio}
    # The same message format on both servers: what the framing and server cost, apart from the codec.
    same_codec = paired_ratio_at_best(runs, best, f"{OURS} protobuf", GRPC_PEER, "tiny", "read")
    if same_codec:
        data["protobuf_ours_over_tonic"] = same_codec
    return out, data


def curves(ctx: LabContext, runs: dict, values: str, workloads: list[str]) -> str:
    panels = {}
    for workload in workloads:
        series = defaultdict(list)
        for (contender, v, w, clients), entry in runs.items():
            if v == values and w == workload:
                series[contender].append((clients, entry["requests_per_s"]["median"]))
        panels[workload] = dict(sorted(series.items()))
    filename = f"rpc_{values}_throughput.svg"
    line_panels(ctx.out_dir / filename, f"Throughput vs concurrent clients, {VALUE_TITLES[values]}",
                panels, "concurrent clients", "requests/s (median over rounds)")
    return filename


def codec_shares(runs: dict, best: dict, values: str, workload: str) -> tuple[float, float] | None:
    shares = [runs[(c, v, w, best[(c, v, w)])]["codec_share"]["median"] for (c, v, w) in best
              if c.startswith(OURS) and v == values and w == workload
              and runs[(c, v, w, best[(c, v, w)])]["codec_share"]]
    return (min(shares), max(shares)) if shares else None


def analyze(ctx: LabContext, records: list[dict], grid: dict) -> StudyResult:
    runs = summarize_runs(records)
    best = best_levels(runs)
    kinds = [k for k in ("tiny", "media") if any(v == k for (_, v, _, _) in runs)]
    workloads = [w for w in ("read", "write", "mixed") if any(x == w for (_, _, x, _) in runs)]
    tables, charts = [], []
    for values in kinds:
        tables.append(throughput_table(runs, best, values, workloads))
        tables.extend(detail_table(runs, best, values, w) for w in ("read", "write") if w in workloads)
        charts.append(curves(ctx, runs, values, workloads))
    findings, sentences, verdict_table = verdict(runs, best, kinds)
    tables.insert(0, verdict_table)
    study_targets, target_data = targets(runs, best)
    share_text = []
    for values in kinds:
        shares = codec_shares(runs, best, values, "read")
        if shares:
            share_text.append(f"{VALUE_TITLES[values]} {shares[0]:.0%}–{shares[1]:.0%}")
    summary = " ".join(sentences)
    if share_text:
        summary += (" Codec share of our server's CPU on reads (range over our formats): "
                    + "; ".join(share_text) + ".")
    summary += (f" {grid['rounds']} rounds of {grid['run_ms']} ms runs; clients "
                f"{grid['clients']} (tiny), {grid['media_clients']} (MediaContent).")
    same_codec = target_data.get("protobuf_ours_over_tonic")
    if same_codec:
        summary += (f" Protobuf messages on both servers, tiny reads: ours {same_codec['ratio']:.2f}x "
                    "tonic's requests/s (framing and server, the message format the same).")
    recommendations = _recommendations(findings, target_data)
    data = {
        "grid": grid,
        "runs": [{"contender": c, "values": v, "workload": w, "clients": n,
                  **{f: e[f] for f in FIELDS}, "server": e["server"], "codec": e["codec"]}
                 for (c, v, w, n), e in sorted(runs.items())],
        "best_clients": [{"contender": c, "values": v, "workload": w, "clients": n}
                         for (c, v, w), n in sorted(best.items())],
        "verdict": findings,
        "targets": target_data,
        "records": records,
    }
    return StudyResult("rpc", "RPC: wire format and RPC throughput (CASSANDRA-1735 vs 1765)", summary,
                       tables=tables, charts=charts, targets=study_targets,
                       recommendations=recommendations, data=data)


def _recommendations(findings: list[dict], target_data: dict) -> list[str]:
    out = []
    same_codec = target_data.get("protobuf_ours_over_tonic")
    if same_codec and same_codec["ci"] and same_codec["ci"][0] > 1 + NEGLIGIBLE:
        spreads = [f["spread"]["ratio"] for f in findings if f["values"] == "tiny" and f["spread"]]
        out.append(f"For small unary requests the transport weighs more than the format: the same Protobuf "
                   f"messages in one length-prefixed frame served {same_codec['ratio']:.2f}x the reads of "
                   "gRPC over HTTP/2 (tonic)"
                   + (f", while our formats spread by at most {max(spreads):.2f}x" if spreads else "")
                   + "; where gRPC's streams, deadlines and tooling are not needed, a plain framed "
                   "protocol is the cheaper server.")
    for values in ("tiny", "media"):
        kind = [f for f in findings if f["values"] == values]
        if not kind:
            continue
        if any(f["format_matters"] for f in kind):
            reads = next((f for f in kind if f["workload"] == "read"), kind[0])
            out.append(f"With {VALUE_TITLES[values]}, pick the format for RPC throughput: "
                       f"{reads['fastest'].split(' ', 1)[1]} served the most reads and "
                       f"{reads['slowest'].split(' ', 1)[1]} the fewest ({_pct(reads['spread'])}).")
        else:
            out.append(f"With {VALUE_TITLES[values]}, the format does not decide RPC throughput here: "
                       "choose it for size, schema evolution or tooling.")
    return out
