"""`ctc_loss`, the connectionist temporal classification loss of `chainrule.nn.functional`: the
forward (alpha) recursion in log space, composed from rows so that backward (the beta
recursion's work) and higher derivatives come from autograd. The other losses are in
`nn.functional.loss`; the module, CTCLoss, in `chainrule.nn.modules.loss`."""

from __future__ import annotations

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...errors import DTypeError, OutOfRangeError, ShapeError, fmt_dtype, fmt_shape
from ...observe import replayed_whole
from ._checks import _array, _check_reduction

__all__ = ["ctc_loss"]

#: Stands in for log(0) inside the recursion: logsumexp of -inf entries only would give a nan
#: gradient, while exp(_NEG - m) is exactly 0 for any real m. Impossible alignments are found
#: exactly, beforehand (`_feasible`), not by looking at this value.
_NEG = -1e30


def _lengths(lengths, batch: int, what: str) -> np.ndarray:
    out = np.asarray(_array(lengths) if isinstance(lengths, Tensor) else lengths).reshape(-1)
    if out.dtype.kind not in "iu" or out.shape != (batch,):
        raise ShapeError(
            f"ctc_loss: {what} must hold {batch} integer length(s), one per sequence, got "
            f"{out.tolist()!r}"
        )
    return out.astype(np.int64)


def _padded_targets(targets, target_lengths: np.ndarray, batch: int, unbatched: bool):
    """The targets as an (N, S) int array (S the longest target), whatever their layout."""
    t = _array(targets)
    if t.dtype.kind not in "iu":
        raise DTypeError(
            f"ctc_loss: targets must be class indices (int64), got {fmt_dtype(t.dtype)}"
        )
    if unbatched:
        t = t.reshape(1, -1)
    longest = int(target_lengths.max(initial=0))
    if t.ndim == 2 and t.shape[0] == batch:
        if t.shape[1] < longest:
            raise ShapeError(
                f"ctc_loss: targets of shape {fmt_shape(t.shape)} are shorter than the longest "
                f"target length {longest}"
            )
        return t[:, :longest]
    if t.ndim == 1 and t.size == target_lengths.sum():  # concatenated
        padded = np.zeros((batch, longest), np.int64)
        starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
        for n, (start, length) in enumerate(zip(starts, target_lengths)):
            padded[n, :length] = t[start : start + length]
        return padded
    raise ShapeError(
        f"ctc_loss: targets of shape {fmt_shape(t.shape)} fit neither an (N, S) padded layout "
        f"nor the {int(target_lengths.sum())} concatenated labels the target lengths sum to"
    )


def _feasible(labels: np.ndarray, target_lengths, input_lengths) -> np.ndarray:
    """Whether each target fits its input: it needs one frame per label plus one blank
    between each pair of equal neighbours."""
    repeats = np.array([np.sum(row[1:length] == row[: length - 1]) if length > 1 else 0
                        for row, length in zip(labels, target_lengths)])  # fmt: skip
    return input_lengths >= target_lengths + repeats


@replayed_whole(pure=True)  # a compiled step reads and checks new targets and lengths each time
def _alignment(targets, input_lengths, target_lengths, sizes: tuple, blank: int,
               unbatched: bool, dtype) -> tuple:  # fmt: skip
    """What the recursion reads, from the (checked) targets and lengths: the extended labels
    blank, l1, blank, l2, ..., blank as an index into log_probs, where a label may come from
    two places back, per step t >= 1 the sequences still running, the two end positions and
    whether each is allowed, the sequences without frames, the feasible ones, and the
    divisors of 'mean'."""
    steps, batch, classes = sizes
    input_lengths = _lengths(input_lengths, batch, "input_lengths")
    target_lengths = _lengths(target_lengths, batch, "target_lengths")
    if (input_lengths > steps).any() or (input_lengths < 0).any() or (target_lengths < 0).any():
        raise OutOfRangeError(
            f"ctc_loss: input_lengths {input_lengths.tolist()} must lie in [0, {steps}] (T) and "
            f"target_lengths {target_lengths.tolist()} be non-negative"
        )
    labels = _padded_targets(targets, target_lengths, batch, unbatched)
    listed = np.arange(labels.shape[1]) < target_lengths[:, None]
    if (listed & ((labels < 0) | (labels >= classes))).any():
        bad = int(labels[listed & ((labels < 0) | (labels >= classes))][0])
        raise OutOfRangeError(f"ctc_loss: target label {bad} is out of range for {classes} classes")
    width = 2 * labels.shape[1] + 1
    extended = np.full((batch, width), blank, np.int64)
    extended[:, 1::2] = np.where(listed, labels, blank)
    # s may come from s - 2 when l'(s) is a label differing from l'(s - 2).
    skip = np.zeros((batch, width), bool)
    skip[:, 3::2] = listed[:, 1:] & (labels[:, 1:] != labels[:, :-1])
    running = tuple((t < input_lengths)[:, None] for t in range(1, steps))
    last = np.stack([2 * target_lengths, np.maximum(2 * target_lengths - 1, 0)], 1)
    allowed = np.stack([target_lengths >= 0, target_lengths > 0], 1)
    return (np.broadcast_to(extended, (steps, batch, width)), skip, running, last, allowed,
            input_lengths == 0, _feasible(labels, target_lengths, input_lengths),
            np.maximum(target_lengths, 1).astype(dtype))  # fmt: skip


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The CTC loss: -log of the total probability of all alignments of each target with its
    input, where an alignment may repeat labels and insert ``blank`` between them.

    ``log_probs`` is (T, N, C) (or (T, C) unbatched), usually a log_softmax over C;
    ``targets`` is (N, S) padded or the targets concatenated (1-D); the lengths are one int
    per sequence. 'mean' divides each loss by its target length, then averages. A target
    that cannot fit its input has loss inf (0 with ``zero_infinity``) and gradient 0.

    The gradient with respect to ``log_probs`` is the true one. PyTorch's adds exp(log_probs)
    to it, which cancels when log_probs comes from log_softmax (as it should), so gradients
    reaching the logits agree.

    >>> import chainrule as cr
    >>> lp = cr.full((2, 1, 2), 0.5).log()  # T=2, N=1, C=2: each frame blank or label 1
    >>> ctc_loss(lp, cr.tensor([[1]]), [2], [1], reduction="sum")  # -log(3/4)
    tensor(0.2877)
    """
    _check_reduction(reduction, "ctc_loss")
    shape = np.shape(log_probs)
    if len(shape) not in (2, 3):
        raise ShapeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got {fmt_shape(shape)}")
    unbatched = len(shape) == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
    steps, batch, classes = np.shape(log_probs)
    if not 0 <= blank < classes:
        raise OutOfRangeError(f"ctc_loss: blank {blank} is out of range for {classes} classes")
    index, skip, running, last, allowed, empty, feasible, divisor = _alignment(
        targets, input_lengths, target_lengths, (steps, batch, classes), blank, unbatched,
        np.dtype(log_probs.dtype),
    )  # fmt: skip
    width = index.shape[2]
    emit = log_probs.gather(2, Tensor._make(index))  # (T, N, 2S + 1): log p of l'(s) at t
    neg = np.full((batch, 1), _NEG, log_probs.dtype)
    start = np.full((batch, width), _NEG, log_probs.dtype)
    start[:, :2] = 0.0
    alpha = emit[0] + start
    for t in range(1, steps):
        from_prev = ops.cat([neg, alpha], 1)[:, :width]
        from_skip = ops.where(skip, ops.cat([neg, neg, alpha], 1)[:, :width], _NEG)
        step = ops.logsumexp(ops.stack([alpha, from_prev, from_skip]), 0) + emit[t]
        alpha = ops.where(running[t - 1], step, alpha)  # a sequence keeps its alpha once it ends
    # End on the last label or the blank after it.
    ends = alpha.gather(1, Tensor._make(last))
    ends = ops.where(allowed, ends, _NEG)
    loss = -ops.logsumexp(ends, 1)
    loss = ops.where(empty, 0.0, loss)  # no frames: only the empty target fits
    loss = ops.where(feasible, loss, 0.0 if zero_infinity else np.inf)
    if reduction == "mean":
        return (loss / divisor).mean()
    if reduction == "sum":
        return loss.sum()
    return loss[0] if unbatched else loss
