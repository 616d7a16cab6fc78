"""Layers with weights or randomness (Linear, Bilinear, Dropout), the shape layers (Identity,
Flatten, Unflatten) and the loss modules.

Each initialises its weights as PyTorch does, with `chainrule.nn.init` and chainrule's
generator. Activations are in `nn.activation`, norms in `nn.normalization`, attention in
`nn.attention`; the arithmetic of all of them is in `nn.functional`.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ..creation import zeros
from ..errors import DomainError, fmt_shape
from . import functional as F
from . import init
from ._checks import _check_probability, _check_reduction
from .losses import _legacy_reduction
from .module import Module, Parameter

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Flatten",
    "HuberLoss", "Identity", "L1Loss", "Linear", "MSELoss", "NLLLoss", "SmoothL1Loss",
    "Bilinear", "CosineEmbeddingLoss", "Dropout1d", "Dropout2d", "KLDivLoss",
    "MarginRankingLoss", "TripletMarginLoss", "Unflatten",
]  # fmt: skip


class Linear(Module):
    """y = x @ weight.T + bias, with weight of shape (out_features, in_features).

    Weight and bias start as PyTorch's: U(-1/sqrt(in_features), 1/sqrt(in_features))
    (kaiming_uniform_ with a = sqrt(5) for the weight).

    >>> import chainrule as cr
    >>> layer = Linear(2, 4)
    >>> layer
    Linear(in_features=2, out_features=4, bias=True)
    >>> layer(cr.ones(3, 2)).shape
    (3, 4)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(zeros(out_features, in_features))
        if bias:
            self.bias = Parameter(zeros(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again from PyTorch's default distributions."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """y = x1ᵀ A x2 + b for each output: weight (out_features, in1_features, in2_features).

    Weight and bias start U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as PyTorch.

    >>> import chainrule as cr
    >>> layer = Bilinear(2, 3, 4)
    >>> layer(cr.ones(5, 2), cr.ones(5, 3)).shape
    (5, 4)
    """

    def __init__(
        self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
        dtype=None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(zeros(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(zeros(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias again from U(-1/sqrt(in1), 1/sqrt(in1))."""
        bound = 1 / math.sqrt(self.in1_features) if self.in1_features > 0 else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


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


# Losses: each stores its options (and class weights as buffers, as PyTorch does).


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


class Identity(Module):
    """Returns its input unchanged (a placeholder layer).

    >>> import chainrule
    >>> Identity()(chainrule.tensor([1.0]))
    tensor([1.])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, x):
        return x


class Flatten(Module):
    """Merges dimensions ``start_dim``..``end_dim`` into one (by default all but the batch).

    >>> import chainrule
    >>> Flatten()(chainrule.zeros(2, 3, 4)).shape
    (2, 12)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        ndim = max(len(shape), 1)
        start, end = self.start_dim % ndim, self.end_dim % ndim
        if start > end:
            raise DomainError(
                f"Flatten: start_dim {self.start_dim} comes after end_dim {self.end_dim} for "
                f"an input of shape {fmt_shape(shape)}"
            )
        merged = int(np.prod(shape[start : end + 1], dtype=np.int64))
        return x.reshape(*shape[:start], merged, *shape[end + 1 :])

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size`` (one entry may be -1).

    >>> import chainrule
    >>> Unflatten(1, (2, 3))(chainrule.zeros(4, 6)).shape
    (4, 2, 3)
    """

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
