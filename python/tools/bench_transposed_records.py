"""Read speed of a transposed ArrayRecord file: shapeshift.records against array_record 0.8.6,
measured in the same run.

array_record writes the file (`transpose:true`, Example-like and Kitchen protobuf records from
gen_transposed_records.py, plus non-proto records when --kind mixed); both libraries then read
it: `read_all()`, random single reads (`read([i])` of shuffled indices) and a sequential pass
(`read()` after `seek(0)`). Prints the best-of-`--repeat` time of each and the ratio, with the
machine load before and after (os.getloadavg), since shared machines skew such figures.

Run: .venv/bin/python python/tools/bench_transposed_records.py [--records 20000] [--group-size 64]
     [--compression zstd:3] [--kind proto|nonproto|mixed] [--reader-options max_parallelism:1]
"""

import argparse
import importlib.util
import os
import pathlib
import random
import tempfile
import timeit

from array_record.python.array_record_module import ArrayRecordReader

from shapeshift.records import Reader

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("gen_transposed_records", HERE / "gen_transposed_records.py")
generator = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generator)


def best(function, repeat):
    return min(timeit.repeat(function, number=1, repeat=repeat))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--group-size", type=int, default=64)
    parser.add_argument("--compression", default="zstd:3")
    parser.add_argument("--kind", default="proto", choices=["proto", "nonproto", "mixed"])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--random-reads", type=int, default=2000)
    parser.add_argument("--reader-options", default="", help="shapeshift's reader options, e.g. max_parallelism:1")
    args = parser.parse_args()

    records = generator.records_for(args.kind, random.Random(1), args.records)
    options = f"transpose:true,group_size:{args.group_size},{args.compression}"
    with tempfile.TemporaryDirectory() as directory:
        path = pathlib.Path(directory) / "bench.array_record"
        generator.write_array_record(path, options, records)
        size = path.stat().st_size
        print(f"file: {args.records} {args.kind} records, {sum(map(len, records))} bytes, options {options}, "
              f"{size} bytes on disk")
        print(f"shapeshift reader options: {args.reader_options!r}; array_record's defaults")
        print(f"load before: {os.getloadavg()}")
        ours, theirs = Reader(str(path), args.reader_options), ArrayRecordReader(str(path))
        assert ours.read_all() == theirs.read_all() == records
        indices = list(range(args.records))
        random.Random(2).shuffle(indices)
        indices = indices[: args.random_reads]

        def sequential(reader):
            reader.seek(0)
            for _ in range(args.records):
                reader.read()

        cases = [
            ("read_all()", lambda r: r.read_all()),
            (f"{len(indices)} x read([i]) random", lambda r: [r.read([i]) for i in indices]),
            ("sequential read() pass", sequential),
        ]
        for name, case in cases:
            mine = best(lambda: case(ours), args.repeat)
            peer = best(lambda: case(theirs), args.repeat)
            print(f"{name:32s} shapeshift {mine * 1e3:9.2f} ms   array_record {peer * 1e3:9.2f} ms   "
                  f"ratio {peer / mine:5.2f}x")
        print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
