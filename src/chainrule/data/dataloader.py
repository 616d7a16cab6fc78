"""`DataLoader`: a data set read in batches, as ``torch.utils.data.DataLoader`` reads it,
with PyTorch's arguments (sampler, batch_sampler, collate_fn, drop_last, generator...), and
the collate functions that stack samples into a batch."""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_shape
from .dataset import Dataset, IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, seed_draw, seeded_generator


def default_convert(sample: Any) -> Any:
    """A sample with its NumPy arrays and numbers turned into Tensors (tuples, lists and
    dicts field by field): what a `DataLoader` with ``batch_size=None`` yields."""
    if isinstance(sample, np.ndarray) and sample.dtype.kind in "biuf":
        return Tensor._make(sample)
    if isinstance(sample, np.generic) and sample.dtype.kind in "biuf":
        return Tensor._make(np.asarray(sample))
    if isinstance(sample, Mapping):
        return {key: default_convert(value) for key, value in sample.items()}
    if isinstance(sample, tuple):
        return tuple(default_convert(value) for value in sample)
    if isinstance(sample, list):
        return [default_convert(value) for value in sample]
    return sample


def default_collate(samples: list) -> Any:
    """Stack a list of samples into a batch: tensors and arrays are stacked along a new first
    dimension, numbers become a tensor, tuples/lists/dicts are collated field by field.

    >>> import chainrule
    >>> default_collate([(chainrule.zeros(2), 1), (chainrule.ones(2), 0)])
    [tensor([[0., 0.],
            [1., 1.]]), tensor([1, 0])]
    """
    if not samples:
        raise DomainError("default_collate: got no samples; a batch needs at least one")
    first = samples[0]
    if isinstance(first, (Tensor, np.ndarray)):
        arrays = [s._array if isinstance(s, Tensor) else np.asarray(s) for s in samples]
        shapes = {a.shape for a in arrays}
        if len(shapes) != 1:
            raise ShapeError(
                "default_collate: samples have different shapes "
                f"{sorted(fmt_shape(s) for s in shapes)}; pad them or pass collate_fn="
            )
        return Tensor._make(np.stack(arrays))
    if isinstance(first, str):  # before numbers: np.str_ is also an np.generic
        return list(samples)
    if isinstance(first, (numbers.Number, np.generic)) and not isinstance(first, complex):
        return Tensor._make(np.array(samples))
    if isinstance(first, Mapping):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        if len({len(s) for s in samples}) != 1:
            raise ShapeError("default_collate: samples have different numbers of fields")
        return [default_collate(list(field)) for field in zip(*samples)]
    raise DTypeError(
        f"default_collate: cannot batch samples of type {type(first).__name__}; pass collate_fn="
    )


class WorkerInfo(NamedTuple):
    """What `get_worker_info` gives code running inside a loader's worker."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The running worker's `WorkerInfo`, or None outside a worker. chainrule's loader runs
    its one worker in the calling process (see `DataLoader`), so an `IterableDataset` that
    splits its stream by worker sees worker 0 of 1 and reads all of it."""
    return _worker


def _tensor_source(dataset: Dataset) -> tuple[tuple[Tensor, ...], np.ndarray | None] | None:
    """The tensors (and index map) behind a TensorDataset, possibly inside Subsets."""
    indices = None
    while isinstance(dataset, Subset):
        indices = dataset.indices if indices is None else dataset.indices[indices]
        dataset = dataset.dataset
    if type(dataset) is TensorDataset:
        return dataset.tensors, indices
    return None


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise DTypeError(f"DataLoader: {name} must be a bool, got {value!r}")
    return bool(value)


class _LoaderIterator:
    """One epoch of a `DataLoader`, as ``iter(loader)`` gives it: ``next`` reads the next batch,
    an exhausted epoch stays exhausted (``iter(loader)`` again starts a new one, with a new
    shuffle), and ``len`` is the loader's."""

    def __init__(self, loader: DataLoader, batches: Iterator[Any]) -> None:
        self._loader, self._batches = loader, batches

    def __iter__(self) -> _LoaderIterator:
        return self

    def __next__(self) -> Any:
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._loader)


class DataLoader:
    """Iterate over ``dataset`` in batches (each a list of stacked Tensors for tuple samples).

    The arguments are PyTorch's. With ``shuffle``, every epoch (every ``iter``) visits the
    samples in a new random order from ``generator`` (or, chainrule's own keyword, a
    generator seeded once by ``seed``; else the default generator), PyTorch's order under
    the same seed: each ``iter`` draws PyTorch's base seed from the generator, and the first
    batch the `RandomSampler`'s seed, as PyTorch's loader does. A ``sampler`` chooses the
    indices instead (`RandomSampler`, `chainrule.distributed.DistributedSampler`, any
    iterable of ints with a length), a ``batch_sampler`` whole batches of them.
    ``batch_size=None`` yields single samples, converted to Tensors. ``drop_last`` skips a
    final smaller batch. An `IterableDataset` is batched in the order it streams.

    Differences from PyTorch, on purpose: ``num_workers``, ``pin_memory``, ``timeout``,
    ``prefetch_factor`` and ``persistent_workers`` are accepted, but samples are loaded in
    the calling process (NumPy indexing of a `TensorDataset` is one call per batch, faster
    than handing batches between processes); with ``num_workers > 0`` the
    ``worker_init_fn`` runs once per epoch as worker 0 (its seed is PyTorch's worker 0's,
    the base seed). A `TensorDataset` (or a Subset of
    one) is batched by indexing its arrays once per batch, without a Python loop.

    >>> import chainrule
    >>> ds = TensorDataset(chainrule.arange(10).float(), chainrule.arange(10))
    >>> loader = DataLoader(ds, batch_size=4)
    >>> [yb.tolist() for _, yb in loader]
    [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    """

    def __init__(
        self,
        dataset: Dataset | IterableDataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[int] | None = None,
        batch_sampler: Iterable[list[int]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
        seed: int | None = None,
    ) -> None:
        if batch_size is not None and (
            not isinstance(batch_size, numbers.Integral)
            or isinstance(batch_size, bool)
            or batch_size <= 0
        ):
            raise DomainError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        shuffle = False if shuffle is None else _flag(shuffle, "shuffle")
        drop_last = _flag(drop_last, "drop_last")
        _flag(pin_memory, "pin_memory")
        if not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise DomainError(f"DataLoader: num_workers must be an int >= 0, got {num_workers!r}")
        streamed = isinstance(dataset, IterableDataset)
        if not streamed and not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise DTypeError(
                f"DataLoader: the dataset must have __len__ and __getitem__ (or be an "
                f"IterableDataset), got {type(dataset).__name__}"
            )
        if streamed and (shuffle or sampler is not None or batch_sampler is not None):
            raise DomainError(
                "DataLoader: an IterableDataset streams its own order; shuffle, sampler and "
                "batch_sampler cannot be given with it"
            )
        if sampler is not None and shuffle:
            raise DomainError(
                "DataLoader: sampler and shuffle=True cannot be combined; the sampler chooses "
                "the order (DistributedSampler shuffles by itself)"
            )
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise DomainError(
                    "DataLoader: batch_sampler chooses whole batches, so batch_size, shuffle, "
                    "sampler and drop_last cannot be given with it"
                )
            batch_size = None
        elif batch_size is None and drop_last:
            raise DomainError("DataLoader: drop_last needs a batch_size (batch_size=None)")
        self.dataset = dataset
        self.batch_size = None if batch_size is None else int(batch_size)
        self.drop_last = drop_last
        self.collate_fn = collate_fn
        self.num_workers = int(num_workers)
        self.worker_init_fn = worker_init_fn
        self.pin_memory = pin_memory
        self.persistent_workers = bool(persistent_workers)
        self.generator = seeded_generator(generator, seed, "DataLoader")
        self._base_seed: int | None = None
        if streamed:
            self.sampler = None
        elif sampler is not None:
            self.sampler = sampler
        elif shuffle:
            self.sampler = RandomSampler(dataset, generator=self.generator)
        else:
            self.sampler = SequentialSampler(dataset)
        self._given_batches = batch_sampler is not None
        if batch_sampler is None and self.batch_size is not None and not streamed:
            batch_sampler = BatchSampler(self.sampler, self.batch_size, drop_last)
        self.batch_sampler = batch_sampler

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.dataset) if self.sampler is None else len(self.sampler)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        global _worker
        # PyTorch's iterator, in its order: the index sampler's iterator (a BatchSampler's
        # reads its sampler only at the first batch), then a base seed drawn from the loader's
        # generator, with or without workers (once for persistent workers), then a stream's
        # iterator.
        streamed = isinstance(self.dataset, IterableDataset)
        given = iter(self.batch_sampler) if self._given_batches else None
        singles = iter(self.sampler) if self.batch_size is None and not streamed else None
        if self._base_seed is None or not (self.persistent_workers and self.num_workers):
            self._base_seed = seed_draw(self.generator, "DataLoader")
        if self.num_workers and self.worker_init_fn is not None:
            previous, _worker = _worker, WorkerInfo(0, 1, self._base_seed, self.dataset)
            try:
                self.worker_init_fn(0)
            finally:
                _worker = previous
        if streamed:
            return _LoaderIterator(self, self._stream(iter(self.dataset)))
        if given is not None:
            return _LoaderIterator(self, self._batches(given))
        if singles is not None:
            return _LoaderIterator(self, (default_convert(self.dataset[int(i)]) for i in singles))
        return _LoaderIterator(self, self._batches(None))

    def _stream(self, samples: Iterator[Any]) -> Iterator[Any]:
        if self.batch_size is None:
            yield from (default_convert(sample) for sample in samples)
            return
        batch: list = []
        for sample in samples:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self._collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield self._collate(batch)

    def _collate(self, samples: list) -> Any:
        return (self.collate_fn or default_collate)(samples)

    def _index_batches(self, given: Iterator[list[int]] | None) -> Iterator[np.ndarray]:
        if given is not None:
            for batch in given:
                yield np.asarray(batch, dtype=np.int64)
            return
        # BatchSampler's grouping, read lazily from the sampler (an epoch may be endless) into
        # one array per batch without a Python step per index.
        indices = iter(self.sampler)
        while len(batch := np.fromiter(itertools.islice(indices, self.batch_size), np.int64)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def _batches(self, given: Iterator[list[int]] | None) -> Iterator[Any]:
        source = None if self.collate_fn is not None else _tensor_source(self.dataset)
        for batch in self._index_batches(given):
            if source is not None:
                tensors, indices = source
                rows = batch if indices is None else indices[batch]
                yield [Tensor._make(t._array[rows]) for t in tensors]
            else:
                yield self._collate([self.dataset[int(i)] for i in batch])
