"""Instance normalisation: InstanceNorm1d, InstanceNorm2d and InstanceNorm3d, each channel of
each example normalised on its own (running statistics only when asked for). The arithmetic
is `chainrule.nn.functional.instance_norm`."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...errors import ShapeError, fmt_shape
from .. import functional as F
from .batchnorm import _BatchNorm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


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


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) inputs (see
    `InstanceNorm1d`).

    >>> InstanceNorm3d(3)
    InstanceNorm3d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _input_dims = (5, 4)
