"""Einstein summation: the einsum rows (one per operand count) with their gradients, and
``einsum``, which rewrites an equation into an explicit one (no '...', its output spelled out)
before the row sees it.
"""

from __future__ import annotations

import functools
import inspect
import math
import string
from collections.abc import Callable, Sequence

import numpy as np

from .. import xp
from ..errors import ShapeError, fmt_shape
from ..op import NeedsValues, Op

__all__ = ["einsum"]


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
