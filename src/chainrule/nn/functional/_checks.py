"""Argument checks shared by the functional forms (`chainrule.nn.functional`) and the Module
classes (`chainrule.nn.modules`): probabilities, reductions, target shapes."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..._tensor import Tensor
from ...errors import DomainError, ShapeError, fmt_shape

_REDUCTIONS = ("none", "mean", "sum")


def _array(x) -> np.ndarray:
    return x._array if isinstance(x, Tensor) else np.asarray(x)


def _check_probability(p, op: str, name: str = "p") -> float:
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or not 0 <= p <= 1:
        raise DomainError(f"{op}: {name} must be a probability between 0 and 1, got {p!r}")
    return float(p)


def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in _REDUCTIONS:
        raise DomainError(f"{op}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_same_shape(input: Tensor, target, op: str) -> None:
    if np.shape(input) != np.shape(target):
        raise ShapeError(
            f"{op}: input has shape {fmt_shape(np.shape(input))} but target has shape "
            f"{fmt_shape(np.shape(target))}; they must be the same"
        )


def _check_broadcast_target(input: Tensor, target, op: str) -> None:
    """PyTorch broadcasts a regression target of another shape, with a warning."""
    shape, target_shape = np.shape(input), np.shape(target)
    if shape == target_shape:
        return
    try:
        np.broadcast_shapes(shape, target_shape)
    except ValueError:
        raise ShapeError(
            f"{op}: input has shape {fmt_shape(shape)} but target has shape "
            f"{fmt_shape(target_shape)}, which do not broadcast"
        ) from None
    warnings.warn(
        f"{op}: target shape {fmt_shape(target_shape)} differs from input shape "
        f"{fmt_shape(shape)}; broadcasting them is likely a mistake",
        UserWarning,
        stacklevel=3,
    )
