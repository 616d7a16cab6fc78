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
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels, xp
from ..op import Op
from .reduce import _logsumexp, _one_dim, batch_reduction, max_shift

__all__ = ["log_softmax", "softmax"]


def _softmax(x, dim):
    e = np.asarray(x - max_shift(x, dim))  # the largest exponent is 0
    if e.dtype.kind == "f":
        np.exp(e, out=e)  # in place: e is this function's own array
    else:
        e = np.exp(e)  # integers: a float result
    e /= kernels.add_reduce(e, dim, keepdims=True)
    return e


# fmt: off
softmax_row = Op(
    "softmax", lambda x, dim: _softmax(x, dim),
    vjp=(lambda g, out, dim: out * (g - xp.sum(g * out, dim, True)),),
    jvp=(lambda dx, out, dim: out * (dx - xp.sum(dx * out, dim, True)),),
    kind="reduction", batch=batch_reduction, doc="exp(x) normalised to sum to 1 along dim.")
# Written as x - logsumexp(x): finite at ±1000, where log(softmax(x)) would give -inf.
log_softmax_row = Op(
    "log_softmax", lambda x, dim: x - _logsumexp(x, dim, True),
    vjp=(lambda g, out, dim: g - xp.exp(out) * xp.sum(g, dim, True),),
    jvp=(lambda dx, out, dim: dx - xp.sum(xp.exp(out) * dx, dim, True),),
    kind="reduction", batch=batch_reduction, doc="log(softmax(x, dim)), finite for large |x|.")
# fmt: on


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
