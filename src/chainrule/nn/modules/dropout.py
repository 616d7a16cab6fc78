"""Dropout modules: Dropout, Dropout1d/2d/3d (whole channels), AlphaDropout and
FeatureAlphaDropout; random while training, the identity in eval mode. The functions are in
`chainrule.nn.functional.dropout_functions`."""

from __future__ import annotations

from ..._tensor import Tensor
from .. import functional as F
from ..functional._checks import _check_probability
from .module import Module

__all__ = [
    "AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
]  # fmt: skip


class Dropout(Module):
    """Zero elements with probability ``p`` and scale the rest by 1 / (1 - p) while training;
    the identity in eval mode.

    >>> import chainrule as cr
    >>> layer = Dropout(0.5).eval()
    >>> layer(cr.ones(2))
    tensor([1., 1.])
    >>> layer
    Dropout(p=0.5, inplace=False)
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p = _check_probability(p, "Dropout")
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability ``p`` while
    training (`functional.dropout1d`).

    >>> Dropout1d(0.2)
    Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """Zero whole channels of (N, C, H, W) or (C, H, W) inputs with probability ``p`` while
    training (`functional.dropout2d`).

    >>> import chainrule as cr
    >>> Dropout2d().eval()(cr.ones(1, 1, 2, 2)).shape
    (1, 1, 2, 2)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability ``p``
    while training (`functional.dropout3d`).

    >>> Dropout3d(0.2)
    Dropout3d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """`functional.alpha_dropout` while training (keeps SELU's mean 0 and variance 1); the
    identity in eval mode.

    >>> import chainrule as cr
    >>> AlphaDropout(0.5).eval()(cr.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """`functional.feature_alpha_dropout` (whole channels) while training.

    >>> FeatureAlphaDropout(0.2)
    FeatureAlphaDropout(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
