"""The memory-format converters of ``torch.nn.utils.memory_format``, as no-ops: NumPy arrays
have no channels-last layout."""

from __future__ import annotations

from typing import Any

from ..modules.module import ModuleT

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module: ModuleT, memory_format: Any) -> ModuleT:
    """Return ``module`` unchanged: PyTorch re-lays the weights of its 2-D convolutions in
    ``memory_format`` (e.g. channels-last); NumPy arrays here have no such layout choice.

    >>> import chainrule
    >>> layer = chainrule.nn.Conv2d(1, 1, 3)
    >>> convert_conv2d_weight_memory_format(layer, "channels_last") is layer
    True
    """
    return module


def convert_conv3d_weight_memory_format(module: ModuleT, memory_format: Any) -> ModuleT:
    """Return ``module`` unchanged (no memory formats in NumPy; see
    `convert_conv2d_weight_memory_format`).

    >>> import chainrule
    >>> layer = chainrule.nn.Conv3d(1, 1, 3)
    >>> convert_conv3d_weight_memory_format(layer, "channels_last_3d") is layer
    True
    """
    return module
