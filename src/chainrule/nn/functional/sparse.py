"""Lookup tables: `embedding`, `embedding_bag` and `one_hot`, with PyTorch's arguments. Their
modules (Embedding, EmbeddingBag) are in `chainrule.nn.modules.sparse`."""

from __future__ import annotations

import numpy as np

from ... import observe, ops
from ..._tensor import Tensor
from ...autograd import no_grad
from ...creation import zeros
from ...errors import DomainError, DTypeError, OutOfRangeError, ShapeError, fmt_dtype, fmt_shape
from ...observe import replayed_whole
from ._checks import _array

__all__ = ["embedding", "embedding_bag", "one_hot"]


def _indices(x, op: str, what: str) -> np.ndarray:
    """The integer array of an index tensor, or a clear error for another dtype."""
    array = _array(x)
    if array.dtype.kind not in "iu":
        raise DTypeError(
            f"{op}: {what} must be an integer (int64) tensor, got {fmt_dtype(array.dtype)}"
        )
    return array


def _check_rows(index: np.ndarray, weight, op: str) -> int:
    """The rows of ``weight`` (a tensor or its shape), once every index picks one of them."""
    shape = weight if isinstance(weight, tuple) else np.shape(weight)
    rows = shape[0]
    if index.size and (index.min() < 0 or index.max() >= rows):
        bad = int(index.min() if index.min() < 0 else index.max())
        raise OutOfRangeError(
            f"{op}: index {bad} is out of range for a weight of shape "
            f"{fmt_shape(shape)} (valid: 0 to {rows - 1})"
        )
    return rows


def _padding_row(padding_idx: int | None, rows: int, op: str) -> int | None:
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise DomainError(f"{op}: padding_idx {padding_idx} is out of range for {rows} rows")
    return padding_idx % rows


def _renorm(weight: Tensor, index: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Scale the rows of ``weight`` that ``index`` picks down to norm ``max_norm``, in place and
    outside the graph (as PyTorch's embedding_renorm_: scale max_norm / (norm + 1e-7))."""
    rows = np.unique(index)
    if not rows.size:
        return
    picked = weight._array[rows]
    norms = (
        np.linalg.norm(picked, ord=norm_type, axis=1)
        if norm_type != 2
        else np.sqrt((picked * picked).sum(1))
    )
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(picked.dtype)
    with no_grad():
        weight[Tensor._make(rows)] = picked * scale[:, None]


def _by_frequency(out: Tensor, index: np.ndarray) -> Tensor:
    """``out`` with the gradient of each lookup divided by how often its index occurs."""
    _, inverse, counts = np.unique(index, return_inverse=True, return_counts=True)
    share = (1.0 / counts[inverse.reshape(index.shape)])[..., None].astype(out.dtype)
    return out * share + (out * (1 - share)).detach()


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``input``: shape input.shape + (dim,).

    The gradient adds up over repeated indices; the row ``padding_idx`` gets none. With
    ``max_norm`` the picked rows of ``weight`` are first scaled down, in place, to that
    ``norm_type``-norm; ``scale_grad_by_freq`` divides each index's gradient by its count in
    ``input``. ``sparse`` is accepted, but the gradient is always dense.

    >>> import chainrule as cr
    >>> embedding(cr.tensor([[0, 2]]), cr.eye(3))
    tensor([[[1., 0., 0.],
             [0., 0., 1.]]])
    """
    rows = np.shape(weight)[0]
    padding_idx = _padding_row(padding_idx, rows, "embedding")
    if max_norm is not None or scale_grad_by_freq:
        index = _indices(input, "embedding", "input")
        _check_rows(index, weight, "embedding")
        if max_norm is not None:
            _renorm(weight, index, max_norm, norm_type)
        out = weight[index]
    else:
        index = _lookup(input, np.shape(weight))  # one call: a compiled step reads new indices
        # The rows picked without getitem's second pass over the index `_lookup` checked.
        out = ops.indexing.index_row(weight, index=(index,))
    if scale_grad_by_freq and index.size:
        out = _by_frequency(out, index)
    if padding_idx is None:
        return out
    is_padding = (index == padding_idx)[..., None]
    # The padding row is looked up like any other, but through a detached copy: no gradient.
    return ops.where(is_padding, weight.detach()[index], out) if is_padding.any() else out


@replayed_whole(pure=True)
def _lookup(input: Tensor, weight_shape: tuple) -> np.ndarray:
    """The checked integer array of the indices ``input`` into a weight of ``weight_shape``: a
    copy, so that changing ``input`` in place later cannot change the gradient."""
    index = _indices(input, "embedding", "input")
    _check_rows(index, weight_shape, "embedding")
    return np.array(index)


def _bags(index: np.ndarray, offsets, include_last_offset: bool) -> tuple[np.ndarray, int]:
    """(the bag of each entry of the flattened input, the number of bags)."""
    if index.ndim == 2:
        if offsets is not None:
            raise DomainError("embedding_bag: offsets must be None for a 2-D input (one bag a row)")
        return np.repeat(np.arange(index.shape[0]), index.shape[1]), index.shape[0]
    if index.ndim != 1:
        raise ShapeError(f"embedding_bag: input must be 1-D or 2-D, got {fmt_shape(index.shape)}")
    if offsets is None:
        raise DomainError("embedding_bag: a 1-D input needs offsets (where each bag starts)")
    starts = _indices(offsets, "embedding_bag", "offsets")
    if starts.ndim != 1 or (starts.size and (starts[0] != 0 or np.any(np.diff(starts) < 0))):
        raise DomainError(
            f"embedding_bag: offsets must be a 1-D non-decreasing tensor starting at 0, got "
            f"{starts.tolist()}"
        )
    if starts.size and starts[-1] > index.size:
        raise OutOfRangeError(
            f"embedding_bag: offset {int(starts[-1])} is past the input's {index.size} entries"
        )
    count = starts.size - 1 if include_last_offset else starts.size
    bag = np.searchsorted(starts, np.arange(index.size), side="right") - 1
    return bag, count


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or max of each bag of looked-up rows of ``weight``: shape (bags, dim).

    A 2-D ``input`` (B, N) holds B bags of N indices; a 1-D one is cut into bags where
    ``offsets`` start (``include_last_offset``: the last offset ends the last bag).
    ``per_sample_weights`` (the input's shape, mode "sum" only) weigh each entry. Entries
    equal to ``padding_idx`` are left out, and an empty bag gives zeros.

    >>> import chainrule as cr
    >>> weight = cr.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    >>> embedding_bag(cr.tensor([0, 1, 2, 2]), weight, cr.tensor([0, 3]), mode="sum")
    tensor([[4., 5.],
            [3., 3.]])
    """
    if mode not in ("sum", "mean", "max"):
        raise DomainError(f"embedding_bag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    index = _indices(input, "embedding_bag", "input")
    rows = _check_rows(index, weight, "embedding_bag")
    padding_idx = _padding_row(padding_idx, rows, "embedding_bag")
    bag, count = _bags(index, offsets, include_last_offset)
    flat = index.reshape(-1)
    if per_sample_weights is not None:
        if mode != "sum":
            raise DomainError(
                f"embedding_bag: per_sample_weights need mode='sum', got mode={mode!r}"
            )
        if np.shape(per_sample_weights) != index.shape:
            raise ShapeError(
                f"embedding_bag: per_sample_weights has shape "
                f"{fmt_shape(np.shape(per_sample_weights))}, the input {fmt_shape(index.shape)}"
            )
    if max_norm is not None:
        _renorm(weight, flat, max_norm, norm_type)
    keep = np.ones(flat.size, bool) if padding_idx is None else flat != padding_idx
    looked_up = weight[flat]
    if scale_grad_by_freq and flat.size:
        looked_up = _by_frequency(looked_up, flat)
    # A (bags, longest bag) grid of positions into the entries; empty places point at an extra
    # row appended after them (zero, or -inf for max), so one reduction over dim 1 does it.
    entries, bag = np.flatnonzero(keep), bag[keep]
    sizes = np.bincount(bag, minlength=count)[:count]
    longest = int(sizes.max()) if sizes.size else 0
    grid = np.full((count, max(longest, 1)), flat.size)
    place = np.arange(entries.size) - np.searchsorted(bag, bag)  # position within its bag
    inside = bag < count
    grid[bag[inside], place[inside]] = entries[inside]
    dim = np.shape(weight)[1]
    filler = -np.inf if mode == "max" else 0.0
    extra = Tensor._make(np.full((1, dim), filler, looked_up.dtype))
    gathered = ops.cat([looked_up, extra])[grid]  # (bags, longest, dim)
    if mode == "max":
        out = ops.max(gathered, 1).values
        return ops.where((sizes == 0)[:, None], 0.0, out) if (sizes == 0).any() else out
    if per_sample_weights is not None:
        scales = ops.cat([per_sample_weights.reshape(-1), zeros(1, dtype=looked_up.dtype)])
        gathered = gathered * scales[grid][..., None]
    out = gathered.sum(1)
    if mode == "mean":
        out = out / np.maximum(sizes, 1)[:, None].astype(looked_up.dtype)
    return out


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor with a new last dim of size ``num_classes``: 1 at each index, else 0.

    ``num_classes=-1`` takes the largest index plus one.

    >>> import chainrule as cr
    >>> one_hot(cr.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if num_classes == -1:
        index = _indices(tensor, "one_hot", "the input")
        if not index.size:
            raise DomainError("one_hot: cannot infer num_classes from an empty tensor; pass it")
        observe.reads_values("one_hot with num_classes=-1")
        num_classes = int(index.max()) + 1
    return Tensor._make(_one_hot(tensor, num_classes))


@replayed_whole(pure=True)  # a compiled step reads and checks the new classes at each call
def _one_hot(tensor: Tensor, num_classes: int) -> np.ndarray:
    """The checked int64 one-hot array of ``tensor``'s classes."""
    index = _indices(tensor, "one_hot", "the input")
    if index.size and index.min() < 0:
        raise DomainError(f"one_hot: class values must be non-negative, got {int(index.min())}")
    if index.size and index.max() >= num_classes:
        raise DomainError(
            f"one_hot: class value {int(index.max())} is out of range for num_classes={num_classes}"
        )
    return (index[..., None] == np.arange(num_classes)).astype(np.int64)
