"""Resampling: `interpolate` (nearest, linear, bilinear, trilinear, area) and its deprecated
names ``upsample``, ``upsample_nearest`` and ``upsample_bilinear``. The modules (Upsample,
UpsamplingNearest2d, UpsamplingBilinear2d) are in `chainrule.nn.modules.upsampling`."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...errors import DomainError, ShapeError, fmt_shape
from ...ops import adaptive_avg_pool1d, adaptive_avg_pool2d

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]


#: The modes, and the number of spatial dims each takes (None: any).
_MODES = {"nearest": None, "nearest-exact": None, "area": None, "linear": 1, "bilinear": 2,
          "trilinear": 3}  # fmt: skip


def _per_dim(value, n: int, what: str) -> tuple:
    if isinstance(value, Sequence):
        if len(value) != n:
            raise ShapeError(
                f"interpolate: {what} {tuple(value)} must have one entry per spatial dim ({n})"
            )
        return tuple(value)
    return (value,) * n


def _nearest_sources(n: int, out: int, scale: float, exact: bool) -> np.ndarray:
    # PyTorch computes these in float32: floor(dst * scale), or floor((dst + 0.5) * scale).
    dst = np.arange(out, dtype=np.float32) + (np.float32(0.5) if exact else 0)
    return np.minimum(np.floor(dst * np.float32(scale)).astype(np.int64), n - 1)


def _linear_weights(n: int, out: int, scale: float | None, align_corners: bool) -> np.ndarray:
    """The (out, n) matrix of linear interpolation with PyTorch's source coordinates."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        src = dst * ((n - 1) / (out - 1) if out > 1 else 0.0)
    else:
        src = np.maximum((dst + 0.5) * scale - 0.5, 0.0)
    low = np.minimum(np.floor(src).astype(np.int64), n - 1)
    high = np.minimum(low + 1, n - 1)
    frac = src - low
    weights = np.zeros((out, n))
    np.add.at(weights, (np.arange(out), low), 1 - frac)
    np.add.at(weights, (np.arange(out), high), frac)
    return weights


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resample the spatial dims (all after N, C) of ``input`` to ``size``, or to
    floor(size * ``scale_factor``), as ``torch.nn.functional.interpolate``.

    Modes: "nearest" (PyTorch's: source floor(dst * scale)), "nearest-exact", "linear",
    "bilinear" and "trilinear" (separable linear weights; ``align_corners`` maps the corner
    pixels' centres onto each other), and "area" (adaptive average pooling). A given
    ``scale_factor`` sets the coordinate scale unless ``recompute_scale_factor``, as PyTorch.
    Bicubic and ``antialias`` are not supported.

    >>> import chainrule as cr
    >>> x = cr.tensor([[[1.0, 2.0]]])
    >>> interpolate(x, scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    >>> interpolate(x, size=3, mode="linear", align_corners=True)
    tensor([[[1.0000, 1.5000, 2.0000]]])
    """
    if mode not in _MODES:
        raise DomainError(
            f"interpolate: mode {mode!r} is not supported; use one of {', '.join(_MODES)}"
        )
    if antialias:
        raise DomainError("interpolate: antialias=True is not supported")
    shape = np.shape(input)
    spatial = len(shape) - 2
    if spatial < 1 or (_MODES[mode] is not None and _MODES[mode] != spatial):
        wanted = "3-D, 4-D or 5-D" if _MODES[mode] is None else f"{_MODES[mode] + 2}-D"
        raise ShapeError(
            f"interpolate: mode {mode!r} needs a {wanted} input, got {fmt_shape(shape)}"
        )
    linear = mode in ("linear", "bilinear", "trilinear")
    if align_corners is not None and not linear:
        raise DomainError(f"interpolate: align_corners only applies to linear modes, not {mode!r}")
    if (size is None) == (scale_factor is None):
        raise DomainError("interpolate: give exactly one of size and scale_factor")
    sizes = tuple(shape[2:])
    if size is not None:
        outs = tuple(int(s) for s in _per_dim(size, spatial, "size"))
        scales = tuple(n / out for n, out in zip(sizes, outs))
    else:
        factors = tuple(float(f) for f in _per_dim(scale_factor, spatial, "scale_factor"))
        outs = tuple(int(math.floor(n * f)) for n, f in zip(sizes, factors))
        if recompute_scale_factor:
            scales = tuple(n / out for n, out in zip(sizes, outs))
        else:
            scales = tuple(1.0 / f for f in factors)
    if any(out < 1 for out in outs):
        raise ShapeError(f"interpolate: the output size {outs} must be positive")
    if mode == "area":
        if spatial == 1:
            return adaptive_avg_pool1d(input, outs)
        if spatial == 2:
            return adaptive_avg_pool2d(input, outs)
        raise ShapeError("interpolate: mode 'area' takes 3-D or 4-D inputs here")
    out = input
    for d, (n, size_d, scale) in enumerate(zip(sizes, outs, scales)):
        dim = 2 + d
        if linear:
            weights = _linear_weights(n, size_d, scale, bool(align_corners))
            moved = ops.movedim(out, dim, -1)
            out = ops.movedim(ops.matmul(moved, weights.T.astype(input.dtype)), -1, dim)
        else:
            sources = _nearest_sources(n, size_d, scale, mode == "nearest-exact")
            out = out[(slice(None),) * dim + (Tensor._make(sources),)]
    return out


def _deprecated(name: str, instead: str) -> None:
    warnings.warn(f"nn.functional.{name} is deprecated; use {instead}", UserWarning, stacklevel=3)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:  # fmt: skip
    """`interpolate` under its old name (deprecated in PyTorch, which warns; so does this).

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample(cr.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    _deprecated("upsample", "nn.functional.interpolate")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """`interpolate` with mode "nearest" (deprecated in PyTorch, which warns; so does this).

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_nearest(cr.tensor([[[1.0, 2.0]]]), 3)
    tensor([[[1., 1., 2.]]])
    """
    _deprecated("upsample_nearest", "nn.functional.interpolate(..., mode='nearest')")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """`interpolate` with mode "bilinear" and align_corners=True (deprecated in PyTorch, which
    warns; so does this).

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_bilinear(cr.tensor([[[[0.0, 3.0]]]]), (1, 4))
    tensor([[[[0., 1., 2., 3.]]]])
    """
    _deprecated("upsample_bilinear", "nn.functional.interpolate(..., mode='bilinear')")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
