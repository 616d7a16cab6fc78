"""Matrix products with their gradients: the matmul rows (x @ y, and x @ y + z in one pass for
a linear layer or a convolution with a bias), ``matmul`` with NumPy's rules for vectors and
batches, and the products PyTorch names: dot, outer (ger), vdot, inner, tensordot, kron,
cross, mm, bmm and mv (fixed ranks), their scaled sums addmm, baddbmm, addmv, addbmm and addr,
chain_matmul and adjoint; torch.linalg's multi_dot, vecdot and cross. Einstein summation is in
`chainrule.linalg.einsum`, matrix powers in `chainrule.linalg.matrix_functions`.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence

import numpy as np

from .. import xp
from ..errors import DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Op, with_rank
from ..ops import reduce
from ..ops.arguments import shape_of
from ..ops.shape import reshape
from .einsum import einsum

__all__ = [
    "addbmm", "addmm", "addmv", "addr", "adjoint", "baddbmm", "bmm", "chain_matmul", "cross",
    "dot", "ger", "inner", "kron", "matmul", "mm", "mv", "outer", "tensordot", "vdot",
]  # fmt: skip


def _matmul_add(x, y, z, out=None):
    out = _matmul(x, y, out)
    fits = np.broadcast_shapes(out.shape, np.shape(z)) == out.shape
    if fits and np.result_type(out, z) == out.dtype:
        out += z  # the product is new: add into it rather than into a second array
        return out
    return out + z


def matmul_flops(x_shape: tuple, y_shape: tuple, z_shape: tuple = ()) -> int:
    """Multiply-adds of x @ y, times 2 (NumPy's matmul broadcasting rules); 0 for a shape
    not known (an operand the backward did not save). A bias z adds nothing counted."""
    if not x_shape or not y_shape:
        return 0
    k = x_shape[-1]
    x2 = x_shape if len(x_shape) > 1 else (1,) + x_shape
    y2 = y_shape if len(y_shape) > 1 else y_shape + (1,)
    batch = np.broadcast_shapes(x2[:-2], y2[:-2])
    return 2 * int(np.prod(batch)) * x2[-2] * y2[-1] * k


def _batch_matmul(op: Op, values, batched, params):
    x, y = values[:2]
    if len(values) == 2 and batched[0] and not batched[1] and np.ndim(y) == 2:
        # (B, ..., m, k) @ (k, n): one matrix product with the batch merged into the rows,
        # not B small ones.
        rows = tuple(x.shape[:-1])
        return op(x.reshape((math.prod(rows), x.shape[-1])), y).reshape((*rows, y.shape[-1]))
    # Both operands have 2 dims or more (see `matmul`): size-1 dims after the batch dim
    # broadcast as one example's would, for the product and the bias alike.
    rank = max(np.ndim(v) - b for v, b in zip(values, batched))
    return op(*[with_rank(v, rank) if b else v for v, b in zip(values, batched)])


def _matmul(x, y, out=None):
    """np.matmul as BLAS runs it fastest: a stack of matrices times one matrix (a linear layer
    on (batch, tokens, features)) is one product over the stack merged into the rows, not one
    product per matrix; an operand BLAS cannot read as it lies is copied first. ``out``: an
    array to write the product into."""
    if type(x) is np.ndarray and type(y) is np.ndarray:
        if not x.flags.c_contiguous:  # checked here first: the call costs as much as the check
            x = _blas_operand(x)
        if not y.flags.c_contiguous:
            y = _blas_operand(y, stacked=x.ndim > 2 or y.ndim > 2)
    if y.ndim == 2 and x.ndim > 2:
        rows = x.reshape(-1, x.shape[-1])  # a copy only when the leading dims do not merge
        if out is not None:
            np.matmul(rows, y, out=out.reshape(-1, y.shape[-1]))
            return out
        return (rows @ y).reshape(*x.shape[:-1], y.shape[-1])
    if out is not None:
        return np.matmul(x, y, out=out)
    return x @ y  # also for Tensors, in rules run with create_graph


#: A stack of column-major right operands with at most this many elements a matrix is copied to
#: row-major first: NumPy's per-matrix loop multiplies small transposed ones (attention's
#: q @ k.mT, and g @ v.mT in its backward) about 20% slower than the copy and the product
#: take; larger ones cost the same either way.
SMALL_STACKED = 4096


def _blas_operand(a: np.ndarray, stacked: bool = False) -> np.ndarray:
    """``a``, or a C-contiguous copy when its matrices are neither row- nor column-major with
    room between rows (a broadcast row, a step over columns): BLAS takes a transposed or
    sliced matrix through its flags and leading dimension, but NumPy's matmul runs its own
    loop, or copies the operand on every call, for anything else. ``stacked``: ``a`` is the
    right operand of a product of stacks, copied also when `SMALL_STACKED` says so."""
    if a.ndim < 2 or a.flags.c_contiguous:
        return a
    (rows, cols), (row_step, col_step) = a.shape[-2:], a.strides[-2:]
    size = a.itemsize
    if col_step == size and row_step >= cols * size:  # row-major, rows apart: a slice
        return a
    if row_step == size and col_step >= rows * size:  # column-major: a transposed matrix
        if stacked and a.ndim > 2 and rows * cols <= SMALL_STACKED:
            return np.ascontiguousarray(a)
        return a
    if a.flags.f_contiguous:  # a dim of 1, whose stride may be anything
        return a
    return np.ascontiguousarray(a)


def _matmul_grad_y(g, x, y_shape):
    """The gradient of x @ y for y: x.mT @ g, whose stack the engine would sum; for a single
    matrix y, the same sum as one product over the merged rows."""
    if len(y_shape) == 2 and x.ndim > 2:
        return _matmul(x.reshape(-1, x.shape[-1]).mT, g.reshape(-1, g.shape[-1]))
    return _matmul(x.mT, g)


# The products take one dtype, as PyTorch's refuse to promote (a float32 model given float64
# data would silently run in float64, or an integer product in floating point): each row
# checks its operands before NumPy runs.


def _check_matmul(x, y, **params) -> None:
    if getattr(x, "dtype", None) is getattr(y, "dtype", None):
        return  # the common case first: NumPy's dtypes of one kind are one object
    x_dtype, y_dtype = getattr(x, "dtype", None), getattr(y, "dtype", None)
    if x_dtype != y_dtype and x_dtype is not None and y_dtype is not None:
        raise DTypeError(
            f"matmul: operands have dtypes {fmt_dtype(x_dtype)} and {fmt_dtype(y_dtype)}; "
            "both must have one dtype: convert one with .to(dtype)"
        )


def _check_matmul_add(x, y, z, **params) -> None:
    if getattr(x, "dtype", None) is getattr(y, "dtype", None) is getattr(z, "dtype", None):
        return
    dtypes = [d for d in (getattr(a, "dtype", None) for a in (x, y, z)) if d is not None]
    if any(d != dtypes[0] for d in dtypes[1:]):
        raise DTypeError(
            f"matmul_add: x @ y + z (a linear layer's input @ weight.T + bias) got dtypes "
            f"{_listed([fmt_dtype(d) for d in dtypes])}; all must have one dtype: convert with "
            ".to(dtype), e.g. input.to(weight.dtype), or the layer with layer.to(input.dtype)"
        )


def _listed(items: list) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0]


# fmt: off
# Both operands have at least 2 dims here (matmul() promotes vectors first), so each rule is
# one product; the engine sums the gradient over broadcast batch dims.
matmul_row = Op("matmul", _matmul, check=_check_matmul,
                vjp=(lambda g, y: _matmul(g, y.mT), _matmul_grad_y),
                jvp=(lambda dx, y: _matmul(dx, y), lambda dy, x: _matmul(x, dy)),
                kind="contraction", batch=_batch_matmul, flops=matmul_flops, writes_out=True,
                doc="The matrix product of x and y (2 dims or more), batch dims broadcast.")
# x @ y + z in one row, as convolution needs: composed, the sum would be a second array the
# size of the output (a convolution's largest).
matmul_add_row = Op("matmul_add", _matmul_add, inputs=("x", "y", "z"), check=_check_matmul_add,
                    vjp=(lambda g, y: _matmul(g, y.mT), _matmul_grad_y, lambda g: g),
                    jvp=(lambda dx, y: _matmul(dx, y), lambda dy, x: _matmul(x, dy),
                         lambda dz: dz),
                    kind="contraction", batch=_batch_matmul, flops=matmul_flops,
                    writes_out=True,
                    doc="x @ y + z in one pass (a linear layer or a convolution with a bias).")
# input @ weight.T + bias with the weight as a linear layer keeps it, (out, in): one node per
# layer, not a transposed view's node and the product's.
linear_row = Op("linear", lambda x, w, b, out=None: _linear(x, w, b, out),
                inputs=("x", "w", "b"), check=_check_matmul_add,
                vjp=(lambda g, w: _matmul(g, w), lambda g, x: _linear_grad_w(g, x),
                     lambda g: g),
                jvp=(lambda dx, w: _matmul(dx, w.mT), lambda dw, x: _matmul(x, dw.mT),
                     lambda db: db),
                kind="contraction", flops=lambda x, w, b: matmul_flops(x, w[::-1]),
                batch=lambda op, values, batched, params: _batch_linear(values, batched, params),
                writes_out=True,
                doc="x @ w.T + b (b may be None) with w of shape (out, in), as a linear layer "
                    "computes it.")
# fmt: on


def _linear(x, w, b, out=None):
    """x @ w.T + b, or x @ w.T for b None; x may be a vector (one example)."""
    if b is None:
        return _matmul(x, w.mT, out)
    return _matmul_add(x, w.mT, b, out)


def _linear_grad_w(g, x):
    """The gradient of x @ w.T for w (out, in): gᵀ x, summed over the leading dims as one
    product over the merged rows (a vector x: the outer product)."""
    if g.ndim != 2:
        g, x = g.reshape((-1, g.shape[-1])), x.reshape((-1, x.shape[-1]))
    return _matmul(g.mT, x)


def _batch_linear(values, batched, params):
    """The batching rule of `linear_row`: matmul's, with the weight transposed; a vector x
    (one example) taken as a one-row matrix, as `matmul` takes it."""
    x, w, b = values
    vector = np.ndim(x) - batched[0] == 1
    if vector:
        x = xp.unsqueeze(x, -2)
    if b is None:
        out = _batch_matmul(matmul_row, [x, w.mT], batched[:2], params)
    else:
        out = _batch_matmul(matmul_add_row, [x, w.mT, b], batched, params)
    return reshape(out, (*out.shape[:-2], out.shape[-1])) if vector else out


def _both(x_shape: tuple, y_shape: tuple) -> str:
    return f"{fmt_shape(x_shape)} and {fmt_shape(y_shape)}"


def _matmul_shape(x_shape: tuple, y_shape: tuple) -> tuple:
    """The shape of x @ y under NumPy's rules, or a ShapeError naming what does not fit."""

    if not x_shape or not y_shape:
        raise ShapeError(
            f"matmul: shapes {_both(x_shape, y_shape)}: a 0-d operand has no dimension to "
            "multiply over; use * to multiply by a scalar"
        )
    x_k, y_k = x_shape[-1], y_shape[-2 if len(y_shape) > 1 else -1]
    if x_k != y_k:
        where = "second-last of b" if len(y_shape) > 1 else "length of b"
        raise ShapeError(
            f"matmul: shapes {_both(x_shape, y_shape)} do not align: {x_k} (last dim of a) != "
            f"{y_k} ({where})"
        )
    x_batch, y_batch = x_shape[:-2], y_shape[:-2]
    batch = x_batch
    if x_batch != y_batch:
        try:
            batch = np.broadcast_shapes(x_batch, y_batch)
        except ValueError:
            raise ShapeError(
                f"matmul: shapes {_both(x_shape, y_shape)} do not align: batch dims "
                f"{fmt_shape(x_batch)} and {fmt_shape(y_batch)} do not broadcast"
            ) from None
    rows = x_shape[-2:-1]  # empty for a vector, as is cols
    cols = y_shape[-1:] if len(y_shape) > 1 else ()
    return batch + rows + cols


def matmul(x, y):
    """The matrix product x @ y with NumPy's rules for vectors and batches.

    A 1-D ``x`` is a row vector and a 1-D ``y`` a column vector, and that dimension is
    dropped from the result (1-D @ 1-D is the 0-d inner product). Leading batch dims
    broadcast.

    >>> import chainrule as cr
    >>> (cr.ones(5, 2, 3) @ cr.ones(3, 4)).shape, (cr.ones(3) @ cr.ones(3, 4)).shape
    ((5, 2, 4), (4,))
    """
    x_shape, y_shape = shape_of(x), shape_of(y)
    if len(x_shape) == len(y_shape) == 2 and x_shape[1] == y_shape[0]:
        return matmul_row(x, y)  # the common case, checked in one line
    out_shape = _matmul_shape(x_shape, y_shape)
    if len(x_shape) > 1 and len(y_shape) > 1:
        return matmul_row(x, y)
    # A vector becomes a one-row (left) or one-column (right) matrix, as NumPy does; the
    # reshapes are ops, so gradients, tangents and higher derivatives pass through them.
    if len(x_shape) == 1:
        x = reshape(x, (1, *x_shape))
    if len(y_shape) == 1:
        y = reshape(y, (*y_shape, 1))
    out = reshape(matmul_row(x, y), out_shape)
    # A view of a product no one else holds is no view for the user (PyTorch's is not
    # either): an in-place change to it then rewrites its own history, not a hidden base's.
    out._view = None
    return out


def _vectors(op: str, x, y) -> tuple[tuple, tuple]:
    """The shapes of x and y, checked to be 1-D."""
    x_shape, y_shape = np.shape(x), np.shape(y)
    if len(x_shape) != 1 or len(y_shape) != 1:
        raise ShapeError(
            f"{op}: expects two 1-D tensors, got shapes {fmt_shape(x_shape)} and "
            f"{fmt_shape(y_shape)}; use matmul or einsum for more dimensions"
        )
    return x_shape, y_shape


def dot(x, y):
    """The inner product of two 1-D tensors of the same length, a 0-d tensor.

    >>> import chainrule as cr
    >>> cr.dot(cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0])).item()
    11.0
    """
    x_shape, y_shape = _vectors("dot", x, y)
    if x_shape != y_shape:
        raise ShapeError(
            f"dot: shapes {fmt_shape(x_shape)} and {fmt_shape(y_shape)} differ in length: "
            f"{x_shape[0]} != {y_shape[0]}"
        )
    return matmul(x, y)


def outer(x, y):
    """The outer product of two 1-D tensors: ``out[i, j] = x[i] * y[j]``.

    >>> import chainrule as cr
    >>> cr.outer(cr.tensor([1.0, 2.0]), cr.tensor([1.0, 10.0, 100.0])).tolist()
    [[1.0, 10.0, 100.0], [2.0, 20.0, 200.0]]
    """
    x_shape, _ = _vectors("outer", x, y)
    return reshape(x, (x_shape[0], 1)) * y


#: `outer` by BLAS's name.
ger = outer


def _ranks(op: str, named: dict, ranks: tuple) -> list[tuple]:
    """The operands' shapes, checked to have the given numbers of dims."""
    shapes = [shape_of(x) for x in named.values()]
    if any(len(s) != r for s, r in zip(shapes, ranks)):
        got = ", ".join(f"{name} {fmt_shape(s)}" for name, s in zip(named, shapes))
        wanted = " and ".join(f"{r}-D" for r in ranks)
        raise ShapeError(f"{op}: expects {wanted} tensors, got shapes {got}")
    return shapes


def _aligned(op: str, x_shape: tuple, y_shape: tuple) -> None:
    k = y_shape[-2] if len(y_shape) > 1 else y_shape[0]
    if x_shape[-1] != k:
        raise ShapeError(
            f"{op}: shapes {_both(x_shape, y_shape)} do not align: {x_shape[-1]} != {k}"
        )
    if len(x_shape) == 3 and x_shape[0] != y_shape[0]:
        raise ShapeError(f"{op}: batch sizes differ in shapes {_both(x_shape, y_shape)}")


def mm(input, mat2):
    """The product of two matrices (2-D only; `matmul` broadcasts).

    >>> import chainrule as cr
    >>> cr.mm(cr.ones(2, 3), cr.ones(3, 4)).shape
    (2, 4)
    """
    _aligned("mm", *_ranks("mm", {"input": input, "mat2": mat2}, (2, 2)))
    return matmul(input, mat2)


def bmm(input, mat2):
    """Products of two batches of matrices, (b, n, m) @ (b, m, p), without broadcasting.

    >>> import chainrule as cr
    >>> cr.bmm(cr.ones(5, 2, 3), cr.ones(5, 3, 4)).shape
    (5, 2, 4)
    """
    _aligned("bmm", *_ranks("bmm", {"input": input, "mat2": mat2}, (3, 3)))
    return matmul(input, mat2)


def mv(input, vec):
    """The product of a matrix (n, m) and a vector (m,).

    >>> import chainrule as cr
    >>> cr.mv(cr.tensor([[1.0, 2.0], [3.0, 4.0]]), cr.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    _aligned("mv", *_ranks("mv", {"input": input, "vec": vec}, (2, 1)))
    return matmul(input, vec)


def _one_dtype(op: str, named: dict) -> None:
    """addmm and its kin take one dtype, input's too, as PyTorch's (which refuse a float64
    input to a float32 product); a Python number as input broadcasts as it is."""
    dtypes = {name: getattr(x, "dtype", None) for name, x in named.items()}
    given = [d for d in dtypes.values() if d is not None]
    if any(d != given[0] for d in given[1:]):
        shown = [f"{name} {fmt_dtype(d)}" for name, d in dtypes.items() if d is not None]
        raise DTypeError(
            f"{op}: the operands' dtypes differ ({_listed(shown)}); all must have one dtype: "
            "convert with .to(dtype)"
        )


def _scaled_sum(op: str, input, product, beta, alpha):
    """beta * input + alpha * product, input broadcast to the product's shape; beta=0
    ignores input (its nan and inf too), as in PyTorch."""
    out_shape, in_shape = shape_of(product), shape_of(input)
    try:
        fits = np.broadcast_shapes(in_shape, out_shape) == out_shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(
            f"{op}: input of shape {fmt_shape(in_shape)} does not broadcast to the product's "
            f"shape {fmt_shape(out_shape)}"
        )
    out = product if alpha == 1 else product * alpha
    if beta == 0:  # input still gets a gradient, of zeros, as in PyTorch
        return out + xp.where(False, input, 0)
    return out + (input if beta == 1 else input * beta)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) for matrices; input broadcasts to (n, p).

    >>> import chainrule as cr
    >>> cr.addmm(cr.ones(2), cr.eye(2), cr.eye(2), alpha=3).tolist()
    [[4.0, 1.0], [1.0, 4.0]]
    """
    _one_dtype("addmm", {"input": input, "mat1": mat1, "mat2": mat2})
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2); input broadcasts to (b, n, p).

    >>> import chainrule as cr
    >>> cr.baddbmm(cr.zeros(3, 1, 1), cr.ones(3, 2, 4), cr.ones(3, 4, 5)).shape
    (3, 2, 5)
    """
    _one_dtype("baddbmm", {"input": input, "batch1": batch1, "batch2": batch2})
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * mv(mat, vec); input broadcasts to (n,).

    >>> import chainrule as cr
    >>> cr.addmv(cr.ones(2), cr.eye(2), cr.tensor([2.0, 3.0]), beta=0.5).tolist()
    [2.5, 3.5]
    """
    _one_dtype("addmv", {"input": input, "mat": mat, "vec": vec})
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (sum of the products batch1[i] @ batch2[i]); input broadcasts
    to (n, p).

    >>> import chainrule as cr
    >>> cr.addbmm(cr.zeros(2, 2), cr.ones(3, 2, 4), cr.ones(3, 4, 2)).tolist()
    [[12.0, 12.0], [12.0, 12.0]]
    """
    _aligned("addbmm", *_ranks("addbmm", {"batch1": batch1, "batch2": batch2}, (3, 3)))
    _one_dtype("addbmm", {"input": input, "batch1": batch1, "batch2": batch2})
    return _scaled_sum("addbmm", input, einsum("bij,bjk->ik", batch1, batch2), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2); input broadcasts to (n, m). Dtypes promote,
    as PyTorch's addr (an outer product, not a matrix product) does.

    >>> import chainrule as cr
    >>> cr.addr(cr.ones(2, 2), cr.tensor([1.0, 2.0]), cr.tensor([1.0, 3.0]), beta=2).tolist()
    [[3.0, 5.0], [4.0, 8.0]]
    """
    _ranks("addr", {"vec1": vec1, "vec2": vec2}, (1, 1))
    return _scaled_sum("addr", input, reshape(vec1, (-1, 1)) * vec2, beta, alpha)


def vdot(input, other):
    """The inner product of two 1-D tensors of the same length (real: as `dot`).

    >>> import chainrule as cr
    >>> cr.vdot(cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0])).item()
    11.0
    """
    x_shape, y_shape = shape_of(input), shape_of(other)
    if len(x_shape) != 1 or len(y_shape) != 1 or x_shape != y_shape:
        raise ShapeError(
            f"vdot: expects two 1-D tensors of one length, got shapes {_both(x_shape, y_shape)}"
        )
    return matmul(input, other)


def chain_matmul(*matrices):
    """The product of 2-D matrices left to right (PyTorch's older `linalg.multi_dot`, which
    also takes vectors at the ends); one matrix comes back as it is.

    >>> import chainrule as cr
    >>> cr.chain_matmul(cr.ones(2, 3), cr.ones(3, 4), cr.ones(4, 1)).tolist()
    [[12.0], [12.0]]
    """
    if not matrices:
        raise ShapeError("chain_matmul: expects at least one matrix, got none")
    shapes = [shape_of(m) for m in matrices]
    for i, shape in enumerate(shapes):
        if len(shape) != 2:
            raise ShapeError(f"chain_matmul: matrix {i} has shape {fmt_shape(shape)}; each "
                             "must be 2-D")  # fmt: skip
    out = matrices[0]
    for i, m in enumerate(matrices[1:], 1):
        if shapes[i - 1][1] != shapes[i][0]:
            raise ShapeError(f"chain_matmul: matrices {i - 1} and {i} of shapes "
                             f"{_both(shapes[i - 1], shapes[i])} do not align")  # fmt: skip
        out = matmul(out, m)
    return out


def adjoint(input):
    """The conjugate transpose of each matrix: for real tensors a view with the last two
    dims swapped (``x.mT``).

    >>> import chainrule as cr
    >>> cr.adjoint(cr.tensor([[1.0, 2.0]])).tolist()
    [[1.0], [2.0]]
    """
    shape = shape_of(input)
    if len(shape) < 2:
        raise ShapeError(
            f"adjoint: expects a matrix or a batch of matrices, got shape {fmt_shape(shape)}"
        )
    return input.mT


def _dims_pair(a_ndim: int, b_ndim: int, dims) -> tuple[list, list]:
    if isinstance(dims, int):
        if not 0 <= dims <= min(a_ndim, b_ndim):
            raise ShapeError(
                f"tensordot: dims={dims} must be between 0 and {min(a_ndim, b_ndim)} for "
                f"tensors of {a_ndim} and {b_ndim} dims"
            )
        return list(range(a_ndim - dims, a_ndim)), list(range(dims))
    a_dims, b_dims = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(a_dims) != len(b_dims):
        raise ShapeError(f"tensordot: dims {dims} name {len(a_dims)} and {len(b_dims)} dims")
    for ds, ndim in ((a_dims, a_ndim), (b_dims, b_ndim)):
        if any(not -ndim <= d < ndim for d in ds):
            raise ShapeError(f"tensordot: dims {dims} out of range for {ndim} dims")
    return [d % a_ndim for d in a_dims], [d % b_ndim for d in b_dims]


def tensordot(a, b, dims=2):
    """Sum of products over dims of a and b: the last ``dims`` of a with the first of b, or
    the pairs of lists ``([a dims], [b dims])``. The result has a's remaining dims, then b's.

    >>> import chainrule as cr
    >>> cr.tensordot(cr.ones(2, 3, 4), cr.ones(3, 4, 5)).shape
    (2, 5)
    """
    a_shape, b_shape = shape_of(a), shape_of(b)
    a_dims, b_dims = _dims_pair(len(a_shape), len(b_shape), dims)
    letters = iter(string.ascii_letters)
    a_terms = [next(letters) for _ in a_shape]
    b_terms = [next(letters) for _ in b_shape]
    for i, j in zip(a_dims, b_dims):
        if a_shape[i] != b_shape[j]:
            raise ShapeError(
                f"tensordot: shapes {_both(a_shape, b_shape)}: dim {i} of a has size "
                f"{a_shape[i]} but dim {j} of b has {b_shape[j]}"
            )
        b_terms[j] = a_terms[i]
    out = [c for i, c in enumerate(a_terms) if i not in a_dims]
    out += [c for j, c in enumerate(b_terms) if j not in b_dims]
    return einsum(f"{''.join(a_terms)},{''.join(b_terms)}->{''.join(out)}", a, b)


def inner(input, other):
    """Sums of products over the last dims: shape input.shape[:-1] + other.shape[:-1]; a
    0-d operand multiplies.

    >>> import chainrule as cr
    >>> cr.inner(cr.tensor([1.0, 2.0]), cr.tensor([[1.0, 1.0], [0.0, 1.0]])).tolist()
    [3.0, 2.0]
    """
    if not shape_of(input) or not shape_of(other):
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def kron(input, other):
    """The Kronecker product: every element of input times a whole copy of other.

    >>> import chainrule as cr
    >>> cr.kron(cr.tensor([1.0, 10.0]), cr.tensor([1.0, 2.0])).tolist()
    [1.0, 2.0, 10.0, 20.0]
    """
    x_shape, y_shape = shape_of(input), shape_of(other)
    ndim = max(len(x_shape), len(y_shape))
    x_shape = (1,) * (ndim - len(x_shape)) + x_shape
    y_shape = (1,) * (ndim - len(y_shape)) + y_shape
    # Interleave the dims (a1, 1, a2, 1...) * (1, b1, 1, b2...), then merge each pair.
    x = reshape(input, tuple(d for n in x_shape for d in (n, 1)))
    y = reshape(other, tuple(d for n in y_shape for d in (1, n)))
    return reshape(x * y, tuple(m * n for m, n in zip(x_shape, y_shape)))


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (batch dims broadcast). ``dim=None``
    takes the first dim of size 3, as ``torch.cross`` (``linalg.cross`` takes -1).

    >>> import chainrule as cr
    >>> cr.cross(cr.tensor([1.0, 0.0, 0.0]), cr.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    x_shape, y_shape = shape_of(input), shape_of(other)
    if len(x_shape) != len(y_shape):
        raise ShapeError(f"cross: shapes {_both(x_shape, y_shape)} differ in their numbers of dims")
    try:
        out_shape = np.broadcast_shapes(x_shape, y_shape)
    except ValueError:
        raise ShapeError(f"cross: shapes {_both(x_shape, y_shape)} do not broadcast") from None
    if dim is None:
        dim = next((i for i, n in enumerate(out_shape) if n == 3), None)
        if dim is None:
            raise ShapeError(f"cross: no dim of size 3 in shapes {_both(x_shape, y_shape)}")
    if not -len(out_shape) <= dim < len(out_shape):
        raise ShapeError(f"cross: dim {dim} is out of range for shape {fmt_shape(out_shape)}")
    d = dim % len(out_shape)
    if x_shape[d] != 3 or y_shape[d] != 3:
        raise ShapeError(
            f"cross: shapes {_both(x_shape, y_shape)} must both have size 3 at dim {dim}"
        )
    # out[i] = x[i+1] y[i+2] - x[i+2] y[i+1], indices mod 3: shifted copies along dim.
    x1, x2 = xp.roll(input, -1, d), xp.roll(input, -2, d)
    y1, y2 = xp.roll(other, -1, d), xp.roll(other, -2, d)
    return x1 * y2 - x2 * y1


# torch.linalg's products.


def multi_dot(tensors: Sequence):
    """The product of a chain of matrices, left to right; the first may be a row vector
    (1-D) and the last a column vector, which drop from the result as in matmul.

    >>> import chainrule as cr
    >>> cr.linalg.multi_dot([cr.ones(3), cr.ones(3, 4), cr.ones(4)]).item()
    12.0
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ShapeError(f"multi_dot: expects at least 2 tensors, got {len(tensors)}")
    shapes = [shape_of(t) for t in tensors]
    for i, s in enumerate(shapes):
        allowed = (1, 2) if i in (0, len(shapes) - 1) else (2,)
        if len(s) not in allowed:
            where = "the first and last" if len(allowed) == 2 else "the middle ones"
            raise ShapeError(
                f"multi_dot: tensor {i} has shape {fmt_shape(s)}; {where} must be "
                f"{' or '.join(f'{r}-D' for r in allowed)}"
            )
    for i in range(len(shapes) - 1):
        a, b = shapes[i], shapes[i + 1]
        if a[-1] != b[0]:
            raise ShapeError(
                f"multi_dot: tensor {i} of shape {fmt_shape(a)} and tensor {i + 1} of shape "
                f"{fmt_shape(b)} do not align: {a[-1]} != {b[0]}"
            )
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def linalg_cross(input, other, *, dim: int = -1):
    """The cross product of 3-vectors along ``dim`` (-1 by default; batch dims broadcast).

    >>> import chainrule as cr
    >>> cr.linalg.cross(cr.tensor([0.0, 1.0, 0.0]), cr.tensor([0.0, 0.0, 1.0])).tolist()
    [1.0, 0.0, 0.0]
    """
    return cross(input, other, dim)


def vecdot(x, y, *, dim: int = -1):
    """Sums of products along ``dim`` (batch dims broadcast).

    >>> import chainrule as cr
    >>> cr.linalg.vecdot(cr.tensor([[1.0, 2.0], [3.0, 4.0]]), cr.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    return reduce.sum(x * y, dim)
