"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm and CrossMapLRN2d, and the affine weights
every normalisation layer shares. BatchNorm and InstanceNorm are in `nn.modules.batchnorm` and
`nn.modules.instancenorm`; the arithmetic in `chainrule.nn.functional.normalization`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._tensor import Tensor
from ...creation import ones, zeros
from ...errors import DomainError
from .. import functional as F
from .. import init
from ..functional.normalization import cross_map_lrn2d
from ..parameter import Parameter
from .module import Module

__all__ = ["CrossMapLRN2d", "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


def _add_affine(layer: Module, shape: tuple, weight: bool, bias: bool, dtype=None) -> None:
    """A normalisation layer's scale ``weight`` (ones) and shift ``bias`` (zeros) of ``shape``;
    one the layer goes without is registered as None, as PyTorch registers it."""
    scale = Parameter(ones(*shape, dtype=dtype)) if weight else None
    shift = Parameter(zeros(*shape, dtype=dtype)) if weight and bias else None
    layer.register_parameter("weight", scale)
    layer.register_parameter("bias", shift)


def _reset_affine(layer: Module) -> None:
    """Weight back to 1 and bias back to 0, where the layer has them."""
    if layer.weight is not None:
        init.ones_(layer.weight)
    if layer.bias is not None:
        init.zeros_(layer.bias)


class LayerNorm(Module):
    """Normalise over the last dims (``normalized_shape``), then an elementwise affine map.

    ``weight`` starts at 1 and ``bias`` at 0; ``bias=False`` or ``elementwise_affine=False``
    leave them out.

    >>> import chainrule as cr
    >>> LayerNorm(2)(cr.tensor([[1.0, 3.0]]))
    tensor([[-1.0000,  1.0000]], grad_fn=<LayerNormBackward>)
    >>> LayerNorm((3, 4), bias=False)
    LayerNorm((3, 4), eps=1e-05, elementwise_affine=True, bias=False)
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _add_affine(self, self.normalized_shape, elementwise_affine, bias)

    def reset_parameters(self) -> None:
        """Weight back to 1, bias to 0."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Group normalisation: channels split into ``num_groups`` groups, each normalised over
    its channels and spatial dims; then a per-channel affine map (weight 1, bias 0 at first).

    >>> import chainrule as cr
    >>> GroupNorm(2, 4)(cr.tensor([[1.0, 3.0, 0.0, 4.0]]))
    tensor([[-1.0000,  1.0000, -1.0000,  1.0000]], grad_fn=<AddBackward>)
    >>> GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    def __init__(
        self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
        bias: bool = True, dtype=None,
    ) -> None:  # fmt: skip
        super().__init__()
        if num_groups < 1 or num_channels % num_groups:
            raise DomainError(
                f"GroupNorm: num_channels={num_channels} must be divisible by "
                f"num_groups={num_groups}"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _add_affine(self, (num_channels,), affine, bias, dtype)

    def reset_parameters(self) -> None:
        """Weight back to 1, bias to 0."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """x / sqrt(mean(x²) + eps) over the last dims (``normalized_shape``), times ``weight``
    (starting at 1). ``eps=None`` takes the input dtype's machine epsilon.

    >>> import chainrule as cr
    >>> RMSNorm(2, eps=0.0)(cr.tensor([[3.0, -4.0]]))
    tensor([[ 0.8485, -1.1314]], grad_fn=<MulBackward>)
    >>> RMSNorm([2, 3], elementwise_affine=False)
    RMSNorm((2, 3), eps=None, elementwise_affine=False)
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        dtype=None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Weight back to 1."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LocalResponseNorm(Module):
    """Each element divided by (k + alpha * mean of squares over ``size`` neighbouring
    channels) ** beta; see `chainrule.nn.functional.local_response_norm`.

    >>> import chainrule
    >>> LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    >>> LocalResponseNorm(2, alpha=1.0, beta=1.0)(chainrule.tensor([[[2.0], [0.0]]]))
    tensor([[[0.6667],
             [0.0000]]])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """Lua Torch's local response normalisation of (N, C, H, W) inputs, as
    ``torch.nn.CrossMapLRN2d``: its own channel windows (see
    `chainrule.nn.functional.normalization.cross_map_lrn2d`), which differ from
    `LocalResponseNorm`'s. Values match PyTorch; the gradient is the exact
    derivative (PyTorch's hand-written backward fails for batches of more than one).

    >>> CrossMapLRN2d(3)
    CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)
