"""The loss modules, each storing its options (and class weights as buffers, as PyTorch
does) and calling its function in `chainrule.nn.functional` (`nn.functional.loss`,
`loss_ctc`, `loss_linear_cross_entropy`)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from ... import dtypes
from ..._tensor import Tensor
from ...errors import DomainError, ShapeError, fmt_shape
from .. import functional as F
from ..functional._checks import _check_reduction
from ..functional.loss import _legacy_reduction
from ..functional.loss_linear_cross_entropy import (
    LinearCrossEntropyOptions,
    linear_cross_entropy,
)
from .distance import PairwiseDistance
from .linear import Linear
from .module import Module

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
    "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
    "LinearCrossEntropyLoss", "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss",
    "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
]  # fmt: skip


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        _check_reduction(reduction, type(self).__name__)
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    """`functional.cross_entropy` as a module: logits against class indices or probabilities.

    >>> import chainrule as cr
    >>> loss = CrossEntropyLoss(label_smoothing=0.1)
    >>> round(loss(cr.tensor([[2.0, 0.0]]), cr.tensor([0])).item(), 4)
    0.2269
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing
        )


class NLLLoss(_Loss):
    """`functional.nll_loss` as a module: log-probabilities against class indices.

    >>> import chainrule as cr
    >>> NLLLoss()(cr.tensor([[-1.0, -2.0]]), cr.tensor([1]))
    tensor(2.)
    """

    def __init__(
        self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean"
    ) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class BCELoss(_Loss):
    """`functional.binary_cross_entropy` as a module: probabilities against targets.

    >>> import chainrule as cr
    >>> round(BCELoss()(cr.tensor([0.5]), cr.tensor([0.0])).item(), 4)
    0.6931
    """

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """`functional.binary_cross_entropy_with_logits` as a module: logits against targets.

    >>> import chainrule as cr
    >>> round(BCEWithLogitsLoss()(cr.tensor([0.0]), cr.tensor([0.0])).item(), 4)
    0.6931
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, self.reduction, self.pos_weight
        )


class MSELoss(_Loss):
    """Mean (or summed) squared error.

    >>> import chainrule as cr
    >>> MSELoss()(cr.tensor([1.0, 3.0]), cr.tensor([0.0, 0.0]))
    tensor(5.)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """Mean (or summed) absolute error.

    >>> import chainrule as cr
    >>> L1Loss(reduction="sum")(cr.tensor([1.0, -3.0]), cr.tensor([0.0, 0.0]))
    tensor(4.)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, self.reduction)


class HuberLoss(_Loss):
    """Squared error below ``delta``, linear above it (`functional.huber_loss`).

    >>> import chainrule as cr
    >>> HuberLoss(delta=2.0)(cr.tensor([3.0]), cr.tensor([0.0]))
    tensor(4.)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, self.reduction, self.delta)


class SmoothL1Loss(_Loss):
    """Huber loss divided by ``beta`` (`functional.smooth_l1_loss`).

    >>> import chainrule as cr
    >>> SmoothL1Loss(beta=2.0)(cr.tensor([3.0]), cr.tensor([0.0]))
    tensor(2.)
    """

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class _LegacyLoss(_Loss):
    """A loss that also takes PyTorch's deprecated size_average and reduce."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        Module.__init__(self)
        op = "kl_div" if isinstance(self, KLDivLoss) else type(self).__name__
        self.reduction = _legacy_reduction(size_average, reduce, reduction, op)


class KLDivLoss(_LegacyLoss):
    """`functional.kl_div` as a module: log-probabilities against a target distribution
    (``reduction="batchmean"`` gives the KL divergence per example).

    >>> import chainrule as cr
    >>> KLDivLoss(reduction="sum")(cr.tensor([0.5, 0.5]).log(), cr.tensor([0.5, 0.5]))
    tensor(0.)
    """

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_LegacyLoss):
    """`functional.margin_ranking_loss` as a module.

    >>> import chainrule as cr
    >>> MarginRankingLoss(margin=1.0)(cr.tensor([2.0]), cr.tensor([0.0]), cr.tensor([1.0]))
    tensor(0.)
    """

    def __init__(
        self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_LegacyLoss):
    """`functional.cosine_embedding_loss` as a module.

    >>> import chainrule as cr
    >>> CosineEmbeddingLoss()(cr.tensor([[1.0, 0.0]]), cr.tensor([[2.0, 0.0]]), cr.tensor([1]))
    tensor(0.)
    """

    def __init__(
        self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(
            input1, input2, target, self.margin, reduction=self.reduction
        )


class TripletMarginLoss(_LegacyLoss):
    """`functional.triplet_margin_loss` as a module.

    >>> import chainrule as cr
    >>> TripletMarginLoss(eps=0.0)(cr.zeros(1, 2), cr.zeros(1, 2), cr.ones(1, 2))
    tensor(0.)
    """

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(
            anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
            reduction=self.reduction,
        )  # fmt: skip


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


class LinearCrossEntropyLoss(_Loss):
    """`linear_cross_entropy` with its own `Linear` layer (``self.linear``), which maps
    in_features to ``num_classes`` logits (times ``out_features`` for a K-dimensional loss).

    The layer's weight is stored flat, (num_classes * prod(out_features), in_features), as
    PyTorch's, so state dicts carry over; ``forward`` reshapes it. ``weight`` (per-class
    rescaling, shape (num_classes,)) is a buffer; ``options`` is accepted and ignored (see
    `LinearCrossEntropyOptions`).

    >>> import chainrule as cr
    >>> loss = LinearCrossEntropyLoss(5, 10, out_features=(4, 3))
    >>> loss(cr.randn(2, 5), cr.randint(0, 10, (2, 4, 3))).shape
    ()
    >>> loss.linear.weight.shape
    (120, 5)
    """

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device=None,
        dtype=None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        if weight is not None and np.shape(weight) != (num_classes,):
            raise ShapeError(
                f"LinearCrossEntropyLoss: weight must have shape ({num_classes},), one per "
                f"class, got {fmt_shape(np.shape(weight))}"
            )
        if not 0 <= label_smoothing <= 1:
            raise DomainError(
                f"LinearCrossEntropyLoss: label_smoothing must lie in [0, 1], got "
                f"{label_smoothing!r}"
            )
        if device is not None:
            dtypes.device(device)  # only the CPU is accepted
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(self.out_features, start=num_classes), bias)
        if dtype is not None:
            self.linear.to(dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        logical = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return linear_cross_entropy(
            input,
            self.linear.weight.reshape(*logical, self.linear.in_features),
            target,
            linear_bias=None if bias is None else bias.reshape(logical),
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
