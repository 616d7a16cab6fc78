"""Linear algebra rows: matmul (vectors, matrices, batches) and einsum; dot and outer composed.

Sliding windows for convolution and pooling are not here.
"""

from __future__ import annotations

import functools
import inspect
import math
import string
from collections.abc import Callable, Sequence

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import NeedsValues, Op, with_rank
from .shape import reshape

__all__ = ["dot", "einsum", "matmul", "outer"]


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
    """np.matmul, except that a stack of matrices times one matrix (a linear layer on
    (batch, tokens, features)) is one product with the stack merged into the rows: one BLAS
    call instead of one per matrix. ``out``: an array to write the product into."""
    if y.ndim == 2 and x.ndim > 2:
        rows = x.reshape(-1, x.shape[-1])
        if out is not None:
            np.matmul(rows, y, out=out.reshape(-1, y.shape[-1]))
            return out
        return (rows @ y).reshape(*x.shape[:-1], y.shape[-1])
    if out is not None:
        return np.matmul(x, y, out=out)
    return x @ y  # also for Tensors, in rules run with create_graph


def _matmul_grad_y(g, x, y_shape):
    """The gradient of x @ y for y: x.mT @ g, whose stack the engine would sum; for a single
    matrix y, the same sum as one product over the merged rows."""
    if len(y_shape) == 2 and x.ndim > 2:
        return x.reshape(-1, x.shape[-1]).mT @ g.reshape(-1, g.shape[-1])
    return x.mT @ g


# fmt: off
# Both operands have at least 2 dims here (matmul() promotes vectors first), so each rule is
# one product; the engine sums the gradient over broadcast batch dims.
matmul_row = Op("matmul", _matmul,
                vjp=(lambda g, y: _matmul(g, y.mT), _matmul_grad_y),
                jvp=(lambda dx, y: dx @ y, lambda dy, x: x @ dy),
                kind="contraction", batch=_batch_matmul, flops=matmul_flops, writes_out=True,
                doc="The matrix product of x and y (2 dims or more), batch dims broadcast.")
# x @ y + z in one row, as convolution needs: composed, the sum would be a second array the
# size of the output (a convolution's largest).
matmul_add_row = Op("matmul_add", _matmul_add, inputs=("x", "y", "z"),
                    vjp=(lambda g, y: _matmul(g, y.mT), _matmul_grad_y, lambda g: g),
                    jvp=(lambda dx, y: dx @ y, lambda dy, x: x @ dy, lambda dz: dz),
                    kind="contraction", batch=_batch_matmul, flops=matmul_flops,
                    writes_out=True,
                    doc="x @ y + z in one pass (a linear layer or a convolution with a bias).")
# fmt: on


def _shape(x) -> tuple:
    return x.data.shape if isinstance(x, Tensor) else np.shape(x)  # np.shape adds a layer


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
    x_dtype, y_dtype = getattr(x, "dtype", None), getattr(y, "dtype", None)
    if x_dtype != y_dtype and x_dtype is not None and y_dtype is not None:
        # PyTorch's matmul takes one dtype: promoting would silently run a float32 model
        # in float64 (or an integer product in floating point).
        raise DTypeError(
            f"matmul: operands have dtypes {fmt_dtype(x_dtype)} and {fmt_dtype(y_dtype)}; "
            "both must have one dtype: convert one with .to(dtype)"
        )
    x_shape, y_shape = _shape(x), _shape(y)
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


# einsum. The public function rewrites the equation into an explicit one without '...', so
# the row and its rules only ever see one subscript letter per dimension.


def _explicit(equation: str, shapes: Sequence[tuple]) -> str:
    """``equation`` with its output spelled out and each '...' replaced by letters.

    Ellipsis dims broadcast as in NumPy (aligned on the right): with three of them named
    "ABC", an operand whose '...' covers two dims gets "BC". The implicit output (no "->")
    is the ellipsis dims, then the letters that appear once, sorted, as in NumPy and PyTorch.
    """
    compact = equation.replace(" ", "")
    lhs, arrow, rhs = compact.partition("->")
    bad = sorted(set(lhs + rhs) - set(string.ascii_letters + ",."))
    if bad or "," in rhs:
        shown = bad[0] if bad else ","
        raise ShapeError(f"einsum: unexpected {shown!r} in equation {equation!r}")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(
            f"einsum: equation {equation!r} has {len(terms)} operand terms but "
            f"{len(shapes)} operands were given"
        )
    for term in (*terms, rhs):
        if term.count(".") not in (0, 3) or (term.count(".") and "..." not in term):
            raise ShapeError(f"einsum: '.' must appear as one '...' per term in {equation!r}")
    ellipsis_ndims = []
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        named = len(term.replace("...", ""))
        if len(shape) < named or (len(shape) > named and "..." not in term):
            raise ShapeError(
                f"einsum: operand {k} has shape {fmt_shape(shape)} but its subscripts "
                f"{term!r} name {named} dimensions"
            )
        ellipsis_ndims.append(len(shape) - named)
    spare = [c for c in string.ascii_letters if c not in compact]
    n_ellipsis = max(ellipsis_ndims, default=0)
    if n_ellipsis > len(spare):
        raise ShapeError(f"einsum: {equation!r} needs more than 52 subscript letters")
    dots = "".join(spare[:n_ellipsis])
    terms = [t.replace("...", dots[n_ellipsis - n :]) for t, n in zip(terms, ellipsis_ndims)]
    letters = "".join(terms)
    if arrow:
        output = rhs.replace("...", dots)
    else:
        once = sorted(c for c in set(letters) if letters.count(c) == 1 and c not in dots)
        output = dots + "".join(once)
    for c in output:
        if output.count(c) > 1:
            raise ShapeError(f"einsum: output subscript {c!r} appears more than once")
        if c not in letters:
            raise ShapeError(f"einsum: output subscript {c!r} does not appear in any operand")
    _check_sizes(terms, shapes, dots)
    return ",".join(terms) + "->" + output


def _check_sizes(terms: Sequence[str], shapes: Sequence[tuple], dots: str) -> None:
    """Each letter has one size: equal within an operand, equal or 1 (broadcast) across."""
    sizes: dict[str, tuple[int, int]] = {}
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        mine: dict[str, int] = {}
        for c, n in zip(term, shape):
            if mine.setdefault(c, n) != n:
                raise ShapeError(
                    f"einsum: subscript {c!r} repeats in operand {k} (shape "
                    f"{fmt_shape(shape)}) with different sizes {mine[c]} and {n}"
                )
        for c, n in mine.items():
            size, first = sizes.setdefault(c, (n, k))
            if n != size and 1 not in (n, size):
                what = "dims under '...' have" if c in dots else f"subscript {c!r} has"
                raise ShapeError(
                    f"einsum: {what} size {size} in operand {first} but {n} in "
                    f"operand {k} (shapes {fmt_shape(shapes[first])} and {fmt_shape(shape)})"
                )
            if size == 1:
                sizes[c] = (n, k)


def _einsum_vjp(i: int, g, equation: str, shape: tuple, others: Sequence):
    """The gradient for operand i: one einsum of g with the other operands.

    Its output is operand i's subscripts. Two things need a constant operand, because an
    einsum output may neither repeat a letter nor name one that no input has:
    - a repeated letter ("ii->i": a diagonal): the gradient lives on the diagonal, so the
      repeat gets a fresh letter tied to the first by an identity matrix;
    - a letter only operand i has, summed out ("ij->i"): the gradient is constant along it,
      so a ones array supplies it.
    """
    lhs, output = equation.split("->")
    terms = lhs.split(",")
    target = terms[i]
    inputs = [output, *terms[:i], *terms[i + 1 :]]
    operands = [g, *others]
    covered = "".join(inputs)
    fresh = (c for c in string.ascii_letters if c not in equation)
    result, lone, lone_sizes = "", "", []
    for c, n in zip(target, shape):
        if c in result:
            new = next(fresh)
            inputs.append(c + new)
            operands.append(np.eye(n, dtype=g.dtype))
            result += new
            continue
        result += c
        if c not in covered and target.count(c) == 1:
            lone += c
            lone_sizes.append(n)
    if lone:
        inputs.append(lone)
        operands.append(np.ones(lone_sizes, dtype=g.dtype))
    grad = xp.einsum(",".join(inputs) + "->" + result, *operands)
    if any(m == 1 and n != 1 for m, n in zip(grad.shape, shape)):
        # A letter of size 1 in every other operand, broadcast against operand i's size: the
        # gradient is constant along it. (Where operand i has the 1, the engine sums back.)
        grad = xp.expand(grad, tuple(n if m == 1 else m for m, n in zip(grad.shape, shape)))
    return grad


def _einsum_jvp(i: int, dx, equation: str, others: Sequence):
    """Operand i's share of the tangent: einsum is linear in each operand, so it is the same
    einsum with operand i replaced by its tangent."""
    return xp.einsum(equation, *others[:i], dx, *others[i:])


def _asking(names: Sequence[str], fn: Callable) -> Callable:
    """``fn`` declared to take ``names`` positionally: rules are given what they name."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    fn.__signature__ = inspect.Signature([inspect.Parameter(n, kind) for n in names])
    return fn


def _einsum_vjp_rule(i: int, names: Sequence[str]) -> Callable:
    others = [n for j, n in enumerate(names) if j != i]
    asked = ("g", "equation", f"{names[i]}_shape", *others)
    return _asking(asked, lambda g, equation, shape, *xs: _einsum_vjp(i, g, equation, shape, xs))


def _einsum_jvp_rule(i: int, names: Sequence[str]) -> Callable:
    others = [n for j, n in enumerate(names) if j != i]
    asked = (f"d{names[i]}", "equation", *others)
    return _asking(asked, lambda dx, equation, *xs: _einsum_jvp(i, dx, equation, xs))


def _batch_einsum(op: Op, values, batched, params):
    equation = params["equation"]  # explicit: no '...', one letter per dimension
    spare = [c for c in string.ascii_letters if c not in equation]
    if not spare:
        raise NeedsValues(None, "einsum: no subscript letter left for the batch dim")
    lhs, output = equation.split("->")
    terms = [spare[0] + t if b else t for t, b in zip(lhs.split(","), batched)]
    return op(*values, equation=",".join(terms) + "->" + spare[0] + output)


def _einsum_flops(*shapes: tuple, equation: str) -> int:
    """2 * (operands - 1) products for every combination of the equation's letters; 0 when
    a shape is not known (an operand the backward did not save)."""
    terms = equation.split("->")[0].split(",")
    sizes = {}
    for term, shape in zip(terms, shapes):
        if len(term) != len(shape):
            return 0
        sizes.update(zip(term, shape))
    return 2 * (len(shapes) - 1) * math.prod(sizes.values())


@functools.cache
def einsum_row(n: int) -> Op:
    """The einsum row for ``n`` operands, named x0, x1, ...

    A row has a fixed list of inputs and einsum takes any number of operands, so there is
    one row per operand count, all named "einsum", each made on first use. The equation
    reaches the row (and its rules) explicit, without '...'.
    """
    names = tuple(f"x{i}" for i in range(n))
    return Op(
        "einsum",
        lambda *xs, equation: np.einsum(equation, *xs, optimize=True),
        vjp=tuple(_einsum_vjp_rule(i, names) for i in range(n)),
        jvp=tuple(_einsum_jvp_rule(i, names) for i in range(n)),
        inputs=names,
        kind="contraction",
        batch=_batch_einsum,
        flops=_einsum_flops,
        doc="Einstein summation over an explicit equation (no '...').",
    )


#: The two-operand row, the one REGISTRY lists (every count shares its name and rules).
einsum_pair = einsum_row(2)


def einsum(equation: str, *operands):
    """Einstein summation, as ``numpy.einsum`` and ``torch.einsum``, differentiable.

    Subscript letters name dimensions; a letter repeated within an operand takes its
    diagonal, letters left out of the output are summed, '...' stands for broadcast
    leading dims, and without "->" the output is the letters that appear once, sorted.
    Operands may also be passed as one list, as PyTorch allows.

    >>> import chainrule as cr
    >>> a = cr.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> cr.einsum("ii->", a).item(), cr.einsum("ij,jk", a, a).tolist()
    (5.0, [[7.0, 10.0], [15.0, 22.0]])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ShapeError(f"einsum: {equation!r} was given no operands")
    explicit = _explicit(equation, [np.shape(x) for x in operands])
    return einsum_row(len(operands))(*operands, equation=explicit)
