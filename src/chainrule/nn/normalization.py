"""Normalisation layers: BatchNorm1d, BatchNorm2d, InstanceNorm1d and InstanceNorm2d (running
statistics as buffers), LayerNorm, GroupNorm and RMSNorm. The arithmetic is in
`chainrule.nn.norms`; here live the weights and modes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._tensor import Tensor
from ..autograd import no_grad
from ..creation import ones, tensor, zeros
from ..dtypes import int64
from ..errors import DomainError, ShapeError, fmt_shape
from . import functional as F
from . import init
from .module import Module, Parameter
from .norms import cross_map_lrn2d

__all__ = [
    "BatchNorm1d", "BatchNorm2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "LayerNorm",
    "RMSNorm", "BatchNorm3d", "CrossMapLRN2d", "InstanceNorm3d", "LocalResponseNorm",
]  # fmt: skip


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


class _BatchNorm(Module):
    """What BatchNorm1d and BatchNorm2d share; they differ in the input dims they accept."""

    _input_dims: tuple[int, ...] = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _add_affine(self, (num_features,), affine, bias)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features))
            self.register_buffer("running_var", ones(num_features))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, and the weight to 1 and bias to 0."""
        self.reset_running_stats()
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        name = type(self).__name__
        ndim = len(np.shape(input))
        if ndim not in self._input_dims:
            wanted = " or ".join(f"{n}D" for n in self._input_dims)
            raise ShapeError(f"{name}: expected {wanted} input, got shape {fmt_shape(input.shape)}")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative average over every batch so far
                momentum = 1.0 / int(self.num_batches_tracked.item())
        # Batch statistics in training, and in eval when no running ones are kept.
        use_batch = self.training or self.running_mean is None
        # The buffers go in to be read (eval) or updated (training while tracking).
        pass_buffers = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if pass_buffers else None,
            self.running_var if pass_buffers else None,
            self.weight,
            self.bias,
            use_batch,
            momentum,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) inputs, per channel C.

    Training normalises with the batch's mean and biased variance and updates the buffers
    ``running_mean``, ``running_var`` (unbiased) and ``num_batches_tracked``; eval uses the
    running values. ``momentum=None`` keeps a cumulative average instead of an exponential one.

    >>> import chainrule as cr
    >>> layer = BatchNorm1d(2)
    >>> layer(cr.tensor([[1.0, 2.0], [3.0, 6.0]]))
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]], grad_fn=<AddBackward>)
    >>> layer.running_mean, layer.num_batches_tracked
    (tensor([0.2000, 0.4000]), tensor(1))
    """

    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W) inputs, per channel C (see `BatchNorm1d`).

    >>> BatchNorm2d(8, momentum=None)
    BatchNorm2d(8, eps=1e-05, momentum=None, affine=True, bias=True, track_running_stats=True)
    """

    _input_dims = (4,)


class LayerNorm(Module):
    """Normalise over the last dims (``normalized_shape``), then an elementwise affine map.

    ``weight`` starts at 1 and ``bias`` at 0; ``bias=False`` or ``elementwise_affine=False``
    leave them out.

    >>> import chainrule as cr
    >>> LayerNorm(2)(cr.tensor([[1.0, 3.0]]))
    tensor([[-1.0000,  1.0000]], grad_fn=<AddBackward>)
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


class _InstanceNorm(_BatchNorm):
    """What InstanceNorm1d and InstanceNorm2d share: per-example statistics; the running
    ones (``track_running_stats``) are used in eval mode only."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats)

    def forward(self, input: Tensor) -> Tensor:
        name = type(self).__name__
        ndim = len(np.shape(input))
        batched, unbatched = self._input_dims
        if ndim not in self._input_dims:
            raise ShapeError(
                f"{name}: expected {batched}D or unbatched {unbatched}D input, got shape "
                f"{fmt_shape(np.shape(input))}"
            )
        if ndim == unbatched:
            return self.forward(input.unsqueeze(0)).squeeze(0)
        if np.shape(input)[1] != self.num_features and self.affine:
            raise ShapeError(
                f"{name}: expected {self.num_features} channels (dim 1), got input of shape "
                f"{fmt_shape(np.shape(input))}"
            )
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            0.0 if self.momentum is None else self.momentum, self.eps,
        )  # fmt: skip


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) inputs: each channel of each example
    over its length. No affine weights and no running statistics by default.

    >>> import chainrule as cr
    >>> InstanceNorm1d(1)(cr.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """

    _input_dims = (3, 2)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) inputs (see `InstanceNorm1d`).

    >>> InstanceNorm2d(4, affine=True)
    InstanceNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=False)
    """

    _input_dims = (4, 3)


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


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) inputs, per channel C (see `BatchNorm1d`).

    >>> import chainrule
    >>> BatchNorm3d(2)(chainrule.randn(3, 2, 2, 2, 2)).shape
    (3, 2, 2, 2, 2)
    """

    _input_dims = (5,)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) inputs (see
    `InstanceNorm1d`).

    >>> InstanceNorm3d(3)
    InstanceNorm3d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _input_dims = (5, 4)


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
    ``torch.nn.CrossMapLRN2d``: its own channel windows (see `chainrule.nn.norms.cross_map_lrn2d`),
    which differ from `LocalResponseNorm`'s. Values match PyTorch; the gradient is the exact
    derivative (PyTorch's hand-written backward fails for batches of more than one).

    >>> CrossMapLRN2d(3)
    CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)
