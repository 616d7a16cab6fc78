"""`linear_cross_entropy`: cross entropy of a linear layer's logits, in one call, and the
`LinearCrossEntropyOptions` that configure PyTorch's chunked path. The other losses are in
`nn.functional.loss`; the module, LinearCrossEntropyLoss, in `chainrule.nn.modules.loss`."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from ... import dtypes, ops
from ..._tensor import Tensor
from ...errors import DomainError, ShapeError, fmt_shape
from ._checks import _array
from .loss import cross_entropy

__all__ = ["LinearCrossEntropyOptions", "linear_cross_entropy"]

_ACC_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How PyTorch's chunked `linear_cross_entropy` splits the batch to save memory.

    chainrule always computes the whole logits at once: chunking changes neither the loss nor
    its gradients, so these options are checked (as PyTorch checks them) and otherwise
    ignored. For the same reason ``allow_retain_graph=False`` does not stop a second backward
    here, and every derivative (higher order, forward mode, vmap) works with options given.

    >>> LinearCrossEntropyOptions(batch_chunk_size=64).batch_chunk_size
    64
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self) -> None:
        op = "LinearCrossEntropyOptions"
        if self.acc_policy not in _ACC_POLICIES:
            raise DomainError(
                f"{op}: acc_policy must be one of {', '.join(map(repr, _ACC_POLICIES))}, got "
                f"{self.acc_policy!r}"
            )
        if self.chunking_method not in (None, "auto") and _aspect_factor(self.chunking_method) < 1:
            raise DomainError(
                f"{op}: chunking_method must be None, 'auto', 'aspect_ratio' or "
                f"'aspect_ratio:N' with N a positive integer, got {self.chunking_method!r}"
            )
        size = self.batch_chunk_size
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
            raise DomainError(
                f"{op}: batch_chunk_size must be a positive int or None, got {size!r}"
            )
        accepted = (dtypes.float16, dtypes.float32, dtypes.float64)
        dtype = self.acc_dtype
        if not (dtype is None or dtype is dtypes.bfloat16 or dtype in accepted):
            raise DomainError(
                f"{op}: acc_dtype must be None, float16, bfloat16, float32 or float64, got "
                f"{self.acc_dtype!r}"
            )


def _aspect_factor(method) -> int:
    """N of ``"aspect_ratio:N"`` (1 for ``"aspect_ratio"``); 0 for anything else."""
    name, colon, factor = str(method).partition(":")
    factor = factor if colon else "1"
    return int(factor) if name == "aspect_ratio" and factor.isdigit() else 0


def _check_chunk_size(options: LinearCrossEntropyOptions, batches: int, in_features: int,
                      classes: int) -> None:  # fmt: skip
    """PyTorch refuses a batch_chunk_size that disagrees with an explicit aspect-ratio method
    (the batch rows per chunk that make a chunk's logits as large as the input, / N)."""
    method, size = options.chunking_method, options.batch_chunk_size
    if method in (None, "auto") or size is None:
        return
    target = -(-batches // -(-classes // in_features))
    chunk = min((1 << (target - 1).bit_length()) // _aspect_factor(method), batches)
    if size != chunk:
        raise DomainError(
            f"linear_cross_entropy: batch_chunk_size={size} and chunking_method={method!r} "
            f"give different chunk sizes ({size} vs {chunk}); pass only one"
        )


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: LinearCrossEntropyOptions | None = None,
) -> Tensor:
    """`cross_entropy` of the logits ``linear(input, linear_weight, linear_bias)``.

    ``input`` is (in_features,) or (N, in_features); ``linear_weight`` is (C, in_features),
    or (C, d1, ..., dK, in_features) for a K-dimensional loss (batched input only), whose
    logits are (N, C, d1, ..., dK); ``linear_bias`` has the weight's shape without its last
    dim. The target holds class probabilities when its shape is the logits' (then
    ``ignore_index`` must stay None), else class indices; ``ignore_index=None`` means -100.
    ``options`` (`LinearCrossEntropyOptions`) is checked but changes nothing: the logits are
    computed whole, which gives PyTorch's chunked results. PyTorch's warning when its chunked
    path cannot serve a call is kept.

    >>> import chainrule as cr
    >>> x, w = cr.tensor([[1.0, 0.0]]), cr.tensor([[2.0, 0.0], [0.0, 0.0]])
    >>> round(linear_cross_entropy(x, w, cr.tensor([0])).item(), 4)
    0.1269
    """
    op = "linear_cross_entropy"
    shape, weight_shape = np.shape(input), np.shape(linear_weight)
    if len(shape) not in (1, 2):
        raise ShapeError(
            f"{op}: input must have 1 or 2 dims, (in_features,) or (N, in_features), got shape "
            f"{fmt_shape(shape)}"
        )
    if len(weight_shape) < 2:
        raise ShapeError(
            f"{op}: linear_weight must have at least 2 dims, (C, ..., in_features), got shape "
            f"{fmt_shape(weight_shape)}"
        )
    if shape[-1] != weight_shape[-1]:
        raise ShapeError(
            f"{op}: input {fmt_shape(shape)} and linear_weight {fmt_shape(weight_shape)} must "
            f"have the same last dim (in_features), got {shape[-1]} and {weight_shape[-1]}"
        )
    batches, in_features = shape[:-1], shape[-1]
    classes, out_features = weight_shape[0], weight_shape[1:-1]
    if linear_bias is not None and np.shape(linear_bias) != weight_shape[:-1]:
        raise ShapeError(
            f"{op}: linear_bias must have shape {fmt_shape(weight_shape[:-1])} (linear_weight's "
            f"without in_features), got {fmt_shape(np.shape(linear_bias))}"
        )
    if out_features and not batches:
        raise ShapeError(
            f"{op}: a K-dimensional loss (linear_weight of shape {fmt_shape(weight_shape)}) "
            f"needs a batched input (N, {in_features}), got shape {fmt_shape(shape)}"
        )
    logits_shape = (*batches, classes, *out_features)
    target_shape = np.shape(target)
    probabilities = target_shape == logits_shape
    if probabilities and ignore_index is not None:
        raise DomainError(f"{op}: ignore_index cannot be given when target holds probabilities")
    if not probabilities and target_shape != (*batches, *out_features):
        raise ShapeError(
            f"{op}: target has shape {fmt_shape(target_shape)}; expected class indices of shape "
            f"{fmt_shape((*batches, *out_features))} or probabilities of the logits' shape "
            f"{fmt_shape(logits_shape)}"
        )
    if options is not None:
        chunkable = (not out_features and reduction in ("mean", "sum", "none")
                     and label_smoothing == 0.0 and _array(target).dtype == np.int64)  # fmt: skip
        if chunkable:
            _check_chunk_size(options, math.prod(batches), in_features, classes)
        else:
            warnings.warn(
                f"{op}: options ignored; the chunked path needs reduction 'mean', 'sum' or "
                f"'none', label_smoothing 0, int64 class indices and no out_features, got "
                f"reduction={reduction!r}, label_smoothing={label_smoothing}, target dtype "
                f"{_array(target).dtype}, out_features={tuple(out_features)}",
                UserWarning,
                stacklevel=2,
            )
    flat = classes * math.prod(out_features)
    logits = ops.matmul(input, linear_weight.reshape(flat, in_features).mT)
    if linear_bias is not None:
        logits = logits + linear_bias.reshape(flat)
    return cross_entropy(
        logits.reshape(logits_shape),
        target,
        weight,
        -100 if ignore_index is None else ignore_index,
        reduction,
        label_smoothing,
    )
