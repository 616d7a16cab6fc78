"""ChannelShuffle: the channels regrouped as `chainrule.channel_shuffle` (for grouped
convolutions)."""

from __future__ import annotations

from ..._tensor import Tensor
from ...ops import channel_shuffle
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """The channels of (N, C, ...) inputs regrouped as `chainrule.channel_shuffle`, as
    ``torch.nn.ChannelShuffle``.

    >>> import chainrule
    >>> ChannelShuffle(2)
    ChannelShuffle(groups=2)
    >>> ChannelShuffle(2)(chainrule.arange(4.0).reshape(1, 4, 1)).flatten()
    tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
