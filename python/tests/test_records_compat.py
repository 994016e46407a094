"""shapeshift.records against pip array-record 0.8.6, both directions."""

import random

import pytest

from shapeshift.records import DataSource, Reader, Writer

array_record_module = pytest.importorskip("array_record.python.array_record_module")
array_record_data_source = pytest.importorskip("array_record.python.array_record_data_source")
ArrayRecordWriter = array_record_module.ArrayRecordWriter
ArrayRecordReader = array_record_module.ArrayRecordReader
ArrayRecordDataSource = array_record_data_source.ArrayRecordDataSource


def sample(count, seed=7):
    rng = random.Random(seed)
    words = ["lorem", "ipsum", "dolor", "sit", "amet", "elit", "sed", "do", "tempor"]
    return [" ".join(rng.choice(words) for _ in range(rng.randrange(0, 120))).encode() for _ in range(count)]


COMPRESSIONS = ["uncompressed", "snappy", "zstd:1", "zstd:3", "zstd:7", "brotli:1", "brotli:5", "brotli:9"]
GROUP_SIZES = [1, 7, 256]


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("group_size", GROUP_SIZES)
def test_array_record_reads_our_files(tmp_path, compression, group_size):
    records = sample(600)
    path = str(tmp_path / "ours.ar")
    writer = Writer(path, f"group_size:{group_size},{compression}")
    for record in records:
        writer.write(record)
    writer.close()
    reader = ArrayRecordReader(path)
    assert reader.num_records() == len(records)
    assert reader.read_all() == records
    assert reader.read([599, 0, 300]) == [records[599], records[0], records[300]]
    reader.seek(590)
    assert [reader.read() for _ in range(10)] == records[590:]
    if group_size == 1:
        source = ArrayRecordDataSource([path])
        assert len(source) == len(records)
        assert source[123] == records[123]
        assert source.__getitems__([5, 599, 5]) == [records[5], records[599], records[5]]


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("group_size", GROUP_SIZES)
def test_we_read_array_record_files(tmp_path, compression, group_size):
    records = sample(600, seed=group_size)
    path = str(tmp_path / "peer.ar")
    writer = ArrayRecordWriter(path, f"group_size:{group_size},{compression}")
    for record in records:
        writer.write(record)
    writer.close()
    reader = Reader(path)
    assert reader.num_records() == len(records)
    assert reader.read_all() == records
    assert reader.read([599, 0, 300]) == [records[599], records[0], records[300]]
    assert reader.read(17) == records[17]
    assert reader.read(100, 110) == records[100:110]
    assert [reader.read() for _ in range(5)] == records[:5]
    source = DataSource([path])
    assert source.__getitems__([1, 2]) == records[1:3]


@pytest.mark.parametrize("count", [0, 1])
def test_empty_and_single_record_files_both_ways(tmp_path, count):
    records = [b"the only record"][:count]
    peer = str(tmp_path / "peer.ar")
    ours = str(tmp_path / "ours.ar")
    writer = ArrayRecordWriter(peer, "group_size:1")
    for record in records:
        writer.write(record)
    writer.close()
    writer = Writer(ours, "group_size:1")
    for record in records:
        writer.write(record)
    writer.close()
    assert Reader(peer).read_all() == records
    assert ArrayRecordReader(ours).read_all() == records
    assert ArrayRecordReader(ours).num_records() == count


@pytest.mark.parametrize("options", ["group_size:1,zstd:3", "group_size:1,uncompressed", "group_size:256,brotli:7"])
def test_identical_options_give_matching_sizes(tmp_path, options):
    records = sample(2000, seed=3)
    peer = str(tmp_path / "peer.ar")
    ours = str(tmp_path / "ours.ar")
    writer = ArrayRecordWriter(peer, options)
    for record in records:
        writer.write(record)
    writer.close()
    writer = Writer(ours, options + ",max_parallelism:1")
    for record in records:
        writer.write(record)
    writer.close()
    peer_data = Reader(peer).info()["footer_offset"]
    our_data = Reader(ours).info()["footer_offset"]
    assert abs(our_data - peer_data) <= 0.005 * peer_data


def test_peer_writer_options_survive(tmp_path):
    path = str(tmp_path / "peer.ar")
    writer = ArrayRecordWriter(path, "group_size:3,brotli:4")
    writer.write(b"a")
    writer.close()
    assert Reader(path).writer_options_string() == ArrayRecordReader(path).writer_options_string()
    assert Reader(path).info()["group_size"] == 3


@pytest.mark.parametrize("options", ["group_size:1,zstd:3", "group_size:64,brotli:3"])
def test_pipelined_writer_output_is_read_by_array_record(tmp_path, options):
    # About 8 MiB: several encoding batches go to the pool while write() goes on.
    records = [record * 10 for record in sample(6000, seed=3)]
    path = str(tmp_path / "big.ar")
    with Writer(path, options) as writer:
        for record in records:
            writer.write(record)
    reader = ArrayRecordReader(path)
    assert reader.num_records() == len(records)
    assert reader.read_all() == records
    ours = Reader(path)
    assert [ours.read() for _ in range(len(records))] == records


@pytest.mark.parametrize("options", ["group_size:1,zstd:1", "group_size:256,zstd:7",
                                     "group_size:7,zstd:1", "group_size:256,uncompressed"])
def test_same_call_writes_the_same_file_as_array_record(tmp_path, options):
    # Records of up to ~3 KB, so chunks' value buffers fall on both sides of the 4,096 bytes
    # from which Riegeli streams them to libzstd without the size (no content size in the frame).
    records = sample(900, seed=11) + [record * 30 for record in sample(40, seed=12)]
    ours, theirs = str(tmp_path / "ours.ar"), str(tmp_path / "theirs.ar")
    writer, peer = Writer(ours, options), ArrayRecordWriter(theirs, options)
    for record in records:
        writer.write(record)
        peer.write(record)
    writer.close()
    peer.close()
    assert Reader(ours).writer_options_string() == ArrayRecordReader(theirs).writer_options_string()
    with open(ours, "rb") as mine, open(theirs, "rb") as peers:
        assert mine.read() == peers.read()


def test_default_options_are_array_records(tmp_path):
    ours, theirs = str(tmp_path / "ours.ar"), str(tmp_path / "theirs.ar")
    for path, writer_class in ((ours, Writer), (theirs, ArrayRecordWriter)):
        writer = writer_class(path)
        writer.write(b"record")
        writer.close()
    assert Reader(ours).writer_options_string() == ArrayRecordReader(theirs).writer_options_string()
    assert Reader(ours).writer_options_string().startswith("group_size:1,")
