"""The layer functions PyTorch also has at its top level (``torch.batch_norm``,
``torch.layer_norm``, ``torch.embedding``...), with those functions' own positional
signatures, which differ from ``torch.nn.functional``'s: weight before the running statistics
in ``batch_norm``, the weight before the indices in ``embedding``, trailing cuDNN flags
(accepted and ignored). `chainrule` re-exports this module's ``__all__``."""

from __future__ import annotations

from collections.abc import Sequence

from .._tensor import Tensor
from .functional import bilinear, pixel_shuffle, pixel_unshuffle, rms_norm
from .norms import batch_norm as _batch_norm
from .norms import group_norm as _group_norm
from .norms import instance_norm as _instance_norm
from .norms import layer_norm as _layer_norm
from .sparse import embedding as _embedding

__all__ = [
    "batch_norm", "bilinear", "embedding", "group_norm", "instance_norm", "layer_norm",
    "pixel_shuffle", "pixel_unshuffle", "rms_norm",
]  # fmt: skip


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
