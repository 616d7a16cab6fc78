"""Seeded data orders are PyTorch's: the samplers, `DataLoader` and `random_split` draw as
torch.utils.data draws (the same calls on the same generator, in the same order), so the same
seed gives the same indices epoch after epoch and leaves the default generator in the same
state."""

import numpy as np
import pytest

import chainrule
from chainrule.data import (
    BatchSampler,
    DataLoader,
    DistributedSampler,
    RandomSampler,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)


def same_state(torch):
    return np.array_equal(chainrule.get_rng_state().numpy(), torch.get_rng_state().numpy())


def epochs(loader, draw, count=3):
    """Each epoch's batches as lists (the first field of each batch), with a ``draw`` from the
    default generator between epochs (dropout, say)."""
    out = []
    for _ in range(count):
        out.append([(b[0] if isinstance(b, (list, tuple)) else b).tolist() for b in loader])
        draw(3)
    return out


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(batch_size=4, shuffle=True),
        dict(batch_size=5, shuffle=True, drop_last=True),
        dict(batch_size=None, shuffle=True),
        dict(batch_size=3, shuffle=False),
        dict(batch_size=6, shuffle=True, num_workers=2),
    ],
    ids=["shuffle", "drop-last", "unbatched", "sequential", "workers"],
)
@pytest.mark.parametrize("seed", [0, 1337])
def test_loader_epochs_and_the_default_stream_are_pytorchs(torch, kwargs, seed):
    chainrule.manual_seed(seed)
    ours = epochs(DataLoader(TensorDataset(chainrule.arange(23)), **kwargs), chainrule.rand)
    torch.manual_seed(seed)
    tud = torch.utils.data
    theirs = epochs(tud.DataLoader(tud.TensorDataset(torch.arange(23)), **kwargs), torch.rand)
    assert ours == theirs and same_state(torch)


@pytest.mark.parametrize("seed", [0, 7])
def test_a_loader_with_a_generator_draws_from_it_as_pytorchs(torch, seed):
    chainrule.manual_seed(99)
    torch.manual_seed(99)
    ours = DataLoader(TensorDataset(chainrule.arange(17)), batch_size=4, shuffle=True,
                      generator=chainrule.Generator().manual_seed(seed))  # fmt: skip
    theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(17)),
                                         batch_size=4, shuffle=True,
                                         generator=torch.Generator().manual_seed(seed))  # fmt: skip
    assert epochs(ours, chainrule.rand) == epochs(theirs, torch.rand) and same_state(torch)
    assert ours.generator.get_state().numpy().tolist() == theirs.generator.get_state().tolist()
    # chainrule's seed= keyword is the same as a generator seeded with it.
    keyword = DataLoader(TensorDataset(chainrule.arange(17)), batch_size=4, shuffle=True,
                         seed=seed)  # fmt: skip
    again = DataLoader(TensorDataset(chainrule.arange(17)), batch_size=4, shuffle=True,
                       generator=chainrule.Generator().manual_seed(seed))  # fmt: skip
    assert epochs(keyword, chainrule.rand) == epochs(again, chainrule.rand)


def sampler_cases(tud, gen):
    """(name, make a sampler) pairs; ``tud`` chainrule's or PyTorch's data module, ``gen``
    a function making that library's generator of a seed."""
    return [
        ("permutation", lambda: tud.RandomSampler(range(11))),
        ("num-samples", lambda: tud.RandomSampler(range(5), num_samples=13)),
        ("num-samples-whole", lambda: tud.RandomSampler(range(5), False, 10, gen(3))),
        ("replacement", lambda: tud.RandomSampler(range(9), replacement=True, num_samples=70)),
        ("replacement-generator", lambda: tud.RandomSampler(range(9), True, 40, gen(5))),
        ("big-range", lambda: tud.RandomSampler(range(2**29), True, 5)),
        ("subset", lambda: tud.SubsetRandomSampler([4, 8, 15, 16, 23, 42])),
        ("subset-generator", lambda: tud.SubsetRandomSampler([4, 8, 15, 16], generator=gen(2))),
        ("weighted", lambda: tud.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 9)),
        ("weighted-one", lambda: tud.WeightedRandomSampler([0.1, 0.9, 0.4], 1)),
        ("weighted-unique", lambda: tud.WeightedRandomSampler([0.9, 0.4, 0.05, 0.2], 3, False)),
        ("weighted-generator", lambda: tud.WeightedRandomSampler([1.0, 2.0], 6, True, gen(4))),
        ("batch", lambda: tud.BatchSampler(tud.RandomSampler(range(10)), 3, True)),
    ]


@pytest.mark.parametrize("case", range(13))
def test_each_sampler_gives_pytorchs_indices_epoch_after_epoch(torch, case):
    import chainrule.data as ours_module

    ours = sampler_cases(ours_module, lambda s: chainrule.Generator().manual_seed(s))
    theirs = sampler_cases(torch.utils.data, lambda s: torch.Generator().manual_seed(s))
    chainrule.manual_seed(21)
    mine = ours[case][1]()
    drawn = []
    for _ in range(3):
        drawn.append(list(mine))
        chainrule.randn(2)
    torch.manual_seed(21)
    their = theirs[case][1]()
    expected = []
    for _ in range(3):
        expected.append(list(their))
        torch.randn(2)
    assert drawn == expected and same_state(torch), ours[case][0]


def test_a_huge_weighted_epoch_read_lazily_gives_pytorchs_first_indices(torch):
    weights = [0.5, 2.0, 1.0, 0.25]
    chainrule.manual_seed(3)
    huge = iter(WeightedRandomSampler(weights, 10**10))
    lazy = [next(huge) for _ in range(2500)]
    torch.manual_seed(3)
    assert lazy == torch.multinomial(torch.tensor(weights, dtype=torch.float64), 2500,
                                     True).tolist()  # fmt: skip
    # An epoch just past a chunk ends without a chunk of one (multinomial draws one otherwise).
    g = chainrule.Generator().manual_seed(1)
    counted = list(WeightedRandomSampler(weights, 2049, generator=g))
    theirs = torch.multinomial(torch.tensor(weights, dtype=torch.float64), 2049, True,
                               generator=torch.Generator().manual_seed(1))  # fmt: skip
    assert counted == theirs.tolist()


@pytest.mark.filterwarnings("ignore:Length of split")
@pytest.mark.parametrize(
    "lengths", [[3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [0.33, 0.33, 0.34], [1, 0], [10]]
)
def test_random_split_is_pytorchs_with_and_without_a_generator(torch, lengths):
    n = 10 if lengths != [1, 0] else 4
    chainrule.manual_seed(5)
    plain = random_split(TensorDataset(chainrule.arange(n)), lengths)
    seeded = random_split(range(n), lengths, generator=chainrule.Generator().manual_seed(8))
    torch.manual_seed(5)
    tud = torch.utils.data
    theirs = tud.random_split(range(n), lengths)
    theirs_seeded = tud.random_split(range(n), lengths, generator=torch.Generator().manual_seed(8))
    assert [list(map(int, p.indices)) for p in plain] == [list(p.indices) for p in theirs]
    assert [list(map(int, p.indices)) for p in seeded] == [list(p.indices) for p in theirs_seeded]
    assert same_state(torch)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (11, 4, True), (3, 5, False)])
def test_distributed_sampler_shares_are_pytorchs(torch, n, replicas, drop_last):
    tud = torch.utils.data
    for epoch in (0, 3):
        for rank in range(replicas):
            ours = DistributedSampler(range(n), replicas, rank, seed=4, drop_last=drop_last)
            theirs = tud.DistributedSampler(range(n), replicas, rank, seed=4, drop_last=drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)


def test_numpy_generators_are_still_taken():
    rng = np.random.default_rng(0)
    assert sorted(RandomSampler(range(6), generator=rng)) == list(range(6))
    assert sorted(SubsetRandomSampler([3, 1], generator=rng)) == [1, 3]
    assert set(WeightedRandomSampler([0.0, 1.0], 4, generator=rng)) == {1}
    assert len(list(BatchSampler(RandomSampler(range(5), True, 7, rng), 2, False))) == 4
    parts = random_split(range(6), [2, 4], generator=np.random.default_rng(1))
    assert sorted(sum((list(p.indices) for p in parts), [])) == list(range(6))
