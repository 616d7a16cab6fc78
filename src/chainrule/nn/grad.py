"""``torch.nn.grad``: the gradient of a convolution with respect to its input
(``conv{1,2,3}d_input``) or its weight (``conv{1,2,3}d_weight``) for a given ``grad_output``,
computed by differentiating chainrule's own convolution (it is linear in each)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._tensor import Tensor
from ..autograd import grad
from ..creation import zeros
from ..graph import enable_grad, is_grad_enabled
from .functional import conv1d, conv2d, conv3d

__all__ = [
    "conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
    "conv3d_weight",
]  # fmt: skip

Size = Sequence[int]


def _differentiate(
    conv: Callable, wrt: str, fixed: Tensor, size: Size, grad_output: Tensor, options: tuple
) -> Tensor:
    """The VJP of ``conv`` at ``grad_output`` with respect to ``wrt`` ('input' or 'weight') of
    shape ``size``, the other operand being ``fixed``. The convolution is linear in the
    variable, so the point it is taken at (zeros) does not matter. The result is itself
    differentiable when ``fixed`` or ``grad_output`` requires grad (and grad mode is on)."""
    create_graph = is_grad_enabled() and (fixed.requires_grad or grad_output.requires_grad)
    variable = zeros(tuple(size), dtype=grad_output.dtype, requires_grad=True)
    with enable_grad():
        if wrt == "input":
            out = conv(variable, fixed, None, *options)
        else:
            out = conv(fixed, variable, None, *options)
        return grad(out, variable, grad_output, create_graph=create_graph)[0]


def conv1d_input(
    input_size: Size,
    weight: Tensor,
    grad_output: Tensor,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """The gradient of ``conv1d(input, weight, ...)`` with respect to an input of shape
    ``input_size``, given ``grad_output``.

    >>> import chainrule
    >>> weight = chainrule.ones(1, 1, 2)
    >>> conv1d_input((1, 1, 3), weight, chainrule.tensor([[[1.0, 10.0]]]))
    tensor([[[ 1., 11., 10.]]])
    """
    return _differentiate(
        conv1d, "input", weight, input_size, grad_output, (stride, padding, dilation, groups)
    )


def conv1d_weight(
    input: Tensor,
    weight_size: Size,
    grad_output: Tensor,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """The gradient of ``conv1d(input, weight, ...)`` with respect to a weight of shape
    ``weight_size``, given ``grad_output``.

    >>> import chainrule
    >>> x = chainrule.tensor([[[1.0, 2.0, 3.0]]])
    >>> conv1d_weight(x, (1, 1, 2), chainrule.tensor([[[1.0, 10.0]]]))
    tensor([[[21., 32.]]])
    """
    return _differentiate(
        conv1d, "weight", input, weight_size, grad_output, (stride, padding, dilation, groups)
    )


def conv2d_input(
    input_size: Size,
    weight: Tensor,
    grad_output: Tensor,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """As `conv1d_input`, for `conv2d`."""
    return _differentiate(
        conv2d, "input", weight, input_size, grad_output, (stride, padding, dilation, groups)
    )


def conv2d_weight(
    input: Tensor,
    weight_size: Size,
    grad_output: Tensor,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """As `conv1d_weight`, for `conv2d`."""
    return _differentiate(
        conv2d, "weight", input, weight_size, grad_output, (stride, padding, dilation, groups)
    )


def conv3d_input(
    input_size: Size,
    weight: Tensor,
    grad_output: Tensor,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """As `conv1d_input`, for `conv3d`."""
    return _differentiate(
        conv3d, "input", weight, input_size, grad_output, (stride, padding, dilation, groups)
    )


def conv3d_weight(
    input: Tensor,
    weight_size: Size,
    grad_output: Tensor,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """As `conv1d_weight`, for `conv3d`."""
    return _differentiate(
        conv3d, "weight", input, weight_size, grad_output, (stride, padding, dilation, groups)
    )
