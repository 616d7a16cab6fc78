"""Sampling an image at arbitrary points: ``affine_grid`` (the points of an affine map) and
``grid_sample`` (bilinear or nearest interpolation at them, in 2-D and 3-D), with the
``torch.grid_sampler*`` spellings that take the modes as numbers.

Composed from rows: the corners are gathered by index and weighted by the fractional parts of
the coordinates, so gradients flow to the input and (bilinear) to the grid, and differentiate
again. Coordinates follow PyTorch: -1 and 1 are the edges of the image (align_corners=False)
or the centres of its corner pixels (align_corners=True).
"""

from __future__ import annotations

import itertools

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..linalg.products import matmul
from ..observe import replayed_whole
from .conv import _dtype
from .elementwise import abs as abs_
from .elementwise import clamp, where
from .indexing import index_row
from .numeric import fmod
from .shape import reshape, unsqueeze

__all__ = ["grid_sampler", "grid_sampler_2d", "grid_sampler_3d"]

#: The number ``grid_sampler`` takes for each interpolation mode (``torch.nn.functional``'s).
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
#: The number ``grid_sampler`` takes for each padding mode (``torch.nn.functional``'s).
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def _reflect(x, twice_low: int, twice_high: int):
    """x reflected back and forth into [low, high] (PyTorch's reflect_coordinates)."""
    if twice_low == twice_high:
        return x * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    x = abs_(x - low)
    extra = fmod(x, span)
    return where(_even_flips(x, span), extra + low, span - extra + low)


@replayed_whole(pure=True)  # a compiled step works it out from the new coordinates
def _even_flips(x: Tensor, span: float) -> np.ndarray:
    """Where x (>= 0) lies an even number of spans from 0: reflected an even number of times."""
    return np.floor(x._array / span) % 2 == 0


def _source(coord, size: int, padding_mode: str, align_corners: bool):
    """Normalised coordinates in [-1, 1] as pixel positions along a dim of ``size``."""
    # align_corners: -1 and 1 are the corner pixels' centres; else the image's outer edges.
    x = (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    if padding_mode in ("border", "reflection"):
        x = clamp(x, 0, size - 1)
    return x


def _gather(input, coords: list, corner: tuple | None, sizes: tuple):
    """input[n, c, *positions] with 0 outside the image, at the (N, *out) integer positions
    of `_pixels`: (N, C, *out) values and the (N, 1, *out) mask of positions inside."""
    index, inside = _pixels(coords, corner, sizes, np.shape(input)[:2], _dtype(input))
    return index_row(input, index=index), inside


@replayed_whole(pure=True)  # a compiled step reads the new coordinates at each call
def _pixels(coords: list, corner: tuple | None, sizes: tuple, lead: tuple, dtype) -> tuple:
    """(the index of the pixels at ``coords``, the (N, 1, *out) mask of those inside): each
    coordinate rounded (ties to even) for ``corner`` None, else floored plus the corner's 0
    or 1; outside pixels are clipped to the edge (the mask zeroes them)."""
    if corner is None:
        positions = [np.round(c._array).astype(np.int64) for c in coords]
    else:
        positions = [np.floor(c._array).astype(np.int64) + k for c, k in zip(coords, corner)]
    inside = np.ones(positions[0].shape, bool)
    for p, size in zip(positions, sizes):
        inside &= (p >= 0) & (p < size)
    n, c = lead
    spatial = positions[0].ndim - 1
    batch = np.arange(n).reshape((n, 1) + (1,) * spatial)
    channel = np.arange(c).reshape((1, c) + (1,) * spatial)
    clipped = [np.clip(p, 0, size - 1)[:, None] for p, size in zip(positions, sizes)]
    return (batch, channel, *clipped), inside[:, None].astype(dtype)


@replayed_whole(pure=True)  # a compiled step reads the new coordinates at each call
def _floors(coords: list) -> list:
    """Each coordinate rounded down (as floats)."""
    return [np.floor(c._array) for c in coords]


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None):  # fmt: skip
    """``input`` sampled at the points of ``grid``: an (N, C, H, W) input and an
    (N, Ho, Wo, 2) grid of (x, y) give (N, C, Ho, Wo); in 3-D, (N, C, D, H, W) and
    (N, Do, Ho, Wo, 3) of (x, y, z) give (N, C, Do, Ho, Wo).

    ``mode`` "bilinear" (trilinear in 3-D) or "nearest" (ties to even, as PyTorch);
    "bicubic" is not supported. ``padding_mode`` says what points outside read: "zeros",
    "border" (the nearest edge pixel) or "reflection". ``align_corners=None`` is False.
    Gradients reach the input and, for bilinear, the grid; nearest gives the grid none.

    >>> import chainrule as cr
    >>> image = cr.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> grid_sample(image, cr.tensor([[[[0.0, 0.0], [1.0, -1.0]]]]), align_corners=True)
    tensor([[[[1.5000, 1.0000]]]])
    """
    op = "grid_sample"
    shape, grid_shape = np.shape(input), np.shape(grid)
    if len(shape) not in (4, 5):
        raise ShapeError(
            f"{op}: input must be (N, C, H, W) or (N, C, D, H, W), got shape {fmt_shape(shape)}"
        )
    n = len(shape) - 2
    if len(grid_shape) != n + 2 or grid_shape[-1] != n or grid_shape[0] != shape[0]:
        raise ShapeError(
            f"{op}: a {len(shape)}-D input of shape {fmt_shape(shape)} needs a grid of shape "
            f"(N, {', '.join(['*'] * n)}, {n}) with N = {shape[0]}, got {fmt_shape(grid_shape)}"
        )
    if mode not in ("bilinear", "nearest"):
        supported = "; bicubic is not supported" if mode == "bicubic" else ""
        raise DomainError(f"{op}: mode must be 'bilinear' or 'nearest', got {mode!r}{supported}")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise DomainError(
            f"{op}: padding_mode must be 'zeros', 'border' or 'reflection', got {padding_mode!r}"
        )
    for name, tensor in (("input", input), ("grid", grid)):
        if _dtype(tensor).kind != "f":
            raise DTypeError(
                f"{op}: {name} must be floating point, got {fmt_dtype(_dtype(tensor))}"
            )
    sizes = shape[2:]
    # grid[..., 0] is x, along the last dim (W); grid[..., n - 1] runs along the first (D or H).
    coords = [_source(grid[..., n - 1 - d], sizes[d], padding_mode, bool(align_corners))
              for d in range(n)]  # fmt: skip
    if mode == "nearest":
        values, inside = _gather(input, coords, None, sizes)
        return values * inside
    fractions = [c - low for c, low in zip(coords, _floors(coords))]
    out = None
    for corner in itertools.product((0, 1), repeat=n):
        values, inside = _gather(input, coords, corner, sizes)
        weight = None
        for t, k in zip(fractions, corner):
            factor = t if k else 1 - t
            weight = factor if weight is None else weight * factor
        term = values * (unsqueeze(weight, 1) * inside)
        out = term if out is None else out + term
    return out


def _check_modes(op: str, interpolation_mode, padding_mode) -> tuple[str, str]:
    modes = {v: k for k, v in GRID_SAMPLE_INTERPOLATION_MODES.items()}
    paddings = {v: k for k, v in GRID_SAMPLE_PADDING_MODES.items()}
    if interpolation_mode not in modes or padding_mode not in paddings:
        raise DomainError(
            f"{op}: interpolation_mode must be in {sorted(modes)} and padding_mode in "
            f"{sorted(paddings)} (see GRID_SAMPLE_*_MODES), got {interpolation_mode!r}, "
            f"{padding_mode!r}"
        )
    return modes[interpolation_mode], paddings[padding_mode]


def grid_sampler(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """`grid_sample` with the modes as numbers (``GRID_SAMPLE_INTERPOLATION_MODES``,
    ``GRID_SAMPLE_PADDING_MODES``), as ``torch.grid_sampler``.

    >>> import chainrule as cr
    >>> grid_sampler(cr.ones(1, 1, 2, 2), cr.zeros(1, 1, 1, 2), 0, 0, False)
    tensor([[[[1.]]]])
    """
    mode, padding = _check_modes("grid_sampler", interpolation_mode, padding_mode)
    return grid_sample(input, grid, mode, padding, align_corners)


def _sampler(op: str, ndim: int, input, grid, interpolation_mode, padding_mode, align_corners):
    if np.ndim(input) != ndim:
        raise ShapeError(f"{op}: input must be {ndim}-D, got shape {fmt_shape(np.shape(input))}")
    mode, padding = _check_modes(op, interpolation_mode, padding_mode)
    return grid_sample(input, grid, mode, padding, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """`grid_sampler` for a 4-D input only.

    >>> import chainrule as cr
    >>> grid_sampler_2d(cr.ones(1, 1, 2, 2), cr.zeros(1, 1, 1, 2), 1, 0, True)
    tensor([[[[1.]]]])
    """
    return _sampler("grid_sampler_2d", 4, input, grid, interpolation_mode, padding_mode,
                    align_corners)  # fmt: skip


def grid_sampler_3d(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """`grid_sampler` for a 5-D input only.

    >>> import chainrule as cr
    >>> grid_sampler_3d(cr.ones(1, 1, 2, 2, 2), cr.zeros(1, 1, 1, 1, 3), 0, 1, False)
    tensor([[[[[1.]]]]])
    """
    return _sampler("grid_sampler_3d", 5, input, grid, interpolation_mode, padding_mode,
                    align_corners)  # fmt: skip


def _linspace(steps: int, align_corners: bool, dtype) -> np.ndarray:
    """PyTorch's base coordinates along one dim: pixel centres in [-1, 1]."""
    if steps <= 1:
        return np.zeros(max(steps, 1), dtype)
    points = np.linspace(-1, 1, steps, dtype=dtype)
    return points if align_corners else points * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners: bool | None = None):
    """The sampling grid of a batch of affine maps, for `grid_sample`: theta (N, 2, 3) and
    size (N, C, H, W) give (N, H, W, 2), each point theta @ (x, y, 1) for the base grid's
    normalised pixel centres (x, y); in 3-D theta (N, 3, 4) and size (N, C, D, H, W) give
    (N, D, H, W, 3). Differentiable in theta. ``align_corners=None`` is False.

    >>> import chainrule as cr
    >>> affine_grid(cr.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), (1, 1, 1, 2))
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    size = tuple(size)
    shape = np.shape(theta)
    if len(size) not in (4, 5):
        raise ShapeError(f"affine_grid: size must be 4-D or 5-D, (N, C, *spatial), got {size}")
    n = len(size) - 2
    if shape != (size[0], n, n + 1):
        raise ShapeError(
            f"affine_grid: theta must have shape {fmt_shape((size[0], n, n + 1))} for size "
            f"{size}, got {fmt_shape(shape)}"
        )
    if min(size) <= 0:
        raise ShapeError(f"affine_grid: size must be positive, got {size}")
    dtype = _dtype(theta)
    axes = [_linspace(s, bool(align_corners), dtype) for s in size[2:]]
    mesh = np.meshgrid(*axes, indexing="ij")  # one array per spatial dim, D/H first
    base = np.stack([*reversed(mesh), np.ones_like(mesh[0])], -1)  # (*spatial, n + 1): x first
    points = matmul(base.reshape(-1, n + 1), theta.mT if isinstance(theta, Tensor) else theta)
    return reshape(points, (size[0], *size[2:], n))
