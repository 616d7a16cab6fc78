"""Data loading at any length: samplers draw lazily (an epoch of 10**10 indices starts at once,
in constant memory), and loaders' lengths, batches of sequential orders and exhaustion behave
as torch.utils.data's. Random orders are checked against PyTorch's in test_data_stream.py;
here only their shape."""

import itertools
import time
import tracemalloc

import numpy as np
import pytest

import chainrule
from chainrule.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)

HUGE = 10**10


def numbered(n):
    return TensorDataset(chainrule.arange(n).float(), chainrule.arange(n))


def first(iterable, k):
    return list(itertools.islice(iterable, k))


def quickly_and_in_little_memory(read):
    """What ``read()`` returns, checking that it took under 2 MB and under 5 seconds (a whole
    epoch of 10**10 indices would need 80 GB and hours)."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        out = read()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 5 and peak < 2 * 2**20, (peak, out)
    return out


def test_the_infinite_loader_idiom_gives_its_first_batches_at_once(torch):
    ds = numbered(100)
    loader = DataLoader(
        ds, sampler=RandomSampler(ds, replacement=True, num_samples=int(1e10)), batch_size=16
    )
    tds = torch.utils.data.TensorDataset(torch.arange(100))
    theirs = torch.utils.data.DataLoader(
        tds, sampler=torch.utils.data.RandomSampler(tds, replacement=True, num_samples=int(1e10)),
        batch_size=16,
    )  # fmt: skip
    assert len(loader) == len(theirs) == 625_000_000

    def three_batches():
        data_iter = iter(loader)
        return [next(data_iter) for _ in range(3)]

    batches = quickly_and_in_little_memory(three_batches)
    for x, y in batches:
        assert x.shape == y.shape == (16,) and np.array_equal(x.numpy(), y.numpy())
        assert y.numpy().min() >= 0 and y.numpy().max() < 100


@pytest.mark.parametrize(
    "make",
    [
        lambda: RandomSampler(range(7), replacement=True, num_samples=HUGE),
        lambda: RandomSampler(range(7), num_samples=HUGE),
        lambda: WeightedRandomSampler([1.0, 0.0, 3.0, 2.0], HUGE),
        lambda: SequentialSampler(range(HUGE)),
        lambda: BatchSampler(RandomSampler(range(7), True, HUGE), 5, drop_last=True),
        lambda: BatchSampler(itertools.count(), 5, drop_last=False),
    ],
    ids=["random-replacement", "random-permutations", "weighted", "sequential", "batch", "endless"],
)
def test_samplers_of_ten_billion_start_at_once_in_constant_memory(make):
    drawn = quickly_and_in_little_memory(lambda: first(make(), 2000))
    assert len(drawn) == 2000


def test_lengths_of_huge_samplers_are_pytorchs(torch):
    tud = torch.utils.data
    pairs = [
        (RandomSampler(range(7), True, HUGE), tud.RandomSampler(range(7), True, HUGE)),
        (RandomSampler(range(7), num_samples=HUGE), tud.RandomSampler(range(7), num_samples=HUGE)),
        (WeightedRandomSampler([1.0, 2.0], HUGE), tud.WeightedRandomSampler([1.0, 2.0], HUGE)),
        (SequentialSampler(range(HUGE)), tud.SequentialSampler(range(HUGE))),
    ]
    for ours, theirs in pairs:
        assert len(ours) == len(theirs) == HUGE
        for drop_last in (False, True):
            assert len(BatchSampler(ours, 3, drop_last)) == len(
                tud.BatchSampler(theirs, 3, drop_last)
            )


def test_draws_keep_their_distribution_when_read_lazily():
    g = chainrule.Generator().manual_seed(0)
    permutations = first(RandomSampler(range(5), num_samples=HUGE, generator=g), 25)
    assert all(sorted(permutations[i : i + 5]) == list(range(5)) for i in range(0, 25, 5))
    weighted = np.array(first(WeightedRandomSampler([1.0, 0.0, 3.0, 0.0], HUGE, generator=g), 8000))
    assert set(weighted.tolist()) == {0, 2} and abs(np.mean(weighted == 2) - 0.75) < 0.03
    uniform = np.array(first(RandomSampler(range(4), True, HUGE, generator=g), 8000))
    assert np.all(np.abs(np.bincount(uniform, minlength=4) - 2000) < 200)
    # Chunk boundaries (CHUNK indices per draw) leave no gap and no extra index.
    assert len(list(RandomSampler(range(3), True, 2049, generator=g))) == 2049
    assert len(list(WeightedRandomSampler([1.0, 1.0], 2049, generator=g))) == 2049
    assert sorted(WeightedRandomSampler([0.0, 2.0, 1.0], 2, replacement=False)) == [1, 2]


def test_an_epoch_stays_the_same_whatever_else_draws_from_the_default_generator():
    chainrule.manual_seed(3)
    plain = [y.tolist() for _, y in DataLoader(numbered(20), batch_size=4, shuffle=True)]
    chainrule.manual_seed(3)
    interleaved = []
    for _, y in DataLoader(numbered(20), batch_size=4, shuffle=True):
        interleaved.append(y.tolist())
        chainrule.rand(5)  # dropout, say, between batches
    assert interleaved == plain


@pytest.mark.parametrize("n, batch_size", [(10, 3), (9, 3), (2, 5), (0, 4), (1, 1)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sequential_batches_lengths_and_exhaustion_match_pytorchs(torch, n, batch_size, drop_last):
    ours = DataLoader(numbered(n), batch_size=batch_size, drop_last=drop_last)
    tds = torch.utils.data.TensorDataset(torch.arange(n).float(), torch.arange(n))
    theirs = torch.utils.data.DataLoader(tds, batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs) == len(iter(ours)) == len(iter(theirs))
    assert [y.tolist() for _, y in ours] == [y.tolist() for _, y in theirs]
    for loader in (ours, theirs):
        data_iter = iter(loader)
        assert iter(data_iter) is data_iter
        assert len(list(data_iter)) == len(loader)
        for _ in range(2):  # an exhausted epoch stays exhausted
            with pytest.raises(StopIteration):
                next(data_iter)
        assert len(list(iter(loader))) == len(loader)  # a new epoch


def test_a_new_iter_is_a_new_epoch_with_a_new_shuffle_and_a_generator_reproduces_them():
    def epochs(seed):
        generator = chainrule.Generator().manual_seed(seed)
        loader = DataLoader(numbered(30), batch_size=7, shuffle=True, generator=generator)
        return [sum((y.tolist() for _, y in loader), []) for _ in range(3)]

    first_run = epochs(4)
    assert first_run == epochs(4) and first_run != epochs(5)
    assert all(sorted(epoch) == list(range(30)) for epoch in first_run)
    assert first_run[0] != first_run[1] != first_run[2]
    loader = DataLoader(numbered(6), batch_size=4, sampler=SubsetRandomSampler([5, 1, 3]))
    assert len(loader) == 1 and sorted(next(iter(loader))[1].tolist()) == [1, 3, 5]


def test_plain_sequences_and_huge_ranges_load_as_in_pytorch(torch):
    ours = DataLoader(range(HUGE), batch_size=4)
    theirs = torch.utils.data.DataLoader(range(HUGE), batch_size=4)
    assert len(ours) == len(theirs)
    got = quickly_and_in_little_memory(lambda: [b.tolist() for b in first(ours, 3)])
    assert got == [b.tolist() for b in first(theirs, 3)] == [[0, 1, 2, 3], [4, 5, 6, 7],
                                                            [8, 9, 10, 11]]  # fmt: skip


def test_random_split_subset_and_concat_with_the_loader_match_pytorch(torch):
    tud = torch.utils.data
    for lengths in ([3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [0.33, 0.33, 0.34]):
        ours = random_split(numbered(10), lengths, generator=chainrule.Generator().manual_seed(0))
        theirs = tud.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
        assert [len(part) for part in ours] == [len(part) for part in theirs]
        assert sorted(sum((list(part.indices) for part in ours), [])) == list(range(10))
    ours = ConcatDataset([Subset(numbered(10), [9, 2, 4]), numbered(3)])
    tds = tud.TensorDataset(torch.arange(10).float(), torch.arange(10))
    theirs = tud.ConcatDataset([tud.Subset(tds, [9, 2, 4]), tud.TensorDataset(*tds[:3])])
    for batch_size, drop_last in ((2, False), (4, True)):
        mine = DataLoader(ours, batch_size=batch_size, drop_last=drop_last)
        torchs = tud.DataLoader(theirs, batch_size=batch_size, drop_last=drop_last)
        assert len(mine) == len(torchs)
        assert [y.tolist() for _, y in mine] == [y.tolist() for _, y in torchs]


class Counting(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_an_iterable_dataset_batches_measures_and_refuses_a_sampler_as_pytorch(torch):
    tud = torch.utils.data

    class TorchCounting(tud.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    for drop_last in (False, True):
        ours = DataLoader(Counting(7), batch_size=3, drop_last=drop_last)
        theirs = tud.DataLoader(TorchCounting(), batch_size=3, drop_last=drop_last)
        assert len(ours) == len(theirs)
        assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]
    for kwargs in ({"sampler": [0, 1]}, {"shuffle": True}, {"batch_sampler": [[0]]}):
        with pytest.raises(ValueError):
            tud.DataLoader(TorchCounting(), **kwargs)
        with pytest.raises(ValueError, match="IterableDataset"):
            DataLoader(Counting(7), **kwargs)
    endless = DataLoader(Endless(), batch_size=5)
    assert quickly_and_in_little_memory(lambda: next(iter(endless)).tolist()) == [0, 1, 2, 3, 4]


class Endless(IterableDataset):
    def __iter__(self):
        return itertools.count()


def test_argument_errors_are_the_classes_pytorch_raises(torch):
    tud = torch.utils.data
    for make in (
        lambda data: data.BatchSampler(range(3), 2, 1),
        lambda data: data.WeightedRandomSampler([1.0, 2.0], 2, replacement=1),
        lambda data: data.RandomSampler(range(3), num_samples=0),
        lambda data: data.BatchSampler(range(3), 0, False),
    ):
        for data in (tud, chainrule.data):
            with pytest.raises(ValueError):
                make(data)
