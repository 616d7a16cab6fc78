"""Datasets as PyTorch's ``torch.utils.data`` has them: map-style (`Dataset`, `TensorDataset`,
`Subset`, `ConcatDataset`, `StackDataset`) and iterable (`IterableDataset`, `ChainDataset`), and
`random_split`. Loading them in batches is `chainrule.data.dataloader`'s."""

from __future__ import annotations

import bisect
import math
import numbers
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, OutOfRangeError, ShapeError, fmt_shape
from ..random import randperm
from .sampler import seeded_generator


class Dataset:
    """Base class of map-style data sets: ``len(ds)`` samples, ``ds[i]`` the i-th one.
    ``a + b`` is their `ConcatDataset`."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: define __len__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset:
    """Base class of data sets read as a stream: define ``__iter__``. A `DataLoader` batches
    the samples in the order the stream gives them (no sampler, no shuffle); ``a + b`` is
    their `ChainDataset`.

    >>> class Count(IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(5))
    >>> from chainrule.data import DataLoader
    >>> [b.tolist() for b in DataLoader(Count(), batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__}: define __iter__")

    def __add__(self, other: IterableDataset) -> ChainDataset:
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several iterable data sets, one stream after another."""

    def __init__(self, datasets: Iterable[IterableDataset]) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator[Any]:
        for dataset in self.datasets:
            yield from dataset


class TensorDataset(Dataset):
    """Samples made of the i-th rows of tensors that share their first dimension.

    ``ds[i]`` is a tuple with one row of each tensor; an index array gives many rows at once.

    >>> import chainrule
    >>> ds = TensorDataset(chainrule.zeros(5, 2), chainrule.arange(5))
    >>> len(ds), ds[3]
    (5, (tensor([0., 0.]), tensor(3)))
    """

    def __init__(self, *tensors: Tensor | np.ndarray) -> None:
        if not tensors:
            raise DomainError("TensorDataset: needs at least one tensor")
        self.tensors = tuple(
            t if isinstance(t, Tensor) else Tensor._make(np.asarray(t)) for t in tensors
        )
        sizes = [t.shape[0] if t.ndim else None for t in self.tensors]
        if None in sizes or len(set(sizes)) != 1:
            shapes = ", ".join(fmt_shape(t.shape) for t in self.tensors)
            raise ShapeError(
                f"TensorDataset: tensors must share their first dimension, got {shapes}"
            )

    def __getitem__(self, index) -> tuple[Tensor, ...]:
        # A copy, so that changing a sample cannot change the data set.
        return tuple(Tensor._make(np.array(t._array[index])) for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int] | np.ndarray) -> None:
        self.dataset = dataset
        self.indices = np.asarray(indices, dtype=np.int64)

    def __getitem__(self, index) -> Any:
        if isinstance(index, numbers.Integral):
            return self.dataset[int(self.indices[index])]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Map-style data sets one after another: sample i of the whole is found in the data set
    whose range holds i (``cumulative_sizes`` are the ends of those ranges).

    >>> import chainrule
    >>> ds = ConcatDataset([TensorDataset(chainrule.arange(3)), TensorDataset(chainrule.arange(2))])
    >>> len(ds), ds.cumulative_sizes, ds[3], ds[-1]
    (5, [3, 5], (tensor(0),), (tensor(1),))
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise DomainError("ConcatDataset: needs at least one dataset")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise DomainError(
                    "ConcatDataset: cannot hold an IterableDataset (use ChainDataset or a + b)"
                )
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]).tolist())

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        n = len(self)
        if not isinstance(index, numbers.Integral):
            raise DomainError(f"ConcatDataset: index must be an int, got {index!r}")
        if not -n <= index < n:
            raise OutOfRangeError(f"ConcatDataset: index {index} is out of range for {n} samples")
        index = int(index) % n
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class StackDataset(Dataset):
    """Several map-style data sets of one length read side by side: sample i is the tuple of
    their i-th samples (datasets given positionally) or a dict of them (given by keyword).

    >>> import chainrule
    >>> images, labels = TensorDataset(chainrule.zeros(3, 2)), range(10, 13)
    >>> StackDataset(images, labels)[1]
    ((tensor([0., 0.]),), 11)
    >>> StackDataset(x=images, y=labels)[2]["y"]
    12
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise DomainError(
                "StackDataset: give the datasets either positionally (tuple samples) or by "
                "keyword (dict samples), not both"
            )
        datasets = list(args) or list(kwargs.values())
        if not datasets:
            raise DomainError("StackDataset: needs at least one dataset")
        lengths = [len(d) for d in datasets]
        if len(set(lengths)) != 1:
            raise ShapeError(f"StackDataset: the datasets have different lengths {lengths}")
        self.datasets: tuple | dict = tuple(args) if args else dict(kwargs)
        self._length = lengths[0]

    def __getitem__(self, index: int) -> tuple | dict:
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list[int]) -> list:
        """The samples at ``indices``, as a list (what a DataLoader asks for a batch)."""
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return self._length


def random_split(
    dataset: Dataset, lengths: Sequence[int | float], generator=None, seed: int | None = None
) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random `Subset`s of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to 1 (then the
    samples left over by rounding down go one each to the first subsets); as in PyTorch,
    lengths that sum to 1 are taken as fractions. The order is PyTorch's: ``randperm`` from
    ``generator`` (or, chainrule's own keyword, a new `chainrule.Generator` seeded by
    ``seed``), else from the default generator.

    >>> import chainrule
    >>> train, test = random_split(TensorDataset(chainrule.arange(10)), [0.8, 0.2], seed=0)
    >>> len(train), len(test)
    (8, 2)
    """
    n = len(dataset)
    lengths = list(lengths)
    if not lengths:
        raise DomainError("random_split: lengths is empty")
    wrong = f"random_split: lengths {lengths} must be non-negative counts or fractions in [0, 1]"
    if not all(isinstance(k, numbers.Real) and not isinstance(k, bool) for k in lengths):
        raise DomainError(wrong)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:  # fractions, by PyTorch's test
        if not all(0 <= k <= 1 for k in lengths):
            raise DomainError(wrong)
        counts = [math.floor(n * k) for k in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
    elif all(isinstance(k, numbers.Integral) for k in lengths):
        counts = [int(k) for k in lengths]
    elif all(0 <= k <= 1 for k in lengths):
        raise DomainError(f"random_split: fractions {lengths} sum to {total}, not 1")
    else:
        raise DomainError(wrong)
    if any(k < 0 for k in counts):
        raise DomainError(f"random_split: lengths {lengths} must not be negative")
    if sum(counts) != n:
        raise DomainError(
            f"random_split: lengths {lengths} sum to {sum(counts)}, but the dataset has {n} samples"
        )
    generator = seeded_generator(generator, seed, "random_split")
    if isinstance(generator, np.random.Generator):  # also taken; NumPy's numbers
        order = generator.permutation(n)
    else:
        order = randperm(n, generator=generator).numpy()
    ends = np.cumsum(counts)
    return [Subset(dataset, order[end - k : end]) for k, end in zip(counts, ends)]
