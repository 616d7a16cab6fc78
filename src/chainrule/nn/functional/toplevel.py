"""The functions PyTorch also has at its top level, with those spellings' own signatures, as
``chainrule.X`` (`chainrule` re-exports this module's ``__all__``); `chainrule.nn.functional`
has the ``torch.nn.functional`` forms they call.

The activations, dropouts and losses (``torch.celu``, ``torch.dropout``, ``torch.kl_div``...):
the dropouts take ``(input, p, train)`` positionally and the losses take ``reduction`` as an
int (0 'none', 1 'mean', 2 'sum'), where `chainrule.nn.functional` takes the string. The
default reduction is 0 ('none'): that is what PyTorch 2.13's top-level losses do when it is
left out (``torch.kl_div(x, t)`` is unreduced, although the operator schema names Mean).

The layer functions (``torch.batch_norm``, ``torch.layer_norm``, ``torch.embedding``...) take
their own positional orders, which differ from ``torch.nn.functional``'s: weight before the
running statistics in ``batch_norm``, the weight before the indices in ``embedding``, trailing
cuDNN flags (accepted and ignored).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._tensor import Tensor
from ...errors import DomainError
from .. import functional as F
from .distance import cosine_similarity, pairwise_distance, pdist
from .dropout_functions import feature_dropout as _feature_dropout
from .linear_functions import bilinear
from .normalization import batch_norm as _batch_norm
from .normalization import group_norm as _group_norm
from .normalization import instance_norm as _instance_norm
from .normalization import layer_norm as _layer_norm
from .normalization import rms_norm
from .pixelshuffle import pixel_shuffle, pixel_unshuffle
from .sparse import embedding as _embedding

__all__ = [
    "alpha_dropout", "binary_cross_entropy_with_logits", "celu", "celu_", "cosine_embedding_loss",
    "cosine_similarity", "ctc_loss", "dropout", "feature_alpha_dropout", "feature_dropout",
    "hinge_embedding_loss", "kl_div", "margin_ranking_loss", "pairwise_distance", "pdist",
    "poisson_nll_loss", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
    "triplet_margin_loss",
    "batch_norm", "bilinear", "embedding", "group_norm", "instance_norm", "layer_norm",
    "pixel_shuffle", "pixel_unshuffle", "rms_norm",
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


# Layer functions, in the positional order of their top-level spellings.


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:  # fmt: skip
    """``torch.batch_norm``: `chainrule.nn.functional.batch_norm` with the weight and bias
    first and every argument required; ``cudnn_enabled`` is ignored.

    >>> import chainrule as cr
    >>> batch_norm(cr.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 1e-5, False)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:  # fmt: skip
    """``torch.instance_norm``: `chainrule.nn.functional.instance_norm` with the weight and
    bias first and every argument required; ``cudnn_enabled`` is ignored.

    >>> import chainrule as cr
    >>> x = cr.tensor([[[1.0, 3.0]]])
    >>> instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
    tensor([[[-1.0000,  1.0000]]])
    """
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                          momentum, eps)  # fmt: skip


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:  # fmt: skip
    """``torch.group_norm``: `chainrule.nn.functional.group_norm` plus an ignored
    ``cudnn_enabled``.

    >>> import chainrule as cr
    >>> group_norm(cr.tensor([[1.0, 3.0]]), 1)
    tensor([[-1.0000,  1.0000]])
    """
    return _group_norm(input, num_groups, weight, bias, eps)


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int],
               weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:  # fmt: skip
    """``torch.layer_norm``: `chainrule.nn.functional.layer_norm` plus an ignored
    ``cudnn_enable``.

    >>> import chainrule as cr
    >>> layer_norm(cr.tensor([[1.0, 3.0]]), [2])
    tensor([[-1.0000,  1.0000]])
    """
    return _layer_norm(input, normalized_shape, weight, bias, eps)


def embedding(weight: Tensor, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:  # fmt: skip
    """``torch.embedding``: the rows of ``weight`` at ``indices`` (note the order: weight
    first, unlike `chainrule.nn.functional.embedding`); ``padding_idx=-1`` means none, else
    that row gets no gradient.

    >>> import chainrule as cr
    >>> embedding(cr.eye(3), cr.tensor([2, 0]))
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    return _embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                      scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)  # fmt: skip
