"""CosineSimilarity and PairwiseDistance, the modules of `chainrule.nn.functional`'s
`cosine_similarity` and `pairwise_distance`."""

from __future__ import annotations

from ..._tensor import Tensor
from ..functional import cosine_similarity, pairwise_distance
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """`cosine_similarity` along ``dim`` as a module.

    >>> import chainrule as cr
    >>> CosineSimilarity(dim=0)(cr.tensor([1.0, 0.0]), cr.tensor([0.0, 2.0]))
    tensor(0.)
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """`pairwise_distance` as a module: the p-norm of x1 - x2 (+ eps) over the last dim.

    >>> import chainrule as cr
    >>> PairwiseDistance(eps=0.0)(cr.tensor([[1.0, 1.0]]), cr.tensor([[1.0, 3.0]]))
    tensor([2.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
