"""Reading x at indices that another row found: `picker` makes the row that is the values half
of an op returning (values, indices), for sort and the order statistics
(`chainrule.ops.sorting`) and for cummax and cummin (`chainrule.ops.cumulative`). Its gradient
goes to those indices only, added up where one is picked twice. With the batching rules such
pairs of rows share: `batch_along` (a row along one dim) and `with_batch` (an operand without
the batch dim given one).
"""

from __future__ import annotations

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..observe import replayed_whole
from ..op import Op
from .arguments import as_tensor


def batch_along(op: Op, values: list, batched: list, params: dict):
    """The batching rule of a row along one ``dim`` (an int): the same dim, one further on."""
    return op(*values, **{**params, "dim": params["dim"] + 1})


def with_batch(x, size: int) -> Tensor:
    """An unbatched ``x`` given a leading batch dim of ``size`` (for batching rules)."""
    x = as_tensor(x, "vmap")
    return x.unsqueeze(0).expand(size, *x.shape)


# Values at indices: the VJP adds g back at the indices, so an index picked twice gets both.


def _grid(indices: np.ndarray, dim: int) -> tuple:
    """The open grid that picks ``indices`` along ``dim``: positions along every other dim."""
    indices = indices._array if isinstance(indices, Tensor) else indices
    return tuple(
        indices
        if d == dim
        else np.arange(n).reshape([-1 if k == d else 1 for k in range(indices.ndim)])
        for d, n in enumerate(indices.shape)
    )


def _take(x, indices, dim: int):
    return np.take_along_axis(x, indices, axis=dim)


def _put(g, x_shape: tuple, indices, dim: int):
    """Zeros of ``x_shape`` with g added at ``indices`` along ``dim`` (the VJP of `_take`)."""
    indices = indices._array if isinstance(indices, Tensor) else indices
    if not isinstance(g, Tensor):
        out = np.zeros(x_shape, g.dtype)
        np.add.at(out, _grid(indices, dim), g)
        return out
    # Recorded (create_graph=True): g times a one-hot of each index, summed over the picks.
    one_hot = _one_hot(indices, dim, x_shape[dim])
    spread = xp.unsqueeze(xp.transpose(g, dim, -1), -1) * one_hot
    return xp.transpose(xp.sum(spread, -2), dim, -1)


@replayed_whole(pure=True)  # a compiled step reads the new indices at each call
def _one_hot(indices: np.ndarray, dim: int, n: int) -> np.ndarray:
    """Booleans (..., n), ``indices`` moved from ``dim`` to the last dim: True at each one."""
    return np.swapaxes(indices, dim, -1)[..., None] == np.arange(n)


def _batch_pick(op: Op, values: list, batched: list, params: dict):
    size = next(v.shape[0] for v, b in zip(values, batched) if b)
    x, indices = (v if b else with_batch(v, size) for v, b in zip(values, batched))
    return op(x, indices, dim=params["dim"] + 1)


def picker(name: str, doc: str) -> Op:
    """A row that reads x at int64 ``indices`` along ``dim`` (``take_along_dim``): the values
    half of an op that returns (values, indices). Its gradient goes to those indices only,
    added up where one is picked twice. The indices are an input, not a parameter, so a row of
    no gradient can find them and both run batched under vmap.

    >>> row = picker("pick_example", doc="x at indices.")
    >>> row.inputs, row.vjp[1]
    (('x', 'indices'), None)
    """
    return Op(
        name,
        _take,
        inputs=("x", "indices"),
        vjp=(lambda g, x_shape, indices, dim: _put(g, x_shape, indices, dim), None),
        jvp=(lambda dx, indices, dim: _take(dx, indices, dim), None),
        kind="indexing",
        batch=_batch_pick,
        doc=doc,
    )
