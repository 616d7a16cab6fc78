"""More losses of `chainrule.nn.functional`: the margin losses (hinge_embedding,
soft_margin, multi_margin, multilabel_margin, multilabel_soft_margin,
triplet_margin_with_distance) and the likelihood losses (gaussian_nll, poisson_nll). The
common ones (cross_entropy, mse...) are in `chainrule.nn.losses`, ctc_loss in `nn.ctc`."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, OutOfRangeError, ShapeError, fmt_dtype, fmt_shape
from ._checks import _array, _check_reduction, _check_same_shape, _reduce
from .activation_functions import logsigmoid
from .distance import pairwise_distance
from .losses import _legacy_reduction

__all__ = [
    "gaussian_nll_loss", "hinge_embedding_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
    "triplet_margin_with_distance_loss",
]  # fmt: skip


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """x where target is 1, max(0, margin - x) where it is -1 (``input`` holds distances).

    As PyTorch, a target that is neither 1 nor -1 gets both terms.

    >>> import chainrule as cr
    >>> hinge_embedding_loss(cr.tensor([0.3, 0.3]), cr.tensor([1, -1]), reduction="none")
    tensor([0.3000, 0.7000])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "hinge_embedding_loss")
    _check_same_shape(input, target, "hinge_embedding_loss")
    t = _array(target)
    zero = input * 0.0
    loss = ops.where(t != 1, ops.relu(margin - input), zero) + ops.where(t != -1, input, zero)
    return _reduce(loss, reduction)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """log(1 + exp(-target * input)), for targets of 1 or -1 (mean over all elements).

    Computed as softplus(-target * input), so it stays finite where PyTorch's
    log1p(exp(...)) overflows to inf (inputs beyond about ±700).

    >>> import chainrule as cr
    >>> soft_margin_loss(cr.tensor([0.0, 2.0]), cr.tensor([1.0, -1.0]), reduction="none")
    tensor([0.6931, 2.1269])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "soft_margin_loss")
    _check_same_shape(input, target, "soft_margin_loss")
    return _reduce(ops.softplus(-(input * target)), reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross entropy of sigmoid(input) against 0/1 ``target``, averaged over the classes
    (last dim): one loss per example, then reduced.

    >>> import chainrule as cr
    >>> multilabel_soft_margin_loss(cr.tensor([[0.0, 0.0]]), cr.tensor([[1.0, 0.0]]))
    tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "multilabel_soft_margin_loss")
    _check_same_shape(input, target, "multilabel_soft_margin_loss")
    if not np.ndim(input):
        raise ShapeError("multilabel_soft_margin_loss: input must have a class dim, got a 0-d one")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.sum(-1) * (1.0 / np.shape(input)[-1]), reduction)


def _class_targets(input: Tensor, target, op: str) -> tuple[np.ndarray, int]:
    """The targets of an (N, C) or (C,) input as an (N,) int array (checked), and C."""
    shape, t = np.shape(input), _array(target)
    if t.dtype.kind not in "iu":
        raise DTypeError(f"{op}: target must hold class indices (int64), got {fmt_dtype(t.dtype)}")
    if len(shape) not in (1, 2) or t.shape != shape[:-1]:
        raise ShapeError(
            f"{op}: input of shape {fmt_shape(shape)} and target of shape {fmt_shape(t.shape)}: "
            "expected an (N, C) input with an (N,) target, or (C,) with ()"
        )
    classes = shape[-1]
    if t.size and (t.min() < 0 or t.max() >= classes):
        bad = int(t.min() if t.min() < 0 else t.max())
        raise OutOfRangeError(f"{op}: target {bad} is out of range for {classes} classes")
    return t.reshape(-1), classes


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: sum over classes i != y of max(0, margin - x[y] + x[i])^p,
    divided by the number of classes (times ``weight[y]`` when given); p is 1 or 2.

    >>> import chainrule as cr
    >>> multi_margin_loss(cr.tensor([[0.1, 0.2, 0.4, 0.8]]), cr.tensor([3]))
    tensor(0.3250)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "multi_margin_loss")
    if p not in (1, 2):
        raise DomainError(f"multi_margin_loss: p must be 1 or 2, got {p!r}")
    t, classes = _class_targets(input, target, "multi_margin_loss")
    x = input.reshape(-1, classes)
    picked = x.gather(1, t[:, None])
    hinge = ops.relu(margin - picked + x)  # gradient 0 where the hinge is exactly 0, as PyTorch
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[Tensor._make(t)][:, None]
    is_target = t[:, None] == np.arange(classes)
    loss = ops.where(is_target, 0.0, hinge).sum(1) * (1.0 / classes)
    return _reduce(loss.reshape(np.shape(input)[:-1]), reduction)


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss: for each target class j and each non-target class i,
    max(0, 1 - (x[j] - x[i])), summed and divided by the number of classes.

    ``target`` has the input's shape and lists the target classes first, ended by the first
    -1 (the rest is ignored), as PyTorch.

    >>> import chainrule as cr
    >>> multilabel_margin_loss(cr.tensor([[0.1, 0.2, 0.4, 0.8]]), cr.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "multilabel_margin_loss")
    shape, t = np.shape(input), _array(target)
    if t.dtype.kind not in "iu":
        raise DTypeError(
            f"multilabel_margin_loss: target must hold class indices (int64), got "
            f"{fmt_dtype(t.dtype)}"
        )
    if len(shape) not in (1, 2) or t.shape != shape:
        raise ShapeError(
            f"multilabel_margin_loss: input of shape {fmt_shape(shape)} and target of shape "
            f"{fmt_shape(t.shape)}: expected equal (N, C) or (C,) shapes"
        )
    classes = shape[-1]
    t = t.reshape(-1, classes)
    listed = np.cumprod(t != -1, axis=1).astype(bool)  # the entries before the first -1
    if (listed & ((t < 0) | (t >= classes))).any():
        bad = int(t[listed & ((t < 0) | (t >= classes))][0])
        raise OutOfRangeError(
            f"multilabel_margin_loss: target {bad} is out of range for {classes} classes"
        )
    safe = np.where(listed, t, 0)
    rows = np.broadcast_to(np.arange(t.shape[0])[:, None], t.shape)
    is_target = np.zeros(t.shape, bool)
    is_target[rows[listed], t[listed]] = True
    x = input.reshape(-1, classes)
    picked = x.gather(1, safe)  # (N, C): x at each listed target
    hinge = ops.relu(1.0 - picked[:, :, None] + x[:, None, :])  # [n, j, i]
    pairs = listed[:, :, None] & ~is_target[:, None, :]
    loss = ops.where(pairs, hinge, 0.0).sum((1, 2)) * (1.0 / classes)
    return _reduce(loss.reshape(shape[:-1]), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """max(0, d(anchor, positive) - d(anchor, negative) + margin) for any distance function
    ``d`` (default `pairwise_distance`); ``swap`` uses the smaller of d(anchor, negative) and
    d(positive, negative).

    >>> import chainrule as cr
    >>> a, pos, neg = cr.tensor([[0.0, 0.0]]), cr.tensor([[3.0, 4.0]]), cr.tensor([[1.0, 0.0]])
    >>> l1 = lambda x, y: (x - y).abs().sum(-1)
    >>> triplet_margin_with_distance_loss(a, pos, neg, distance_function=l1)
    tensor(7.)
    """
    _check_reduction(reduction, "triplet_margin_with_distance_loss")
    if not margin > 0:
        raise DomainError(
            f"triplet_margin_with_distance_loss: margin must be positive, got {margin!r}"
        )
    ndims = [np.ndim(t) for t in (anchor, positive, negative)]
    if len(set(ndims)) != 1:
        raise ShapeError(
            "triplet_margin_with_distance_loss: anchor, positive and negative must have the "
            f"same number of dims, got {ndims[0]}, {ndims[1]} and {ndims[2]}"
        )
    distance = pairwise_distance if distance_function is None else distance_function
    to_positive = distance(anchor, positive)
    to_negative = distance(anchor, negative)
    if swap:
        to_negative = ops.minimum(to_negative, distance(positive, negative))
    return _reduce(ops.clamp(margin + to_positive - to_negative, min=0.0), reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of ``target`` under normal distributions of mean ``input``
    and variance ``var``: (log(var) + (input - target)² / var) / 2, plus log(2π) / 2 if
    ``full``.

    ``var`` has the input's shape, or lacks its last dim, or has size 1 in one dim
    (one variance shared there); it is clamped at ``eps`` for the value while its gradient
    passes unclamped, as PyTorch.

    >>> import chainrule as cr
    >>> gaussian_nll_loss(cr.tensor([1.0, 2.0]), cr.tensor([1.0, 0.0]), cr.tensor([1.0, 2.0]))
    tensor(0.6733)
    """
    shape = np.shape(input)
    if not isinstance(var, Tensor):
        if not var >= 0:
            raise DomainError(f"gaussian_nll_loss: var must be non-negative, got {var!r}")
        var = Tensor._make(np.full(shape, float(var), dtype=input.dtype))
    elif (var.data < 0).any():
        raise DomainError("gaussian_nll_loss: var has negative entries; variances are >= 0")
    var_shape = np.shape(var)
    if var_shape != shape:
        mismatched = [v for s, v in zip(shape, var_shape) if s != v]
        if var_shape == shape[:-1]:
            var = var.unsqueeze(-1)
        elif not (len(var_shape) == len(shape) and sum(mismatched) == 1):
            raise ShapeError(
                f"gaussian_nll_loss: var of shape {fmt_shape(var_shape)} does not fit the input "
                f"of shape {fmt_shape(shape)}: give the input's shape, that shape without its "
                "last dim, or size 1 in one dim"
            )
    _check_reduction(reduction, "gaussian_nll_loss")
    # The clamp is invisible to autograd (PyTorch clamps under no_grad): add it as a constant.
    var = var + (np.maximum(var.data, eps) - var.data)
    diff = input - target
    loss = (ops.log(var) + diff * diff / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of counts ``target`` under Poisson distributions: rate r,
    loss r - target * log(r), with r = exp(input) (``log_input``) or r = input (then
    log(input + eps)). ``full`` adds Stirling's approximation of log(target!) where target > 1.

    >>> import chainrule as cr
    >>> poisson_nll_loss(cr.tensor([0.0, 1.0]), cr.tensor([1.0, 2.0]), reduction="none")
    tensor([1.0000, 0.7183])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "poisson_nll_loss")
    rate, log_rate = (ops.exp(input), input) if log_input else (input, ops.log(input + eps))
    loss = rate - target * log_rate
    if full:
        big = _array(target) > 1
        safe = ops.where(big, target, 2.0)  # no log of 0 (nor its inf gradient) where unused
        stirling = safe * ops.log(safe) - safe + ops.log(safe * (2 * math.pi)) * 0.5
        loss = loss + ops.where(big, stirling, 0.0)
    return _reduce(loss, reduction)
