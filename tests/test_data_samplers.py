"""Samplers, ConcatDataset, IterableDataset and DataLoader's PyTorch arguments, checked against
torch.utils.data where the result does not depend on random numbers."""

import numpy as np
import pytest

import chainrule
from chainrule import data
from chainrule.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
)
from chainrule.errors import DomainError, DTypeError, OutOfRangeError


def numbered(n):
    return TensorDataset(chainrule.arange(n).float(), chainrule.arange(n))


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(np.arange(self.n, dtype=np.int64) * 10)


def test_the_data_namespace_exports_its_public_names_and_those_pytorch_programs_use(torch):
    assert all(not name.startswith("_") for name in data.__all__)
    assert all(hasattr(data, name) for name in data.__all__)
    needed = {
        "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
        "WeightedRandomSampler", "BatchSampler", "ConcatDataset", "IterableDataset",
        "ChainDataset", "Dataset", "TensorDataset", "Subset", "DataLoader", "random_split",
        "default_collate", "default_convert", "get_worker_info",
    }  # fmt: skip
    assert needed <= set(torch.utils.data.__all__) and needed <= set(data.__all__)


def test_sequential_and_batch_samplers_give_pytorchs_indices(torch):
    tud = torch.utils.data
    for drop_last in (False, True):
        ours = list(BatchSampler(SequentialSampler(range(7)), 3, drop_last))
        theirs = list(tud.BatchSampler(tud.SequentialSampler(range(7)), 3, drop_last))
        assert ours == theirs
        assert len(BatchSampler(SequentialSampler(range(7)), 3, drop_last)) == len(theirs)


def test_random_sampler_permutes_and_draws_with_replacement_as_asked():
    rng = np.random.default_rng(0)
    assert sorted(RandomSampler(range(6), generator=rng)) == list(range(6))
    # num_samples past the data set without replacement: whole permutations first.
    drawn = list(RandomSampler(range(4), num_samples=10, generator=rng))
    assert len(drawn) == 10 and sorted(drawn[:4]) == sorted(drawn[4:8]) == [0, 1, 2, 3]
    assert len(set(drawn[8:])) == 2
    with_replacement = list(RandomSampler(range(3), replacement=True, num_samples=3000))
    counts = np.bincount(with_replacement, minlength=3)
    assert counts.sum() == 3000 and np.all(np.abs(counts - 1000) < 150)
    same = [list(RandomSampler(range(9), generator=np.random.default_rng(5))) for _ in range(2)]
    assert same[0] == same[1]


def test_subset_and_weighted_samplers():
    assert sorted(SubsetRandomSampler([4, 8, 15])) == [4, 8, 15]
    draws = list(WeightedRandomSampler([1.0, 3.0], 4000, generator=np.random.default_rng(1)))
    assert abs(np.mean(draws) - 0.75) < 0.03  # index 1 three times as likely as index 0
    assert sorted(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False)) == [0, 1, 2, 3]
    with pytest.raises(DomainError, match="without replacement from 2"):
        WeightedRandomSampler([1.0, 0.0, 2.0], 3, replacement=False)
    with pytest.raises(DomainError, match="non-negative"):
        WeightedRandomSampler([1.0, -1.0], 3)


def test_a_loader_with_a_random_sampler_with_replacement_as_in_a_language_model_program():
    loader = DataLoader(
        numbered(50),
        batch_size=8,
        sampler=RandomSampler(numbered(50), replacement=True, num_samples=int(1e3)),
    )
    batches = list(loader)
    assert len(loader) == len(batches) == 125
    assert all(x.shape == (8,) and x.dtype == chainrule.float32 for x, _ in batches)
    assert all(np.array_equal(x.numpy(), y.numpy().astype(np.float32)) for x, y in batches)


def test_concat_dataset_indexes_as_pytorchs(torch):
    ours = ConcatDataset([numbered(3), numbered(4)]) + numbered(2)
    theirs = torch.utils.data.ConcatDataset(
        [torch.utils.data.TensorDataset(torch.arange(n)) for n in (3, 4, 2)]
    )
    assert len(ours) == len(theirs) == 9
    for i in range(-9, 9):
        assert ours[i][1].item() == theirs[i][0].item()
    with pytest.raises(OutOfRangeError, match="index 9 is out of range for 9 samples"):
        ours[9]
    assert [y.tolist() for _, y in DataLoader(ours, batch_size=4)] == [
        [0, 1, 2, 0], [1, 2, 3, 0], [1],
    ]  # fmt: skip


def test_an_iterable_dataset_is_batched_in_stream_order_and_chains():
    loader = DataLoader(Stream(5) + Stream(2), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 10, 20], [30, 40, 0], [10]]
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2, drop_last=True)] == [
        [0, 10], [20, 30],
    ]  # fmt: skip
    singles = list(DataLoader(Stream(3), batch_size=None))
    assert [s.item() for s in singles] == [0, 10, 20] and isinstance(singles[0], chainrule.Tensor)
    with pytest.raises(DomainError, match="IterableDataset streams its own order"):
        DataLoader(Stream(3), shuffle=True)


def test_batch_sampler_batch_size_none_and_the_worker_arguments():
    ds = numbered(6)
    loader = DataLoader(ds, batch_sampler=[[5, 0], [2, 3, 4]])
    assert [y.tolist() for _, y in loader] == [[5, 0], [2, 3, 4]] and len(loader) == 2
    unbatched = list(DataLoader(ds, batch_size=None))
    assert len(unbatched) == 6 and unbatched[2][1].item() == 2
    seen = []

    def init(worker_id):
        info = data.get_worker_info()
        seen.append((worker_id, info.id, info.num_workers))

    loader = DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True, worker_init_fn=init)
    assert [y.tolist() for _, y in loader] == [[0, 1, 2, 3], [4, 5]]
    assert seen == [(0, 0, 1)] and data.get_worker_info() is None
    with pytest.raises(DomainError, match="batch_sampler chooses whole batches"):
        DataLoader(ds, batch_size=2, batch_sampler=[[0]])
    with pytest.raises(DomainError, match="drop_last needs a batch_size"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(DTypeError, match="generator must be"):
        list(DataLoader(ds, shuffle=True, generator="seed"))


def test_shuffle_with_a_generator_is_reproducible_and_differs_per_epoch():
    def epochs(seed):
        loader = DataLoader(numbered(12), batch_size=12, shuffle=True,
                            generator=np.random.default_rng(seed))  # fmt: skip
        return [
            loader_batch[1].tolist() for loader_batch in (next(iter(loader)), next(iter(loader)))
        ]

    first, again = epochs(3), epochs(3)
    assert first == again and first[0] != first[1] and sorted(first[0]) == list(range(12))
