"""Samplers: which sample indices a `DataLoader` reads, and in which order, as PyTorch's
``torch.utils.data`` samplers choose them. Each is an iterable of ints with a length;
`BatchSampler` groups another sampler's indices into lists."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator, Sequence, Sized

import numpy as np

from ..errors import DomainError, DTypeError
from ..random import numpy_generator


def _count(value, name: str, op: str, minimum: int = 1) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise DomainError(f"{op}: {name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def draw_generator(generator=None, seed: int | None = None, op: str = "sampler"):
    """The NumPy generator a draw uses: a new one seeded by ``seed`` (chainrule's keyword),
    else ``generator``'s (a `chainrule.Generator` or a NumPy Generator), else chainrule's."""
    if seed is not None:
        return np.random.default_rng(_count(seed, "seed", op, minimum=0))
    return numpy_generator(generator, op)


class Sampler:
    """Base class of samplers: define ``__iter__`` (the indices) and, where known,
    ``__len__``. ``data_source`` is accepted for PyTorch's signature and not used."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__}: define __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1, in order.

    >>> list(SequentialSampler(range(4)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices into ``data_source``: a new permutation each epoch, or, with
    ``replacement=True``, ``num_samples`` independent uniform draws. Without replacement,
    ``num_samples`` larger than the data set takes whole permutations one after another (as
    PyTorch does), so every sample appears before any appears twice.

    >>> import numpy as np
    >>> sorted(RandomSampler(range(5), generator=np.random.default_rng(0)))
    [0, 1, 2, 3, 4]
    >>> len(list(RandomSampler(range(5), replacement=True, num_samples=12)))
    12
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator=None,
    ) -> None:
        if not isinstance(replacement, (bool, np.bool_)):
            raise DTypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        self.data_source = data_source
        self.replacement = bool(replacement)
        self._num_samples = (
            None if num_samples is None else _count(num_samples, "num_samples", "RandomSampler")
        )
        self.generator = generator

    @property
    def num_samples(self) -> int:
        """How many indices an epoch gives (the data set's size unless given)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, wanted = len(self.data_source), self.num_samples
        if not n:
            return
        rng = draw_generator(self.generator, op="RandomSampler")
        if self.replacement:
            yield from rng.integers(0, n, size=wanted).tolist()
            return
        for _ in range(wanted // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n)[: wanted % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a new random order each epoch.

    >>> sorted(SubsetRandomSampler([7, 3, 9]))
    [3, 7, 9]
    """

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        order = draw_generator(self.generator, op="SubsetRandomSampler").permutation(
            len(self.indices)
        )
        for i in order.tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights`` (which need
    not sum to 1), with replacement by default; without it, no index is drawn twice.

    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(
        self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator=None
    ) -> None:
        weights = np.asarray(getattr(weights, "data", weights), dtype=np.float64)
        if weights.ndim != 1 or not len(weights):
            raise DomainError(
                f"WeightedRandomSampler: weights must be a non-empty 1-D sequence, got shape "
                f"{weights.shape}"
            )
        if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
            raise DomainError(
                "WeightedRandomSampler: weights must be finite, non-negative and not all zero"
            )
        self.weights = weights
        self.num_samples = _count(num_samples, "num_samples", "WeightedRandomSampler")
        self.replacement = bool(replacement)
        if not self.replacement and self.num_samples > np.count_nonzero(weights):
            raise DomainError(
                f"WeightedRandomSampler: cannot draw {self.num_samples} samples without "
                f"replacement from {np.count_nonzero(weights)} with non-zero weight"
            )
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        rng = draw_generator(self.generator, op="WeightedRandomSampler")
        p = self.weights / self.weights.sum()
        drawn = rng.choice(len(p), size=self.num_samples, replace=self.replacement, p=p)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter unless
    ``drop_last``).

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(drop_last, (bool, np.bool_)):
            raise DTypeError(f"BatchSampler: drop_last must be a bool, got {drop_last!r}")
        self.sampler = sampler
        self.batch_size = _count(batch_size, "batch_size", "BatchSampler")
        self.drop_last = bool(drop_last)

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for index in self.sampler:
            batch.append(int(index))
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
