"""Under one seed, shuffled loaders, every random sampler and random_split give PyTorch's
order epoch after epoch, and leave the default generator where PyTorch's is (each epoch's
seed draws included), whatever else draws in between."""

import numpy as np
import pytest

import chainrule as cr

DATA = np.arange(23, dtype=np.float32)


def _data(lib, torch):
    return torch.utils.data if lib is torch else cr.data


LOADERS = {
    "shuffle": lambda L, D: D.DataLoader(D.TensorDataset(L.tensor(DATA)), batch_size=5,
                                         shuffle=True),
    "shuffle, drop_last": lambda L, D: D.DataLoader(D.TensorDataset(L.tensor(DATA)),
                                                    batch_size=5, shuffle=True, drop_last=True),
    "a generator": lambda L, D: D.DataLoader(D.TensorDataset(L.tensor(DATA)), batch_size=4,
                                             shuffle=True, generator=L.Generator().manual_seed(7)),
    "sequential": lambda L, D: D.DataLoader(D.TensorDataset(L.tensor(DATA)), batch_size=4),
    "with replacement": lambda L, D: D.DataLoader(
        D.TensorDataset(L.tensor(DATA)), batch_size=4,
        sampler=D.RandomSampler(range(23), replacement=True, num_samples=70)),
    "num_samples": lambda L, D: D.DataLoader(
        D.TensorDataset(L.tensor(DATA)), batch_size=4,
        sampler=D.RandomSampler(range(23), num_samples=50)),
    "subset": lambda L, D: D.DataLoader(
        D.TensorDataset(L.tensor(DATA)), batch_size=4,
        sampler=D.SubsetRandomSampler([1, 5, 7, 9, 11, 13])),
    "weighted": lambda L, D: D.DataLoader(
        D.TensorDataset(L.tensor(DATA)), batch_size=4,
        sampler=D.WeightedRandomSampler([1.0] * 10 + [3.0] * 13, 40)),
    "weighted, one sample": lambda L, D: D.DataLoader(
        D.TensorDataset(L.tensor(DATA)), sampler=D.WeightedRandomSampler([1.0, 2.0, 3.0], 1)),
    "weighted, without replacement": lambda L, D: D.DataLoader(
        D.TensorDataset(L.tensor(DATA)), batch_size=4,
        sampler=D.WeightedRandomSampler([1.0] * 10 + [3.0] * 13, 9, replacement=False)),
}  # fmt: skip


def _epochs(lib, torch, make, epochs=3, seed=0):
    lib.manual_seed(seed)
    seen = []
    for _ in range(epochs):
        for (batch,) in make(lib, _data(lib, torch)):
            seen.append(batch.numpy().tolist())
        seen.append(float(lib.rand(1)))  # a draw between epochs (dropout, init...)
    return seen, lib.get_rng_state().numpy()


@pytest.mark.parametrize("name", list(LOADERS))
def test_each_loader_reads_pytorchs_order(torch, name):
    ours, our_state = _epochs(cr, torch, LOADERS[name])
    theirs, their_state = _epochs(torch, torch, LOADERS[name])
    assert ours == theirs
    assert np.array_equal(our_state, their_state)


@pytest.mark.parametrize("lengths", [[10, 13], [0.3, 0.3, 0.4]])
def test_random_split_gives_pytorchs_subsets(torch, lengths):
    cr.manual_seed(1)
    torch.manual_seed(1)
    ours = [[int(i) for i in s.indices] for s in cr.data.random_split(range(23), lengths)]
    theirs = [list(s.indices) for s in torch.utils.data.random_split(range(23), lengths)]
    assert ours == theirs
    ours = cr.data.random_split(range(23), [0.5, 0.5], generator=cr.Generator().manual_seed(42))
    theirs = torch.utils.data.random_split(
        range(23), [0.5, 0.5], generator=torch.Generator().manual_seed(42)
    )
    assert [[int(i) for i in s.indices] for s in ours] == [list(s.indices) for s in theirs]
    # chainrule's seed= keyword is Generator().manual_seed(seed)
    seeded = cr.data.random_split(range(23), [0.5, 0.5], seed=42)
    assert [[int(i) for i in s.indices] for s in seeded] == [list(s.indices) for s in theirs]
