"""Batch normalisation: BatchNorm1d, BatchNorm2d and BatchNorm3d, each channel normalised over
the batch, with running statistics as buffers for evaluation mode. The arithmetic is
`chainrule.nn.functional.batch_norm`."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...autograd import no_grad
from ...creation import ones, tensor, zeros
from ...dtypes import int64
from ...errors import ShapeError, fmt_shape
from .. import functional as F
from .module import Module
from .normalization import _add_affine, _reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


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
            [ 1.0000,  1.0000]], grad_fn=<BatchNormBackward>)
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


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) inputs, per channel C (see `BatchNorm1d`).

    >>> import chainrule
    >>> BatchNorm3d(2)(chainrule.randn(3, 2, 2, 2, 2)).shape
    (3, 2, 2, 2, 2)
    """

    _input_dims = (5,)
