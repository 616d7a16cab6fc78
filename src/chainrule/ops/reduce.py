"""Reduction rows: sum, mean, var, std, prod, amax/amin, max/min, argmax, logsumexp, norm,
and all/any. The normalisers softmax and log_softmax are in `chainrule.ops.normalizers`.

``dim`` follows PyTorch: an int, a tuple of ints, or None (or ``()``) for every dimension;
negative dims count from the end. Rows receive ``dim`` normalised to a sorted tuple of
non-negative ints. Most rows state one local derivative, ∂out/∂x, with `reduction`. The
public functions shadow the builtins sum, max, min, all and any, hence ``builtins.max``.
"""

from __future__ import annotations

import builtins
import inspect
import math
import numbers
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import kernels, xp
from .._tensor import Tensor
from ..errors import (
    DomainError,
    DTypeError,
    EmptyReductionError,
    OutOfRangeError,
    ShapeError,
    fmt_shape,
)
from ..observe import replayed_whole
from ..op import LINEAR, Loops, Op, TensorRule, shifted
from . import elementwise

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "logsumexp", "max", "mean", "min", "norm",
    "prod", "std", "sum", "var",
]  # fmt: skip


_ALL_DIMS = [tuple(range(n)) for n in range(65)]  # NumPy arrays have at most 64 dims


def normalize_dims(ndim: int, dim, op: str) -> tuple[int, ...]:
    """``dim`` as a sorted tuple of non-negative ints, checked against ``ndim``.

    None and ``()`` mean every dimension, as in PyTorch; a 0-d tensor accepts 0 and -1 and
    has no dimension to reduce.
    """
    if dim is None:
        return _ALL_DIMS[ndim]
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, first
        return (dim % ndim,)
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    if not dims:
        return tuple(range(ndim))
    out = []
    size = ndim or 1  # a 0-d tensor takes dim 0 or -1, as in PyTorch
    for d in dims:
        if not isinstance(d, numbers.Integral):
            raise DTypeError(f"{op}: dim must be an int or a tuple of ints, got {d!r}")
        if not -size <= d < size:
            raise OutOfRangeError(
                f"{op}: dim {d} is out of range for a tensor with {ndim} dimensions"
            )
        out.append(int(d) % size)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: dim {dim} repeats a dimension")
    return tuple(sorted(out)) if ndim else ()


def keepdim_shape(x_shape: tuple, dim: tuple) -> tuple:
    """``x_shape`` with the reduced dimensions set to 1."""
    return tuple(1 if i in dim else n for i, n in enumerate(x_shape))


def keep_dims(t, x_shape: tuple, dim: tuple, keepdim: bool):
    """A reduced array or Tensor with its reduced dimensions kept (size 1), so it broadcasts
    against the input."""
    if keepdim or t.ndim == 0:  # a 0-d result broadcasts against anything as it is
        return t
    return xp.reshape(t, keepdim_shape(x_shape, dim))


def expand_back(g, x_shape: tuple, dim: tuple, keepdim: bool):
    """Broadcast a reduced gradient back to the input's shape (arrays or Tensors)."""
    return xp.expand(keep_dims(g, x_shape, dim, keepdim), x_shape)


def _count(x_shape: tuple, dim: tuple) -> int:
    if len(dim) == len(x_shape):
        return math.prod(x_shape)
    return math.prod([x_shape[d] for d in dim])


def _inverse_count(x_shape: tuple, dim: tuple) -> float:
    """1 / the number of elements reduced; nan for none (the mean of no elements is nan, and
    the gradient of an empty input has no element for it to reach)."""
    count = _count(x_shape, dim)
    return 1 / count if count else math.nan


def max_shift(x, dim: tuple):
    """The maximum over ``dim`` (kept), by which softmax and logsumexp shift x before exp;
    zeros where ``dim`` is empty: no elements have no maximum, and their sum of exps is 0
    whatever the shift (PyTorch's empty softmax and logsumexp = -inf follow)."""
    if _count(x.shape, dim) == 0:
        return np.zeros(keepdim_shape(x.shape, dim), x.dtype)
    return kernels.max_reduce(x, dim, keepdims=True)


def _signature(*names: str) -> inspect.Signature:
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter(name, kind) for name in names])


def batch_reduction(op: Op, values: list, batched: list, params: dict):
    """The batching rule of a row over ``dim``: the same dims, one further on."""
    return op(values[0], **{**params, "dim": shifted(params["dim"])})


def _batch_arg_reduction(op: Op, values: list, batched: list, params: dict):
    (x,) = values
    if params["dim"] is not None:
        return op(x, dim=params["dim"] + 1, keepdim=params["keepdim"])
    size = x.shape[0]  # dim=None: over each example's flattened elements
    out = op(x.reshape((size, math.prod(x.shape[1:]))), dim=1, keepdim=False)
    return out.reshape((size,) + (1,) * (x.ndim - 1)) if params["keepdim"] else out


def reduction(name: str, forward: Callable, partial: Callable, doc: str, batch=None) -> Op:
    """A reduction row from its local derivative ∂out/∂x, an array of the input's shape.

    ``forward(x, dim, keepdim, **params)`` reduces over the normalised ``dim``. ``partial``
    asks by name, like any rule, for ``x``, ``x_shape``, ``out``, ``dim`` and op
    parameters; it gets ``out`` with the reduced dimensions kept, so ``x == out`` and
    ``x - out`` broadcast. The VJP is g broadcast back times the partial; the JVP sums
    partial * dx over ``dim``, so both follow from one expression. The row batches by
    shifting ``dim`` past the batch dim (`batch_reduction`).

    >>> total = reduction("total_example", lambda x, dim, keepdim: x.sum(dim, keepdims=keepdim),
    ...                   lambda x: 1 + 0 * x, doc="The sum over dim.")
    >>> total.vjp[0].names
    ('g', 'x_shape', 'dim', 'keepdim', 'x')
    """
    local = TensorRule(partial)
    fixed = ("x_shape", "dim", "keepdim")
    names = fixed + tuple(n for n in local.names if n not in fixed)

    def partial_at(values: tuple):
        env = dict(zip(names, values))
        if "out" in env:
            env["out"] = keep_dims(env["out"], env["x_shape"], env["dim"], env["keepdim"])
        return env, local(None, env)

    def vjp(g, *values):
        env, d = partial_at(values)
        return expand_back(g, env["x_shape"], env["dim"], env["keepdim"]) * d

    def jvp(dx, *values):
        env, d = partial_at(values)
        return xp.sum(dx * d, env["dim"], env["keepdim"])

    vjp.__signature__ = _signature("g", *names)
    jvp.__signature__ = _signature("dx", *names)
    return Op(
        name,
        forward,
        vjp=(vjp,),
        jvp=(jvp,),
        kind="reduction",
        batch=batch or batch_reduction,
        doc=doc,
    )


# Local derivatives, shared by the rows below. Each works on arrays and on Tensors.


def _centered(x, dim: tuple):
    return x - xp.run(mean_row, x, dim=dim, keepdim=True)


def _dof(x_shape: tuple, dim: tuple, correction) -> float:
    """The divisor of var: max(N - correction, 0), as in PyTorch."""
    return builtins.max(_count(x_shape, dim) - correction, 0)


def _var_partial(x, dim: tuple, correction):
    dof = _dof(x.shape, dim, correction)
    # No degrees of freedom: var is nan or inf, and so is its gradient (nan, not an error).
    return _centered(x, dim) * (2 / dof if dof else math.nan)


def _div_or_zero(a, b):
    """a / b, and 0 where b == 0: the subgradient PyTorch takes for std and norm at 0."""
    zero = b == 0
    return xp.where(zero, 0, a / xp.where(zero, 1, b))


def _ties(hit, dim: tuple, like):
    """1/k at each of the k elements of a slice where ``hit``, 0 elsewhere: tied extremes
    share the gradient equally, as in PyTorch."""
    hit = xp.cast(hit, dtype=like.dtype)
    return hit / xp.sum(hit, dim, True)


def _others_product(x, dim: tuple):
    """For each element, the product of the other elements of its slice along ``dim``.

    Built from prefix and suffix products, never by dividing by x, so it is exact where x
    has one zero or several. Given Tensors (create_graph=True) it is composed from rows
    instead (a product over an n x n grid per slice, x_i replaced by 1 on the diagonal),
    so it can be differentiated again.
    """
    rest = tuple(i for i in range(x.ndim) if i not in dim)
    order = rest + dim
    moved_shape = tuple(x.shape[i] for i in order)
    n = _count(x.shape, dim)
    if isinstance(x, Tensor):
        flat = xp.reshape(xp.permute(x, order), moved_shape[: len(rest)] + (1, n))
        others = prod(xp.where(np.eye(n, dtype=bool), 1, flat), -1)
    else:
        flat = np.transpose(x, order).reshape(moved_shape[: len(rest)] + (n,))
        ones = np.ones(flat.shape[:-1] + (1,), flat.dtype)
        before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
        after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)
        others = before * after[..., ::-1]
    return xp.permute(xp.reshape(others, moved_shape), tuple(np.argsort(order)))


def _norm_partial(x, out, p: float, dim: tuple):
    if p == 1:
        return xp.sign(x)
    if math.isinf(p):
        return xp.sign(x) * _ties(xp.abs(x) == out, dim, x)
    if p == 2:
        return _div_or_zero(x, out)
    # sign(x) |x|^(p-1) / out^(p-1), written as a power of |x| / out so it cannot overflow;
    # 0 where x == 0 (for p < 1 the power alone would be inf there) and where out == 0.
    # The power through the pow row, so arrays and Tensors (a compiled backward) agree bit for bit.
    ratio = xp.where(x == 0, 1, _div_or_zero(xp.abs(x), out))
    return xp.sign(x) * xp.run(elementwise.pow, ratio, p - 1)


@replayed_whole(pure=True)  # a compiled step's backward reads the new indices at each call
def _one_hot(x_shape: tuple, dim: tuple, indices: np.ndarray) -> np.ndarray:
    """True at ``indices`` along ``dim`` (kept-dims index array), False elsewhere."""
    if not dim:
        return np.ones((), dtype=bool)
    d = dim[0]
    positions = np.arange(x_shape[d]).reshape([-1 if i == d else 1 for i in range(len(x_shape))])
    return positions == indices


# Forwards that are more than one NumPy call.


def _mean(x, dim, keepdim):
    count = _count(x.shape, dim)
    if x.dtype.char == "e" and count:  # float16: np.mean sums it in float32
        return np.mean(x, axis=dim, keepdims=keepdim)
    # np.mean's arithmetic without its Python wrapper, which costs more than a small sum (and
    # warns "Mean of empty slice" where 0 / 0 gives nan, as in PyTorch).
    return kernels.add_reduce(x, dim, keepdim) / count


def _var(x, dim, keepdim, correction):
    squares = np.square(x - _mean(x, dim, True))
    return np.sum(squares, axis=dim, keepdims=keepdim) / _dof(np.shape(x), dim, correction)


def _logsumexp(x, dim, keepdim):
    # Shifting by the maximum keeps exp from overflowing; a slice whose maximum is not
    # finite (all -inf, or +inf) is shifted by 0 so that no inf - inf appears. An empty or
    # all -inf slice gives log(0) = -inf.
    shift = max_shift(x, dim)
    flat = shift.ravel()
    # One dot product tells that every maximum is finite (an overflow only takes the safe way).
    if flat.dtype.kind != "f" or not math.isfinite(np.dot(flat, flat)):
        shift = np.where(np.isfinite(shift), shift, 0)
    e = x - shift
    if type(e) is np.ndarray and e.dtype.kind == "f":
        kernels.exp_shifted(e)  # in place: e is this function's own array
    else:
        e = np.exp(e)  # integers (a float result), or a 0-d x's scalar
    out = np.asarray(kernels.add_reduce(e, dim, keepdims=True))  # a 0-d x gives a scalar
    np.log(out, out=out)
    out += shift
    return out if keepdim else out.reshape([n for d, n in enumerate(out.shape) if d not in dim])


def _at(reduce: np.ufunc, x, dim: tuple, keepdim: bool, indices: np.ndarray):
    """The values of x at ``indices`` along ``dim`` (kept), the extremes ``reduce`` finds:
    picked by one flat index when ``dim`` is the last axis of a C-ordered array (cheaper than
    reducing again over short rows), else reduced."""
    if type(x) is np.ndarray and dim and dim[0] == x.ndim - 1 and x.flags.c_contiguous:
        rows = x.reshape(-1, x.shape[-1])
        out = rows[np.arange(len(rows)), indices.reshape(-1)]
        return out.reshape(indices.shape if keepdim else indices.shape[:-1])
    return reduce.reduce(x, axis=dim, keepdims=keepdim)


def _norm(x, p, dim, keepdim):
    a = np.abs(x)
    if p == 2:
        return np.sqrt(np.sum(a * a, axis=dim, keepdims=keepdim))
    if p == 1:
        return np.sum(a, axis=dim, keepdims=keepdim)
    if p == math.inf:
        return np.amax(a, axis=dim, keepdims=keepdim)
    if p == -math.inf:
        return np.amin(a, axis=dim, keepdims=keepdim)
    return np.sum(a**p, axis=dim, keepdims=keepdim) ** (1 / p)


# fmt: off
sum_row = Op(
    "sum", lambda x, dim, keepdim: kernels.add_reduce(x, dim, keepdim),  # np.sum's
    vjp=(lambda g, x_shape, dim, keepdim: expand_back(g, x_shape, dim, keepdim),),
    jvp=LINEAR, kind="reduction", batch=batch_reduction, doc="The sum over dim.")
mean_row = Op(
    "mean", lambda x, dim, keepdim: _mean(x, dim, keepdim),
    vjp=(lambda g, x_shape, dim, keepdim:  # scaled before it is spread: fewer products
         expand_back(g * _inverse_count(x_shape, dim), x_shape, dim, keepdim),),
    jvp=LINEAR, kind="reduction", batch=batch_reduction, doc="The mean over dim.")
var_row = reduction("var", _var, lambda x, dim, correction: _var_partial(x, dim, correction),
                    doc="The variance over dim, with Bessel's correction.")
# d std = d var / (2 std), taken as 0 where std == 0 (a constant slice), as PyTorch does.
std_row = reduction(
    "std", lambda x, dim, keepdim, correction: np.sqrt(_var(x, dim, keepdim, correction)),
    lambda x, out, dim, correction: _div_or_zero(_var_partial(x, dim, correction), 2 * out),
    doc="The standard deviation over dim; its gradient is 0 where it is 0.")
prod_row = reduction(
    "prod", lambda x, dim, keepdim: np.prod(x, axis=dim, keepdims=keepdim),
    lambda x, dim: _others_product(x, dim),
    doc="The product over dim; the gradient is right where x has zeros.")
amax_row = reduction(
    "amax", lambda x, dim, keepdim: np.amax(x, axis=dim, keepdims=keepdim),
    lambda x, out, dim: _ties(x == out, dim, x),
    doc="The maximum over dim; tied elements share the gradient equally.")
amin_row = reduction(
    "amin", lambda x, dim, keepdim: np.amin(x, axis=dim, keepdims=keepdim),
    lambda x, out, dim: _ties(x == out, dim, x),
    doc="The minimum over dim; tied elements share the gradient equally.")
# max(x, dim) and min(x, dim): the values at precomputed indices (each slice's first extreme,
# so the reduction reads them, or `_at` picks them); only those get
# gradient. No batching rule: the public functions find the indices from the values first.
_READS_INDICES = Loops("max(x, dim) and min(x, dim) find their indices from the values")
max_row = reduction(
    "max", lambda x, dim, keepdim, indices: _at(np.maximum, x, dim, keepdim, indices),
    lambda x_shape, dim, indices: _one_hot(x_shape, dim, indices), batch=_READS_INDICES,
    doc="max(x, dim).values; the gradient goes to the first maximum of each slice only.")
min_row = reduction(
    "min", lambda x, dim, keepdim, indices: _at(np.minimum, x, dim, keepdim, indices),
    lambda x_shape, dim, indices: _one_hot(x_shape, dim, indices), batch=_READS_INDICES,
    doc="min(x, dim).values; the gradient goes to the first minimum of each slice only.")
logsumexp_row = reduction("logsumexp", _logsumexp, lambda x, out: xp.exp(x - out),
                          doc="log(sum(exp(x))) over dim, without overflow.")
norm_row = reduction("norm", _norm, lambda x, out, p, dim: _norm_partial(x, out, p, dim),
                     doc="The p-norm over dim.")

argmax_row = Op("argmax", lambda x, dim, keepdim:
                np.asarray(x).argmax(axis=dim, keepdims=keepdim).astype(np.int64, copy=False),
                vjp=None, inputs=("x",), kind="reduction", batch=_batch_arg_reduction,
                doc="The index of the first maximum (int64), over dim or all elements.")
argmin_row = Op("argmin", lambda x, dim, keepdim:
                np.asarray(x).argmin(axis=dim, keepdims=keepdim).astype(np.int64, copy=False),
                vjp=None, inputs=("x",), kind="reduction", batch=_batch_arg_reduction,
                doc="The index of the first minimum (int64), over dim or all elements.")
all_row = Op("all", lambda x, dim, keepdim: np.all(x, axis=dim, keepdims=keepdim),
             vjp=None, inputs=("x",), kind="reduction", batch=batch_reduction,
             doc="Whether every element over dim is true (non-zero).")
any_row = Op("any", lambda x, dim, keepdim: np.any(x, axis=dim, keepdims=keepdim),
             vjp=None, inputs=("x",), kind="reduction", batch=batch_reduction,
             doc="Whether any element over dim is true (non-zero).")
# fmt: on


class ValuesIndices(NamedTuple):
    """What ``max(x, dim)`` and ``min(x, dim)`` return, like ``torch.return_types.max``."""

    values: Tensor
    indices: Tensor


# Public functions: validate the arguments, normalise ``dim``, call the row.


def _data(x):
    return x._array if isinstance(x, Tensor) else x


def _dims(x, dim, op: str) -> tuple[int, ...]:
    return normalize_dims(x._array.ndim if isinstance(x, Tensor) else np.ndim(x), dim, op)


def _one_dim(x, dim, op: str, hint: str = "") -> tuple[int, ...]:
    """A single ``dim`` (an int) normalised to a tuple of one, or () for a 0-d tensor."""
    if type(dim) is not int and not isinstance(dim, numbers.Integral):
        raise DTypeError(f"{op}: dim must be one int, got {dim!r}{hint}")
    return _dims(x, dim, op)


def _check_not_empty(x, dim: tuple, op: str) -> None:
    shape = np.shape(_data(x))
    if 0 in [shape[d] for d in dim] or (not dim and 0 in shape):
        raise EmptyReductionError(
            f"{op}: cannot reduce a tensor of shape {fmt_shape(shape)} over an empty "
            f"dimension (dim {dim}): there is no extreme of no elements"
        )


def sum(x, dim=None, keepdim: bool = False):
    """Sum over ``dim`` (int, tuple, or None for all).

    >>> sum(Tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0)
    tensor([4., 6.])
    """
    return sum_row(x, dim=_dims(x, dim, "sum"), keepdim=keepdim)


def mean(x, dim=None, keepdim: bool = False):
    """Mean over ``dim``.

    >>> mean(Tensor([[1.0, 2.0], [3.0, 4.0]]), dim=-1, keepdim=True)
    tensor([[1.5000],
            [3.5000]])
    """
    return mean_row(x, dim=_dims(x, dim, "mean"), keepdim=keepdim)


def _correction(correction, op: str):
    if not isinstance(correction, numbers.Real) or isinstance(correction, bool):
        raise DTypeError(f"{op}: correction must be a number, got {correction!r}")
    return correction


def var(x, dim=None, *, correction=1, keepdim: bool = False):
    """Variance over ``dim``: the sum of squared deviations divided by N - ``correction``.

    ``correction=1`` (the default) is the unbiased estimate, 0 the population variance.
    With N <= correction the result is nan or inf, and its gradient nan.

    >>> var(Tensor([1.0, 2.0, 3.0, 4.0]))
    tensor(1.6667)
    """
    correction = _correction(correction, "var")
    return var_row(x, dim=_dims(x, dim, "var"), keepdim=keepdim, correction=correction)


def std(x, dim=None, *, correction=1, keepdim: bool = False):
    """Standard deviation over ``dim``: sqrt(var(x, dim, correction=correction)).

    Where std is 0 (a constant slice) the gradient is 0, as in PyTorch, not inf or nan.

    >>> std(Tensor([1.0, 2.0, 3.0, 4.0]), correction=0)
    tensor(1.1180)
    """
    correction = _correction(correction, "std")
    return std_row(x, dim=_dims(x, dim, "std"), keepdim=keepdim, correction=correction)


def prod(x, dim=None, keepdim: bool = False):
    """Product over one ``dim`` (an int), or over everything when ``dim`` is None.

    Gradients are exact when x holds zeros: each element's is the product of the others
    (computed without dividing by x).

    >>> x = Tensor([2.0, 0.0, 3.0], requires_grad=True)
    >>> prod(x).backward()
    >>> x.grad
    tensor([0., 6., 0.])
    """
    dims = _dims(x, None, "prod") if dim is None else _one_dim(x, dim, "prod")
    return prod_row(x, dim=dims, keepdim=keepdim)


def amax(x, dim=None, keepdim: bool = False):
    """Maximum over ``dim`` (int, tuple or None); tied maxima share the gradient equally.

    >>> x = Tensor([1.0, 3.0, 3.0], requires_grad=True)
    >>> amax(x).backward()
    >>> x.grad
    tensor([0.0000, 0.5000, 0.5000])
    """
    dims = _dims(x, dim, "amax")
    _check_not_empty(x, dims, "amax")
    return amax_row(x, dim=dims, keepdim=keepdim)


def amin(x, dim=None, keepdim: bool = False):
    """Minimum over ``dim`` (int, tuple or None); tied minima share the gradient equally.

    >>> amin(Tensor([[1.0, 5.0], [4.0, 2.0]]), dim=1)
    tensor([1., 2.])
    """
    dims = _dims(x, dim, "amin")
    _check_not_empty(x, dims, "amin")
    return amin_row(x, dim=dims, keepdim=keepdim)


def _select(row: Op, find: Callable, x, dim, keepdim: bool, op: str) -> ValuesIndices:
    """(values, indices) of the extreme along one ``dim``; gradient only to those indices."""
    dims = _one_dim(x, dim, op, f"; for several dims use a{op}")
    _check_not_empty(x, dims, op)
    indices, returned = _extreme_indices(x, find, dims, keepdim)
    values = row(x, dim=dims, keepdim=keepdim, indices=indices)
    return ValuesIndices(values, Tensor._make(returned))


@replayed_whole(pure=True)  # a compiled step finds the new extremes at each call
def _extreme_indices(x, find: Callable, dims: tuple, keepdim: bool) -> tuple:
    """The positions ``find`` (np.argmax or np.argmin) picks along ``dims`` (one dim or
    none): as the row keeps them (dims kept), and as returned to the caller."""
    data = np.asarray(_data(x))
    indices = find(data, axis=dims[0], keepdims=True) if dims else np.zeros((), np.int64)
    indices = indices.astype(np.int64, copy=False)
    returned = np.squeeze(indices, axis=dims) if not keepdim and dims else indices
    # A copy: the row keeps ``indices`` for backward, and the caller may change what we return
    # in place (index arrays are copied where they are kept, see indexing._index_item).
    return indices, returned.copy()


def max(x, dim=None, keepdim: bool = False):
    """The maximum of all elements, or (values, indices) along one ``dim``, as in PyTorch.

    Without ``dim`` this is ``amax(x)``: tied maxima share the gradient. With ``dim`` it
    returns a named tuple; the gradient goes only to the element at the returned index
    (the first maximum). ``keepdim`` without ``dim`` keeps every dimension (PyTorch
    refuses that combination).

    >>> max(Tensor([[1.0, 5.0], [4.0, 2.0]]), dim=1)
    ValuesIndices(values=tensor([5., 4.]), indices=tensor([1, 0]))
    """
    if dim is None:
        return amax(x, None, keepdim)
    return _select(max_row, np.argmax, x, dim, keepdim, "max")


def min(x, dim=None, keepdim: bool = False):
    """The minimum of all elements, or (values, indices) along one ``dim``, as in PyTorch.

    Without ``dim`` this is ``amin(x)``; with ``dim`` the gradient goes only to the first
    minimum of each slice.

    >>> min(Tensor([[1.0, 5.0], [4.0, 2.0]]), dim=0).indices
    tensor([0, 1])
    """
    if dim is None:
        return amin(x, None, keepdim)
    return _select(min_row, np.argmin, x, dim, keepdim, "min")


def _arg(row: Op, x, dim, keepdim: bool, op: str):
    if dim is None:
        _check_not_empty(x, (), op)
        return row(x, dim=None, keepdim=keepdim)
    dims = _one_dim(x, dim, op)
    _check_not_empty(x, dims, op)
    return row(x, dim=dims[0] if dims else None, keepdim=keepdim)


def argmax(x, dim=None, keepdim: bool = False):
    """Index (int64) of the maximum along ``dim``, or into the flattened tensor for None.

    At ties the first index wins. No gradient flows through indices.

    >>> argmax(Tensor([[1.0, 5.0], [4.0, 2.0]]), dim=1)
    tensor([1, 0])
    """
    return _arg(argmax_row, x, dim, keepdim, "argmax")


def argmin(x, dim=None, keepdim: bool = False):
    """Index (int64) of the minimum along ``dim``, or into the flattened tensor for None.

    >>> argmin(Tensor([[1.0, 5.0], [4.0, 2.0]]))
    tensor(0)
    """
    return _arg(argmin_row, x, dim, keepdim, "argmin")


def logsumexp(x, dim=None, keepdim: bool = False):
    """log(sum(exp(x))) over ``dim``, without overflow for large inputs.

    ``dim=None`` reduces everything (PyTorch needs an explicit dim). A slice of -inf
    gives -inf.

    >>> logsumexp(Tensor([1000.0, 1000.0]))
    tensor(1000.6932)
    """
    return logsumexp_row(x, dim=_dims(x, dim, "logsumexp"), keepdim=keepdim)


def _norm_order(p) -> float:
    if isinstance(p, str):
        if p == "fro":
            return 2.0
        raise DomainError(f"norm: p={p!r} is not supported; use 'fro', a number > 0, inf or -inf")
    if not isinstance(p, numbers.Real) or isinstance(p, bool):
        raise DTypeError(f"norm: p must be a number or 'fro', got {p!r}")
    if not (p > 0 or p == -math.inf):
        raise DomainError(f"norm: p must be > 0, inf or -inf, got {p!r}")
    return float(p)


def norm(x, p=2, dim=None, keepdim: bool = False):
    """The vector p-norm over ``dim`` (all elements by default, as one vector).

    ``p`` is 2 (also spelled 'fro'), 1, inf (largest |x|), -inf (smallest |x|) or any
    other positive number. Where the norm is 0 the gradient is 0, as in PyTorch; tied
    largest (smallest) |x| share the gradient of the inf (-inf) norm.

    >>> x = Tensor([3.0, -4.0], requires_grad=True)
    >>> norm(x).backward()
    >>> x.grad
    tensor([ 0.6000, -0.8000])
    """
    return norm_row(x, dim=_dims(x, dim, "norm"), keepdim=keepdim, p=_norm_order(p))


def all(x, dim=None, keepdim: bool = False):
    """Whether every element is true (non-zero) over ``dim``; a bool tensor.

    >>> all(Tensor([[1.0, 0.0], [2.0, 3.0]]), dim=1)
    tensor([False,  True])
    """
    return all_row(x, dim=_dims(x, dim, "all"), keepdim=keepdim)


def any(x, dim=None, keepdim: bool = False):
    """Whether some element is true (non-zero) over ``dim``; a bool tensor.

    >>> any(Tensor([[1.0, 0.0], [0.0, 0.0]]), dim=1)
    tensor([ True, False])
    """
    return any_row(x, dim=_dims(x, dim, "any"), keepdim=keepdim)
