"""The losses of `chainrule.nn.functional`, composed from differentiable ops: over classes,
regression, divergence, margin and likelihood losses. Their modules are in
`chainrule.nn.modules.loss`.

Two losses with an algorithm of their own have modules of their own beside this one: `ctc_loss`
in `nn.functional.loss_ctc` and `linear_cross_entropy` in `nn.functional.loss_linear_cross_entropy`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ... import dispatch, observe, ops
from ..._tensor import Tensor
from ...errors import (
    DomainError,
    DTypeError,
    OutOfRangeError,
    ShapeError,
    fmt_dtype,
    fmt_shape,
)
from ...observe import replayed_whole
from ...ops import normalizers
from ...ops.normalizers import cross_entropy_row, nll_loss_row
from ._checks import (
    _array,
    _check_broadcast_target,
    _check_probability,
    _check_reduction,
    _check_same_shape,
    _reduce,
)
from .activation import logsigmoid
from .distance import pairwise_distance

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
    "cross_entropy", "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss", "mse_loss",
    "nll_loss", "smooth_l1_loss", "triplet_margin_loss",
    "gaussian_nll_loss", "hinge_embedding_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
    "triplet_margin_with_distance_loss",
]  # fmt: skip


# Losses over classes.


def _class_dim(input: Tensor, op: str) -> int:
    ndim = len(np.shape(input))
    if ndim == 0:
        raise ShapeError(f"{op}: input must have a class dimension, got a 0-d tensor")
    return 0 if ndim == 1 else 1


def _nll(
    logp: Tensor, target, weight, ignore_index: int, reduction: str, op: str
) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """-weight[t] * logp[t] reduced (0 where ignored; 'mean' divides by the weights' sum), the
    kept mask (1 or 0, in logp's dtype) and the reciprocal of the weights' sum (nan when every
    target is ignored)."""
    class_dim = _class_dim(logp, op)
    classes, w, keep, inverse = _targets(
        np.shape(logp), class_dim, target, weight, ignore_index, logp.dtype, op
    )
    if _one_row():
        loss = nll_loss_row(
            logp, w, _scale(reduction, inverse), **_row_params(classes, class_dim, reduction)
        )
        return loss, keep, inverse
    picked = logp.gather(class_dim, _kept_dim(classes, class_dim)).squeeze(class_dim)
    loss = -picked * w
    loss = loss.sum() * inverse if reduction == "mean" else _reduce(loss, reduction)
    return loss, keep, inverse


def _one_row() -> bool:
    """Whether the class-index losses run as one row (`nll_loss_row`, `cross_entropy_row`):
    not while the compiler records a step (it follows the composed rows' operands from one
    call to the next, not yet the one row's weight and scale), nor under vmap (the rows have no
    batching rule, the composed rows batch). The values are the same either way."""
    observer = observe.current
    return (observer is None or not observer.recording()) and dispatch.batch_hook is None


@replayed_whole(pure=True)
def _kept_dim(classes: np.ndarray, class_dim: int) -> np.ndarray:
    """The targets with the class dim kept, for gather."""
    return np.expand_dims(classes, class_dim)


def _scale(reduction: str, inverse: np.ndarray) -> np.ndarray:
    """What the class losses' rows multiply the summed loss by ('none' sums nothing)."""
    return inverse if reduction == "mean" else np.ones((), inverse.dtype)


def _row_params(target: np.ndarray, class_dim: int, reduction: str) -> dict:
    return {"target": target, "dim": class_dim, "summed": reduction != "none"}


@replayed_whole(pure=True)  # its results depend on its arguments alone
def _targets(
    shape: tuple, class_dim: int, target, weight, ignore_index: int, dtype, op: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the class indices ``target`` select, worked out in NumPy (checked): the targets
    (0 where ignored), the weight of each target (0 where ignored), the kept
    mask and the reciprocal of the weights' sum, as a 0-d array of ``dtype``. A compiled step
    runs this again at each replay, so a new batch's targets are read, and checked, each time."""
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
    if (
        weight is None
        and t.size
        and not 0 <= ignore_index < classes
        and t.min() >= 0
        and t.max() < classes
    ):  # the common case: every target a class, none ignored, no class weights
        ones = np.ones(t.shape, dtype)
        return t, ones, ones, np.asarray(1.0 / t.size, dtype=dtype)
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
    return safe, w, keep.astype(dtype), inverse


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
    return _nll(input, target, weight, ignore_index, reduction, "nll_loss")[0]


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
    target_array, dtype = _array(target), _array(input).dtype
    one_row = _one_row() and dtype.kind == "f"
    if target_array.dtype.kind != "f" and not smoothing and one_row:
        classes, w, _, inverse = _targets(
            shape, class_dim, target, weight, ignore_index, dtype, "cross_entropy"
        )
        scale = _scale(reduction, inverse)
        return cross_entropy_row(input, w, scale, **_row_params(classes, class_dim, reduction))
    logp = ops.log_softmax(input, class_dim)
    if target_array.dtype.kind == "f":  # class probabilities
        _check_same_shape(input, target, "cross_entropy")
        if smoothing:
            target = target * (1 - smoothing) + smoothing / classes
        if weight is not None:
            logp = logp * _array(weight).reshape(weight_shape).astype(logp.dtype)
        loss = -(logp * target).sum(class_dim)
        return _reduce(loss, reduction)
    loss, keep, inverse = _nll(logp, target, weight, ignore_index, reduction, "cross_entropy")
    if not smoothing:
        return loss  # the compiler's record or vmap: no one row
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

    if np.dtype(input.dtype).kind == "f" and np.dtype(_array(target).dtype).kind == "f":
        loss = normalizers.binary_cross_entropy_row(input, target)
    else:
        loss = -(target * _clamped_log(input) + (1 - target) * _clamped_log(1 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _clamped_log(y: Tensor) -> Tensor:
    """max(log(y), -100); log of where(y > 0, y, 1) never sees 0, so no inf (nor inf * 0 in
    the backward)."""
    positive = y > 0
    return ops.where(positive, ops.clamp(ops.log(ops.where(positive, y, 1.0)), min=-100.0),
                     -100.0)  # fmt: skip


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
    floats = np.dtype(input.dtype).kind == "f" and np.dtype(_array(target).dtype).kind == "f"
    if pos_weight is None and floats:
        loss = normalizers.binary_cross_entropy_with_logits_row(input, target)
    else:
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


# More margin losses.


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


# Likelihood losses.


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
    elif (var._array < 0).any():
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
    var = var + (np.maximum(var._array, eps) - var._array)
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
