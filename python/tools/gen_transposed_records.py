"""Writes golden record files with transposed chunks, using the peer, array_record 0.8.6.

array_record writes Riegeli transposed chunks (type 't') when its options say
`transpose:true`: records that parse as protocol buffers are split into per-field buffers,
the others travel whole ("non-proto" records). For each case this writes

- `<case>.array_record`: the file array_record wrote for the case's records and options;
- `<case>.records`: the records array_record reads back from it (`read_all()`), each as a
  4-byte little-endian length followed by its bytes.

The Rust test `crates/records/tests/transposed.rs` reads every file with shapeshift and
compares with `<case>.records`; python/tests/test_records_transposed.py does the same
through Python against array_record itself (and writes fresh files with other seeds).

Records: "proto" records are serialized messages built with the `protobuf` package from
two schemas declared below: an Example-like one (map of features holding bytes, packed
floats and packed int64s, as tf.train.Example) and a proto2 "Kitchen" message covering
every wire type (varints of 1 to 10 bytes, negative ints, fixed32/64, strings, bytes,
nested and empty submessages, unpacked repeated fields, a group, tags of 1 to 5 bytes)
plus empty records. "nonproto" records are random bytes that do not parse as protobuf.
"mixed" interleaves both.

Run: .venv/bin/python python/tools/gen_transposed_records.py crates/records/tests/data/transposed
"""

import pathlib
import random
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def _field(message, name, number, kind, label=F.LABEL_OPTIONAL, type_name=None, packed=None):
    field = message.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        field.type_name = type_name
    if packed is not None:
        field.options.packed = packed
    return field


def _schemas():
    """Message classes (Example, Kitchen) declared from descriptors, no generated code."""
    example = descriptor_pb2.FileDescriptorProto(name="golden_example.proto", package="golden", syntax="proto3")
    bytes_list = example.message_type.add(name="BytesList")
    _field(bytes_list, "value", 1, F.TYPE_BYTES, F.LABEL_REPEATED)
    float_list = example.message_type.add(name="FloatList")
    _field(float_list, "value", 1, F.TYPE_FLOAT, F.LABEL_REPEATED, packed=True)
    int64_list = example.message_type.add(name="Int64List")
    _field(int64_list, "value", 1, F.TYPE_INT64, F.LABEL_REPEATED, packed=True)
    feature = example.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (name, type_name) in enumerate(
        [("bytes_list", "BytesList"), ("float_list", "FloatList"), ("int64_list", "Int64List")], start=1
    ):
        _field(feature, name, number, F.TYPE_MESSAGE, type_name=f".golden.{type_name}").oneof_index = 0
    features = example.message_type.add(name="Features")
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    _field(entry, "key", 1, F.TYPE_STRING)
    _field(entry, "value", 2, F.TYPE_MESSAGE, type_name=".golden.Feature")
    _field(features, "feature", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, type_name=".golden.Features.FeatureEntry")
    top = example.message_type.add(name="Example")
    _field(top, "features", 1, F.TYPE_MESSAGE, type_name=".golden.Features")

    kitchen_file = descriptor_pb2.FileDescriptorProto(name="golden_kitchen.proto", package="golden", syntax="proto2")
    kitchen = kitchen_file.message_type.add(name="Kitchen")
    _field(kitchen, "small", 1, F.TYPE_UINT32)
    _field(kitchen, "big", 2, F.TYPE_UINT64)
    _field(kitchen, "negative", 3, F.TYPE_INT32)
    _field(kitchen, "zigzag", 4, F.TYPE_SINT64)
    _field(kitchen, "flag", 5, F.TYPE_BOOL)
    _field(kitchen, "f32", 6, F.TYPE_FIXED32)
    _field(kitchen, "f64", 7, F.TYPE_FIXED64)
    _field(kitchen, "real", 8, F.TYPE_DOUBLE)
    _field(kitchen, "name", 9, F.TYPE_STRING)
    _field(kitchen, "blob", 10, F.TYPE_BYTES)
    _field(kitchen, "child", 11, F.TYPE_MESSAGE, type_name=".golden.Kitchen")
    _field(kitchen, "children", 12, F.TYPE_MESSAGE, F.LABEL_REPEATED, type_name=".golden.Kitchen")
    _field(kitchen, "numbers", 13, F.TYPE_INT32, F.LABEL_REPEATED)
    _field(kitchen, "sfixed", 15, F.TYPE_SFIXED32)
    _field(kitchen, "two_byte_tag", 16, F.TYPE_UINT32)
    _field(kitchen, "three_byte_tag", 2048, F.TYPE_STRING)
    _field(kitchen, "five_byte_tag", 536870911, F.TYPE_UINT64)
    group = kitchen.nested_type.add(name="Grouped")
    _field(group, "inside", 18, F.TYPE_UINT32)
    _field(group, "label", 19, F.TYPE_STRING)
    _field(kitchen, "grouped", 17, F.TYPE_GROUP, type_name=".golden.Kitchen.Grouped")

    pool = descriptor_pool.DescriptorPool()
    pool.Add(example)
    pool.Add(kitchen_file)
    example_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("golden.Example"))
    kitchen_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("golden.Kitchen"))
    return example_class, kitchen_class


Example, Kitchen = _schemas()


def example_record(rng):
    example = Example()
    for index in range(rng.randrange(0, 5)):
        feature = example.features.feature[f"feature_{index}_{rng.randrange(100)}"]
        kind = rng.randrange(3)
        if kind == 0:
            feature.bytes_list.value.extend(rng.randbytes(rng.randrange(0, 12)) for _ in range(rng.randrange(0, 4)))
        elif kind == 1:
            feature.float_list.value.extend(rng.uniform(-1e3, 1e3) for _ in range(rng.randrange(0, 6)))
        else:
            feature.int64_list.value.extend(rng.randrange(-(2**63), 2**63) for _ in range(rng.randrange(0, 6)))
    return example.SerializeToString()


def kitchen_message(rng, depth=0):
    message = Kitchen()
    if rng.random() < 0.7:
        message.small = rng.randrange(0, 200)  # inline varints (< 128) and 2-byte ones
    if rng.random() < 0.5:
        message.big = rng.choice([0, 1, 127, 128, 2**35, 2**63, 2**64 - 1, rng.randrange(2**64)])
    if rng.random() < 0.4:
        message.negative = rng.randrange(-(2**31), 0)  # 10-byte varints
    if rng.random() < 0.4:
        message.zigzag = rng.randrange(-(2**40), 2**40)
    if rng.random() < 0.3:
        message.flag = rng.random() < 0.5
    if rng.random() < 0.4:
        message.f32 = rng.randrange(2**32)
    if rng.random() < 0.4:
        message.f64 = rng.randrange(2**64)
    if rng.random() < 0.3:
        message.real = rng.uniform(-1e9, 1e9)
    if rng.random() < 0.6:
        message.name = "".join(rng.choice("abcxyz ✓Ю") for _ in range(rng.randrange(0, 20)))
    if rng.random() < 0.4:
        message.blob = rng.randbytes(rng.choice([0, 1, 5, 130]))
    if depth < 3 and rng.random() < 0.4:
        message.child.CopyFrom(kitchen_message(rng, depth + 1))
    if depth < 2:
        for _ in range(rng.randrange(0, 3)):
            message.children.add().CopyFrom(kitchen_message(rng, depth + 1))
    if depth < 3 and rng.random() < 0.15:
        message.child.SetInParent()  # an empty submessage
    message.numbers.extend(rng.randrange(-5, 300) for _ in range(rng.randrange(0, 4)))
    if rng.random() < 0.3:
        message.sfixed = rng.randrange(-(2**31), 2**31)
    if rng.random() < 0.3:
        message.two_byte_tag = rng.randrange(0, 2**20)
    if rng.random() < 0.2:
        message.three_byte_tag = "t" * rng.randrange(0, 5)
    if rng.random() < 0.2:
        message.five_byte_tag = rng.randrange(0, 300)
    if rng.random() < 0.3:
        message.grouped.inside = rng.randrange(0, 1000)
        if rng.random() < 0.5:
            message.grouped.label = "in a group"
    return message


def proto_record(rng):
    choice = rng.random()
    if choice < 0.08:
        return b""
    if choice < 0.5:
        return example_record(rng)
    return kitchen_message(rng).SerializeToString()


def parses_as_proto(data):
    """Whether `data` is a sequence of well-formed protobuf fields (what Riegeli checks)."""
    pos = 0

    def varint():
        nonlocal pos
        value = shift = 0
        while True:
            if pos >= len(data) or shift > 63:
                raise ValueError
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    try:
        groups = []
        while pos < len(data):
            tag = varint()
            wire, number = tag & 7, tag >> 3
            if number == 0:
                return False
            if wire == 0:
                varint()
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            elif wire == 2:
                pos += varint()
            elif wire == 3:
                groups.append(number)
            elif wire == 4:
                if not groups or groups.pop() != number:
                    return False
            else:
                return False
            if pos > len(data):
                return False
        return not groups
    except ValueError:
        return False


def nonproto_record(rng):
    while True:
        data = rng.randbytes(rng.choice([1, 3, 17, 64, 200]))
        if not parses_as_proto(data):
            return data


def records_for(kind, rng, count):
    if kind == "proto":
        return [proto_record(rng) for _ in range(count)]
    if kind == "nonproto":
        return [nonproto_record(rng) for _ in range(count)]
    return [proto_record(rng) if rng.random() < 0.5 else nonproto_record(rng) for _ in range(count)]


COMPRESSIONS = {"zstd": "zstd:3", "brotli": "brotli:6", "snappy": "snappy", "none": "uncompressed"}


def cases():
    """(name, options, kind, record count, seed) of every golden file."""
    for seed, (compression, option) in enumerate(COMPRESSIONS.items()):
        for kind in ("proto", "nonproto", "mixed"):
            for group_size in (1, 16):
                yield (f"{kind}_{compression}_g{group_size}", f"transpose:true,group_size:{group_size},{option}",
                       kind, 24, seed * 100 + group_size)
    # One chunk larger than a 64 KiB block, so its data spans block headers.
    yield ("proto_none_spanning", "transpose:true,group_size:400,uncompressed", "proto", 380, 7)


def write_array_record(path, options, records):
    from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

    writer = ArrayRecordWriter(str(path), options)
    for record in records:
        writer.write(record)
    writer.close()
    reader = ArrayRecordReader(str(path))
    read_back = reader.read_all()
    reader.close()
    return read_back


def frame(records):
    return b"".join(struct.pack("<I", len(record)) + record for record in records)


def main(out_dir):
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, options, kind, count, seed in cases():
        records = records_for(kind, random.Random(seed), count)
        read_back = write_array_record(out / f"{name}.array_record", options, records)
        assert read_back == records, f"{name}: array_record did not read back what it wrote"
        (out / f"{name}.records").write_bytes(frame(read_back))
        print(name, options, len(records), "records")


if __name__ == "__main__":
    main(sys.argv[1])
