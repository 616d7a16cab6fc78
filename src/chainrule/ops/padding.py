"""Padding: ``pad`` as ``torch.nn.functional.pad``, one row for constant padding and an
index grid for the other modes (reflect, replicate, circular)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from .. import xp
from ..errors import ShapeError, fmt_shape
from ..op import Op
from .indexing import getitem, getitem_row, index_row

__all__ = ["pad"]


def _batch_pad(op: Op, values, batched, params):
    return op(values[0], widths=((0, 0), *params["widths"]), value=params["value"])


# fmt: off
# Constant padding is affine, not linear, in x: the tangent is padded with 0, not value.
pad_row = Op("pad", lambda x, widths, value: np.pad(x, widths, constant_values=value),
             vjp=(lambda g, x_shape, widths: xp.run(getitem_row, g, index=tuple(
                 slice(before, before + n) for (before, _), n in zip(widths, x_shape))),),
             jvp=(lambda dx, widths: xp.run(pad_row, dx, widths=widths, value=0),),
             kind="shape", batch=_batch_pad, doc="x with value added around each dim (widths).")
# fmt: on

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _source_positions(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each position of a padded dim, the input position it copies (non-constant modes)."""
    positions = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(positions, 0, n - 1)
    if mode == "circular":
        return positions % n
    period = 2 * (n - 1)  # reflect: ... 2 1 | 0 1 2 | 1 0 ...
    positions = np.abs(positions) % max(period, 1)
    return np.where(positions >= n, period - positions, positions)


def pad(x, pad: Sequence[int], mode: str = "constant", value: float | None = 0):
    """``x`` padded as ``torch.nn.functional.pad``: ``pad`` pairs (before, after) from the
    last dim backwards, e.g. (left, right, top, bottom); negative amounts crop.

    Modes: "constant" (with ``value``), "reflect", "replicate" and "circular"; unlike
    PyTorch, the non-constant modes take any number of leading dims.

    >>> import chainrule as cr
    >>> cr.pad(cr.tensor([1.0, 2.0]), (1, 2), value=9.0)
    tensor([9., 1., 2., 9., 9.])
    """
    amounts = tuple(pad)
    shape = np.shape(x)
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode {mode!r} is not one of {', '.join(_PAD_MODES)}")
    if len(amounts) % 2 or not all(isinstance(p, numbers.Integral) for p in amounts):
        raise ShapeError(
            f"pad: padding {amounts} must be integers in (before, after) pairs, last dim first"
        )
    if len(amounts) // 2 > len(shape):
        raise ShapeError(
            f"pad: padding {amounts} pads {len(amounts) // 2} dimensions, but the input has "
            f"shape {fmt_shape(shape)}"
        )
    widths = [(0, 0)] * len(shape)
    for k in range(len(amounts) // 2):
        widths[len(shape) - 1 - k] = (int(amounts[2 * k]), int(amounts[2 * k + 1]))
    for d, ((before, after), n) in enumerate(zip(widths, shape)):
        if n + before + after < 0:
            raise ShapeError(
                f"pad: padding ({before}, {after}) leaves dim {d} of size {n} with a negative size"
            )
        limit = {"reflect": n - 1, "circular": n}.get(mode)  # copies within one period
        if limit is not None and (before > limit or after > limit):
            raise ShapeError(
                f"pad: {mode} padding ({before}, {after}) must be at most {limit} for dim {d} "
                f"of size {n}"
            )
    if mode != "constant" and amounts:
        # An open grid over the padded (trailing) dims: each output position's source.
        padded = range(len(shape) - len(amounts) // 2, len(shape))
        grid = tuple(
            _source_positions(shape[d], *widths[d], mode).reshape(
                [-1 if k == d else 1 for k in padded]
            )
            for d in padded
        )
        return index_row(x, index=(Ellipsis, *grid))
    if any(before < 0 or after < 0 for before, after in widths):
        x = getitem(x, tuple(slice(max(-b, 0), n - max(-a, 0)) for (b, a), n in zip(widths, shape)))
        widths = [(max(b, 0), max(a, 0)) for b, a in widths]
    return pad_row(x, widths=tuple(widths), value=0 if value is None else value)
