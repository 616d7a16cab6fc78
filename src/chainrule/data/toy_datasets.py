"""Small data sets for demos and tests: XOR, blobs, moons, spirals (made with NumPy) and the
8x8 digits (scikit-learn's bundled copy, ``pip install chainrule[data]``). Each returns
(X float32 of shape (n, features), y int64 of shape (n,)).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, ShapeError, fmt_shape


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
