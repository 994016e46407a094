"""shapeshift.columns: round trips, reads, composition, bad input."""

import numpy as np
import pytest

from shapeshift import columns

RNG = np.random.default_rng(7)
N = 50_000

DISTRIBUTIONS = {
    "uniform": lambda: RNG.integers(-(10**9), 10**9, N),
    "zipf": lambda: RNG.zipf(1.3, N).clip(0, 10**12),
    "sparse": lambda: np.where(RNG.random(N) < 0.02, RNG.integers(1, 10**6, N), 0),
    "timestamps": lambda: 1_700_000_000_000 + np.cumsum(RNG.integers(0, 1000, N)),
    "runs": lambda: np.repeat(RNG.integers(0, 100, N // 500 + 1), 500)[:N],
    "low_cardinality": lambda: RNG.choice(np.array([3, 10**9, -(10**8), 77]), N),
}
DTYPES = [np.int32, np.int64, np.uint32, np.uint64]


@pytest.mark.parametrize("target", columns.TARGETS)
@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_round_trip(name, dtype, target):
    values = DISTRIBUTIONS[name]().astype(dtype)
    column = columns.Column(columns.encode(values, target=target, block_size=8192))
    decoded = column.to_numpy()
    assert decoded.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(decoded, values)
    rows = np.sort(RNG.choice(N, 500, replace=False))
    np.testing.assert_array_equal(column.take(rows), values[rows])
    assert column.get(123) == values[123]
    assert column.get(-1) == values[-1]
    assert len(column) == N
    assert sum(column.composition().values()) == column.block_count == -(-N // 8192)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("target", columns.TARGETS)
def test_float_round_trip_bit_exact(dtype, target):
    prices = np.round(RNG.uniform(0, 1000, N), 2)
    prices[::1000] = np.nan
    prices[1::1000] = -0.0
    prices[2::1000] = np.inf
    values = prices.astype(dtype)
    column = columns.Column(columns.encode(values, target=target))
    decoded = column.to_numpy()
    np.testing.assert_array_equal(decoded.view(np.uint8), values.view(np.uint8))


def test_decimal_prices_use_alp_and_shrink():
    prices = np.round(RNG.uniform(0, 1000, 200_000), 2)
    data = columns.encode(prices, target="smaller")
    assert len(data) < prices.nbytes / 2
    balanced = columns.Column(columns.encode(prices, target="balanced"))
    assert "alp" in balanced.composition()


def test_faster_reads_drifting_timestamps_by_chunk_frames():
    stamps = 1_700_000_000_000 + np.cumsum(RNG.exponential(1000, 200_000)).astype(np.int64)
    column = columns.Column(columns.encode(stamps, target="faster"))
    assert "chunked_bit_packed" in column.composition()
    assert column.nbytes * 8 < stamps.size * 24  # one frame per block would need ~28 bits
    np.testing.assert_array_equal(column.to_numpy(), stamps)
    rows = np.sort(RNG.choice(stamps.size, 2_000, replace=False))
    np.testing.assert_array_equal(column.take(rows), stamps[rows])


def test_skewed_prices_get_random_access_forms_under_balanced():
    prices = np.round(RNG.lognormal(3, 1, 200_000), 2)
    column = columns.Column(columns.encode(prices, target="balanced"))
    # Patched ALP digits, or (the prices repeat) a dictionary whose parts cascade, per block or
    # shared by the blocks.
    assert set(column.composition()) <= {"alp", "cascaded_dictionary", "shared_dictionary"}
    assert column.nbytes * 8 < prices.size * 16  # unpatched digits need ~18 bits
    decoded = column.to_numpy()
    assert decoded.view(np.uint64).tolist() == prices.view(np.uint64).tolist()


def test_special_blocks_and_composition():
    values = np.concatenate([np.zeros(65536, np.int64), np.full(65536, 5, np.int64)])
    column = columns.Column(columns.encode(values))
    assert column.composition() == {"zero": 1, "constant": 1}
    assert column.block_encodings() == ["zero", "constant"]
    assert column.nbytes < 300


def test_baseline_round_trip():
    values = DISTRIBUTIONS["zipf"]().astype(np.int64)
    column = columns.Column(columns.encode_baseline(values))
    assert column.target == "baseline"
    assert set(column.composition()) == {"lz4"}
    np.testing.assert_array_equal(column.to_numpy(), values)


def test_empty_column():
    column = columns.Column(columns.encode(np.array([], dtype=np.float32)))
    assert len(column) == 0
    assert column.to_numpy().dtype == np.float32
    with pytest.raises(IndexError):
        column.get(0)


def test_bad_arguments():
    values = np.arange(10, dtype=np.int64)
    with pytest.raises(ValueError, match="target"):
        columns.encode(values, target="tiny")
    with pytest.raises(ValueError, match="block size"):
        columns.encode(values, block_size=1000)
    with pytest.raises(TypeError, match="dtype"):
        columns.encode(values.astype(np.int16))
    column = columns.Column(columns.encode(values))
    with pytest.raises(ValueError, match="sorted"):
        column.take([5, 1])
    with pytest.raises(ValueError, match="out of range"):
        column.take([1, 10])
    with pytest.raises(ValueError, match="negative"):
        column.take([-1])
    # A negative index after a valid one reads as a huge unsigned row inside the extension;
    # the error still names the negative index and its position.
    with pytest.raises(ValueError, match="position 2 holds -4"):
        column.take([1, 2, -4])
    with pytest.raises(ValueError, match="1-D"):
        column.take(np.zeros((2, 2), dtype=np.int64))


@pytest.mark.parametrize("target", columns.TARGETS)
@pytest.mark.parametrize("density", [0.0005, 0.01, 0.2, 1.0])
def test_take_matches_indexing_at_every_density(target, density):
    # Several encodings per column (runs, sparse, decimals with exceptions), rows with repeats,
    # other index dtypes and non-contiguous index arrays: take == decode-then-index.
    n = 70_000
    ints = np.concatenate(
        [
            np.repeat(RNG.integers(0, 50, n // 1000 + 1), 1000)[: n // 4],
            np.where(RNG.random(n // 4) < 0.05, RNG.integers(1, 10**9, n // 4), 0),
            RNG.integers(0, 300, n // 4),
            1_700_000_000 + np.cumsum(RNG.integers(0, 1000, n - 3 * (n // 4))),
        ]
    ).astype(np.int64)
    prices = np.round(RNG.lognormal(3, 1, n), 2)
    prices[::997] = np.nan
    for values in (ints, ints.astype(np.int32), prices, prices.astype(np.float32)):
        column = columns.Column(columns.encode(values, target=target, block_size=16384))
        rows = np.sort(RNG.choice(n, max(1, int(n * density)), replace=True))
        expected = values[rows].view(np.uint8)
        assert np.array_equal(column.take(rows).view(np.uint8), expected)
        assert np.array_equal(column.take(rows.astype(np.int32)).view(np.uint8), expected)
        strided = np.repeat(rows, 2)[::2]  # a non-contiguous view equal to rows
        assert not strided.flags.c_contiguous or rows.size < 2
        assert np.array_equal(column.take(strided).view(np.uint8), expected)
        taken = column.take(rows)
        assert taken.dtype == values.dtype and taken.flags.writeable and taken.flags.owndata


def test_take_of_nothing_and_of_everything():
    values = RNG.integers(0, 1000, 20_000).astype(np.int64)
    column = columns.Column(columns.encode(values, target="faster"))
    assert column.take(np.array([], dtype=np.int64)).shape == (0,)
    np.testing.assert_array_equal(column.take(np.arange(20_000)), values)


def test_non_contiguous_input_is_copied():
    values = np.arange(20_000, dtype=np.int64)[::2]
    column = columns.Column(columns.encode(values))
    np.testing.assert_array_equal(column.to_numpy(), values)


def test_corrupt_and_truncated_columns_raise_value_error():
    values = DISTRIBUTIONS["uniform"]().astype(np.int64)
    data = bytearray(columns.encode(values))
    for cut in [0, 5, 50, 200, len(data) // 2, len(data) - 1]:
        with pytest.raises(ValueError, match="byte"):
            columns.Column(bytes(data[:cut]))
    for position in RNG.integers(0, len(data), 200):
        flipped = bytearray(data)
        flipped[position] ^= 1 << int(RNG.integers(0, 8))
        with pytest.raises(ValueError):
            columns.Column(bytes(flipped))
    with pytest.raises(ValueError, match="magic"):
        columns.Column(b"not a column at all, definitely not" * 4)
