"""shapeshift.records on its own: API surface, round trips, errors, pickling."""

import pickle
import threading

import pytest

from shapeshift.records import CorruptRecordsError, DataSource, FileInstruction, Reader, RecordIndexError, Writer


def write(path, records, options="group_size:1"):
    writer = Writer(str(path), options)
    for record in records:
        writer.write(record)
    writer.close()
    return str(path)


RECORDS = [f"record {i} ".encode() * (i % 9) for i in range(500)]


@pytest.mark.parametrize("options", ["group_size:1", "group_size:7,brotli:3", "group_size:256,snappy", "uncompressed"])
def test_every_read_form(tmp_path, options):
    path = write(tmp_path / "f.ar", RECORDS, options)
    reader = Reader(path)
    assert reader.num_records() == len(RECORDS) == len(reader)
    assert reader.read_all() == RECORDS
    assert reader.read([3, 1, 499, 3]) == [RECORDS[3], RECORDS[1], RECORDS[499], RECORDS[3]]
    assert reader.read(10, 20) == RECORDS[10:20]
    assert reader.read(42) == RECORDS[42]
    assert reader[-1] == RECORDS[-1]
    assert reader.__getitems__([5, 6]) == RECORDS[5:7]
    reader.seek(495)
    assert reader.record_index() == 495
    assert [reader.read() for _ in range(5)] == RECORDS[495:]
    with pytest.raises(IndexError):
        reader.read()
    assert "group_size" in reader.writer_options_string()
    info = reader.info()
    assert info["num_records"] == len(RECORDS) and info["file_size"] % 65536 == 0


def test_writer_accepts_str_and_context_manager(tmp_path):
    path = tmp_path / "f.ar"
    with Writer(path, "group_size:2") as writer:
        writer.write("héllo")
        writer.write(b"\x00")
        assert writer.is_open() and writer.ok()
    assert not writer.is_open()
    assert Reader(path).read_all() == ["héllo".encode(), b"\x00"]
    with pytest.raises(RuntimeError):
        writer.write(b"late")


def test_out_of_range_and_bad_options(tmp_path):
    path = write(tmp_path / "f.ar", RECORDS[:3])
    reader = Reader(path)
    with pytest.raises(IndexError, match="record index 3"):
        reader.read(3)
    with pytest.raises(IndexError):
        reader.read([0, 7])
    with pytest.raises(ValueError):
        Writer(str(tmp_path / "g.ar"), "zstd:99")
    with pytest.raises(ValueError):
        Reader(path, "no_such_option")
    with pytest.raises(FileNotFoundError):
        Reader(str(tmp_path / "missing.ar"))


def test_corrupt_file_names_file_and_offset(tmp_path):
    path = write(tmp_path / "f.ar", RECORDS[:20])
    data = bytearray(open(path, "rb").read())
    data[64 + 40 + 2] ^= 0xFF  # the first data chunk
    open(path, "wb").write(bytes(data))
    reader = Reader(path)
    with pytest.raises(CorruptRecordsError, match=r"f\.ar: at byte \d+"):
        reader.read(0)
    assert reader.read(1) == RECORDS[1]
    open(path, "wb").write(b"not a record file" * 5000)
    with pytest.raises(CorruptRecordsError, match="wrong magic"):
        Reader(path)


def test_reader_pickles_and_takes_array_record_keywords(tmp_path):
    path = write(tmp_path / "f.ar", RECORDS[:10])
    reader = Reader(path, "readahead_buffer_size:0", file_reader_buffer_size=32768)
    clone = pickle.loads(pickle.dumps(reader))
    assert clone.read_all() == RECORDS[:10]
    Writer(str(tmp_path / "g.ar"), "group_size:1", file_options=None).close()


def test_data_source_multiple_files_instructions_and_pickle(tmp_path):
    first = write(tmp_path / "a.ar", RECORDS[:100])
    second = write(tmp_path / "b.ar", RECORDS[100:300])
    source = DataSource([first, FileInstruction(second, skip=10, take=50), f"{first}[90:100]"])
    assert len(source) == 160
    assert source[0] == RECORDS[0]
    assert source[100] == RECORDS[110]
    assert source[155] == RECORDS[95]
    keys = [159, 0, 120, 100, 3]
    assert source.__getitems__(keys) == [source[k] for k in keys]
    with pytest.raises(RecordIndexError):
        source[160]
    with pytest.raises(ValueError):
        source[-1]
    clone = pickle.loads(pickle.dumps(source))
    assert list(clone) == list(source)


def test_concurrent_random_reads(tmp_path):
    path = write(tmp_path / "f.ar", RECORDS, "group_size:4")
    reader = Reader(path)
    errors = []

    def work(offset):
        try:
            for i in range(offset, len(RECORDS), 7):
                assert reader.read(i) == RECORDS[i]
                assert reader.read([i]) == [RECORDS[i]]
        except Exception as error:  # noqa: BLE001 - surfaced below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


def test_dictionary_extension_round_trip(tmp_path):
    records = [(" ".join(["lorem", "ipsum", str(i % 50)] * 30)).encode() for i in range(3000)]
    plain = write(tmp_path / "plain.ar", records, "group_size:1,zstd:3")
    shared = write(tmp_path / "dict.ar", records, "group_size:1,zstd:3,zstd_dictionary:8192")
    reader = Reader(shared)
    assert reader.read_all() == records
    assert reader.info()["compression"] == "zstd+dictionary"
    assert reader.info()["footer_offset"] < Reader(plain).info()["footer_offset"]


@pytest.mark.parametrize("options", ["group_size:1,zstd:3", "group_size:1,brotli:3", "group_size:7,zstd:1",
                                     "group_size:256,snappy", "group_size:1,uncompressed", "group_size:3,uncompressed"])
@pytest.mark.parametrize("reader_options", ["", "max_parallelism:1"])
def test_parallel_batches_out_of_order_with_repeats(tmp_path, options, reader_options):
    # Records of 0, 1 and many bytes: empty and one-byte bytes objects are special in CPython.
    records = [bytes([i % 251]) * (i % 5 if i % 3 else 3000 + i) for i in range(1200)]
    path = write(tmp_path / "f.ar", records, options)
    reader = Reader(path, reader_options)
    import random

    keys = [random.Random(7).randrange(len(records)) for _ in range(3)]
    order = list(range(len(records)))
    random.Random(11).shuffle(order)
    order += order[:300] + keys * 4  # repeats, also of the same chunk
    assert reader.read(order) == [records[i] for i in order]
    assert reader.__getitems__(order[:50]) == [records[i] for i in order[:50]]
    assert DataSource([path]).__getitems__(order) == [records[i] for i in order]
    assert reader.read([]) == []
    with pytest.raises(IndexError):  # an empty range is an error, as in array_record
        reader.read(5, 5)
    assert reader.read_all() == records
    with pytest.raises(IndexError):
        reader.read([0, len(records)])


def test_damaged_chunk_fails_only_the_batches_that_need_it(tmp_path):
    records = [f"record {i}".encode() * 40 for i in range(50)]
    path = write(tmp_path / "f.ar", records, "group_size:1,zstd:3")
    data = bytearray(open(path, "rb").read())
    data[64 + 40 + 3] ^= 0xFF  # inside record 0's chunk data
    open(path, "wb").write(bytes(data))
    reader = Reader(path)
    with pytest.raises(CorruptRecordsError, match="at byte"):
        reader.read([5, 0, 7])
    with pytest.raises(CorruptRecordsError):
        reader.read_all()
    assert reader.read([7, 5, 7]) == [records[7], records[5], records[7]]


def test_close_and_ranges_behave_as_array_record(tmp_path):
    from shapeshift.records import ArrayRecordReader, ArrayRecordWriter, CorruptRecordsError
    path = str(tmp_path / "f.ar")
    writer = ArrayRecordWriter(path)
    for index in range(5):
        writer.write(b"r%d" % index)
    writer.close()
    reader = ArrayRecordReader(path)
    assert reader.read(-1, 5) == [b"r4"]
    assert reader.read(-3, -1) == [b"r2", b"r3"]
    for begin, end in [(0, 0), (3, 2), (-100, 2), (1, -6), (0, 6)]:
        with pytest.raises(IndexError):
            reader.read(begin, end)
    with pytest.raises(RuntimeError):  # array_record raises RuntimeError for batch indices
        reader.read([7])
    reader.close()
    assert not reader.is_open() and reader.num_records() == 0
    for call in (reader.read, reader.read_all, lambda: reader.read([0]), lambda: reader.seek(0)):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    with open(path, "r+b") as damaged:
        damaged.seek(100)
        damaged.write(b"\xff" * 8)
    with pytest.raises(RuntimeError):  # CorruptRecordsError is a RuntimeError too
        ArrayRecordReader(path).read_all()
    assert issubclass(CorruptRecordsError, ValueError)
