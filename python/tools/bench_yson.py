"""Times shapeshift.yson against yt.yson (C++ bindings) on 100k mixed rows, same run.

    .venv/bin/python python/tools/bench_yson.py [rows]

Rows hold ints, floats, strings, a nested list and a nested map. Prints the best of 7 runs (CPU time)
for loads and dumps, per format, for both always_create_attributes settings.
"""

import random
import sys
import time

import yt.yson as peer

from shapeshift import yson as ours


def make_rows(count):
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    rows = []
    for i in range(count):
        rows.append({
            "id": i,
            "score": rng.random() * 1000,
            "name": " ".join(rng.choice(words) for _ in range(3)),
            "count": rng.randrange(-10 ** 9, 10 ** 9),
            "flag": rng.random() < 0.5,
            "tags": [rng.choice(words) for _ in range(rng.randrange(4))],
            "meta": {"x": rng.randrange(100), "y": rng.random(), "z": rng.choice(words)},
            "missing": None,
        })
    return rows


def best(fn, repeat=7):
    """Best of `repeat` runs in seconds of process CPU time (the machine may be shared:
    CPU time is steadier than wall time; both libraries run single-threaded)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rows = make_rows(count)
    print(f"{count} rows; best of 7 runs, process CPU time in ms")
    print(f"{'format':8} {'operation':34} {'shapeshift':>10} {'yt.yson':>10} {'speedup':>8}")
    for fmt in ("binary", "text"):
        data = peer.dumps(rows, yson_format=fmt, yson_type="list_fragment")
        assert ours.dumps(rows, yson_format=fmt, yson_type="list_fragment") == data
        results = [
            ("dumps", best(lambda: ours.dumps(rows, yson_format=fmt, yson_type="list_fragment")),
             best(lambda: peer.dumps(rows, yson_format=fmt, yson_type="list_fragment"))),
        ]
        for create in (True, False):
            results.append((
                f"loads(always_create_attributes={create})",
                best(lambda: list(ours.loads(data, yson_type="list_fragment",
                                             always_create_attributes=create))),
                best(lambda: list(peer.loads(data, yson_type="list_fragment",
                                             always_create_attributes=create))),
            ))
        for name, mine, theirs in results:
            print(f"{fmt:8} {name:34} {mine * 1e3:10.1f} {theirs * 1e3:10.1f} {theirs / mine:7.2f}x")
        print(f"{fmt:8} {'(size MB)':34} {len(data) / 1e6:10.1f}")


if __name__ == "__main__":
    main()
