"""``torch.nn.attention``: the names programs use to pick a scaled-dot-product-attention
kernel. chainrule has one implementation (`nn.functional.scaled_dot_product_attention`, on the
CPU), so picking a kernel is accepted and changes nothing."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator

from ...errors import DTypeError

__all__ = ["WARN_FOR_UNFUSED_KERNELS", "SDPBackend", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False
"""PyTorch's switch for warnings about why a fused kernel was not used; chainrule has none."""


class SDPBackend(enum.IntEnum):
    """The attention kernels PyTorch can choose between, with PyTorch's names and numbers.

    >>> SDPBackend.FLASH_ATTENTION
    <SDPBackend.FLASH_ATTENTION: 1>
    """

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(
    backends: list[SDPBackend] | SDPBackend, set_priority: bool = False
) -> Iterator[None]:
    """Run the block with the given attention ``backends`` (one or a list, in priority order
    with ``set_priority``) chosen, as PyTorch's context manager.

    chainrule has a single CPU implementation of `scaled_dot_product_attention`, the one every
    backend would run, so the choice is checked and then changes nothing: programs that pick a
    kernel run unchanged with the same results.

    >>> import chainrule
    >>> import chainrule.nn.functional as F
    >>> q = chainrule.ones(1, 2, 4)
    >>> with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
    ...     out = F.scaled_dot_product_attention(q, q, q)
    >>> out.shape
    (1, 2, 4)
    """
    chosen = [backends] if isinstance(backends, SDPBackend) else backends
    if not isinstance(chosen, list) or not all(isinstance(b, SDPBackend) for b in chosen):
        raise DTypeError(
            "sdpa_kernel: backends must be an SDPBackend or a list of them, got "
            f"{type(backends).__name__}"
        )
    yield
