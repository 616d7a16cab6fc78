"""Standardizing over the trailing dims, (x - mean) / sqrt(var + eps): layer norm's core as
one row.

Composed, it is eight rows and their eight backward nodes (mean, var, sub, add, rsqrt,
mul...); as a row it is one pass forward and one rule backward, whose closed form follows
from the Jacobian being symmetric: with out = (x - mean) * rstd over n elements,

    d out = rstd * (dx - mean(dx) - out * mean(dx * out)),

so the VJP and the JVP are the same expression, of g and of dx. The rules recompute out
from x, as PyTorch's layer norm does: the output may be changed in place after the forward.
"""

from __future__ import annotations

import math

import numpy as np

from .. import xp
from ..op import Op

__all__: list[str] = []


def _standardize(x, dims: tuple, eps: float):
    centered = x - x.mean(axis=dims, keepdims=True)
    var = np.mean(centered * centered, axis=dims, keepdims=True)
    var += eps
    np.sqrt(var, out=var)
    centered /= var
    return centered


def _projected(v, x, dims: tuple, eps: float):
    """rstd * (v - mean(v) - out * mean(v * out)): the Jacobian (symmetric) applied to v, with
    out and rstd = 1 / sqrt(var(x) + eps) recomputed from x."""
    n = math.prod(x.shape[d] for d in dims)
    centered = x - xp.sum(x, dims, True) / n
    rstd = 1 / xp.sqrt(xp.sum(centered * centered, dims, True) / n + eps)
    out = centered * rstd
    return rstd * (v - xp.sum(v, dims, True) / n - out * (xp.sum(v * out, dims, True) / n))


standardize_row = Op(
    "standardize", _standardize,
    vjp=(lambda g, x, dims, eps: _projected(g, x, dims, eps),),
    jvp=(lambda dx, x, dims, eps: _projected(dx, x, dims, eps),),
    kind="reduction",
    # dims count from the end, so a batch dim in front changes nothing.
    batch=lambda op, values, batched, params: op(values[0], **params),
    doc="(x - mean) / sqrt(var + eps) over the trailing dims (negative numbers, biased var).",
)  # fmt: skip
