"""In-place writes (``x.add_(y)``, ``x[i] = v``, ``x *= 2``): how the result of an op is written
back into a tensor's memory and into its history.

An in-place op runs the out-of-place op, copies its result into the tensor's array, bumps the
version counter it shares with its views (so backward refuses arrays changed after they were
saved), and makes the op's node the tensor's new ``grad_fn``.
"""

from __future__ import annotations

import numpy as np

from . import observe, ops
from ._tensor import Tensor
from .errors import DTypeError, GraphError, ShapeError, fmt_dtype, fmt_shape
from .graph import state
from .ops import indexing
from .tensor_base import current_view, replay


def write(tensor: Tensor, op, other, name: str) -> Tensor:
    """``op(tensor, other)`` (``op(tensor, *other)`` for a tuple) written into ``tensor``.

    Refused on a leaf that requires grad (outside no_grad), on a view of one, and on
    read-only memory; the result must keep the tensor's shape and cast to its dtype. On a
    view, the base's history is rewritten too (`copy_slices`), so whatever reads the base or
    any of its views afterwards gets the gradients PyTorch gives.
    """
    observer = observe.current
    if observer is None:
        return _write(tensor, op, other, name)
    observer.inplace_begins(write, tensor, op, other, name)
    try:
        return _write(tensor, op, other, name)
    finally:
        observer.inplace_ends()


def _write(tensor: Tensor, op, other, name: str) -> Tensor:
    view = tensor._view  # its requires_grad and grad_fn below bring it up to date first
    base = view.base if view is not None else None
    recording = state.grad_enabled and (
        tensor.requires_grad or (base is not None and base.requires_grad)
        or (isinstance(other, Tensor) and other.requires_grad)
        or (isinstance(other, tuple)
            and any(isinstance(o, Tensor) and o.requires_grad for o in other))
    )  # fmt: skip
    if recording and tensor.requires_grad and tensor.grad_fn is None:
        raise GraphError(
            f"{name}: a leaf tensor that requires grad cannot be changed in place; do it "
            "inside chainrule.no_grad() (as optimizers do) or use the out-of-place op"
        )
    if recording and base is not None and base.requires_grad and base.grad_fn is None:
        raise GraphError(
            f"{name}: this tensor is a view of a leaf tensor that requires grad, which cannot "
            "be changed in place; do it inside chainrule.no_grad() or clone() the leaf first"
        )
    if not tensor._array.flags.writeable:
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
    if not np.can_cast(result.dtype, tensor.dtype, casting="same_kind"):
        raise DTypeError(
            f"{name}: cannot write a {fmt_dtype(result.dtype)} result into a "
            f"{fmt_dtype(tensor.dtype)} tensor in place"
        )
    node = result.grad_fn if recording else None
    if node is not None:
        _keep_saved(node, tensor)
    if node is not None and base is not None:
        # The base's new history: its old one with the view's region replaced by the result.
        rewritten = indexing.copy_slices_row(base, result, steps=view.steps)
        _copy_into(base._array, rewritten._array)
        base._version_counter.bump(name)
        base._grad_fn, base._output_nr, base._requires_grad = rewritten._grad_fn, 0, True
    else:
        _copy_into(tensor._array, result._array)
        tensor._version_counter.bump(name)
        if node is not None:
            tensor._grad_fn, tensor._output_nr = node, result._output_nr
            tensor._requires_grad = True
    if state.forward_ad:
        if base is not None:
            _write_tangent(base, view.steps, result._tangent)
        else:
            tensor._tangent = result._tangent
    if base is not None:
        current_view(tensor)  # the view's history: the base's new one, then its view rows
    return tensor


def _copy_into(target: np.ndarray, source: np.ndarray) -> None:
    """Write ``source`` into the array ``target``, telling the observer first (a recording
    keeps the write; a replay in pieces makes it later, when its program runs)."""
    observer = observe.current
    if observer is not None and observer.write(target, source):
        return
    np.copyto(target, source, casting="same_kind")


def _write_tangent(base: Tensor, steps: tuple, tangent) -> None:
    """Forward mode: the base's tangent with the view's region replaced by ``tangent`` (a new
    array: the old one may be the caller's, or a view's tangent may share it)."""
    if base._tangent is None and tangent is None:
        return
    new = np.zeros(base.shape, base.dtype) if base._tangent is None else np.array(base._tangent)
    replay(new, steps)[...] = 0 if tangent is None else tangent
    base._tangent = new


def _keep_saved(node, tensor: Tensor) -> None:
    """The op just run on ``tensor`` saved its array for backward (``y *= x`` needs y's old
    values for x's gradient), and the write is about to overwrite it: keep a copy instead,
    which no later change can reach, so the node need not watch ``tensor`` for changes."""
    saved = getattr(node, "saved", None)
    if not saved:
        return
    array = tensor._array
    kept = [name for name, value in saved.items() if value is array]
    if kept:
        observer = observe.current
        if observer is not None and observer.recording():  # through the clone row: recorded
            copy = ops.REGISTRY["clone"](Tensor._make(array))._array
        else:
            copy = array.copy()
        for name in kept:
            saved[name] = copy
        node.watched = tuple(item for item in node.watched if item is not tensor)
