"""The seeded table of the engine study: deterministic, split-invariant, in the study's ranges."""

import pyarrow as pa
import pyarrow.parquet as pq

from shapeshift.lab import engine_data


def test_same_seed_same_rows_and_split_invariant():
    whole = engine_data.batch(7, 0, 1000)
    assert whole.equals(engine_data.batch(7, 0, 1000))
    assert not whole.equals(engine_data.batch(8, 0, 1000))
    split = pa.Table.from_batches(list(engine_data.batches(7, 1000, batch_rows=300)))
    assert split.column("object_id").to_pylist() == list(range(1000))
    assert split.num_rows == 1000


def test_columns_are_in_the_study_ranges():
    table = pa.Table.from_batches([engine_data.batch(1, 500, 20_000)])
    assert table.column("object_id").to_pylist() == list(range(500, 20_500))
    days = set(table.column("day").to_pylist())
    months = set(table.column("month").to_pylist())
    assert days == set(range(1, 32)) and months == set(range(1, 13))
    assert set(table.column("colour").to_pylist()) == set(engine_data.COLOURS)
    guids = table.column("guid").to_pylist()
    assert len(set(guids)) == len(guids)
    assert all(len(g) == 36 and g[14] == "4" and g.count("-") == 4 for g in guids[:100])
    stamps = table.column("intercept_at").cast(pa.int64()).to_pylist()
    assert all(engine_data.EPOCH_2024_US <= s < engine_data.EPOCH_2024_US + engine_data.YEAR_US
               for s in stamps)


def test_parquet_files_hold_the_table(tmp_path):
    paths = engine_data.write_parquet(tmp_path, seed=3, rows=2500, files=3)
    assert len(paths) == 3
    read = pa.concat_tables([pq.read_table(p) for p in paths])
    assert read.equals(pa.Table.from_batches([engine_data.batch(3, 0, 834),
                                              engine_data.batch(3, 834, 834),
                                              engine_data.batch(3, 1668, 832)]))
