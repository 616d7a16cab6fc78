"""Matrix products by name, as PyTorch spells them: mm, bmm and mv (fixed ranks, which
matmul's broadcasting would otherwise take), their scaled sums addmm, baddbmm, addmv, addbmm
and addr, addcmul and addcdiv, tensordot, inner, vdot, kron, cross, chain_matmul and
adjoint. All are composed from matmul, einsum and elementwise rows."""

from __future__ import annotations

import string

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DTypeError, ShapeError, fmt_dtype, fmt_shape
from .linalg import _both, _shape, einsum, matmul
from .shape import reshape

__all__ = [
    "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "adjoint", "baddbmm", "bmm",
    "chain_matmul", "cross", "inner", "kron", "mm", "mv", "tensordot", "vdot",
]  # fmt: skip


def _ranks(op: str, named: dict, ranks: tuple) -> list[tuple]:
    """The operands' shapes, checked to have the given numbers of dims."""
    shapes = [_shape(x) for x in named.values()]
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


def _scaled_sum(op: str, input, product, beta, alpha):
    """beta * input + alpha * product, input broadcast to the product's shape; beta=0
    ignores input (its nan and inf too), as in PyTorch."""
    out_shape, in_shape = _shape(product), _shape(input)
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
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2); input broadcasts to (b, n, p).

    >>> import chainrule as cr
    >>> cr.baddbmm(cr.zeros(3, 1, 1), cr.ones(3, 2, 4), cr.ones(3, 4, 5)).shape
    (3, 2, 5)
    """
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * mv(mat, vec); input broadcasts to (n,).

    >>> import chainrule as cr
    >>> cr.addmv(cr.ones(2), cr.eye(2), cr.tensor([2.0, 3.0]), beta=0.5).tolist()
    [2.5, 3.5]
    """
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (sum of the products batch1[i] @ batch2[i]); input broadcasts
    to (n, p).

    >>> import chainrule as cr
    >>> cr.addbmm(cr.zeros(2, 2), cr.ones(3, 2, 4), cr.ones(3, 4, 2)).tolist()
    [[12.0, 12.0], [12.0, 12.0]]
    """
    _aligned("addbmm", *_ranks("addbmm", {"batch1": batch1, "batch2": batch2}, (3, 3)))
    return _scaled_sum("addbmm", input, einsum("bij,bjk->ik", batch1, batch2), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2); input broadcasts to (n, m).

    >>> import chainrule as cr
    >>> cr.addr(cr.ones(2, 2), cr.tensor([1.0, 2.0]), cr.tensor([1.0, 3.0]), beta=2).tolist()
    [[3.0, 5.0], [4.0, 8.0]]
    """
    _ranks("addr", {"vec1": vec1, "vec2": vec2}, (1, 1))
    return _scaled_sum("addr", input, reshape(vec1, (-1, 1)) * vec2, beta, alpha)


def _pointwise(op: str, tensors: tuple) -> None:
    shapes = [_shape(t) for t in tensors]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        shown = ", ".join(fmt_shape(s) for s in shapes)
        raise ShapeError(f"{op}: shapes {shown} do not broadcast") from None


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2, all three broadcast.

    >>> import chainrule as cr
    >>> cr.addcmul(cr.ones(2), cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0]), value=0.5).tolist()
    [2.5, 5.0]
    """
    _pointwise("addcmul", (input, tensor1, tensor2))
    return input + value * (tensor1 * tensor2)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2, all three broadcast; integer tensor1 and tensor2
    are a DTypeError, as in PyTorch (whose old addcdiv divided integers by truncation).

    >>> import chainrule as cr
    >>> cr.addcdiv(cr.ones(2), cr.tensor([1.0, 2.0]), cr.tensor([4.0, 4.0]), value=2).tolist()
    [1.5, 2.0]
    """
    _pointwise("addcdiv", (input, tensor1, tensor2))
    dtypes = [np.dtype(t.dtype if isinstance(t, Tensor) else np.asarray(t).dtype)
              for t in (tensor1, tensor2)]  # fmt: skip
    if all(d.kind in "biu" for d in dtypes):
        raise DTypeError(
            f"addcdiv: tensor1 and tensor2 are integers ({fmt_dtype(dtypes[0])}, "
            f"{fmt_dtype(dtypes[1])}); convert them to a floating dtype, or write "
            "input + value * trunc(tensor1 / tensor2) for the old integer division"
        )
    return input + value * (tensor1 / tensor2)


def vdot(input, other):
    """The inner product of two 1-D tensors of the same length (real: as `dot`).

    >>> import chainrule as cr
    >>> cr.vdot(cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0])).item()
    11.0
    """
    x_shape, y_shape = _shape(input), _shape(other)
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
    shapes = [_shape(m) for m in matrices]
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
    shape = _shape(input)
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
    a_shape, b_shape = _shape(a), _shape(b)
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
    if not _shape(input) or not _shape(other):
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def kron(input, other):
    """The Kronecker product: every element of input times a whole copy of other.

    >>> import chainrule as cr
    >>> cr.kron(cr.tensor([1.0, 10.0]), cr.tensor([1.0, 2.0])).tolist()
    [1.0, 2.0, 10.0, 20.0]
    """
    x_shape, y_shape = _shape(input), _shape(other)
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
    x_shape, y_shape = _shape(input), _shape(other)
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
