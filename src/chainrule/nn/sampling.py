"""Resampling: `interpolate` (nearest, linear, bilinear, trilinear, area) and `pixel_shuffle`
/ `pixel_unshuffle` (re-exported by `chainrule.nn.functional`), and their modules Upsample,
UpsamplingNearest2d, UpsamplingBilinear2d, PixelShuffle and PixelUnshuffle."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..errors import DomainError, ShapeError, fmt_shape
from ..ops.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d
from .module import Module

__all__ = [
    "PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
    "interpolate", "pixel_shuffle", "pixel_unshuffle",
]  # fmt: skip

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


def _check_factor(op: str, factor) -> int:
    if not isinstance(factor, numbers.Integral) or isinstance(factor, bool) or factor < 1:
        raise DomainError(f"{op}: the factor must be a positive int, got {factor!r}")
    return int(factor)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r², H, W) -> (*, C, H r, W r): each r x r block of outputs comes from r² channels.

    >>> import chainrule as cr
    >>> pixel_shuffle(cr.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    r = _check_factor("pixel_shuffle", upscale_factor)
    shape = np.shape(input)
    if len(shape) < 3 or shape[-3] % (r * r):
        raise ShapeError(
            f"pixel_shuffle: input of shape {fmt_shape(shape)} needs at least 3 dims and a "
            f"channel count (dim -3) divisible by upscale_factor² = {r * r}"
        )
    *lead, c, h, w = shape
    blocks = input.reshape(*lead, c // (r * r), r, r, h, w)
    k = len(lead)
    order = (*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return ops.permute(blocks, order).reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r², H, W), the inverse of `pixel_shuffle`.

    >>> import chainrule as cr
    >>> pixel_unshuffle(cr.arange(4.0).reshape(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    r = _check_factor("pixel_unshuffle", downscale_factor)
    shape = np.shape(input)
    if len(shape) < 3 or shape[-1] % r or shape[-2] % r:
        raise ShapeError(
            f"pixel_unshuffle: input of shape {fmt_shape(shape)} needs at least 3 dims and "
            f"height and width divisible by downscale_factor = {r}"
        )
    *lead, c, h, w = shape
    blocks = input.reshape(*lead, c, h // r, r, w // r, r)
    k = len(lead)
    order = (*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return ops.permute(blocks, order).reshape(*lead, c * r * r, h // r, w // r)


class Upsample(Module):
    """`interpolate` as a module, to ``size`` or by ``scale_factor``.

    >>> import chainrule as cr
    >>> Upsample(scale_factor=2, mode="bilinear")
    Upsample(scale_factor=2.0, mode='bilinear')
    >>> Upsample(size=(3, 5))(cr.zeros(1, 1, 2, 2)).shape
    (1, 1, 3, 5)
    """

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.size = size
        if isinstance(scale_factor, Sequence):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)  # fmt: skip

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            text = f"scale_factor={self.scale_factor!r}"
        else:
            text = f"size={self.size!r}"
        return f"{text}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W) inputs.

    >>> UpsamplingNearest2d(scale_factor=2)
    UpsamplingNearest2d(scale_factor=2.0, mode='nearest')
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) inputs with ``align_corners=True``.

    >>> UpsamplingBilinear2d(size=4)
    UpsamplingBilinear2d(size=4, mode='bilinear')
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """`pixel_shuffle` as a module.

    >>> PixelShuffle(3)
    PixelShuffle(upscale_factor=3)
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """`pixel_unshuffle` as a module.

    >>> PixelUnshuffle(2)
    PixelUnshuffle(downscale_factor=2)
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
