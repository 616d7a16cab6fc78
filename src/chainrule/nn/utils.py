"""Gradient clipping: `clip_grad_norm_` and `clip_grad_value_`, changing ``.grad`` in place;
`zero_grads`, which `Module.zero_grad` and `Optimizer.zero_grad` share; `parameters_to_vector`
and `vector_to_parameters`.

Both follow PyTorch's formulas, so a training loop gives the same numbers in both libraries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .._tensor import Tensor
from ..autograd import no_grad
from ..errors import DomainError, DTypeError, fmt_shape
from ..ops import cat, reshape


def zero_grads(parameters: Iterable[Tensor], set_to_none: bool = True) -> None:
    """Clear each parameter's gradient: to None (default) or to zeros in place."""
    for param in parameters:
        if param.grad is None:
            continue
        if set_to_none:
            param.grad = None
        else:
            with no_grad():
                param.grad = param.grad.detach().zero_()


def _with_grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def _scale_grad(param: Tensor, factor: np.ndarray) -> None:
    g = param.grad.data
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


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
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
    if not params:
        return Tensor._make(np.zeros((), np.float32))
    norm_type = float(norm_type)
    dtype = np.result_type(*(p.grad.data.dtype for p in params))
    norms = np.array([_vector_norm(p.grad.data, norm_type) for p in params], dtype)
    total = _vector_norm(norms, norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise DomainError(
            f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is "
            f"{float(total)}, so they cannot be clipped; set error_if_nonfinite=False to "
            "scale by it anyway"
        )
    factor = np.minimum(np.asarray(float(max_norm), dtype) / (total + 1e-6), 1.0).astype(dtype)
    for param in params:
        _scale_grad(param, factor)
    return Tensor._make(np.asarray(total, dtype))


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float) -> None:
    """Clamp every gradient element to [-clip_value, clip_value], in place.

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
        g = param.grad.data
        if g.flags.writeable:
            np.clip(g, -clip_value, clip_value, out=g)
        else:
            param.grad = Tensor._make(np.clip(g, -clip_value, clip_value))


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter flattened and joined into one 1-D tensor (differentiable).

    >>> import chainrule
    >>> parameters_to_vector([chainrule.ones(2, 2), chainrule.zeros(1)])
    tensor([1., 1., 1., 1., 0.])
    """
    params = list(parameters)
    if not params:
        raise DomainError("parameters_to_vector: got no parameters")
    return cat([reshape(p, (-1,)) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into each parameter, in place (the inverse
    of `parameters_to_vector`).

    >>> import chainrule
    >>> w, b = chainrule.zeros(2, 2), chainrule.zeros(1)
    >>> vector_to_parameters(chainrule.arange(5.0), [w, b])
    >>> w, b
    (tensor([[0., 1.],
            [2., 3.]]), tensor([4.]))
    """
    if not isinstance(vec, Tensor):
        raise DTypeError(f"vector_to_parameters: expected a Tensor, got {type(vec).__name__}")
    if vec.ndim != 1:
        raise DomainError(
            f"vector_to_parameters: vec must be 1-D, got shape {fmt_shape(vec.shape)}"
        )
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.numel() != total:
        raise DomainError(
            f"vector_to_parameters: vec has {vec.numel()} elements but the parameters hold {total}"
        )
    start = 0
    with no_grad():
        for param in params:
            n = param.numel()
            param.copy_(vec.data[start : start + n].reshape(param.shape))
            start += n
