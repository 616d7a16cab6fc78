"""Identity, Linear and Bilinear. Each initialises its weights as PyTorch does, with
`chainrule.nn.init` (PyTorch's numbers under one seed); the arithmetic is
`chainrule.nn.functional.linear` and ``bilinear``."""

from __future__ import annotations

import math

from ..._tensor import Tensor
from ...creation import zeros
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Bilinear", "Identity", "Linear"]


class Identity(Module):
    """Returns its input unchanged (a placeholder layer).

    >>> import chainrule
    >>> Identity()(chainrule.tensor([1.0]))
    tensor([1.])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, x):
        return x


class Linear(Module):
    """y = x @ weight.T + bias, with weight of shape (out_features, in_features).

    Weight and bias start as PyTorch's: U(-1/sqrt(in_features), 1/sqrt(in_features))
    (kaiming_uniform_ with a = sqrt(5) for the weight, drawn first, then the bias), in
    ``dtype`` (the default dtype if None).

    >>> import chainrule as cr
    >>> layer = Linear(2, 4)
    >>> layer
    Linear(in_features=2, out_features=4, bias=True)
    >>> layer(cr.ones(3, 2)).shape
    (3, 4)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(zeros(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(zeros(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again from PyTorch's default distributions."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """y = x1ᵀ A x2 + b for each output: weight (out_features, in1_features, in2_features).

    Weight and bias start U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as PyTorch.

    >>> import chainrule as cr
    >>> layer = Bilinear(2, 3, 4)
    >>> layer(cr.ones(5, 2), cr.ones(5, 3)).shape
    (5, 4)
    """

    def __init__(
        self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
        dtype=None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(zeros(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(zeros(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again from U(-1/sqrt(in1), 1/sqrt(in1))."""
        bound = 1 / math.sqrt(self.in1_features) if self.in1_features > 0 else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
