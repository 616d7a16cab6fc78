"""The activations, dropouts and losses PyTorch also has at top level (``torch.celu``,
``torch.dropout``, ``torch.kl_div``...), as ``chainrule.X``, with ``torch.X``'s own signatures:
the dropouts take ``(input, p, train)`` positionally and the losses take ``reduction`` as an
int (0 'none', 1 'mean', 2 'sum'), where `chainrule.nn.functional` takes the string.

The default reduction is 0 ('none'): that is what PyTorch 2.13's top-level losses do when it is
left out (``torch.kl_div(x, t)`` is unreduced, although the operator schema names Mean)."""

from __future__ import annotations

from .._tensor import Tensor
from ..errors import DomainError
from . import functional as F
from .distance import cosine_similarity, pairwise_distance, pdist
from .dropouts import feature_dropout as _feature_dropout

__all__ = [
    "alpha_dropout", "binary_cross_entropy_with_logits", "celu", "celu_", "cosine_embedding_loss",
    "cosine_similarity", "ctc_loss", "dropout", "feature_alpha_dropout", "feature_dropout",
    "hinge_embedding_loss", "kl_div", "margin_ranking_loss", "pairwise_distance", "pdist",
    "poisson_nll_loss", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
    "triplet_margin_loss",
]  # fmt: skip

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: int, op: str) -> str:
    if reduction not in _REDUCTIONS or isinstance(reduction, (bool, str)):
        raise DomainError(
            f"{op}: reduction must be an int here, 0 ('none'), 1 ('mean') or 2 ('sum'), got "
            f"{reduction!r}; chainrule.nn.functional.{op} takes the string"
        )
    return _REDUCTIONS[reduction]


# Dropouts: (input, p, train), all positional in PyTorch.


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """`nn.functional.dropout` as ``torch.dropout(input, p, train)``.

    >>> import chainrule as cr
    >>> dropout(cr.ones(2), 0.5, False)
    tensor([1., 1.])
    """
    return F.dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """`nn.functional.alpha_dropout` as ``torch.alpha_dropout(input, p, train)``.

    >>> import chainrule as cr
    >>> alpha_dropout(cr.ones(2), 0.5, False)
    tensor([1., 1.])
    """
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """`nn.functional.feature_alpha_dropout` as ``torch.feature_alpha_dropout(input, p,
    train)``.

    >>> import chainrule as cr
    >>> feature_alpha_dropout(cr.ones(1, 2), 0.5, False)
    tensor([[1., 1.]])
    """
    return F.feature_alpha_dropout(input, p, train)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout of whole channels (dim 1) of an (N, C, ...) input, as ``torch.feature_dropout``.

    >>> import chainrule as cr
    >>> feature_dropout(cr.ones(1, 2), 0.5, False)
    tensor([[1., 1.]])
    """
    return _feature_dropout(input, p, train)


# Activations.


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """`nn.functional.celu`, without ``inplace``.

    >>> import chainrule as cr
    >>> celu(cr.tensor([1.0]))
    tensor([1.])
    """
    return F.celu(input, alpha)


def selu(input: Tensor) -> Tensor:
    """`nn.functional.selu`, without ``inplace``.

    >>> import chainrule as cr
    >>> selu(cr.tensor([0.0]))
    tensor([0.])
    """
    return F.selu(input)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    generator=None,
) -> Tensor:
    """`nn.functional.rrelu`; a ``generator`` other than None is refused (the slopes come
    from `chainrule.default_generator()`).

    >>> import chainrule as cr
    >>> rrelu(cr.tensor([-1.0]), 0.5, 0.5)
    tensor([-0.5000])
    """
    if generator is not None:
        raise DomainError("rrelu: generator= is not supported; seed chainrule.manual_seed instead")
    return F.rrelu(input, lower, upper, training)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """`nn.functional.threshold`, without ``inplace``.

    >>> import chainrule as cr
    >>> threshold(cr.tensor([0.0, 2.0]), 1.0, 5.0)
    tensor([5., 2.])
    """
    return F.threshold(input, threshold, value)


celu_ = F.celu_
selu_ = F.selu_
rrelu_ = F.rrelu_
threshold_ = F.threshold_


# Losses, with reduction as an int.


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 0,
) -> Tensor:
    """`nn.functional.binary_cross_entropy_with_logits` with ``torch``'s argument order.

    >>> import chainrule as cr
    >>> binary_cross_entropy_with_logits(cr.tensor([0.0]), cr.tensor([1.0]), reduction=2)
    tensor(0.6931)
    """
    op = "binary_cross_entropy_with_logits"
    return F.binary_cross_entropy_with_logits(
        input, target, weight, _reduction(reduction, op), pos_weight
    )


def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 0
) -> Tensor:
    """`nn.functional.cosine_embedding_loss` with an int ``reduction``.

    >>> import chainrule as cr
    >>> cosine_embedding_loss(cr.tensor([[1.0, 0.0]]), cr.tensor([[1.0, 0.0]]), cr.tensor([1]))
    tensor([0.])
    """
    reduction = _reduction(reduction, "cosine_embedding_loss")
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=reduction)


def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0
) -> Tensor:
    """`nn.functional.hinge_embedding_loss` with an int ``reduction``.

    >>> import chainrule as cr
    >>> hinge_embedding_loss(cr.tensor([0.25]), cr.tensor([-1]))
    tensor([0.7500])
    """
    reduction = _reduction(reduction, "hinge_embedding_loss")
    return F.hinge_embedding_loss(input, target, margin, reduction=reduction)


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False):
    """`nn.functional.kl_div` with an int ``reduction`` (so no 'batchmean').

    >>> import chainrule as cr
    >>> kl_div(cr.tensor([0.5]).log(), cr.tensor([0.5]))
    tensor([0.])
    """
    reduction = _reduction(reduction, "kl_div")
    return F.kl_div(input, target, reduction=reduction, log_target=log_target)


def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 0
) -> Tensor:
    """`nn.functional.margin_ranking_loss` with an int ``reduction``.

    >>> import chainrule as cr
    >>> margin_ranking_loss(cr.tensor([1.0]), cr.tensor([2.0]), cr.tensor([1.0]))
    tensor([1.])
    """
    reduction = _reduction(reduction, "margin_ranking_loss")
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=reduction)


def poisson_nll_loss(
    input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float, reduction: int
) -> Tensor:
    """`nn.functional.poisson_nll_loss`; every argument is required, as in ``torch``.

    >>> import chainrule as cr
    >>> poisson_nll_loss(cr.tensor([0.0]), cr.tensor([1.0]), True, False, 1e-8, 1)
    tensor(1.)
    """
    reduction = _reduction(reduction, "poisson_nll_loss")
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2.0,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: int = 0,
) -> Tensor:
    """`nn.functional.triplet_margin_loss` with an int ``reduction``.

    >>> import chainrule as cr
    >>> triplet_margin_loss(cr.zeros(1, 2), cr.zeros(1, 2), cr.ones(1, 2), eps=0.0)
    tensor([0.])
    """
    reduction = _reduction(reduction, "triplet_margin_loss")
    return F.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction=reduction
    )


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: int = 0,
    zero_infinity: bool = False,
) -> Tensor:
    """`nn.functional.ctc_loss` with an int ``reduction``.

    >>> import chainrule as cr
    >>> lp = cr.full((2, 1, 2), 0.5).log()
    >>> ctc_loss(lp, cr.tensor([[1]]), [2], [1], reduction=2)
    tensor(0.2877)
    """
    reduction = _reduction(reduction, "ctc_loss")
    return F.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity
    )
