"""Samplers: which sample indices a `DataLoader` reads, and in which order, as PyTorch's
``torch.utils.data`` samplers choose them, with PyTorch's draws (the same seed gives the same
order). Each is a lazy iterable of ints with a length (an epoch of 10**10 draws starts at once,
in constant memory); `BatchSampler` groups another sampler's indices into lists;
`DistributedSampler` deals each process of a data-parallel job its share."""

from __future__ import annotations

import importlib
import itertools
import math
import numbers
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

import numpy as np

from ..creation import empty, tensor
from ..dtypes import int64
from ..errors import DomainError, DTypeError
from ..random import Generator, multinomial, randint, randperm, resolve

#: How many indices PyTorch's `RandomSampler` draws at a time with replacement.
REPLACEMENT_CHUNK = 32
#: Up to this many weighted draws with replacement are made at once when an epoch starts, as
#: PyTorch makes them; a longer epoch (which PyTorch could not hold) draws them as it is read,
#: `CHUNK` at a time: the same numbers as long as nothing else draws from its generator.
EAGER_LIMIT = 2**22
CHUNK = 1024


def _count(value, name: str, op: str, minimum: int = 1) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise DomainError(f"{op}: {name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def seeded_generator(generator=None, seed: int | None = None, op: str = "sampler"):
    """The generator a sampler, loader or split is given: a new `chainrule.Generator` seeded
    by ``seed`` (chainrule's own keyword, the same as passing
    ``generator=chainrule.Generator().manual_seed(seed)``), else ``generator`` as given."""
    if seed is None:
        return generator
    return Generator().manual_seed(_count(seed, "seed", op, minimum=0))


def seed_draw(generator, op: str) -> int:
    """One seed in [0, 2**63) drawn as PyTorch's ``torch.empty((), dtype=torch.int64)
    .random_(generator=generator)`` draws it (from the default generator for None); a NumPy
    Generator (which chainrule also takes) gives one of its own integers."""
    if isinstance(generator, np.random.Generator):
        return int(generator.integers(2**63))
    g = resolve(generator, op)
    return int(empty((), dtype=int64).random_(generator=g).item())


def _own_generator(generator, op: str):
    """``generator``, or, for None, PyTorch's choice: a fresh generator seeded by one draw of
    the default generator (so the epoch's order stays the same whatever else draws from the
    default generator while the epoch is read)."""
    if generator is None:
        return Generator().manual_seed(seed_draw(None, op))
    return generator


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

    The first index read draws a seed from the default generator for a generator of the
    epoch's own (unless ``generator`` is given), then ``randperm`` or ``randint`` (32 at a
    time), as PyTorch, so the same seed gives PyTorch's order.

    >>> import chainrule
    >>> list(RandomSampler(range(5), generator=chainrule.Generator().manual_seed(0)))
    [4, 0, 1, 3, 2]
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
        generator = _own_generator(self.generator, "RandomSampler")
        if isinstance(generator, np.random.Generator):
            yield from _numpy_order(generator, n, wanted, self.replacement)
            return
        if self.replacement:
            for start in range(0, wanted, REPLACEMENT_CHUNK):
                size = (min(REPLACEMENT_CHUNK, wanted - start),)
                yield from randint(n, size, generator=generator).tolist()
            return
        for _ in range(wanted // n):
            yield from randperm(n, generator=generator).tolist()
        # PyTorch draws this last permutation even when it takes none of it.
        yield from randperm(n, generator=generator).tolist()[: wanted % n]

    def __len__(self) -> int:
        return self.num_samples


def _numpy_order(rng: np.random.Generator, n: int, wanted: int, replacement: bool):
    """A `RandomSampler` epoch drawn from a NumPy Generator (which chainrule also takes; its
    numbers are NumPy's, not PyTorch's)."""
    if replacement:
        for start in range(0, wanted, CHUNK):
            yield from rng.integers(0, n, size=min(CHUNK, wanted - start)).tolist()
        return
    for _ in range(wanted // n):
        yield from rng.permutation(n).tolist()
    yield from rng.permutation(n)[: wanted % n].tolist()


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a new random order each epoch.

    >>> sorted(SubsetRandomSampler([7, 3, 9]))
    [3, 7, 9]
    """

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        if isinstance(self.generator, np.random.Generator):
            order = self.generator.permutation(len(self.indices)).tolist()
        else:  # PyTorch's: randperm from the given or the default generator, at the first read
            order = randperm(len(self.indices), generator=self.generator).tolist()
        for i in order:
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights`` (which need
    not sum to 1), with replacement by default; without it, no index is drawn twice.

    The indices are PyTorch's ``multinomial`` draws, all made at the first read as PyTorch
    makes them, except for an epoch of more than `EAGER_LIMIT` draws with replacement (which
    PyTorch could not hold): it draws them as they are read, ``CHUNK`` at a time, in constant
    memory, the same numbers as long as nothing else draws from its generator meanwhile.

    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(
        self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator=None
    ) -> None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim != 1 or not len(weights):
            raise DomainError(
                f"WeightedRandomSampler: weights must be a non-empty 1-D sequence, got shape "
                f"{weights.shape}"
            )
        if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
            raise DomainError(
                "WeightedRandomSampler: weights must be finite, non-negative and not all zero"
            )
        if not isinstance(replacement, (bool, np.bool_)):  # a ValueError, as PyTorch's
            raise DomainError(
                f"WeightedRandomSampler: replacement must be a bool, got {replacement!r}"
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
        generator, count = self.generator, self.num_samples
        if isinstance(generator, np.random.Generator):
            p = self.weights / self.weights.sum()
            yield from generator.choice(len(p), size=count, replace=self.replacement, p=p).tolist()
            return
        weights = tensor(self.weights)
        if not self.replacement or count <= EAGER_LIMIT:
            yield from multinomial(weights, count, self.replacement, generator=generator).tolist()
            return
        # Draws with replacement take one uniform each, so chunks give one call's numbers; no
        # chunk of one, which multinomial draws another way.
        generator = resolve(generator, "WeightedRandomSampler")
        done = 0
        while done < count:
            size = min(CHUNK, count - done)
            size -= count - done - size == 1
            yield from multinomial(weights, size, True, generator=generator).tolist()
            done += size

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter unless
    ``drop_last``).

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(drop_last, (bool, np.bool_)):  # a ValueError, as PyTorch's
            raise DomainError(f"BatchSampler: drop_last must be a bool, got {drop_last!r}")
        self.sampler = sampler
        self.batch_size = _count(batch_size, "batch_size", "BatchSampler")
        self.drop_last = bool(drop_last)

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def _process_group(op: str):
    """The MPI communicator of `chainrule.distributed`, or its error saying init has not run.

    chainrule.distributed stands above the data package (it builds DistributedDataParallel on
    nn), so the sampler looks it up when called rather than importing it.
    """
    return importlib.import_module("chainrule.distributed")._require(op)


class DistributedSampler(Sampler):
    """The indices of ``dataset`` that this rank reads each epoch: pass it as a DataLoader's
    ``sampler=``.

    Each epoch one permutation (from ``seed + epoch``, the same on every rank; call
    `set_epoch` before each epoch to reshuffle) is padded by repeating its first indices to
    a multiple of ``num_replicas`` (or cut to one, with ``drop_last``), and rank ``r`` takes
    every ``num_replicas``-th index from position ``r``: the ranks' shares are disjoint apart
    from the padding, and all have ``len(sampler)`` indices, as in PyTorch. With a loader's
    ``batch_size`` of B per rank, step k on all ranks together reads positions k*B*R to
    (k+1)*B*R of the permutation, which is what one process reads with a batch of B*R.
    ``num_replicas`` and ``rank`` default to `chainrule.distributed.world_size` and
    ``chainrule.distributed.rank()`` (an error before `chainrule.distributed.init`). The
    permutation is PyTorch's: ``randperm`` from a new generator seeded with ``seed + epoch``,
    and so are the partition rules (padding, ``drop_last``, strides).

    >>> sampler = DistributedSampler(range(10), num_replicas=3, rank=0, shuffle=False)
    >>> list(sampler), [list(DistributedSampler(range(10), 3, r, shuffle=False)) for r in (1, 2)]
    ([0, 3, 6, 9], [[1, 4, 7, 0], [2, 5, 8, 1]])
    """

    def __init__(
        self,
        dataset: Any,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if not hasattr(dataset, "__len__"):
            raise DTypeError(
                f"DistributedSampler: the dataset must have __len__, got {type(dataset).__name__}"
            )
        if num_replicas is None:
            num_replicas = _process_group("DistributedSampler (num_replicas=None)").Get_size()
        if rank is None:
            rank = _process_group("DistributedSampler (rank=None)").Get_rank()
        if not isinstance(num_replicas, numbers.Integral) or num_replicas < 1:
            raise DomainError(
                f"DistributedSampler: num_replicas must be an int >= 1, got {num_replicas!r}"
            )
        if not isinstance(rank, numbers.Integral) or not 0 <= rank < num_replicas:
            raise DomainError(
                f"DistributedSampler: rank must be from 0 to {num_replicas - 1}, got {rank!r}"
            )
        self.dataset = dataset
        self.num_replicas, self.rank = int(num_replicas), int(rank)
        self.shuffle, self.seed, self.drop_last = shuffle, int(seed), drop_last
        self.epoch = 0
        n = len(dataset)
        self.num_samples = n // self.num_replicas if drop_last else math.ceil(n / num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of ``epoch`` next (call it with the same epoch on every rank)."""
        self.epoch = int(epoch)

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            generator = Generator().manual_seed(self.seed + self.epoch)
            order = randperm(n, generator=generator).numpy()
        else:
            order = np.arange(n)
        if self.total_size > n:  # pad by repeating from the start, as often as needed
            order = np.resize(order, self.total_size)
        order = order[: self.total_size]
        return iter(order[self.rank :: self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples
