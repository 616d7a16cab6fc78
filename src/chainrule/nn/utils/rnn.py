"""Sequences of different lengths in one batch, as PyTorch's ``torch.nn.utils.rnn``: padding a
list of sequences into one tensor and back, and packing a padded batch into a `PackedSequence`
(the steps of every sequence, time step by time step) that RNN, LSTM and GRU run on directly."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...creation import from_numpy, full
from ...errors import DomainError, DTypeError, ShapeError, fmt_shape

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence",
    "pad_packed_sequence", "pad_sequence", "unpack_sequence", "unpad_sequence",
]  # fmt: skip


def _int64(values: np.ndarray) -> Tensor:
    return from_numpy(np.ascontiguousarray(values, dtype=np.int64))


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (``None`` stays ``None``): ``inverse[p[i]] =
    i``, so indexing by ``p`` and then by its inverse puts every element back.

    >>> import chainrule as cr
    >>> invert_permutation(cr.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    order = np.asarray(permutation._array)
    inverse = np.empty_like(order, dtype=np.int64)
    inverse[order] = np.arange(len(order))
    return _int64(inverse)


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """A batch of sequences stored step by step: ``data`` holds the first step of every
    sequence, then the second step of those still running, and so on; ``batch_sizes[t]`` counts
    the sequences with a step t (an int64 tensor, never increasing). Sequences are stored
    longest first: ``sorted_indices`` (None when they came sorted) says which input sequence is
    each stored one, ``unsorted_indices`` is its inverse.

    Made by `pack_padded_sequence` and `pack_sequence`, read back with `pad_packed_sequence`;
    RNN, LSTM and GRU take one and return one.

    >>> import chainrule as cr
    >>> packed = pack_sequence([cr.tensor([1.0, 2.0, 3.0]), cr.tensor([4.0])])
    >>> packed.data, packed.batch_sizes
    (tensor([1., 4., 2., 3.]), tensor([2, 1, 1]))
    """

    def __new__(
        cls,
        data: Tensor,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PyTorch's older form: PackedSequence((data, batch_sizes))
            if not isinstance(data, (list, tuple)) or len(data) != 2:
                raise DTypeError(
                    "PackedSequence: give data and batch_sizes, or one pair (data, batch_sizes); "
                    f"got a {type(data).__name__} alone"
                )
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Convert ``data`` as `Tensor.to` does (``batch_sizes`` and the indices stay as they
        are); returns ``self`` when ``data`` is already as asked."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self) -> PackedSequence:
        """``self``: chainrule's tensors are always on the CPU."""
        return self.to("cpu")

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Move ``data`` to a CUDA device, which chainrule refuses as `Tensor.cuda` does."""
        return type(self)(
            self.data.cuda(*args, **kwargs), self.batch_sizes, self.sorted_indices,
            self.unsorted_indices,
        )  # fmt: skip

    def double(self) -> PackedSequence:
        """``data`` as float64."""
        return self.to(dtype=np.float64)

    def float(self) -> PackedSequence:
        """``data`` as float32."""
        return self.to(dtype=np.float32)

    def half(self) -> PackedSequence:
        """``data`` as float16."""
        return self.to(dtype=np.float16)

    def long(self) -> PackedSequence:
        """``data`` as int64."""
        return self.to(dtype=np.int64)

    def int(self) -> PackedSequence:
        """``data`` as int32."""
        return self.to(dtype=np.int32)

    def short(self) -> PackedSequence:
        """``data`` as int16."""
        return self.to(dtype=np.int16)

    def char(self) -> PackedSequence:
        """``data`` as int8."""
        return self.to(dtype=np.int8)

    def byte(self) -> PackedSequence:
        """``data`` as uint8."""
        return self.to(dtype=np.uint8)

    @property
    def is_cuda(self) -> bool:
        """False: ``data`` lives on the CPU."""
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        """False: chainrule has no pinned memory."""
        return False


def _lengths(lengths, op: str) -> np.ndarray:
    """``lengths`` (a list, an array or a Tensor of any number dtype) as int64 NumPy."""
    values = np.asarray(lengths._array if isinstance(lengths, Tensor) else lengths)
    if values.ndim != 1:
        raise ShapeError(f"{op}: lengths must be 1-D, one per sequence; got shape "
                         f"{fmt_shape(values.shape)}")  # fmt: skip
    return values.astype(np.int64)


def _batch_sizes(lengths: np.ndarray) -> np.ndarray:
    """How many of the (longest first) sequences have a step t, for each t."""
    return (lengths[None, :] > np.arange(lengths.max())[:, None]).sum(axis=1)


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch ``input`` (T, B, *), or (B, T, *) with ``batch_first``, whose
    sequence b has its first ``lengths[b]`` steps real. With ``enforce_sorted`` the lengths
    must not increase; with ``enforce_sorted=False`` they may come in any order (the
    `PackedSequence` remembers it). Gradients flow from the packed data back to ``input``.

    >>> import chainrule as cr
    >>> padded = cr.tensor([[1.0, 0.0, 0.0], [2.0, 3.0, 4.0]])
    >>> pack_padded_sequence(padded, [1, 3], batch_first=True, enforce_sorted=False).data
    tensor([2., 1., 3., 4.])
    """
    op = "pack_padded_sequence"
    if not isinstance(input, Tensor) or input.ndim < 2:
        got = fmt_shape(input.shape) if isinstance(input, Tensor) else type(input).__name__
        raise ShapeError(f"{op}: input must be a Tensor (T, B, *) or (B, T, *); got {got}")
    lengths = _lengths(lengths, op)
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if len(lengths) != batch:
        raise ShapeError(f"{op}: expected len(lengths) to be the batch size {batch}, got "
                         f"{len(lengths)} lengths")  # fmt: skip
    if (lengths <= 0).any():
        raise DomainError(f"{op}: every length must be at least 1; got lengths {lengths.tolist()}")
    if lengths.max() > steps:
        raise ShapeError(
            f"{op}: a length of {lengths.max()} exceeds the input's {steps} steps (input shape "
            f"{fmt_shape(input.shape)}, batch_first={batch_first})"
        )
    sorted_indices = None
    if enforce_sorted:
        if (np.diff(lengths) > 0).any():
            raise DomainError(
                f"{op}: lengths must not increase when enforce_sorted=True, got "
                f"{lengths.tolist()}; pass enforce_sorted=False to pack them in any order"
            )
        order = np.arange(batch)
    else:
        order = np.argsort(-lengths, kind="stable")
        sorted_indices = _int64(order)
    batch_sizes = _batch_sizes(lengths[order])
    step = np.repeat(np.arange(len(batch_sizes)), batch_sizes)
    rank = np.concatenate([np.arange(size) for size in batch_sizes])
    data = input[order[rank], step] if batch_first else input[step, order[rank]]
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo `pack_padded_sequence`: returns ``(padded, lengths)``, padded (T, B, *) (or
    (B, T, *) with ``batch_first``) in the sequences' original order, filled with
    ``padding_value`` past each one's length, and the lengths as an int64 tensor. T is the
    longest length, or ``total_length`` when given (at least that long).

    >>> import chainrule as cr
    >>> packed = pack_sequence([cr.tensor([1.0]), cr.tensor([2.0, 3.0])], enforce_sorted=False)
    >>> pad_packed_sequence(packed, batch_first=True, padding_value=-1.0)
    (tensor([[ 1., -1.],
            [ 2.,  3.]]), tensor([1, 2]))
    """
    batch_sizes = np.asarray(sequence.batch_sizes._array, dtype=np.int64)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ShapeError(
                f"pad_packed_sequence: total_length={total_length} is shorter than the longest "
                f"sequence ({steps} steps); it must be at least that"
            )
        steps = total_length
    data = sequence.data
    batch = int(batch_sizes[0])
    rows = np.full((steps, batch), data.shape[0])  # the padding row, appended below
    starts = np.cumsum(batch_sizes) - batch_sizes
    for t, (start, size) in enumerate(zip(starts, batch_sizes)):
        rows[t, :size] = start + np.arange(size)
    lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(axis=1)
    if sequence.unsorted_indices is not None:
        unsorted = np.asarray(sequence.unsorted_indices._array)
        rows, lengths = rows[:, unsorted], lengths[unsorted]
    pad = full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    padded = ops.cat([data, pad])[rows.T if batch_first else rows]
    return padded, _int64(lengths)


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of shapes (L_i, *) into one (max L, B, *) tensor (or (B, max L, *) with
    ``batch_first``), filling with ``padding_value`` after each sequence (``padding_side=
    'right'``) or before it (``'left'``). Gradients flow back to every sequence.

    >>> import chainrule as cr
    >>> pad_sequence([cr.tensor([1, 2, 3]), cr.tensor([4])], batch_first=True)
    tensor([[1, 2, 3],
            [4, 0, 0]])
    """
    op = "pad_sequence"
    if isinstance(sequences, Tensor):
        sequences = ops.unbind(sequences, 0)
    elif not isinstance(sequences, Iterable):
        raise DTypeError(f"{op}: expected an iterable of Tensors, got {type(sequences).__name__}")
    sequences = list(sequences)
    if padding_side not in ("left", "right"):
        raise DomainError(f"{op}: padding_side must be 'left' or 'right', got {padding_side!r}")
    if not sequences:
        raise DomainError(f"{op}: received an empty list of sequences")
    for i, seq in enumerate(sequences):
        if not isinstance(seq, Tensor) or seq.ndim == 0:
            got = "a 0-d Tensor" if isinstance(seq, Tensor) else f"a {type(seq).__name__}"
            raise ShapeError(f"{op}: sequence {i} must be a Tensor of at least 1 dim, got {got}")
        if seq.shape[1:] != sequences[0].shape[1:]:
            raise ShapeError(
                f"{op}: every sequence must have the same trailing dims; sequence 0 has shape "
                f"{fmt_shape(sequences[0].shape)}, sequence {i} has {fmt_shape(seq.shape)}"
            )
    lengths = np.array([seq.shape[0] for seq in sequences])
    steps = int(lengths.max())
    flat = ops.cat(sequences)
    rows = np.full((steps, len(sequences)), flat.shape[0])  # the padding row, appended below
    for b, (start, length) in enumerate(zip(np.cumsum(lengths) - lengths, lengths)):
        first = 0 if padding_side == "right" else steps - length
        rows[first : first + length, b] = start + np.arange(length)
    pad = full((1, *flat.shape[1:]), padding_value, dtype=flat.dtype)
    return ops.cat([flat, pad])[rows.T if batch_first else rows]


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """Split a padded batch back into its sequences: the first ``lengths[b]`` steps of each
    (PyTorch also transposes a time-first input in place; chainrule leaves it as it is).

    >>> import chainrule as cr
    >>> unpad_sequence(cr.tensor([[1, 2], [3, 0]]), cr.tensor([2, 1]), batch_first=True)
    [tensor([1, 2]), tensor([3])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lengths = _lengths(lengths, "unpad_sequence")
    return [seq[: int(n)] for seq, n in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *): `pad_sequence` then `pack_padded_sequence`. With
    ``enforce_sorted`` they must come longest first.

    >>> import chainrule as cr
    >>> pack_sequence([cr.tensor([1, 2]), cr.tensor([3])]).data
    tensor([1, 3, 2])
    """
    lengths = [seq.shape[0] for seq in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a `PackedSequence` holds, in their original order.

    >>> import chainrule as cr
    >>> unpack_sequence(pack_sequence([cr.tensor([1]), cr.tensor([2, 3])], enforce_sorted=False))
    [tensor([1]), tensor([2, 3])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
