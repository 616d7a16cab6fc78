"""Gradient clipping: `clip_grad_norm_` (= `get_total_norm` then `clip_grads_with_norm_`) and
`clip_grad_value_`, changing ``.grad`` in place, as ``torch.nn.utils.clip_grad``.

Both follow PyTorch's formulas, so a training loop gives the same numbers in both libraries.
They work on the gradients' arrays in NumPy, so a compiled step records each as one call, run
again whole at each replay.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import numpy as np

from ..._tensor import Tensor
from ...errors import DomainError, DTypeError
from ...observe import replayed_whole

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
    "get_total_norm",
]  # fmt: skip


def _with_grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def _scale_grad(param: Tensor, factor: np.ndarray) -> None:
    g = param.grad._array
    if g.flags.writeable:
        g *= factor.astype(g.dtype)
    else:  # a broadcast view from the engine cannot be written: replace it
        param.grad = Tensor._make(g * factor.astype(g.dtype))


def _vector_norm(x: np.ndarray, norm_type: float) -> np.ndarray:
    """The ``norm_type``-norm of all elements of ``x``, in x's dtype (as linalg.vector_norm)."""
    if x.size == 0:
        return np.zeros((), x.dtype)
    if norm_type == math.inf:
        return np.max(np.abs(x))
    if norm_type == -math.inf:
        return np.min(np.abs(x))
    if norm_type == 0:
        return np.asarray(np.count_nonzero(x), x.dtype)
    if norm_type == 2:
        return np.sqrt(np.sum(x * x))
    return np.sum(np.abs(x) ** norm_type) ** (1.0 / norm_type)


@replayed_whole(pure=True)
def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type``-norm of all elements of ``tensors`` together, as if they were one
    vector (``norm_type`` may be ``inf``): the norm of the tensors' norms. ``foreach`` is
    accepted and changes nothing.

    >>> import chainrule
    >>> get_total_norm([chainrule.tensor([3.0]), chainrule.tensor([4.0])])
    tensor(5.)
    """
    return _total_norm(tensors, norm_type, error_if_nonfinite, "get_total_norm")


def _total_norm(tensors, norm_type: float, error_if_nonfinite: bool, op: str) -> Tensor:
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if not tensors:
        return Tensor._make(np.zeros((), np.float32))
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise DTypeError(f"{op}: tensor {i} is a {type(t).__name__}, not a Tensor")
    norm_type = float(norm_type)
    dtype = np.result_type(*(t._array.dtype for t in tensors))
    norms = np.array([_vector_norm(t._array, norm_type) for t in tensors], dtype)
    total = _vector_norm(norms, norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise DomainError(
            f"{op}: the total norm of order {norm_type} of the gradients is "
            f"{float(total)}, so they cannot be clipped; set error_if_nonfinite=False to "
            "scale by it anyway"
        )
    return Tensor._make(np.asarray(total, dtype))


@replayed_whole
def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Multiply every gradient by ``min(1, max_norm / (total_norm + 1e-6))``, in place: the
    second half of `clip_grad_norm_`, given the total norm (from `get_total_norm`, perhaps
    combined across pipeline stages). ``foreach`` is accepted and changes nothing.

    >>> import chainrule
    >>> w = chainrule.tensor([3.0, 4.0], requires_grad=True)
    >>> w.grad = chainrule.tensor([3.0, 4.0])
    >>> clip_grads_with_norm_([w], 1.0, get_total_norm([w.grad]))
    >>> w.grad
    tensor([0.6000, 0.8000])
    """
    params = _with_grads(parameters)
    if not params:
        return
    total = total_norm._array if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    factor = np.minimum(float(max_norm) / (total + 1e-6), 1.0)
    for param in params:
        _scale_grad(param, np.asarray(factor))


@replayed_whole
def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale all gradients together so that their total norm is at most ``max_norm``.

    The total norm is taken over every gradient as if they were one vector (``norm_type``
    may be ``inf``); gradients are multiplied by ``min(1, max_norm / (total + 1e-6))``.
    Returns the total norm before clipping. Parameters without a gradient are skipped.

    >>> import chainrule
    >>> w = chainrule.tensor([3.0, 4.0], requires_grad=True)
    >>> (w * w).sum().backward()
    >>> clip_grad_norm_([w], max_norm=1.0)
    tensor(10.)
    >>> round(float((w.grad * w.grad).sum()), 4)
    1.0
    """
    params = _with_grads(parameters)
    total = _total_norm([p.grad for p in params], norm_type, error_if_nonfinite, "clip_grad_norm_")
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_norm(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated name of `clip_grad_norm_` (it warns, as PyTorch's does).

    >>> import warnings, chainrule
    >>> w = chainrule.tensor([3.0, 4.0], requires_grad=True)
    >>> w.grad = chainrule.tensor([3.0, 4.0])
    >>> with warnings.catch_warnings(record=True):
    ...     clip_grad_norm([w], 1.0)
    tensor(5.)
    """
    warnings.warn(
        "clip_grad_norm is deprecated; use clip_grad_norm_ (same arguments)",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@replayed_whole
def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient element to [-clip_value, clip_value], in place (``foreach`` is
    accepted and changes nothing).

    >>> import chainrule
    >>> w = chainrule.tensor([3.0, -4.0], requires_grad=True)
    >>> (w * w).sum().backward()
    >>> clip_grad_value_(w, 1.0)
    >>> w.grad
    tensor([ 1., -1.])
    """
    clip_value = float(clip_value)
    if clip_value < 0:
        raise DomainError(f"clip_grad_value_: clip_value must be non-negative, got {clip_value}")
    for param in _with_grads(parameters):
        g = param.grad._array
        if g.flags.writeable:
            np.clip(g, -clip_value, clip_value, out=g)
        else:
            param.grad = Tensor._make(np.clip(g, -clip_value, clip_value))
