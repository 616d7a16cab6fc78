"""AdaptiveLogSoftmaxWithLoss: a softmax over many classes made cheap by splitting them into
a frequent shortlist (in the head) and rarer clusters, each behind a smaller projection
(Grave et al., "Efficient softmax approximation for GPUs", 2017)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...errors import DomainError, OutOfRangeError, ShapeError, fmt_shape
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]


class ASMOutput(NamedTuple):
    """What `AdaptiveLogSoftmaxWithLoss` returns: each target's log-probability, and the
    mean negative log-likelihood."""

    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of ``n_classes`` classes split at ``cutoffs``: classes below
    cutoffs[0] are scored by the head directly; cluster i (cutoffs[i] to cutoffs[i + 1]) by
    the head's score of the cluster plus a softmax over a projection of width
    in_features // div_value**(i + 1). Parameters and their names are PyTorch's, so a
    state_dict moves between the two.

    ``forward(input, target)`` gives (output, loss); `log_prob` the full (N, n_classes)
    log-probabilities, `predict` the most likely class.

    >>> import chainrule as cr
    >>> asm = AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8])
    >>> out = asm(cr.randn(3, 8), cr.tensor([0, 5, 9]))
    >>> out.output.shape, out.loss.shape, asm.log_prob(cr.randn(3, 8)).exp().sum(1).shape
    ((3,), (), (3,))
    """

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if (not cutoffs or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0
                or max(cutoffs) > n_classes - 1 or len(set(cutoffs)) != len(cutoffs)
                or any(int(c) != c for c in cutoffs)):  # fmt: skip
            raise DomainError(
                f"AdaptiveLogSoftmaxWithLoss: cutoffs {cutoffs} must be a non-empty, increasing "
                f"sequence of unique integers between 1 and n_classes - 1 = {n_classes - 1}"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            projection = (
                Linear(in_features, hidden, bias=False, dtype=dtype),
                Linear(hidden, size, bias=False, dtype=dtype),
            )
            self.tail.append(Sequential(*projection))

    def reset_parameters(self) -> None:
        """Draw every weight again, as a new module would."""
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input: Tensor, target: Tensor) -> ASMOutput:
        t = np.asarray(target._array if isinstance(target, Tensor) else target)
        shape = np.shape(input)
        if t.ndim > 1 or len(shape) != t.ndim + 1 or (t.ndim == 1 and shape[0] != t.shape[0]):
            raise ShapeError(
                f"AdaptiveLogSoftmaxWithLoss: input of shape {fmt_shape(shape)} and target of "
                f"shape {fmt_shape(t.shape)}: expected (N, in_features) with (N,), or "
                "(in_features,) with ()"
            )
        batched = t.ndim == 1
        x = input if batched else input.unsqueeze(0)
        t = t.reshape(-1)
        if t.size and (t.min() < 0 or t.max() >= self.n_classes):
            raise OutOfRangeError(
                f"AdaptiveLogSoftmaxWithLoss: target values must lie in [0, "
                f"{self.n_classes - 1}], found [{int(t.min())}, {int(t.max())}]"
            )
        # Each row's entry in the head: its class if in the shortlist, else its cluster.
        cluster = np.searchsorted(self.cutoffs, t, side="right")  # 0: shortlist
        head_index = np.where(cluster == 0, t, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(x), 1)
        output = head_logprob.gather(1, head_index[:, None]).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = np.flatnonzero(cluster == i)
            if not rows.size:
                continue
            relative = t[rows] - self.cutoffs[i - 1]
            local = F.log_softmax(self.tail[i - 1](x[Tensor._make(rows)]), 1)
            picked = local.gather(1, relative[:, None]).squeeze(1)
            output = ops.index_add(output, 0, Tensor._make(rows), picked)
        loss = (-output).mean()
        return ASMOutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, 1)
        pieces = [head_logprob[:, : self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            within = F.log_softmax(projection(input), 1)
            pieces.append(within + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return ops.cat(pieces, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """The log-probabilities of every class, (N, n_classes).

        >>> import chainrule as cr
        >>> asm = AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[3])
        >>> round(asm.log_prob(cr.randn(2, 4)).exp().sum(1).tolist()[0], 6)
        1.0
        """
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (int64, (N,)): the same as
        ``log_prob(input).argmax(1)``, but computing the clusters only for rows whose head
        prefers a cluster to every shortlist class.

        >>> import chainrule as cr
        >>> AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[3]).predict(cr.randn(5, 4)).shape
        (5,)
        """
        head_output = self.head(input)
        best = np.argmax(head_output._array, axis=1)
        outside = np.flatnonzero(best >= self.shortlist_size)
        if outside.size:
            rows = Tensor._make(outside)
            full = self._full_log_prob(input[rows], head_output[rows])
            best[outside] = np.argmax(full._array, axis=1)
        return Tensor._make(best.astype(np.int64))
