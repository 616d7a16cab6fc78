"""Small data sets for demos and tests (XOR, blobs, moons, spirals, 8x8 digits), and the
`Dataset`/`DataLoader` machinery that batches them. The synthetic sets are made with NumPy;
`load_digits` reads scikit-learn's bundled copy (``pip install chainrule[data]``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ._tensor import Tensor
from .errors import DomainError, DTypeError, ShapeError, fmt_shape
from .random import default_generator

# Synthetic data sets: each returns (X float32 of shape (n, features), y int64 of shape (n,)).


def _check_count(value: Any, name: str, op: str, minimum: int = 1) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise DomainError(f"{op}: {name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def _check_noise(noise: float, op: str, name: str = "noise") -> float:
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not 0 <= noise < math.inf:
        raise DomainError(f"{op}: {name} must be a finite number >= 0, got {noise!r}")
    return float(noise)


def _rng(seed: int, op: str) -> np.random.Generator:
    """A NumPy generator seeded by ``seed`` (an int >= 0: NumPy's own error names no op)."""
    return np.random.default_rng(_check_count(seed, "seed", op, minimum=0))


def _as_tensors(X: np.ndarray, y: np.ndarray) -> tuple[Tensor, Tensor]:
    return Tensor._make(X.astype(np.float32)), Tensor._make(y.astype(np.int64))


def _balanced_labels(n: int, classes: int) -> np.ndarray:
    """n labels, each class n // classes times (the first n % classes classes once more)."""
    return np.arange(n) % classes


def make_xor(n: int = 4, noise: float = 0.0, seed: int = 0) -> tuple[Tensor, Tensor]:
    """The XOR problem: points at the corners of the unit square, label x1 xor x2.

    With the defaults, the four rows of the truth table in order; with larger ``n``, the
    corners repeated (shuffled, equally often) plus Gaussian ``noise``.

    >>> X, y = make_xor()
    >>> X.tolist(), y.tolist()
    ([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], [0, 1, 1, 0])
    """
    n = _check_count(n, "n", "make_xor")
    noise = _check_noise(noise, "make_xor")
    rng = _rng(seed, "make_xor")
    corners = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    which = _balanced_labels(n, 4)
    if n > 4:
        which = rng.permutation(which)
    X = corners[which] + noise * rng.standard_normal((n, 2))
    y = np.array([0, 1, 1, 0])[which]
    return _as_tensors(X, y)


def make_blobs(
    n_samples: int = 100,
    centers: int | Sequence[Sequence[float]] = 4,
    n_features: int = 2,
    cluster_std: float = 1.0,
    seed: int = 0,
) -> tuple[Tensor, Tensor]:
    """Gaussian clusters, one class per center, equally many points each, shuffled.

    An int ``centers`` places the centers on a circle of radius 10 (in the first two
    features), so with the default spread the classes are linearly separable; or give the
    centers as an array of shape (classes, n_features).

    >>> X, y = make_blobs()
    >>> X.shape, X.dtype, sorted(set(y.tolist()))
    ((100, 2), dtype('float32'), [0, 1, 2, 3])
    """
    n_samples = _check_count(n_samples, "n_samples", "make_blobs")
    if isinstance(centers, numbers.Integral):
        count = _check_count(centers, "centers", "make_blobs")
        n_features = _check_count(n_features, "n_features", "make_blobs")
        points = np.zeros((count, n_features))
        if n_features == 1:
            points[:, 0] = np.linspace(-10.0, 10.0, count)
        else:
            angles = 2 * np.pi * np.arange(count) / count
            points[:, 0], points[:, 1] = 10.0 * np.cos(angles), 10.0 * np.sin(angles)
    else:
        points = np.asarray(centers, dtype=np.float64)
        if points.ndim != 2 or len(points) == 0:
            raise ShapeError(
                f"make_blobs: centers must have shape (classes, features), got "
                f"{fmt_shape(points.shape)}"
            )
    cluster_std = _check_noise(cluster_std, "make_blobs", "cluster_std")
    rng = _rng(seed, "make_blobs")
    y = rng.permutation(_balanced_labels(n_samples, len(points)))
    X = points[y] + cluster_std * rng.standard_normal((n_samples, points.shape[1]))
    return _as_tensors(X, y)


def make_moons(n_samples: int = 200, noise: float = 0.1, seed: int = 0) -> tuple[Tensor, Tensor]:
    """Two interleaving half circles (scikit-learn's construction), shuffled, plus noise.

    >>> X, y = make_moons(10)
    >>> X.shape, y.tolist().count(0)
    ((10, 2), 5)
    """
    n_samples = _check_count(n_samples, "n_samples", "make_moons", minimum=2)
    noise = _check_noise(noise, "make_moons")
    rng = _rng(seed, "make_moons")
    n_outer = n_samples // 2
    n_inner = n_samples - n_outer
    t_outer, t_inner = np.linspace(0, np.pi, n_outer), np.linspace(0, np.pi, n_inner)
    X = np.concatenate(
        [
            np.stack([np.cos(t_outer), np.sin(t_outer)], axis=1),
            np.stack([1 - np.cos(t_inner), 0.5 - np.sin(t_inner)], axis=1),
        ]
    )
    y = np.concatenate([np.zeros(n_outer), np.ones(n_inner)])
    order = rng.permutation(n_samples)
    X = X[order] + noise * rng.standard_normal((n_samples, 2))
    return _as_tensors(X, y[order])


def make_spirals(
    n_samples: int = 300, n_arms: int = 3, noise: float = 0.2, seed: int = 0
) -> tuple[Tensor, Tensor]:
    """Interleaved spiral arms, one class per arm (the CS231n data set), shuffled.

    Each arm winds 4 radians outward from the origin to radius 1; ``noise`` jitters the angle.

    >>> X, y = make_spirals(300, n_arms=3)
    >>> X.shape, [y.tolist().count(k) for k in range(3)]
    ((300, 2), [100, 100, 100])
    """
    n_samples = _check_count(n_samples, "n_samples", "make_spirals")
    n_arms = _check_count(n_arms, "n_arms", "make_spirals")
    noise = _check_noise(noise, "make_spirals")
    rng = _rng(seed, "make_spirals")
    y = _balanced_labels(n_samples, n_arms)
    # Position along the arm, 0 at the centre to 1 at the tip, for each sample of its arm.
    counts = np.bincount(y, minlength=n_arms)
    rank = np.empty(n_samples)
    for arm in range(n_arms):
        rank[y == arm] = np.linspace(0.0, 1.0, counts[arm])
    theta = 2 * np.pi * y / n_arms + 4.0 * rank + noise * rng.standard_normal(n_samples)
    X = np.stack([rank * np.sin(theta), rank * np.cos(theta)], axis=1)
    order = rng.permutation(n_samples)
    return _as_tensors(X[order], y[order])


def load_digits() -> tuple[Tensor, Tensor]:
    """scikit-learn's 1797 handwritten digits: X (n, 1, 8, 8) float32 in [0, 1], y int64.

    Read from the copy bundled with scikit-learn (no download).
    """
    try:
        from sklearn.datasets import load_digits as sklearn_load_digits
    except ImportError:
        raise ImportError("load_digits needs scikit-learn: pip install chainrule[data]") from None
    digits = sklearn_load_digits()
    X = np.asarray(digits.data, dtype=np.float64).reshape(-1, 1, 8, 8) / 16.0
    return _as_tensors(X, np.asarray(digits.target))


# Datasets and loading.


class Dataset:
    """Base class of map-style data sets: ``len(ds)`` samples, ``ds[i]`` the i-th one."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: define __len__")


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
        return tuple(Tensor._make(np.array(t.data[index])) for t in self.tensors)

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


def random_split(
    dataset: Dataset, lengths: Sequence[int | float], seed: int | None = None
) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random `Subset`s of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to 1 (then the
    samples left over by rounding down go one each to the first subsets, as in PyTorch).
    The permutation comes from ``seed``, or from chainrule's generator when it is None.

    >>> import chainrule
    >>> train, test = random_split(TensorDataset(chainrule.arange(10)), [0.8, 0.2], seed=0)
    >>> len(train), len(test)
    (8, 2)
    """
    n = len(dataset)
    lengths = list(lengths)
    if not lengths:
        raise DomainError("random_split: lengths is empty")
    if all(isinstance(k, numbers.Integral) and not isinstance(k, bool) for k in lengths):
        counts = [int(k) for k in lengths]
    elif all(isinstance(k, numbers.Real) and 0 <= k <= 1 for k in lengths):
        if not math.isclose(sum(lengths), 1.0, abs_tol=1e-9):
            raise DomainError(f"random_split: fractions {lengths} sum to {sum(lengths)}, not 1")
        counts = [math.floor(n * k) for k in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
    else:
        raise DomainError(
            f"random_split: lengths {lengths} must be non-negative counts or fractions in [0, 1]"
        )
    if any(k < 0 for k in counts):
        raise DomainError(f"random_split: lengths {lengths} must not be negative")
    if sum(counts) != n:
        raise DomainError(
            f"random_split: lengths {lengths} sum to {sum(counts)}, but the dataset has {n} samples"
        )
    rng = default_generator() if seed is None else _rng(seed, "random_split")
    order = rng.permutation(n)
    ends = np.cumsum(counts)
    return [Subset(dataset, order[end - k : end]) for k, end in zip(counts, ends)]


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
        arrays = [s.data if isinstance(s, Tensor) else np.asarray(s) for s in samples]
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


def _tensor_source(dataset: Dataset) -> tuple[tuple[Tensor, ...], np.ndarray | None] | None:
    """The tensors (and index map) behind a TensorDataset, possibly inside Subsets."""
    indices = None
    while isinstance(dataset, Subset):
        indices = dataset.indices if indices is None else dataset.indices[indices]
        dataset = dataset.dataset
    if type(dataset) is TensorDataset:
        return dataset.tensors, indices
    return None


class DataLoader:
    """Iterate over ``dataset`` in batches (each a list of stacked Tensors for tuple samples).

    With ``shuffle``, every epoch (every ``iter``) visits the samples in a new random order,
    drawn from a generator seeded by ``seed`` (or chainrule's generator when it is None), so
    runs are reproducible. ``drop_last`` skips a final smaller batch. A `TensorDataset` (or a
    Subset of one) is batched by indexing its arrays once per batch, without a Python loop.
    A ``sampler`` (an iterable of indices with a length, such as
    `chainrule.distributed.DistributedSampler`) chooses the indices instead of ``shuffle``.

    >>> import chainrule
    >>> ds = TensorDataset(chainrule.arange(10).float(), chainrule.arange(10))
    >>> loader = DataLoader(ds, batch_size=4)
    >>> [yb.tolist() for _, yb in loader]
    [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    """

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        seed: int | None = None,
        collate_fn: Callable[[list], Any] | None = None,
        sampler: Iterable[int] | None = None,
    ) -> None:
        if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool):
            raise DomainError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        if batch_size <= 0:
            raise DomainError(f"DataLoader: batch_size must be a positive int, got {batch_size}")
        for name, flag in (("shuffle", shuffle), ("drop_last", drop_last)):
            if not isinstance(flag, (bool, np.bool_)):
                raise DTypeError(f"DataLoader: {name} must be a bool, got {flag!r}")
        if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise DTypeError(
                f"DataLoader: the dataset must have __len__ and __getitem__, got "
                f"{type(dataset).__name__}"
            )
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.collate_fn = collate_fn
        if sampler is not None and shuffle:
            raise DomainError(
                "DataLoader: sampler and shuffle=True cannot be combined; the sampler chooses "
                "the order (DistributedSampler shuffles by itself)"
            )
        self.sampler = sampler
        self._rng = None if seed is None else _rng(seed, "DataLoader")

    def __len__(self) -> int:
        n = len(self.dataset) if self.sampler is None else len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self) -> np.ndarray:
        if self.sampler is not None:
            return np.fromiter(self.sampler, dtype=np.int64)
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        rng = default_generator() if self._rng is None else self._rng
        return rng.permutation(n)

    def __iter__(self) -> Iterator[Any]:
        order = self._order()
        source = None if self.collate_fn is not None else _tensor_source(self.dataset)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            if self.drop_last and len(batch) < self.batch_size:
                return
            if source is not None:
                tensors, indices = source
                rows = batch if indices is None else indices[batch]
                yield [Tensor._make(t.data[rows]) for t in tensors]
            else:
                samples = [self.dataset[int(i)] for i in batch]
                yield (self.collate_fn or default_collate)(samples)
