"""Distances and similarities between vectors: `normalize`, `cosine_similarity`,
`pairwise_distance` and `pdist`. Their modules (CosineSimilarity, PairwiseDistance) are in
`chainrule.nn.modules.distance`; the losses built on them in `chainrule.nn.functional.loss`."""

from __future__ import annotations

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...errors import DomainError, ShapeError, fmt_shape

__all__ = ["cosine_similarity", "normalize", "pairwise_distance", "pdist"]


def _broadcast(op: str, x1: Tensor, x2: Tensor) -> tuple[Tensor, Tensor]:
    shape1, shape2 = np.shape(x1), np.shape(x2)
    try:
        shape = np.broadcast_shapes(shape1, shape2)
    except ValueError:
        raise ShapeError(
            f"{op}: x1 of shape {fmt_shape(shape1)} and x2 of shape {fmt_shape(shape2)} do "
            "not broadcast"
        ) from None
    return ops.broadcast_to(x1, shape), ops.broadcast_to(x2, shape)


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: None = None
) -> Tensor:
    """input / max(‖input‖_p, eps) along ``dim``: unit vectors, and zeros stay zeros.

    >>> import chainrule as cr
    >>> normalize(cr.tensor([[3.0, 4.0], [0.0, 0.0]]))
    tensor([[0.6000, 0.8000],
            [0.0000, 0.0000]])
    """
    if out is not None:
        raise ShapeError("normalize: out= is not supported; use the returned tensor")
    return input / ops.clamp(ops.norm(input, p, dim, keepdim=True), min=eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between x1 and x2 along ``dim`` (after broadcasting them):
    each is divided by its norm clamped below at ``eps``, then the products are summed.

    >>> import chainrule as cr
    >>> cosine_similarity(cr.tensor([[1.0, 0.0]]), cr.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    x1, x2 = _broadcast("cosine_similarity", x1, x2)
    unit1 = x1 / ops.clamp(ops.norm(x1, 2, dim, keepdim=True), min=eps)
    unit2 = x2 / ops.clamp(ops.norm(x2, 2, dim, keepdim=True), min=eps)
    return (unit1 * unit2).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """‖x1 - x2 + eps‖_p over the last dim (after broadcasting), as PyTorch: ``eps`` keeps
    the gradient finite where x1 = x2.

    >>> import chainrule as cr
    >>> pairwise_distance(cr.tensor([[0.0, 0.0]]), cr.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    x1, x2 = _broadcast("pairwise_distance", x1, x2)
    if x1.ndim == 0:
        raise ShapeError("pairwise_distance: inputs must have at least one dimension")
    return ops.norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between the rows of an (N, M) input, each pair i < j once, in
    row-major order: N (N - 1) / 2 of them. The gradient at a zero distance is 0.

    >>> import chainrule as cr
    >>> pdist(cr.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    shape = np.shape(input)
    if len(shape) != 2:
        raise ShapeError(f"pdist: input must be a 2-D (N, M) tensor, got {fmt_shape(shape)}")
    if not p >= 0:
        raise DomainError(f"pdist: p must be non-negative, got {p!r}")
    first, second = np.triu_indices(shape[0], k=1)
    pairs = input[Tensor._make(first)] - input[Tensor._make(second)]
    return ops.norm(pairs, p, -1)
