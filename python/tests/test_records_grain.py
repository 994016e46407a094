"""shapeshift.records.DataSource inside Grain: switching from ArrayRecordDataSource is
changing an import. Grain must yield the same records in the same order from both sources,
in-process (MapDataset) and through worker processes (DataLoader pickles the source)."""

import random

import pytest

from shapeshift.records import DataSource, Writer

grain = pytest.importorskip("grain")
array_record_data_source = pytest.importorskip("array_record.python.array_record_data_source")
ArrayRecordDataSource = array_record_data_source.ArrayRecordDataSource


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two files of distinct records (different group sizes), written by shapeshift."""
    rng = random.Random(11)
    directory = tmp_path_factory.mktemp("grain")
    records = [f"{i}:".encode() + bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64))) for i in range(700)]
    paths = []
    for name, options, part in (("a.ar", "group_size:1,zstd:3", records[:300]), ("b.ar", "group_size:16,snappy", records[300:])):
        path = str(directory / name)
        writer = Writer(path, options)
        for record in part:
            writer.write(record)
        writer.close()
        paths.append(path)
    return paths, records


def test_map_dataset_matches_array_record_source(files):
    paths, records = files

    def pipeline(source):
        dataset = grain.MapDataset.source(source).shuffle(seed=5).map(lambda record: record[::-1]).batch(8)
        return [list(batch) for batch in dataset]

    ours = pipeline(DataSource(paths))
    theirs = pipeline(ArrayRecordDataSource(paths))
    assert ours == theirs
    flat = [record[::-1] for batch in ours for record in batch]
    assert sorted(flat) == sorted(records) and len(flat) == len(records)


def test_data_loader_with_worker_processes(files):
    paths, records = files

    def load(source):
        sampler = grain.samplers.IndexSampler(
            num_records=len(source), shuffle=True, seed=3, num_epochs=1, shard_options=grain.sharding.NoSharding()
        )
        loader = grain.DataLoader(data_source=source, sampler=sampler, worker_count=2)
        return list(loader)

    ours = load(DataSource(paths))
    assert ours == load(ArrayRecordDataSource(paths))
    assert sorted(ours) == sorted(records)
    assert ours != records  # shuffled: the sampler's order, not the files'
