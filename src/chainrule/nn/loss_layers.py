"""More loss modules, each storing its options and calling its function in
`chainrule.nn.functional`: the margin and likelihood losses of `nn.losses_margin`, CTCLoss and
NLLLoss2d. The common ones (CrossEntropyLoss, MSELoss...) are in `chainrule.nn.layers`."""

from __future__ import annotations

import warnings
from collections.abc import Callable

from .._tensor import Tensor
from ..errors import DomainError
from . import functional as F
from .distance import PairwiseDistance
from .layers import NLLLoss, _LegacyLoss, _Loss
from .losses import _legacy_reduction

__all__ = [
    "CTCLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss2d", "PoissonNLLLoss",
    "SoftMarginLoss", "TripletMarginWithDistanceLoss",
]  # fmt: skip


class HingeEmbeddingLoss(_LegacyLoss):
    """`functional.hinge_embedding_loss` as a module.

    >>> import chainrule as cr
    >>> HingeEmbeddingLoss(margin=2.0)(cr.tensor([0.5, 0.5]), cr.tensor([1, -1]))
    tensor(1.)
    """

    def __init__(
        self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_LegacyLoss):
    """`functional.soft_margin_loss` as a module.

    >>> import chainrule as cr
    >>> SoftMarginLoss()(cr.tensor([0.0]), cr.tensor([1.0]))
    tensor(0.6931)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelMarginLoss(_LegacyLoss):
    """`functional.multilabel_margin_loss` as a module.

    >>> import chainrule as cr
    >>> MultiLabelMarginLoss()(cr.tensor([[0.1, 0.2, 0.4, 0.8]]), cr.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_LegacyLoss):
    """`functional.multilabel_soft_margin_loss` as a module (``weight`` is a buffer).

    >>> import chainrule as cr
    >>> MultiLabelSoftMarginLoss()(cr.tensor([[0.0, 0.0]]), cr.tensor([[1.0, 0.0]]))
    tensor(0.6931)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)


class MultiMarginLoss(_LegacyLoss):
    """`functional.multi_margin_loss` as a module (``weight`` is a buffer).

    >>> import chainrule as cr
    >>> MultiMarginLoss()(cr.tensor([[0.1, 0.2, 0.4, 0.8]]), cr.tensor([3]))
    tensor(0.3250)
    """

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise DomainError(f"MultiMarginLoss: p must be 1 or 2, got {p!r}")
        self.p = p
        self.margin = margin
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(
            input, target, self.p, self.margin, self.weight, reduction=self.reduction
        )


class GaussianNLLLoss(_Loss):
    """`functional.gaussian_nll_loss` as a module: ``loss(input, target, var)``.

    >>> import chainrule as cr
    >>> GaussianNLLLoss(full=True)
    GaussianNLLLoss()
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class PoissonNLLLoss(_LegacyLoss):
    """`functional.poisson_nll_loss` as a module.

    >>> import chainrule as cr
    >>> PoissonNLLLoss()(cr.tensor([0.0]), cr.tensor([1.0]))
    tensor(1.)
    """

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average=None,
        eps: float = 1e-8,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(
            log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction
        )


class TripletMarginWithDistanceLoss(_Loss):
    """`functional.triplet_margin_with_distance_loss` as a module; a ``distance_function``
    that is a Module shows as a child, as in PyTorch.

    >>> import chainrule as cr
    >>> loss = TripletMarginWithDistanceLoss(margin=0.5)
    >>> loss(cr.zeros(1, 2), cr.zeros(1, 2), cr.ones(1, 2)).item() < 1e-5
    True
    """

    def __init__(
        self,
        *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction)
        if not margin > 0:
            raise DomainError(
                f"TripletMarginWithDistanceLoss: margin must be positive, got {margin!r}"
            )
        self.distance_function = (
            distance_function if distance_function is not None else PairwiseDistance()
        )
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction,
        )  # fmt: skip


class CTCLoss(_Loss):
    """`functional.ctc_loss` as a module: ``loss(log_probs, targets, input_lengths,
    target_lengths)``.

    >>> import chainrule as cr
    >>> lp = cr.full((2, 1, 2), 0.5).log()
    >>> CTCLoss(reduction="sum")(lp, cr.tensor([[1]]), [2], [1])
    tensor(0.2877)
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths, target_lengths) -> Tensor:
        return F.ctc_loss(
            log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
            self.zero_infinity,
        )  # fmt: skip


class NLLLoss2d(NLLLoss):
    """`NLLLoss` under its deprecated name (PyTorch warns too); it takes NLLLoss's arguments
    and the legacy ``size_average`` and ``reduce``.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     NLLLoss2d().reduction
    'mean'
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        warnings.warn(
            "NLLLoss2d is deprecated: use NLLLoss, which takes the same arguments",
            FutureWarning,
            stacklevel=2,
        )
        reduction = _legacy_reduction(size_average, reduce, reduction, "NLLLoss2d")
        super().__init__(weight, ignore_index, reduction)
