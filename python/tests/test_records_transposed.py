"""Files array_record writes with transpose:true (Riegeli transposed chunks) read through
shapeshift.records and the CLI exactly as array_record 0.8.6 reads them.

The golden files (crates/records/tests/data/transposed, made by
python/tools/gen_transposed_records.py) are read with both; fresh files with other seeds and
options are written by array_record in the test and read with both.
"""

import importlib.util
import pathlib
import random
import struct
import subprocess
import sys

import pytest

from shapeshift.records import CorruptRecordsError, DataSource, Reader

array_record_module = pytest.importorskip("array_record.python.array_record_module")
ArrayRecordReader = array_record_module.ArrayRecordReader

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "crates/records/tests/data/transposed"
GOLDEN_FILES = sorted(GOLDEN.glob("*.array_record"))
SHAPESHIFT = pathlib.Path(sys.executable).parent / "shapeshift"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_transposed_records", ROOT / "python/tools/gen_transposed_records.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generator = load_generator()


def unframe(data):
    records, pos = [], 0
    while pos < len(data):
        (length,) = struct.unpack_from("<I", data, pos)
        records.append(data[pos + 4 : pos + 4 + length])
        pos += 4 + length
    return records


def assert_reads_like_array_record(path):
    theirs = ArrayRecordReader(str(path))
    expected = theirs.read_all()
    count = theirs.num_records()
    reader = Reader(str(path))
    assert reader.info()["transposed"]
    assert reader.num_records() == count
    assert reader.read_all() == expected
    for index in range(count):
        assert reader.read([index]) == [expected[index]]
    indices = [count - 1, 0, count // 2, count // 2]
    assert reader.read(indices) == theirs.read(indices)
    assert reader.read(1, count - 1) == theirs.read(1, count - 1)
    reader.seek(0)
    assert [reader.read() for _ in range(count)] == expected
    source = DataSource([str(path)])
    assert [source[i] for i in range(count)] == expected
    assert list(source) == expected
    reader.close()
    theirs.close()
    return expected


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda path: path.stem)
def test_golden_files_read_as_array_record_reads_them(path):
    expected = assert_reads_like_array_record(path)
    assert expected == unframe(path.with_suffix(".records").read_bytes())


def test_the_golden_set_is_there():
    assert len(GOLDEN_FILES) == 25


@pytest.mark.parametrize("kind", ["proto", "nonproto", "mixed"])
@pytest.mark.parametrize("compression", ["zstd:1", "brotli:3", "snappy", "uncompressed"])
@pytest.mark.parametrize("group_size", [1, 5, 64])
def test_fresh_files_with_other_seeds(tmp_path, kind, compression, group_size):
    rng = random.Random(f"{kind}{compression}{group_size}")
    records = generator.records_for(kind, rng, 70)
    path = tmp_path / "fresh.array_record"
    generator.write_array_record(path, f"transpose:true,group_size:{group_size},{compression}", records)
    assert assert_reads_like_array_record(path) == records


def test_transpose_bucket_size_and_many_records(tmp_path):
    # Small buckets: every chunk holds many buckets, each decoded on first use.
    rng = random.Random(11)
    records = generator.records_for("mixed", rng, 600)
    path = tmp_path / "buckets.array_record"
    options = "transpose:true,transpose_bucket_size:256,group_size:200,zstd:3"
    generator.write_array_record(path, options, records)
    assert assert_reads_like_array_record(path) == records


def test_cli_cat_and_info(tmp_path):
    path = GOLDEN / "mixed_zstd_g16.array_record"
    cat = subprocess.run(
        [SHAPESHIFT, "records", "cat", "--output-format", "length-prefixed", str(path)],
        capture_output=True,
        check=True,
    )
    assert cat.stdout == path.with_suffix(".records").read_bytes()
    info = subprocess.run([SHAPESHIFT, "records", "info", str(path)], capture_output=True, text=True, check=True)
    assert "chunk layout:    transposed" in info.stdout
    assert "verified:        all 2 chunks read" in info.stdout


def test_a_damaged_transposed_chunk_is_reported(tmp_path):
    data = bytearray((GOLDEN / "proto_zstd_g16.array_record").read_bytes())
    data[64 + 40 + 30] ^= 0x01  # inside the first chunk's data
    path = tmp_path / "damaged.array_record"
    path.write_bytes(bytes(data))
    reader = Reader(str(path))
    with pytest.raises(CorruptRecordsError, match="at byte 104"):
        reader.read([0])
    info = subprocess.run([SHAPESHIFT, "records", "info", str(path)], capture_output=True, text=True)
    assert info.returncode == 1
    assert "verification failed" in info.stderr
