"""Normalising rows: softmax and log_softmax along one dim, and standardizing over trailing
dims, (x - mean) / sqrt(var + eps), layer norm's core.

Softmax's Jacobian diag(out) - out outᵀ is symmetric, and so is standardizing's: with
out = (x - mean) * rstd over n elements,

    d out = rstd * (dx - mean(dx) - out * mean(dx * out)),

so for each row the VJP and the JVP are the same expression, of g and of dx. Composed,
standardizing is eight rows and their eight backward nodes (mean, var, sub, add, rsqrt,
mul...); as one row it is one pass forward and one rule backward. Its node keeps the mean
and sqrt(var + eps) the forward computed (residuals, as PyTorch's layer norm keeps mean and
rstd) and recomputes out from x: the output may be changed in place after the forward.

The losses over classes are rows here too: ``nll_loss`` picks -weight * x at each target, and
``cross_entropy`` does so from logits, log_softmax included, its VJP weight * (softmax - onehot).
Composed, they were seven rows (log_softmax, gather, squeeze, neg, mul, sum, mul).
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels, xp
from .._tensor import Tensor
from ..observe import replayed_whole
from ..op import Loops, Op
from .arguments import as_tensor
from .reduce import _logsumexp, _one_dim, batch_reduction, max_shift

__all__ = ["log_softmax", "softmax"]


def _softmax(x, dim):
    e = np.asarray(x - max_shift(x, dim))  # the largest exponent is 0
    if e.dtype.kind == "f":
        kernels.exp_shifted(e)  # in place: e is this function's own array
    else:
        e = np.exp(e)  # integers: a float result
    e /= kernels.add_reduce(e, dim, keepdims=True)
    return e


def _log_softmax(x, dim):
    """(x - max) - log(sum(exp(x - max))), as PyTorch computes it, when every maximum is
    finite: x - max is kept for the last step, not taken twice. Otherwise (and for integers)
    x - logsumexp(x), which shifts such slices by 0."""
    if type(x) is np.ndarray and x.dtype.kind == "f" and x.ndim and x.size:
        shift = kernels.max_reduce(x, dim, keepdims=True)
        flat = shift.ravel()
        # One dot product tells that every maximum is finite (an overflow only takes the
        # safe way).
        if math.isfinite(np.dot(flat, flat)):
            shifted = x - shift
            total = kernels.add_reduce(kernels.exp_shifted(shifted.copy()), dim, keepdims=True)
            np.log(total, out=total)
            shifted -= total
            return shifted
    return x - _logsumexp(x, dim, True)


# fmt: off
softmax_row = Op(
    "softmax", lambda x, dim: _softmax(x, dim),
    vjp=(lambda g, out, dim: out * (g - xp.sum(g * out, dim, True)),),
    jvp=(lambda dx, out, dim: out * (dx - xp.sum(dx * out, dim, True)),),
    kind="reduction", batch=batch_reduction, doc="exp(x) normalised to sum to 1 along dim.")
# Written with logsumexp: finite at ±1000, where log(softmax(x)) would give -inf.
log_softmax_row = Op(
    "log_softmax", lambda x, dim: _log_softmax(x, dim),
    vjp=(lambda g, out, dim: g - xp.exp(out) * xp.sum(g, dim, True),),
    jvp=(lambda dx, out, dim: dx - xp.sum(xp.exp(out) * dx, dim, True),),
    kind="reduction", batch=batch_reduction, doc="log(softmax(x, dim)), finite for large |x|.")
# fmt: on


def _picks(target: np.ndarray, dim: int) -> tuple:
    """The advanced index that reads each target's class from an input whose class dim is
    ``dim`` (0 or 1): the target there, and positions 0..m-1 along every other dim."""
    if dim == 0:
        return (target,)
    if target.ndim == 1:  # (N, C), the common case
        return np.arange(len(target)), target
    ndim = target.ndim
    grid = [
        np.arange(m).reshape([-1 if k == d else 1 for k in range(ndim)])
        for d, m in enumerate(target.shape)
    ]
    return grid[0], target, *grid[1:]


@replayed_whole(pure=True)  # a compiled step's backward reads the new targets at each call
def _one_hot(shape: tuple, target: np.ndarray, dim: int, dtype) -> np.ndarray:
    """Zeros of ``shape`` with 1 at each target's class along ``dim``."""
    out = np.zeros(shape, dtype)
    out[_picks(target, dim)] = 1
    return out


def _reduced(loss, scale, summed: bool):
    """The per-target ``loss`` itself (reduction='none'), or its sum times ``scale`` (1 for
    'sum', the reciprocal of the weights' sum for 'mean')."""
    return xp.sum(loss) * scale if summed else loss


def _coefficient(g, x, weight, scale, summed: bool):
    """d loss / d picked, up to sign: g spread back to each target and weighed. With x a
    Tensor (a recorded backward) so is g, so that these products are recorded too."""
    if isinstance(x, Tensor):
        g = as_tensor(g, "cross_entropy")
    return (g * scale) * weight if summed else g * weight


def _negated_sum(picked, weight, scale, summed: bool):
    """-weight * picked, reduced by `_reduced`; picked is the forward's own copy."""
    if type(picked) is not np.ndarray:  # a single target (1-D input): a NumPy scalar
        return _reduced(-(picked * weight), scale, summed)
    picked *= weight
    np.negative(picked, out=picked)
    return _reduced(picked, scale, summed)


def _nll_loss_vjp(g, x, weight, scale, target, dim, summed):
    coef = _coefficient(g, x, weight, scale, summed)
    if not isinstance(coef, Tensor):
        out = np.zeros(x.shape, np.result_type(coef))
        out[_picks(target, dim)] = -coef
        return out
    return xp.unsqueeze(coef, dim) * -_one_hot(x.shape, target, dim, x.dtype)


def _cross_entropy(x, weight, scale, target, dim, summed):
    # log_softmax(x)[picks], log_softmax's own numbers: a compiled step, which records the
    # composed rows, trains as eager does, bit for bit.
    picked = _log_softmax(x, (dim,))[_picks(target, dim)]
    return _negated_sum(picked, weight, scale, summed)


def _cross_entropy_vjp(g, x, weight, scale, target, dim, summed):
    """(softmax(x) - onehot(target)) * weight * g along the class dim, with softmax as
    exp(log_softmax(x)): the same numbers as log_softmax's and nll_loss's VJPs in turn."""
    coef = _coefficient(g, x, weight, scale, summed)
    p = xp.exp(xp.run(log_softmax_row, x, dim=(dim,)))
    if type(p) is np.ndarray:  # arrays: the onehot's part taken away in place
        p *= np.expand_dims(coef, dim)
        p[_picks(target, dim)] -= coef
        return p
    return (p - _one_hot(x.shape, target, dim, x.dtype)) * xp.unsqueeze(coef, dim)


def _cross_entropy_jvp(dx, x, weight, scale, target, dim, summed):
    p = xp.run(softmax_row, x, dim=(dim,))
    picked = dx[_picks(target, dim)]
    return _reduced((xp.sum(p * dx, dim) - picked) * weight, scale, summed)


# Weight, scale and target come from the checked targets (nn.functional.loss's `_targets`):
# ``target`` holds each target's class (0 where ignored; its shape is x's without ``dim``),
# ``weight`` each target's class weight (0 where ignored); ``scale`` and ``summed`` as in
# `_reduced`. Weight and scale are operands without gradient, not parameters, so that a
# compiled step reads them anew at each call, as it does the target (made by a replayed call).
_PER_TARGET = Loops("the targets' index is built for unbatched shapes")
nll_loss_row = Op(
    "nll_loss",
    lambda x, weight, scale, target, dim, summed: _negated_sum(
        x[_picks(target, dim)], weight, scale, summed
    ),
    inputs=("x", "weight", "scale"),
    vjp=(
        lambda g, x, weight, scale, target, dim, summed: _nll_loss_vjp(
            g, x, weight, scale, target, dim, summed
        ),
        None,
        None,
    ),
    jvp=(
        lambda dx, weight, scale, target, dim, summed: (
            -_reduced(dx[_picks(target, dim)] * weight, scale, summed)
        ),
        None,
        None,
    ),
    kind="reduction",
    batch=_PER_TARGET,
    doc="-weight * x at each target (x log-probabilities), or their sum times scale.",
)
cross_entropy_row = Op(
    "cross_entropy",
    lambda x, weight, scale, target, dim, summed:
        _cross_entropy(x, weight, scale, target, dim, summed),
    inputs=("x", "weight", "scale"),
    vjp=(lambda g, x, weight, scale, target, dim, summed:
         _cross_entropy_vjp(g, x, weight, scale, target, dim, summed), None, None),
    jvp=(lambda dx, x, weight, scale, target, dim, summed:
         _cross_entropy_jvp(dx, x, weight, scale, target, dim, summed), None, None),
    kind="reduction", batch=_PER_TARGET,
    doc="nll_loss of log_softmax(x, dim), from logits x.")  # fmt: skip


def _mean(x, dims: tuple):
    if x.dtype.char == "e":  # float16: np.mean sums it in float32
        return np.mean(x, axis=dims, keepdims=True)
    return kernels.add_reduce(x, dims, keepdims=True) / math.prod(x.shape[d] for d in dims)


def _standardize_saving(x, dims: tuple, eps: float):
    """(the standardized x, its residuals: the mean and sqrt(var + eps), over dims)."""
    mean = _mean(x, dims)
    centered = x - mean
    std = _mean(centered * centered, dims)
    std += eps
    np.sqrt(std, out=std)
    centered /= std
    return centered, {"mean": mean, "std": std}


def _mean_ops(x, dims: tuple):
    return xp.sum(x, dims, True) / math.prod(x.shape[d] for d in dims)


def _std_ops(x, dims: tuple, eps: float):
    centered = x - _mean_ops(x, dims)
    return xp.sqrt(_mean_ops(centered * centered, dims) + eps)


def _standardize_ops(x, dims: tuple, eps: float):
    """The forward written with ops, as the residuals are: a compiled step records these, so
    that the backward's mean and deviation are the forward's."""
    centered = x - _mean_ops(x, dims)
    return centered / xp.sqrt(_mean_ops(centered * centered, dims) + eps)


def _projected(v, x, mean, std, dims: tuple):
    """rstd * (v - mean(v) - out * mean(v * out)): the Jacobian (symmetric) applied to v, with
    out = (x - mean) * rstd and rstd = 1 / std from the forward's mean and std."""
    n = math.prod(x.shape[d] for d in dims)
    rstd = 1 / std
    out = (x - mean) * rstd
    return rstd * (v - xp.sum(v, dims, True) / n - out * (xp.sum(v * out, dims, True) / n))


standardize_row = Op(
    "standardize", lambda x, dims, eps: _standardize_saving(x, dims, eps)[0],
    vjp=(lambda g, x, mean, std, dims: _projected(g, x, mean, std, dims),),
    jvp=(lambda dx, x, mean, std, dims: _projected(dx, x, mean, std, dims),),
    decomposition=_standardize_ops,
    residuals={"mean": lambda x, dims: _mean_ops(x, dims), "std": _std_ops},
    forward_saving=_standardize_saving,
    kind="reduction",
    # dims count from the end, so a batch dim in front changes nothing.
    batch=lambda op, values, batched, params: op(values[0], **params),
    doc="(x - mean) / sqrt(var + eps) over the trailing dims (negative numbers, biased var).",
)  # fmt: skip


def softmax(x, dim: int):
    """exp(x) normalised to sum to 1 along ``dim``; finite for inputs like ±1000.

    >>> import chainrule as cr
    >>> softmax(cr.tensor([0.0, 1000.0]), dim=0)
    tensor([0., 1.])
    """
    return softmax_row(x, dim=_one_dim(x, dim, "softmax"))


def log_softmax(x, dim: int):
    """log(softmax(x, dim)), computed as x - logsumexp(x, dim) so it stays finite.

    >>> import chainrule as cr
    >>> log_softmax(cr.tensor([0.0, 1000.0]), dim=0)
    tensor([-1000.,     0.])
    """
    return log_softmax_row(x, dim=_one_dim(x, dim, "log_softmax"))
