"""The dropout functions of `chainrule.nn.functional`: elementwise (dropout, alpha_dropout) and
per channel (dropout1d/2d/3d, feature_alpha_dropout), masks drawn as PyTorch draws them
(``bernoulli_(1 - p)`` on a fresh tensor, from `chainrule.default_generator`).
Their modules are in `nn.modules.dropout` (not ``dropout.py`` here: ``F.dropout`` is a function).
"""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...errors import ShapeError, fmt_shape
from ...observe import replayed_whole
from ...random import bernoulli_draws, view_layout
from ._checks import _check_probability
from .activation import _in_place

__all__ = [
    "alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
    "feature_dropout",
]  # fmt: skip


@replayed_whole
def _kept_scale(shape: tuple, p: float, dtype, like: np.ndarray | None = None) -> np.ndarray:
    """A fresh mask of ``shape``: 1 / (1 - p) where kept (probability 1 - p), else 0, divided
    in ``dtype`` as PyTorch divides its mask."""
    keep = bernoulli_draws(shape, 1 - p, op="dropout", like=like).astype(dtype)
    return keep / np.dtype(dtype).type(1 - p)


@replayed_whole
def _alpha_scale_shift(
    shape: tuple, p: float, dtype, like: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """A fresh draw of alpha dropout's affine map, a * x + b, per element of ``shape``."""
    cast = np.dtype(dtype).type
    keep = bernoulli_draws(shape, 1 - p, op="alpha_dropout", like=like).astype(dtype)
    a = 1.0 / np.sqrt((_ALPHA_PRIME**2 * p + 1) * (1 - p))
    b = (keep - cast(1)) * cast(_ALPHA_PRIME * a) + cast(_ALPHA_PRIME * a * p)
    return keep * cast(a), b


def _channel_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, spatial: int, op: str
) -> Tensor:
    """Zero whole channels: one draw per (N, C), shared over the last ``spatial`` dims."""
    p = _check_probability(p, op)
    shape = np.shape(input)
    if len(shape) not in (spatial + 1, spatial + 2):
        raise ShapeError(
            f"{op}: input must have {spatial + 1} (unbatched) or {spatial + 2} dims, got shape "
            f"{fmt_shape(shape)}"
        )
    if not training or p == 0:
        return input
    if p == 1:
        return _in_place(input, lambda x: x * 0.0, inplace, f"{op}_")
    scale = _kept_scale(shape[:-spatial] + (1,) * spatial, p, input.dtype)
    return _in_place(input, lambda x: x * scale, inplace, f"{op}_")


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero each channel of an (N, C, L) or (C, L) input with probability ``p`` (the whole
    length at once) and scale the rest by 1 / (1 - p), while training.

    >>> import chainrule as cr
    >>> out = dropout1d(cr.ones(1, 100, 3), p=0.5)
    >>> bool(((out == 0).all(-1) | (out == 2).all(-1)).all())
    True
    """
    return _channel_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero each channel of an (N, C, H, W) or (C, H, W) input with probability ``p`` and
    scale the rest by 1 / (1 - p), while training. (PyTorch reads a 3-D input as (N, C, L)
    for now and warns; here it is one unbatched image.)

    >>> import chainrule as cr
    >>> dropout2d(cr.ones(1, 2, 2, 2), training=False).shape
    (1, 2, 2, 2)
    """
    return _channel_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p) (training).

    The mask is drawn as PyTorch draws it, so under one `chainrule.manual_seed` it is
    PyTorch's mask. Outside training (or for p = 0) the input passes.

    >>> import chainrule as cr
    >>> out = dropout(cr.ones(1000), p=0.25)
    >>> sorted(set(out.tolist()))  # dropped, or scaled by 1 / 0.75
    [0.0, 1.3333333730697632]
    """
    p = _check_probability(p, "dropout")
    if not training or p == 0:
        return input
    if p == 1:
        return _in_place(input, lambda x: x * 0.0, inplace, "dropout_")
    # The mask is laid out as the input (PyTorch draws it into ``empty_like(input)``).
    scale = _kept_scale(np.shape(input), p, input.dtype, view_layout(input))
    return _in_place(input, lambda x: x * scale, inplace, "dropout_")


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero each channel of an (N, C, D, H, W) or (C, D, H, W) input with probability ``p``
    and scale the rest by 1 / (1 - p), while training.

    >>> import chainrule as cr
    >>> out = dropout3d(cr.ones(1, 50, 2, 1, 1), p=0.5)
    >>> bool(((out == 0).all((2, 3, 4)) | (out == 2).all((2, 3, 4))).all())
    True
    """
    return _channel_dropout(input, p, training, inplace, 3, "dropout3d")


def _feature_shape(shape: tuple, op: str) -> tuple:
    """The mask shape that drops whole channels: (N, C, 1, ...)."""
    if len(shape) < 2:
        raise ShapeError(
            f"{op}: feature dropout needs at least 2 dims (N, C, ...), got shape {fmt_shape(shape)}"
        )
    return shape[:2] + (1,) * (len(shape) - 2)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """`dropout` of whole channels (dims 0 and 1 are (N, C)), as ``torch.feature_dropout``.

    >>> import chainrule as cr
    >>> feature_dropout(cr.ones(2, 3, 4), 0.5, False).shape
    (2, 3, 4)
    """
    p = _check_probability(p, "feature_dropout")
    shape = np.shape(input)
    mask_shape = _feature_shape(shape, "feature_dropout")
    if not train or p == 0 or not np.size(input):
        return input
    if p == 1:
        return input * 0.0
    return input * _kept_scale(mask_shape, p, input.dtype)


# SELU's negative saturation, -scale * alpha: a dropped unit takes this value (then the affine
# map below restores mean 0 and variance 1 for unit-normal inputs).
_ALPHA_PRIME = 1.7580993408473766


def _alpha_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, feature: bool, op: str
) -> Tensor:
    p = _check_probability(p, op)
    shape = np.shape(input)
    mask_shape = _feature_shape(shape, op) if feature else shape
    if not training or p == 0 or not np.size(input):
        return input
    if p == 1:
        return _in_place(input, lambda x: x * 0.0, inplace, f"{op}_")
    like = None if feature else view_layout(input)
    scale, shift = _alpha_scale_shift(mask_shape, p, input.dtype, like)
    return _in_place(input, lambda x: x * scale + shift, inplace, f"{op}_")


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: each element is set to SELU's saturation value with
    probability ``p``, then all are mapped by a * x + b so that unit-normal inputs keep mean
    0 and variance 1 (training only; note ``training`` defaults to False, as PyTorch).

    >>> import chainrule as cr
    >>> out = alpha_dropout(cr.ones(1000), p=0.2, training=True)
    >>> len(set(out.tolist()))  # the kept value and the dropped value
    2
    """
    return _alpha_dropout(input, p, training, inplace, False, "alpha_dropout")


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """`alpha_dropout` of whole channels: one draw per (N, C), shared over the other dims.

    >>> import chainrule as cr
    >>> out = feature_alpha_dropout(cr.ones(2, 3, 4), p=0.5, training=True)
    >>> bool((out == out[..., :1]).all())
    True
    """
    return _alpha_dropout(input, p, training, inplace, True, "feature_alpha_dropout")
