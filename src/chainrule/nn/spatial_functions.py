"""The functional forms of the 3-D, Lp, fractional and unpooling layers, grid sampling, local
response normalisation, channel shuffling and the deprecated ``upsample*`` names, gathered for
`chainrule.nn.functional` (which re-exports this module's ``__all__``). The arithmetic is in
`chainrule.ops.pooling`, `ops.grid`, `ops.conv` and `nn.norms`."""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from ..ops.conv import channel_shuffle, conv_transpose3d
from ..ops.grid import (
    GRID_SAMPLE_INTERPOLATION_MODES,
    GRID_SAMPLE_PADDING_MODES,
    affine_grid,
    grid_sample,
)
from ..ops.pooling import (
    adaptive_avg_pool3d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool3d,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from .multihead import multi_head_attention_forward
from .norms import local_response_norm
from .sampling import interpolate

__all__ = [
    "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "adaptive_avg_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "affine_grid", "avg_pool3d", "channel_shuffle",
    "conv_transpose3d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "grid_sample",
    "local_response_norm", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices", "max_unpool1d",
    "max_unpool2d", "max_unpool3d", "multi_head_attention_forward", "upsample",
    "upsample_bilinear", "upsample_nearest",
]  # fmt: skip


def _deprecated(name: str, instead: str) -> None:
    warnings.warn(f"nn.functional.{name} is deprecated; use {instead}", UserWarning, stacklevel=3)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:  # fmt: skip
    """`interpolate` under its old name (deprecated in PyTorch, which warns; so does this).

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample(cr.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    _deprecated("upsample", "nn.functional.interpolate")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """`interpolate` with mode "nearest" (deprecated in PyTorch, which warns; so does this).

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_nearest(cr.tensor([[[1.0, 2.0]]]), 3)
    tensor([[[1., 1., 2.]]])
    """
    _deprecated("upsample_nearest", "nn.functional.interpolate(..., mode='nearest')")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """`interpolate` with mode "bilinear" and align_corners=True (deprecated in PyTorch, which
    warns; so does this).

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_bilinear(cr.tensor([[[[0.0, 3.0]]]]), (1, 4))
    tensor([[[[0., 1., 2., 3.]]]])
    """
    _deprecated("upsample_bilinear", "nn.functional.interpolate(..., mode='bilinear')")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
