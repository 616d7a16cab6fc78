"""`parameters_to_vector` and `vector_to_parameters`: a model's parameters as one flat vector
and back, as ``torch.nn.utils.convert_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor
from ...autograd import no_grad
from ...errors import DomainError, DTypeError, fmt_shape
from ...ops import cat, reshape

__all__ = ["parameters_to_vector", "vector_to_parameters"]


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
            param.copy_(vec._array[start : start + n].reshape(param.shape))
            start += n
