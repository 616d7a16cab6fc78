"""StackDataset and DistributedSampler from chainrule.data against torch.utils.data."""

import itertools
from collections import Counter

import pytest

import chainrule
from chainrule import data
from chainrule.distributed import DistributedError
from chainrule.errors import DomainError, ShapeError


def test_stack_dataset_tuple_and_dict_forms_match_pytorch(torch):
    ours = data.StackDataset(range(5), "abcde")
    theirs = torch.utils.data.StackDataset(range(5), "abcde")
    assert len(ours) == len(theirs) == 5
    assert [ours[i] for i in range(5)] == [theirs[i] for i in range(5)]
    ours = data.StackDataset(x=range(3), y=[7, 8, 9])
    theirs = torch.utils.data.StackDataset(x=range(3), y=[7, 8, 9])
    assert [ours[i] for i in range(3)] == [theirs[i] for i in range(3)] == [
        {"x": 0, "y": 7}, {"x": 1, "y": 8}, {"x": 2, "y": 9}]  # fmt: skip
    assert ours.__getitems__([2, 0]) == theirs.__getitems__([2, 0])


def test_stack_dataset_batches_in_a_dataloader():
    images = data.TensorDataset(chainrule.arange(8.0).reshape(4, 2))
    loader = data.DataLoader(data.StackDataset(image=images, label=range(4)), batch_size=2)
    first = next(iter(loader))
    assert first["label"].tolist() == [0, 1]
    assert first["image"][0].tolist() == [[0.0, 1.0], [2.0, 3.0]]


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        ((range(2),), {"y": range(2)}, DomainError, "either positionally .* or by keyword"),
        ((), {}, DomainError, "StackDataset: needs at least one dataset"),
        ((range(2), range(3)), {}, ShapeError, r"different lengths \[2, 3\]"),
    ],
)
def test_stack_dataset_errors(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        data.StackDataset(*args, **kwargs)


def test_distributed_sampler_is_one_class_in_data_and_distributed():
    assert data.DistributedSampler is chainrule.distributed.DistributedSampler
    assert issubclass(data.DistributedSampler, data.Sampler)


@pytest.mark.parametrize(("n", "replicas"), [(10, 3), (8, 2), (5, 4), (2, 5), (7, 7)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_unshuffled_shares_equal_pytorch(torch, n, replicas, drop_last):
    for rank in range(replicas):
        ours = data.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(
            range(n), replicas, rank, shuffle=False, drop_last=drop_last
        )
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize(("n", "replicas"), [(10, 3), (9, 3), (5, 4), (2, 5)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_shares_partition_as_pytorch(torch, n, replicas, drop_last):
    """PyTorch's permutation comes from its own generator; what must agree is the partition:
    share sizes, which indices are covered, how many repeat (padding) or are dropped."""

    def shares(module, epoch):
        samplers = [module.DistributedSampler(range(n), replicas, r, seed=4, drop_last=drop_last)
                    for r in range(replicas)]  # fmt: skip
        for sampler in samplers:
            sampler.set_epoch(epoch)
        return [list(s) for s in samplers]

    for epoch in (0, 1):
        mine, theirs = shares(data, epoch), shares(torch.utils.data, epoch)
        assert [len(s) for s in mine] == [len(s) for s in theirs]
        flat_mine, flat_theirs = sum(mine, []), sum(theirs, [])
        # how often each index is read: once, or more where the padding repeats it
        assert sorted(Counter(flat_mine).values()) == sorted(Counter(flat_theirs).values())
        if drop_last:  # no index is read twice
            assert len(set(flat_mine)) == len(flat_mine)
        else:  # every index is read, the padding repeating some
            assert set(flat_mine) == set(range(n))
    assert shares(data, 3) == shares(data, 3)  # the same on every rank and every run


def test_set_epoch_reshuffles_and_seed_decides():
    def order(seed, epoch):
        sampler = data.DistributedSampler(range(50), 1, 0, seed=seed)
        sampler.set_epoch(epoch)
        return list(sampler)

    assert order(0, 0) != order(0, 1)
    assert order(0, 1) == order(0, 1)
    assert order(0, 0) != order(1, 0)
    assert sorted(order(2, 5)) == list(range(50))


def test_rank_shares_are_disjoint_without_padding():
    shares = [list(data.DistributedSampler(range(12), 4, r, seed=1)) for r in range(4)]
    for a, b in itertools.combinations(shares, 2):
        assert not set(a) & set(b)


def test_defaults_need_the_process_group():
    with pytest.raises(DistributedError, match=r"DistributedSampler \(num_replicas=None\): the"):
        data.DistributedSampler(range(4))
    with pytest.raises(DistributedError, match=r"DistributedSampler \(rank=None\): the"):
        data.DistributedSampler(range(4), num_replicas=2)
    with pytest.raises(DomainError, match=r"rank must be from 0 to 1, got 2"):
        data.DistributedSampler(range(4), num_replicas=2, rank=2)
