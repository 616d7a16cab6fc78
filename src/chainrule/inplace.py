"""In-place writes (``x.add_(y)``, ``x[i] = v``, ``x *= 2``): how the result of an op is written
back into a tensor's memory and into its history.

An in-place op runs the out-of-place op, copies its result into the tensor's array, bumps the
version counter it shares with its views (so backward refuses arrays changed after they were
saved), and makes the op's node the tensor's new ``grad_fn``.
"""

from __future__ import annotations

import numpy as np

from ._tensor import Tensor
from .errors import DTypeError, GraphError, ShapeError, fmt_dtype, fmt_shape
from .graph import state


def write(tensor: Tensor, op, other, name: str) -> Tensor:
    """``op(tensor, other)`` (``op(tensor, *other)`` for a tuple) written into ``tensor``.

    Refused on a leaf that requires grad (outside no_grad) and on read-only memory; the
    result must keep the tensor's shape and cast to its dtype.
    """
    recording = state.grad_enabled and (
        tensor.requires_grad or (isinstance(other, Tensor) and other.requires_grad)
        or (isinstance(other, tuple) and isinstance(other[1], Tensor)
            and other[1].requires_grad)
    )  # fmt: skip
    if recording and tensor.requires_grad and tensor.grad_fn is None:
        raise GraphError(
            f"{name}: a leaf tensor that requires grad cannot be changed in place; do it "
            "inside chainrule.no_grad() (as optimizers do) or use the out-of-place op"
        )
    if not tensor.data.flags.writeable:
        raise GraphError(
            f"{name}: this tensor's memory is read-only (an expanded view or a read-only "
            "array); clone() it first"
        )
    result = op(tensor, *other) if isinstance(other, tuple) else op(tensor, other)
    if result.shape != tensor.shape:
        raise ShapeError(
            f"{name}: the result has shape {fmt_shape(result.shape)}, which cannot be "
            f"written into a tensor of shape {fmt_shape(tensor.shape)}"
        )
    try:
        np.copyto(tensor.data, result.data, casting="same_kind")
    except TypeError:
        raise DTypeError(
            f"{name}: cannot write a {fmt_dtype(result.dtype)} result into a "
            f"{fmt_dtype(tensor.dtype)} tensor in place"
        ) from None
    tensor._version_counter.bump(name)
    if state.forward_ad:
        tensor._tangent = result._tangent
    if recording and result.grad_fn is not None:
        tensor.grad_fn, tensor._output_nr = result.grad_fn, result._output_nr
        tensor.requires_grad = True
    return tensor
