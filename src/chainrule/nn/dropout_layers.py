"""More dropout modules: Dropout3d, AlphaDropout and FeatureAlphaDropout (Dropout, Dropout1d and
Dropout2d are in `chainrule.nn.layers`; the functions in `chainrule.nn.dropouts`)."""

from __future__ import annotations

from .._tensor import Tensor
from . import functional as F
from .layers import Dropout

__all__ = ["AlphaDropout", "Dropout3d", "FeatureAlphaDropout"]


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
