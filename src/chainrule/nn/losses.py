"""The losses of `chainrule.nn.functional` (class losses, regression losses, divergence and
margin losses), composed from differentiable ops; ``F.cross_entropy`` and the others are
re-exported there."""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..errors import (
    DomainError,
    DTypeError,
    OutOfRangeError,
    ShapeError,
    fmt_dtype,
    fmt_shape,
)
from ..observe import replayed_whole
from ._checks import (
    _array,
    _check_broadcast_target,
    _check_probability,
    _check_reduction,
    _check_same_shape,
    _reduce,
)
from .distance import pairwise_distance

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
    "cross_entropy", "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss", "mse_loss",
    "nll_loss", "smooth_l1_loss", "triplet_margin_loss",
]  # fmt: skip


# Losses over classes.


def _class_dim(input: Tensor, op: str) -> int:
    ndim = len(np.shape(input))
    if ndim == 0:
        raise ShapeError(f"{op}: input must have a class dimension, got a 0-d tensor")
    return 0 if ndim == 1 else 1


def _nll(
    logp: Tensor, target, weight, ignore_index: int, op: str
) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """Per-element -weight[t] * logp[t] (0 where ignored), the kept mask (1 or 0, in logp's
    dtype) and the reciprocal of the weights' sum (nan when every target is ignored)."""
    class_dim = _class_dim(logp, op)
    index, w, keep, inverse = _targets(
        np.shape(logp), class_dim, target, weight, ignore_index, logp.dtype, op
    )
    picked = logp.gather(class_dim, index).squeeze(class_dim)
    return -picked * w, keep, inverse


@replayed_whole
def _targets(
    shape: tuple, class_dim: int, target, weight, ignore_index: int, dtype, op: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the class indices ``target`` select, worked out in NumPy (checked): the index for
    gather, the weight of each target (0 where ignored), the kept mask and the reciprocal of
    the weights' sum, as a 0-d array of ``dtype``. A compiled step runs this again at each
    replay, so a new batch's targets are read, and checked, each time."""
    t = _array(target)
    if t.dtype.kind not in "iu":
        raise DTypeError(
            f"{op}: class-index targets must be integers (int64), got {fmt_dtype(t.dtype)}; "
            f"class probabilities need a float target of the input's shape {fmt_shape(shape)}"
        )
    expected = shape[:1] + shape[2:] if class_dim == 1 else ()
    if t.shape != expected:
        raise ShapeError(
            f"{op}: input has shape {fmt_shape(shape)} but target has shape "
            f"{fmt_shape(t.shape)}; expected target shape {fmt_shape(expected)}"
        )
    classes = shape[class_dim]
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= classes))
    if bad.any():
        raise OutOfRangeError(
            f"{op}: target {int(t[bad].flat[0])} is out of range for {classes} classes "
            f"(0 to {classes - 1}, or ignore_index={ignore_index})"
        )
    safe = np.where(keep, t, 0)
    class_weight = np.ones(classes) if weight is None else _array(weight)
    if class_weight.shape != (classes,):
        raise ShapeError(
            f"{op}: weight has shape {fmt_shape(class_weight.shape)} but the input of shape "
            f"{fmt_shape(shape)} has {classes} classes"
        )
    w = np.where(keep, class_weight[safe], 0).astype(dtype)
    # Every target ignored: PyTorch gives nan (0 / 0).
    weight_sum = float(w.sum())
    inverse = np.asarray(1.0 / weight_sum if weight_sum else math.nan, dtype=dtype)
    return np.expand_dims(safe, class_dim), w, keep.astype(dtype), inverse


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood -input[n, target[n]], from log-probabilities ``input``.

    ``input`` is (C,), (N, C) or (N, C, d1, ...); ``target`` holds class indices of shape
    (), (N,) or (N, d1, ...). Targets equal to ``ignore_index`` count for nothing; 'mean'
    divides by the summed ``weight`` (a constant per class) of the other targets.

    >>> import chainrule as cr
    >>> nll_loss(cr.tensor([[-1.0, -2.0], [-3.0, -4.0]]), cr.tensor([1, 0]))
    tensor(2.5000)
    """
    _check_reduction(reduction, "nll_loss")
    loss, _, inverse = _nll(input, target, weight, ignore_index, "nll_loss")
    if reduction == "mean":
        return loss.sum() * inverse
    return _reduce(loss, reduction)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy between softmax(input) over the class dim and the target.

    ``input`` holds logits of shape (C,), (N, C) or (N, C, d1, ...). ``target`` is either
    class indices (int64, shape (N,) or (N, d1, ...); see `nll_loss` for ``ignore_index``
    and ``weight``) or class probabilities (float, the input's shape). ``label_smoothing``
    mixes the target with the uniform distribution, as in PyTorch.

    >>> import chainrule as cr
    >>> round(cross_entropy(cr.tensor([[0.0, 0.0]]), cr.tensor([1])).item(), 4)
    0.6931
    """
    _check_reduction(reduction, "cross_entropy")
    smoothing = _check_probability(label_smoothing, "cross_entropy", "label_smoothing")
    class_dim = _class_dim(input, "cross_entropy")
    shape = np.shape(input)
    classes = shape[class_dim]
    weight_shape = (classes,) + (1,) * (len(shape) - class_dim - 1)
    logp = ops.log_softmax(input, class_dim)
    target_array = _array(target)
    if target_array.dtype.kind == "f":  # class probabilities
        _check_same_shape(input, target, "cross_entropy")
        if smoothing:
            target = target * (1 - smoothing) + smoothing / classes
        if weight is not None:
            logp = logp * _array(weight).reshape(weight_shape).astype(logp.dtype)
        loss = -(logp * target).sum(class_dim)
        return _reduce(loss, reduction)
    loss, keep, inverse = _nll(logp, target, weight, ignore_index, "cross_entropy")
    loss = loss.sum() * inverse if reduction == "mean" else _reduce(loss, reduction)
    if not smoothing:
        return loss
    # The uniform part: -sum over classes of weight[c] * logp[c], 0 where the target is ignored.
    if weight is not None:
        logp = logp * _array(weight).reshape(weight_shape).astype(logp.dtype)
    smooth = -logp.sum(class_dim) * keep
    smooth = smooth.sum() * inverse if reduction == "mean" else _reduce(smooth, reduction)
    return loss * (1 - smoothing) + smooth * (smoothing / classes)


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: str = "mean"
) -> Tensor:
    """-weight * (t log(x) + (1 - t) log(1 - x)) for probabilities x in [0, 1].

    Each log is clamped at -100, as in PyTorch, so x = 0 or 1 gives a finite loss; where the
    clamp acts the gradient is 0 (PyTorch's is large but finite there).

    >>> import chainrule as cr
    >>> round(binary_cross_entropy(cr.tensor([0.5]), cr.tensor([1.0])).item(), 4)
    0.6931
    """
    _check_reduction(reduction, "binary_cross_entropy")
    _check_same_shape(input, target, "binary_cross_entropy")
    x = _array(input)
    if x.size and not (x.min() >= 0 and x.max() <= 1):
        bad = float(x.min() if not x.min() >= 0 else x.max())
        raise DomainError(
            f"binary_cross_entropy: input values must lie in [0, 1], found {bad!r}; apply "
            "sigmoid first, or use binary_cross_entropy_with_logits on logits"
        )

    def clamped_log(y: Tensor) -> Tensor:
        # log of where(y > 0, y, 1) never sees 0, so no inf (nor inf * 0 in the backward).
        positive = y > 0
        return ops.where(positive, ops.clamp(ops.log(ops.where(positive, y, 1.0)), min=-100.0),
                         -100.0)  # fmt: skip

    loss = -(target * clamped_log(input) + (1 - target) * clamped_log(1 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross entropy of sigmoid(input) against ``target``, computed stably from logits.

    loss = (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x), finite for any x;
    ``pos_weight`` (broadcast over the last dim) weighs the positive examples.

    >>> import chainrule as cr
    >>> round(binary_cross_entropy_with_logits(cr.tensor([0.0]), cr.tensor([1.0])).item(), 4)
    0.6931
    """
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    _check_same_shape(input, target, "binary_cross_entropy_with_logits")
    log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + log_weight * ops.softplus(-input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# Regression losses.


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """(input - target)², reduced.

    >>> import chainrule as cr
    >>> mse_loss(cr.tensor([1.0, 2.0]), cr.tensor([0.0, 0.0]))
    tensor(2.5000)
    """
    _check_reduction(reduction, "mse_loss")
    _check_broadcast_target(input, target, "mse_loss")
    diff = input - target
    return _reduce(diff * diff, reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """|input - target|, reduced; the gradient at 0 is 0.

    >>> import chainrule as cr
    >>> l1_loss(cr.tensor([1.0, -3.0]), cr.tensor([0.0, 0.0]))
    tensor(2.)
    """
    _check_reduction(reduction, "l1_loss")
    _check_broadcast_target(input, target, "l1_loss")
    return _reduce(ops.abs(input - target), reduction)


def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0
) -> Tensor:
    """0.5 d² where |d| < delta, else delta (|d| - 0.5 delta), for d = input - target.

    >>> import chainrule as cr
    >>> huber_loss(cr.tensor([0.5, 3.0]), cr.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _check_reduction(reduction, "huber_loss")
    if not delta > 0:
        raise DomainError(f"huber_loss: delta must be positive, got {delta!r}")
    _check_broadcast_target(input, target, "huber_loss")
    return _reduce(_huber(input - target, delta), reduction)


def _huber(diff: Tensor, delta: float) -> Tensor:
    """0.5 d² where |d| < delta, else delta (|d| - 0.5 delta), elementwise."""
    size = ops.abs(diff)
    return ops.where(size < delta, diff * diff * 0.5, (size - 0.5 * delta) * delta)


def smooth_l1_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    """0.5 d² / beta where |d| < beta, else |d| - 0.5 beta (huber_loss / beta); beta = 0 is L1.

    >>> import chainrule as cr
    >>> smooth_l1_loss(cr.tensor([0.5, 3.0]), cr.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _check_reduction(reduction, "smooth_l1_loss")
    if not beta >= 0:
        raise DomainError(f"smooth_l1_loss: beta must be non-negative, got {beta!r}")
    _check_broadcast_target(input, target, "smooth_l1_loss")
    diff = input - target
    if beta == 0:
        return _reduce(ops.abs(diff), reduction)
    return _reduce(_huber(diff, beta) * (1.0 / beta), reduction)


# Divergence and margin losses. Their size_average and reduce are PyTorch's deprecated
# spelling of reduction, still accepted.


def _legacy_reduction(size_average, reduce, reduction: str, op: str) -> str:
    if size_average is None and reduce is None:
        if not (op == "kl_div" and reduction == "batchmean"):
            _check_reduction(reduction, op)
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The Kullback-Leibler divergence of ``target`` from the log-probabilities ``input``,
    pointwise target * (log(target) - input), with 0 log 0 = 0.

    ``log_target`` takes the target as log-probabilities too. ``reduction="batchmean"`` divides
    the sum by the batch size (dim 0), which is the mathematical KL divergence; "mean" divides
    by the number of elements, as PyTorch.

    >>> import chainrule as cr
    >>> p = cr.tensor([[0.5, 0.5]])
    >>> kl_div(cr.tensor([[0.25, 0.75]]).log(), p, reduction="batchmean")
    tensor(0.1438)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "kl_div")
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        positive = target > 0
        # log of where(t > 0, t, 1): no log(0), so no inf * 0 in the value or the gradient.
        entropy = ops.where(positive, target * ops.log(ops.where(positive, target, 1.0)), 0.0)
        loss = entropy - target * input
    if reduction == "batchmean":
        batch = np.shape(input)[0] if np.ndim(input) else 1
        return loss.sum() * (1.0 / batch)
    return _reduce(loss, reduction)


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin): input1 should rank above input2 where
    target is 1, below where it is -1.

    >>> import chainrule as cr
    >>> margin_ranking_loss(cr.tensor([1.0, 1.0]), cr.tensor([0.0, 3.0]), cr.tensor([1.0, 1.0]))
    tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "margin_ranking_loss")
    shapes = [np.shape(t) for t in (input1, input2, target)]
    if len(set(shapes)) != 1:
        raise ShapeError(
            f"margin_ranking_loss: input1, input2 and target must have the same shape, got "
            f"{', '.join(fmt_shape(s) for s in shapes)}"
        )
    return _reduce(ops.clamp(-target * (input1 - input2) + margin, min=0.0), reduction)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1; the
    cosine is taken over the last dim, as PyTorch (with 1e-12 added to each squared norm).

    >>> import chainrule as cr
    >>> x = cr.tensor([[1.0, 0.0], [1.0, 0.0]])
    >>> cosine_embedding_loss(x, cr.tensor([[0.0, 1.0], [1.0, 1.0]]), cr.tensor([1, -1]),
    ...                       reduction="none")
    tensor([1.0000, 0.7071])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "cosine_embedding_loss")
    shape1, shape2, target_shape = np.shape(input1), np.shape(input2), np.shape(target)
    if shape1 != shape2 or len(shape1) not in (1, 2) or target_shape != shape1[:-1]:
        raise ShapeError(
            f"cosine_embedding_loss: inputs of shapes {fmt_shape(shape1)} and "
            f"{fmt_shape(shape2)} with target {fmt_shape(target_shape)}: expected two equal "
            "(N, D) or (D,) inputs and a target of shape (N,) or ()"
        )
    products = (input1 * input2).sum(-1)
    squares = ((input1 * input1).sum(-1) + 1e-12) * ((input2 * input2).sum(-1) + 1e-12)
    cos = products / ops.sqrt(squares)
    t = _array(target)
    zero = cos * 0.0
    loss = ops.where(t == 1, 1 - cos, zero) + ops.where(t == -1, ops.clamp(cos - margin, min=0.0),
                                                        zero)  # fmt: skip
    return _reduce(loss, reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, d(anchor, positive) - d(anchor, negative) + margin), with d the
    `pairwise_distance` (p-norm, ``eps`` added); ``swap`` uses the smaller of d(anchor,
    negative) and d(positive, negative).

    >>> import chainrule as cr
    >>> a, pos, neg = cr.tensor([[0.0, 0.0]]), cr.tensor([[3.0, 4.0]]), cr.tensor([[1.0, 0.0]])
    >>> triplet_margin_loss(a, pos, neg, eps=0.0)
    tensor(5.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction, "triplet_margin_loss")
    ndims = {np.ndim(t) for t in (anchor, positive, negative)}
    if len(ndims) != 1 or ndims.pop() not in (1, 2):
        raise ShapeError(
            "triplet_margin_loss: anchor, positive and negative must all be (N, D) or (D,), got "
            + ", ".join(fmt_shape(np.shape(t)) for t in (anchor, positive, negative))
        )
    to_positive = pairwise_distance(anchor, positive, p, eps)
    to_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        to_negative = ops.minimum(to_negative, pairwise_distance(positive, negative, p, eps))
    return _reduce(ops.clamp(margin + to_positive - to_negative, min=0.0), reduction)
