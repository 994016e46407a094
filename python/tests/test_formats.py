"""shapeshift.formats: every registry format from Python, one-shot and streaming, pyarrow in/out,
errors that name the format, byte offset and row."""

import decimal
import io

import pyarrow as pa
import pytest

from shapeshift import formats

ALL_TYPES = [
    {"name": "i8", "type_v3": "int8"},
    {"name": "i16", "type_v3": "int16"},
    {"name": "i32", "type_v3": "int32"},
    {"name": "i64", "type_v3": "int64"},
    {"name": "u8", "type_v3": "uint8"},
    {"name": "u16", "type_v3": "uint16"},
    {"name": "u32", "type_v3": "uint32"},
    {"name": "u64", "type_v3": "uint64"},
    {"name": "f", "type_v3": "float"},
    {"name": "d", "type_v3": "double"},
    {"name": "b", "type_v3": "bool"},
    {"name": "s", "type_v3": "string"},
    {"name": "u", "type_v3": "utf8"},
    {"name": "j", "type_v3": "json"},
    {"name": "uuid", "type_v3": "uuid"},
    {"name": "date", "type_v3": "date"},
    {"name": "datetime", "type_v3": "datetime"},
    {"name": "timestamp", "type_v3": "timestamp"},
    {"name": "interval", "type_v3": "interval"},
    {"name": "date32", "type_v3": "date32"},
    {"name": "datetime64", "type_v3": "datetime64"},
    {"name": "timestamp64", "type_v3": "timestamp64"},
    {"name": "interval64", "type_v3": "interval64"},
    {"name": "y", "type_v3": {"type_name": "optional", "item": "yson"}},
    {"name": "dec", "type_v3": {"type_name": "decimal", "precision": 10, "scale": 2}},
    {"name": "opt", "type_v3": {"type_name": "optional", "item": "int64"}},
    {"name": "oo", "type_v3": {"type_name": "optional", "item": {"type_name": "optional", "item": "string"}}},
    {"name": "l", "type_v3": {"type_name": "list", "item": "int64"}},
    {"name": "st", "type_v3": {"type_name": "struct", "members": [
        {"name": "a", "type": "int64"},
        {"name": "b", "type": {"type_name": "optional", "item": "utf8"}},
    ]}},
    {"name": "t", "type_v3": {"type_name": "tuple", "elements": [{"type": "int64"}, {"type": "string"}]}},
    {"name": "vs", "type_v3": {"type_name": "variant", "members": [
        {"name": "x", "type": "int64"}, {"name": "y", "type": "string"},
    ]}},
    {"name": "vt", "type_v3": {"type_name": "variant", "elements": [{"type": "int64"}, {"type": "utf8"}]}},
    {"name": "dict", "type_v3": {"type_name": "dict", "key": "utf8", "value": {"type_name": "list", "item": "double"}}},
    {"name": "tag", "type_v3": {"type_name": "tagged", "tag": "image/png", "item": "string"}},
]

# decimal(10, 2) is 8 bytes: the unscaled value, big-endian, with the sign bit flipped.
DEC_123_45 = (12345 ^ (1 << 63)).to_bytes(8, "big")
DEC_MINUS_1 = ((-100) & ((1 << 64) - 1) ^ (1 << 63)).to_bytes(8, "big")


def full_row(i):
    return {
        "i8": -128 + i, "i16": -32768, "i32": 2**31 - 1, "i64": -(2**63) + i,
        "u8": 255, "u16": 65535, "u32": 2**32 - 1, "u64": 2**64 - 1 - i,
        "f": 1.5, "d": -0.1 * i, "b": i % 2 == 0,
        "s": bytes([0, 255, i]), "u": "héllo ✓", "j": '{"a": [1, 2]}',
        "uuid": bytes(range(16)), "date": 19000 + i, "datetime": 1_700_000_000,
        "timestamp": 1_700_000_000_000_000, "interval": -5, "date32": -1000,
        "datetime64": -86400, "timestamp64": -1, "interval64": 2**40,
        "y": {"k": [1, "v", None, 2.5]}, "dec": DEC_123_45 if i else DEC_MINUS_1,
        "opt": None if i else 7, "oo": [[None], [b"x"], None][i % 3],
        "l": list(range(i)), "st": {"a": i, "b": None if i else "z"},
        "t": (i, b"t"), "vs": ("y", b"q") if i else ("x", 3), "vt": (1, "w"),
        "dict": {"k": [1.0, float("inf")], "m": []}, "tag": b"\x89PNG",
    }


ROWS = [full_row(i) for i in range(3)]


def test_every_registry_format_is_reachable():
    assert set(formats.FORMATS) >= {
        "yson", "yson-text", "skiff", "protobuf", "protobuf-dynamic", "arrow", "json", "msgpack",
        "cbor", "avro",
    }
    with pytest.raises(ValueError, match="unknown format"):
        formats.dumps([], format="no-such-format", schema=ALL_TYPES)


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_round_trip_of_every_type(fmt):
    data = formats.dumps(ROWS, format=fmt, schema=ALL_TYPES)
    assert formats.loads(data, format=fmt, schema=ALL_TYPES) == ROWS


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_streaming_equals_one_shot(fmt):
    one_shot = formats.dumps(ROWS, format=fmt, schema=ALL_TYPES)
    out = io.BytesIO()
    with formats.Writer(out, fmt, ALL_TYPES) as writer:
        writer.write(ROWS[0])
        writer.write_rows(iter(ROWS[1:]))
        assert writer.rows_written == len(ROWS)
    streamed = out.getvalue()
    if fmt != "avro":  # an Avro container starts with a random sync marker
        assert streamed == one_shot
    with formats.Reader(io.BytesIO(streamed), fmt, ALL_TYPES) as reader:
        assert list(reader) == ROWS
        assert reader.rows_read == len(ROWS)
    assert list(formats.load(one_shot, fmt, ALL_TYPES)) == ROWS
    assert list(formats.load(memoryview(one_shot), fmt, ALL_TYPES)) == ROWS


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_a_codec_gives_the_functions_bytes_and_rows_call_after_call(fmt):
    codec = formats.codec(fmt, ALL_TYPES)
    assert codec.format == fmt
    one_shot = formats.dumps(ROWS, format=fmt, schema=ALL_TYPES)
    for _ in range(3):  # nothing of one call is left in the next
        data = codec.dumps(ROWS)
        if fmt != "avro":  # an Avro container starts with a random sync marker
            assert data == one_shot
        assert codec.loads(data) == ROWS
        assert codec.loads(one_shot) == ROWS
    assert codec.loads(codec.dumps([])) == []
    with pytest.raises(formats.FormatError) as raised:
        codec.loads(one_shot[: len(one_shot) - 5])
    assert fmt.startswith(raised.value.format)
    with pytest.raises(formats.FormatError):
        codec.dumps([{"i8": "not an int"}])


def test_a_codec_refuses_an_unknown_format_and_a_bad_schema():
    with pytest.raises(ValueError):
        formats.codec("no-such-format", ALL_TYPES)
    with pytest.raises(ValueError):
        formats.codec("yson", [{"name": "a", "type_v3": "no-such-type"}])


def _column(type_v3):
    return [{"name": "c", "type_v3": type_v3}]


WALKED = [{"name": "c", "type_v3": {"type_name": "list", "item": {"type_name": "struct", "members": [
    {"name": name, "type": ty} for name, ty in [
        ("i8", "int8"), ("i64", "int64"), ("u16", "uint16"), ("u64", "uint64"), ("date", "date"),
        ("interval", "interval"), ("timestamp64", "timestamp64"), ("d", "double"), ("b", "bool"),
        ("s", "string"), ("u", "utf8"), ("j", "json"), ("o", {"type_name": "optional", "item": "int32"}),
        ("t", {"type_name": "tuple", "elements": [{"type": "utf8"}, {"type": {"type_name": "list", "item": "int16"}}]}),
        ("tag", {"type_name": "tagged", "tag": "x", "item": {"type_name": "list", "item": "double"}}),
    ]
]}}}]
WALKED_ROWS = [{"c": [
    {"i8": -128, "i64": -(1 << 63), "u16": 65535, "u64": (1 << 64) - 1, "date": 0, "interval": -5,
     "timestamp64": -1, "d": -0.5, "b": True, "s": b"\x00\xff", "u": "\u1234", "j": "{}", "o": None,
     "t": ("a", [-32768, 32767]), "tag": [1.5, float("inf")]},
    {"i8": 127, "i64": 7, "u16": 0, "u64": 0, "date": 49672, "interval": 5, "timestamp64": 1,
     "d": 0.0, "b": False, "s": b"", "u": "", "j": "[]", "o": -7, "t": ("", []), "tag": []},
]}, {"c": []}]


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_composites_of_every_walked_type_read_back_in_every_format(fmt):
    data = formats.dumps(WALKED_ROWS, fmt, WALKED)
    assert formats.loads(data, fmt, WALKED) == WALKED_ROWS
    assert formats.codec(fmt, WALKED).loads(data) == WALKED_ROWS


def test_composite_values_the_direct_walk_leaves_aside_still_read_or_fail_as_before():
    ints = formats.dumps([{"c": [1, 1000]}], "yson", _column({"type_name": "list", "item": "int64"}))
    with pytest.raises(formats.FormatError, match="c"):  # 1000 does not fit int8
        formats.loads(ints, "yson", _column({"type_name": "list", "item": "int8"}))
    raw = formats.dumps([{"c": [b"\xff"]}], "yson", _column({"type_name": "list", "item": "string"}))
    with pytest.raises(formats.FormatError, match="UTF-8"):
        formats.loads(raw, "yson", _column({"type_name": "list", "item": "utf8"}))
    # A struct whose members come in another order, or with one left out, is read by name.
    ba = {"type_name": "struct", "members": [{"name": "b", "type": "int64"},
                                             {"name": "a", "type": {"type_name": "optional", "item": "utf8"}}]}
    ab = {"type_name": "struct", "members": [{"name": "a", "type": {"type_name": "optional", "item": "utf8"}},
                                             {"name": "b", "type": "int64"}]}
    data = formats.dumps([{"c": [{"b": 1, "a": "x"}, {"b": 2, "a": None}]}], "yson",
                         _column({"type_name": "list", "item": ba}))
    assert formats.loads(data, "yson", _column({"type_name": "list", "item": ab})) == [
        {"c": [{"a": "x", "b": 1}, {"a": None, "b": 2}]}
    ]
    # Unsigned values in a signed list, and the reverse, as the general path reads them.
    unsigned = formats.dumps([{"c": [1, 2]}], "yson", _column({"type_name": "list", "item": "uint64"}))
    assert formats.loads(unsigned, "yson", _column({"type_name": "list", "item": "int64"})) == [{"c": [1, 2]}]


def test_decimals_are_written_from_text_and_read_as_binary():
    schema = [{"name": "dec", "type_v3": {"type_name": "decimal", "precision": 10, "scale": 2}}]
    data = formats.dumps([{"dec": decimal.Decimal("123.45")}, {"dec": "-1.00"}], "yson", schema)
    assert formats.loads(data, "yson", schema) == [{"dec": DEC_123_45}, {"dec": DEC_MINUS_1}]


def test_schema_forms_agree():
    yson_text = "<strict=%true>[{name=a;type_v3=int64};{name=b;type_v3={type_name=optional;item=utf8}}]"
    as_list = [{"name": "a", "type_v3": "int64"}, {"name": "b", "type": "utf8", "required": False}]
    as_arrow = pa.schema([pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.string())])
    rows = [{"a": 1, "b": "x"}, {"a": 2, "b": None}]
    outputs = {formats.dumps(rows, "msgpack", schema) for schema in (yson_text, as_list, as_arrow)}
    assert len(outputs) == 1
    assert formats.loads(outputs.pop(), "msgpack", as_arrow) == rows


SIMPLE = [
    {"name": "id", "type_v3": "int64"},
    {"name": "name", "type_v3": {"type_name": "optional", "item": "utf8"}},
    {"name": "score", "type_v3": "double"},
]
SIMPLE_ROWS = [{"id": i, "name": None if i == 2 else f"n{i}", "score": i / 4} for i in range(5)]


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_pyarrow_in_and_out(fmt):
    data = formats.dumps(SIMPLE_ROWS, fmt, SIMPLE)
    table = formats.to_arrow(data, fmt, SIMPLE)
    assert isinstance(table, pa.Table)
    assert table.column("id").to_pylist() == [r["id"] for r in SIMPLE_ROWS]
    assert table.column("name").to_pylist() == [r["name"] for r in SIMPLE_ROWS]
    assert table.column("score").to_pylist() == [r["score"] for r in SIMPLE_ROWS]
    # A plain pyarrow table (no yt.type_v3 metadata) in, through from_arrow and dumps.
    plain = pa.table({
        "id": pa.array([r["id"] for r in SIMPLE_ROWS], pa.int64()),
        "name": pa.array([r["name"] for r in SIMPLE_ROWS], pa.string()),
        "score": pa.array([r["score"] for r in SIMPLE_ROWS], pa.float64()),
    })
    schema = plain.schema
    assert formats.loads(formats.from_arrow(plain, fmt), fmt, schema) == SIMPLE_ROWS
    assert formats.loads(formats.dumps(plain, format=fmt), fmt, schema) == SIMPLE_ROWS
    # Anything with __arrow_c_stream__ is taken too.
    stream = pa.RecordBatchReader.from_batches(plain.schema, plain.to_batches())
    assert formats.loads(formats.dumps(stream, format=fmt), fmt, schema) == SIMPLE_ROWS


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_truncated_input_names_format_and_position(fmt):
    data = formats.dumps(ROWS, fmt, ALL_TYPES)
    with pytest.raises(formats.FormatError) as raised:
        formats.loads(data[: len(data) - 5], fmt, ALL_TYPES)
    error = raised.value
    assert isinstance(error, ValueError)
    assert fmt.startswith(error.format)  # text YSON is read by the YSON reader
    assert error.offset is not None or error.row is not None, str(error)
    assert error.message and error.message in str(error)
    # Streaming reads fail the same way, after the good rows.
    good = []
    with pytest.raises(formats.FormatError):
        for row in formats.Reader(io.BytesIO(data[: len(data) - 5]), fmt, ALL_TYPES):
            good.append(row)
    assert good == ROWS[: len(good)]


WRONG = [{"name": "id", "type_v3": "utf8"}, {"name": "name", "type_v3": "int64"},
         {"name": "score", "type_v3": "bool"}]


@pytest.mark.parametrize("fmt", ["yson", "yson-text", "json", "msgpack", "cbor", "arrow", "avro",
                                 "protobuf-dynamic"])
def test_reading_with_the_wrong_schema_fails_with_the_row(fmt):
    data = formats.dumps(SIMPLE_ROWS, fmt, SIMPLE)
    with pytest.raises(formats.FormatError) as raised:
        formats.loads(data, fmt, WRONG)
    assert fmt.startswith(raised.value.format)
    assert raised.value.offset is not None or raised.value.row is not None, str(raised.value)


def test_a_bad_value_when_writing_names_row_and_column():
    rows = [{"id": 1, "name": "a", "score": 1.0}, {"id": "two", "name": "b", "score": 2.0}]
    with pytest.raises(formats.FormatError) as raised:
        formats.dumps(rows, "cbor", SIMPLE)
    assert raised.value.row == 1
    assert "'id'" in str(raised.value) or '"id"' in str(raised.value)


TABLE_A = [{"name": "a", "type_v3": "int64"}]
TABLE_B = [{"name": "b", "type_v3": "utf8"}, {"name": "c", "type_v3": {"type_name": "list", "item": "int64"}}]
MULTI_ROWS = [
    {"a": 1, "@table_index": 0},
    {"a": 2, "@table_index": 0},
    {"b": "x", "c": [1], "@table_index": 1},
    {"a": 3, "@table_index": 0},
    {"b": "y", "c": [], "@table_index": 1},
]


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_several_tables_keep_their_table_index(fmt):
    data = formats.dumps(MULTI_ROWS, fmt, [TABLE_A, TABLE_B])
    back = formats.loads(data, fmt, [TABLE_A, TABLE_B])
    if fmt in ("arrow", "avro"):
        # One stream/container per table: each table's rows stay in order.
        key = lambda row: row["@table_index"]  # noqa: E731
        assert sorted(back, key=key) == sorted(MULTI_ROWS, key=key)
    else:
        assert back == MULTI_ROWS


def test_control_records_give_row_and_range_index():
    data = b"<range_index=2;row_index=10>#;{a=1};{a=2};"
    assert formats.loads(data, "yson", TABLE_A) == [
        {"a": 1, "@row_index": 10, "@range_index": 2},
        {"a": 2, "@row_index": 11, "@range_index": 2},
    ]


def test_columns_outside_a_loose_schema_travel_as_plain_keys():
    schema = "<strict=%false>[{name=a;type_v3=int64}]"
    rows = [{"a": 1, "extra": "x"}, {"a": 2}]
    for fmt in ("yson", "json"):
        assert formats.loads(formats.dumps(rows, fmt, schema), fmt, schema) == rows
    with pytest.raises(formats.FormatError, match="extra"):
        formats.dumps(rows, "arrow", schema)


def test_convert_keeps_rows_without_python_objects():
    data = formats.dumps(ROWS, "skiff", ALL_TYPES)
    assert formats.loads(formats.convert(data, "skiff", "cbor", ALL_TYPES), "cbor", ALL_TYPES) == ROWS


def test_a_closed_writer_refuses_rows_and_an_exception_leaves_the_stream_unfinished():
    out = io.BytesIO()
    writer = formats.Writer(out, "json", SIMPLE)
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.write(SIMPLE_ROWS[0])
    end_of_stream = b"\xff\xff\xff\xff\x00\x00\x00\x00"
    assert formats.dumps(SIMPLE_ROWS[:1], "arrow", SIMPLE).endswith(end_of_stream)
    out = io.BytesIO()
    with pytest.raises(RuntimeError):
        with formats.Writer(out, "arrow", SIMPLE) as writer:
            writer.write(SIMPLE_ROWS[0])
            raise RuntimeError("stop")
    assert not out.getvalue().endswith(end_of_stream)
    with pytest.raises(ValueError, match="closed"):
        writer.write(SIMPLE_ROWS[0])


@pytest.mark.parametrize("fmt", ["yson", "msgpack", "cbor", "thrift", "protobuf"])
def test_dict_with_unhashable_keys_reads_as_pairs_and_struct_names_as_given(fmt):
    """A dict column whose keys are lists comes back as (key, value) tuples (a Python dict
    cannot hold them), and dicts of hashable keys as dicts, through a reused codec."""
    schema = [
        {"name": "by_list", "type_v3": {"type_name": "dict", "key": {"type_name": "list", "item": "int64"},
                                          "value": "utf8"}},
        {"name": "by_text", "type_v3": {"type_name": "dict", "key": "utf8", "value": "int64"}},
        {"name": "point", "type_v3": {"type_name": "struct", "members": [
            {"name": "x", "type": "int32"}, {"name": "y", "type": {"type_name": "optional", "item": "utf8"}}]}},
    ]
    codec = formats.codec(fmt, schema)
    rows = [{"by_list": [([1, 2], "a"), ([3], "b")], "by_text": {"k": 1}, "point": {"x": 1, "y": None}},
            {"by_list": [], "by_text": {}, "point": {"x": -5, "y": "z"}}]
    for _ in range(2):
        back = codec.loads(codec.dumps(rows))
        assert back == [{"by_list": [([1, 2], "a"), ([3], "b")], "by_text": {"k": 1}, "point": {"x": 1, "y": None}},
                        {"by_list": {}, "by_text": {}, "point": {"x": -5, "y": "z"}}]


def test_avro_datums_are_headerless_messages_fastavro_reads_and_writes():
    import fastavro

    schema = [{"name": "id", "type_v3": "int64"}, {"name": "name", "type_v3": {"type_name": "optional", "item": "utf8"}}]
    rows = [{"id": 1, "name": "a"}, {"id": -2, "name": None}]
    data = formats.dumps(rows, format="avro", schema=schema, avro_datums=True)
    assert not data.startswith(b"Obj\x01")  # no container header
    assert formats.loads(data, format="avro", schema=schema, avro_datums=True) == rows
    # Every call of a codec, every streaming reader and writer: the same datums.
    codec = formats.codec("avro", schema, avro_datums=True)
    for _ in range(2):
        assert codec.dumps(rows) == data
        assert codec.loads(data) == rows
    out = io.BytesIO()
    formats.dump(rows, out, "avro", schema, avro_datums=True)
    assert out.getvalue() == data
    assert list(formats.load(data, "avro", schema, avro_datums=True)) == rows
    # fastavro's schemaless reader and writer, with the record schema our container declares.
    container = formats.dumps(rows, format="avro", schema=schema)
    record = fastavro.reader(io.BytesIO(container)).writer_schema
    parsed = fastavro.parse_schema(record)
    source = io.BytesIO(data)
    assert [fastavro.schemaless_reader(source, parsed) for _ in rows] == rows
    theirs = io.BytesIO()
    for row in rows:
        fastavro.schemaless_writer(theirs, parsed, row)
    assert theirs.getvalue() == data
    # A cut datum is an error that says where.
    with pytest.raises(formats.FormatError) as raised:
        codec.loads(data[:-1])
    assert raised.value.format == "avro" and raised.value.offset is not None
    # Datum streams hold one table, of Avro: refused, not ignored.
    with pytest.raises(formats.FormatError, match="one table"):
        formats.dumps([{"@table_index": 1, "id": 1, "name": None}], format="avro",
                      schema=[schema, schema], avro_datums=True)
    with pytest.raises(formats.FormatError, match="one table"):
        formats.loads(data, format="avro", schema=[schema, schema], avro_datums=True)
    with pytest.raises(formats.FormatError, match="Avro form"):
        formats.codec("msgpack", schema, avro_datums=True)
