"""Reverse- and forward-mode transforms in JAX's style: grad, value_and_grad, vjp, jvp, jacrev,
jacfwd, jacobian, hessian; PyTorch's grad_and_value, linearize, and its debug_unwrap and
functionalize (which have little to do here).

Reverse-mode transforms run the tensor engine's backward; when their inputs already take part
in an outer graph they build their result with ``create_graph=True``, so ``grad(grad(f))``
works. ``jvp`` and ``jacfwd`` run forward mode: one pass that carries a tangent beside every
value, using each op's JVP rule. Inside `chainrule.func.vmap` they work per example.
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from .._tensor import Tensor
from ..autograd import grad as autograd_grad
from ..autograd import node_order, run_backward, state
from ..dispatch import OpNode
from ..errors import DomainError, GraphError, ShapeError, fmt_shape
from ..ops.shape import cat
from . import batching
from .batching import BatchTracer


def _as_tensor(x, fn: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (numbers.Real, np.ndarray, list, tuple)):
        return Tensor(np.asarray(x, dtype=np.float64) if not isinstance(x, np.ndarray) else x)
    raise TypeError(f"{fn}: expected Tensors or numbers, got {type(x).__name__}")


def _track(x: Tensor) -> tuple[Tensor, bool]:
    """An input to differentiate with respect to, and whether an outer transform watches it.

    If ``x`` is already part of a graph (an outer ``grad`` differentiates through us), the
    input is an identity op on ``x``, so our result stays connected to it. Inside vmap, ``x``
    is first batched at every level (broadcast where it is not), so that each example has
    its own copy and gets its own gradient.
    """
    x = batching.lift(x)
    if x.requires_grad:
        return x.view_as(x), True
    return x.detach().requires_grad_(True), False


def _argnums(argnums, n: int, fn: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -n <= i < n:
            raise ValueError(f"{fn}: argnums {i} is out of range for {n} arguments")
    return tuple(i % n for i in nums)


def _autograd(outputs, inputs, **options) -> tuple:
    """`chainrule.autograd.grad`; inside vmap, one pass through the batch dims."""
    if batching.active_levels():
        return batching.grad(outputs, inputs, **options)
    return autograd_grad(outputs, inputs, **options)


def _prepare(args: Sequence, argnums, fn: str):
    args = list(args)
    nums = _argnums(argnums, len(args), fn)
    nested = False
    for i in nums:
        args[i], watched = _track(_as_tensor(args[i], fn))
        nested = nested or watched
    return args, nums, nested


def _split_aux(result, has_aux: bool, fn: str):
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise TypeError(f"{fn}: with has_aux=True, f must return a pair (output, aux)")
    return result


def value_and_grad(f: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning ``(f(*args), grad)``; with ``has_aux``, ``((out, aux), grad)``.

    >>> import chainrule as cr
    >>> value, g = value_and_grad(lambda x: (x**2).sum())(cr.tensor([1.0, 2.0]))
    >>> value.item(), g.tolist()
    (5.0, [2.0, 4.0])
    """

    def wrapper(*args):
        args, nums, nested = _prepare(args, argnums, "grad")
        out, aux = _split_aux(f(*args), has_aux, "grad")
        if not isinstance(out, Tensor) or out._array.size != 1:
            shape = fmt_shape(out.shape) if isinstance(out, Tensor) else type(out).__name__
            raise ShapeError(
                f"grad: f must return a one-element Tensor, got {shape}; "
                "use jacrev or jacobian for non-scalar outputs, or vjp"
            )
        if not out.requires_grad:
            grads = tuple(Tensor._make(np.zeros_like(args[i]._array)) for i in nums)
        else:
            grads = _autograd(out, [args[i] for i in nums], create_graph=nested, allow_unused=True)
            grads = tuple(
                Tensor._make(np.zeros_like(args[i]._array)) if g is None else g
                for i, g in zip(nums, grads)
            )
        result = grads[0] if isinstance(argnums, int) else grads
        value = out if nested else out.detach()
        return ((value, aux) if has_aux else value), result

    return wrapper


def grad(f: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar-valued ``f`` with respect to argument(s) ``argnums``.

    Composable: ``grad(grad(f))`` is the second derivative.

    >>> import chainrule as cr
    >>> d2 = grad(grad(lambda x: (x**3).sum()))
    >>> d2(cr.tensor(2.0)).item()
    12.0
    """
    value_and_grad_f = value_and_grad(f, argnums, has_aux)

    def wrapper(*args):
        value, g = value_and_grad_f(*args)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(f: Callable, *primals, has_aux: bool = False):
    """``(f(*primals), vjp_fn)`` where ``vjp_fn(cotangent)`` returns one gradient per primal.

    >>> import chainrule as cr
    >>> out, vjp_fn = vjp(lambda x: x * 3, cr.tensor([1.0, 2.0]))
    >>> vjp_fn(cr.tensor([1.0, 10.0]))[0].tolist()
    [3.0, 30.0]
    """
    args, nums, nested = _prepare(primals, tuple(range(len(primals))), "vjp")
    out, aux = _split_aux(f(*args), has_aux, "vjp")
    outs = list(out) if isinstance(out, (tuple, list)) else [out]

    def vjp_fn(cotangent):
        cotangents = list(cotangent) if isinstance(cotangent, (tuple, list)) else [cotangent]
        if len(cotangents) != len(outs):
            raise ValueError(f"vjp: expected {len(outs)} cotangents, got {len(cotangents)}")
        pairs = [(o, _as_tensor(c, "vjp")) for o, c in zip(outs, cotangents) if o.requires_grad]
        for o, c in pairs:
            if c.shape != o.shape:
                raise ShapeError(
                    f"vjp: cotangent has shape {fmt_shape(c.shape)} but the output has shape "
                    f"{fmt_shape(o.shape)}"
                )
        if not pairs:
            return tuple(Tensor._make(np.zeros_like(a._array)) for a in args)
        grads = _autograd(
            [o for o, _ in pairs], args, grad_outputs=[c for _, c in pairs],
            retain_graph=True, create_graph=nested, allow_unused=True,
        )  # fmt: skip
        return tuple(
            Tensor._make(np.zeros_like(a._array)) if g is None else g for a, g in zip(args, grads)
        )

    result = out if nested else _detach_all(out)
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def _detach_all(out):
    if isinstance(out, (tuple, list)):
        return _same_sequence(out, [o.detach() for o in out])
    return out.detach()


def _same_sequence(like: tuple | list, items: list):
    """``items`` in a sequence of ``like``'s type: a list, a tuple or a namedtuple (such as
    max's (values, indices), whose constructor takes the fields one by one)."""
    if hasattr(like, "_fields"):
        return type(like)(*items)
    return type(like)(items)


@contextlib.contextmanager
def _forward_mode():
    if state.forward_ad:
        raise GraphError("jvp: nested forward mode (jvp inside jvp or jacfwd) is not supported")
    state.forward_ad = True
    try:
        yield
    finally:
        state.forward_ad = False


def jvp(f: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False):
    """``(f(*primals), J·tangents)`` by forward mode: one pass, each op applying its JVP.

    Forward-mode tangents are plain arrays, so ``jvp`` cannot be differentiated by an outer
    reverse-mode transform; ``hessian`` uses reverse mode twice instead.

    >>> import chainrule as cr
    >>> out, t = jvp(lambda x: x.sin() * 2, (cr.tensor(0.0),), (cr.tensor(1.0),))
    >>> out.item(), t.item()
    (0.0, 2.0)
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    inputs = []
    for p, t in zip(primals, tangents):
        p, t = _as_tensor(p, "jvp"), _as_tensor(t, "jvp")
        if p.requires_grad:
            raise GraphError(
                "jvp: reverse mode over forward mode is not supported (an input requires grad); "
                "differentiate with reverse mode twice instead, e.g. jacrev(jacrev(f))"
            )
        if t.shape != p.shape:
            raise ShapeError(
                f"jvp: tangent has shape {fmt_shape(t.shape)} but its primal has shape "
                f"{fmt_shape(p.shape)}"
            )
        if batching.active_levels():  # the tangent lives on the batched tensor underneath
            levels = set(batching.levels_of(p)) | set(batching.levels_of(t))
            p, t = batching.lift(p, levels), batching.lift(t, levels)
        dual = p.detach()
        batching.unwrap(dual)._tangent = batching.unwrap(t)._array.astype(p.dtype, copy=False)
        inputs.append(dual)
    with _forward_mode():
        out, aux = _split_aux(f(*inputs), has_aux, "jvp")
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    tangents_out = []
    for o in outs:
        real = batching.unwrap(o)
        t = real._tangent if real._tangent is not None else np.zeros_like(real._array)
        tangents_out.append(batching.rewrap_like(o, Tensor._make(t)))
        real._tangent = None
    for dual in inputs:
        batching.unwrap(dual)._tangent = None
    if isinstance(out, (tuple, list)):
        tangent_out = _same_sequence(out, tangents_out)
    else:
        tangent_out = tangents_out[0]
    return (out, tangent_out, aux) if has_aux else (out, tangent_out)


def _jacobian_layout(
    out_shape: tuple, in_shape: tuple, columns: list, rows: bool, graph: bool = False
) -> Tensor:
    """The Jacobian from its rows (reverse mode) or columns (forward mode). With ``graph``
    (differentiable results, or batched ones inside vmap) it is built from ops."""
    if graph or any(isinstance(c, BatchTracer) for c in columns):
        from ..ops import permute, reshape, stack

        if rows:
            return reshape(stack(columns), out_shape + in_shape)
        moved = reshape(stack(columns), in_shape + out_shape)
        n_in, n_out = len(in_shape), len(out_shape)
        return permute(moved, (*range(n_in, n_in + n_out), *range(n_in)))
    stacked = np.stack([c._array for c in columns])
    if rows:  # one row per output element (reverse mode)
        return Tensor._make(stacked.reshape(out_shape + in_shape))
    # one column per input element (forward mode)
    moved = np.moveaxis(stacked.reshape(in_shape + out_shape), range(len(in_shape)), range(
        len(out_shape), len(out_shape) + len(in_shape)))  # fmt: skip
    return Tensor._make(np.ascontiguousarray(moved))


def jacrev(f: Callable, argnums=0, *, chunk_size: int | None = None) -> Callable:
    """The Jacobian by reverse mode: every row in one batched backward pass where it can.

    As JAX's ``vmap(vjp_fn)(eye)``: the backward pass carries all the basis cotangents at
    once, as one `BatchTracer`, so each op's VJP runs once through its batching rule. When
    that cannot be done (inside vmap, an op without a batching rule or a `Function` in the
    graph, hooks, anomaly detection), it falls back to one backward pass per output element.
    ``chunk_size`` is PyTorch's: rows per batched pass (None: all at once; 1: the textbook
    algorithm, one backward pass per row). The result has shape ``out.shape + input.shape``.
    Composable (``jacrev(jacrev(f))``).

    >>> import chainrule as cr
    >>> jacrev(lambda x: x**2)(cr.tensor([1.0, 3.0])).tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    """
    if chunk_size is not None and (
        not isinstance(chunk_size, numbers.Integral)
        or isinstance(chunk_size, bool)
        or chunk_size < 1
    ):
        raise DomainError(f"jacrev: chunk_size must be None or a positive int, got {chunk_size!r}")

    def wrapper(*args):
        args, nums, nested = _prepare(args, argnums, "jacrev")
        out = f(*args)
        if not isinstance(out, Tensor):
            raise TypeError(f"jacrev: f must return a Tensor, got {type(out).__name__}")
        inputs = [args[i] for i in nums]
        batched = None
        if out.requires_grad and chunk_size != 1:
            batched = _batched_rows(out, inputs, nested, chunk_size or out._array.size)
        if batched is not None:
            jacobians = [rows.reshape(out.shape + x.shape) for x, rows in zip(inputs, batched)]
        else:
            jacobians = [
                _jacobian_layout(out.shape, x.shape, rows, rows=True, graph=nested)
                for x, rows in zip(inputs, _looped_rows(out, inputs, nested))
            ]
        return jacobians[0] if isinstance(argnums, int) else tuple(jacobians)

    return wrapper


def _looped_rows(out: Tensor, inputs: list, nested: bool) -> list[list]:
    """Per input, the Jacobian's rows: row k is the gradient of output element k, one
    backward pass each."""
    per_input: list[list] = [[] for _ in inputs]
    elements = [out] if out._array.size == 1 else list(out.reshape(-1))
    for element in elements:
        if not out.requires_grad:
            grads = [None] * len(inputs)
        else:
            grads = _autograd(element, inputs, retain_graph=True, create_graph=nested,
                              allow_unused=True)  # fmt: skip
        for j, g in enumerate(grads):
            per_input[j].append(Tensor._make(np.zeros_like(inputs[j]._array)) if g is None else g)
    return per_input


def _batched_rows(out: Tensor, inputs: list, nested: bool, chunk: int) -> list[Tensor] | None:
    """Per input, all rows of the Jacobian stacked (shape ``(out.size, *input.shape)``) from
    backward passes seeded with ``chunk`` rows of the identity each, as a batch of
    cotangents; None when the per-row loop must run instead.

    The backward runs in Tensor mode (``create_graph``), so every VJP rule records ops, and
    ops on the batched cotangent go through the batching rules. Without ``nested`` the rows
    are returned detached.
    """
    n = out._array.size
    if n < 2 or batching.active_levels() or state.anomaly or not _plain_graph(out):
        return None
    identity = np.eye(n, dtype=out.dtype).reshape((n, *out.shape))
    chunks: list[list[Tensor]] = [[] for _ in inputs]
    for start in range(0, n, chunk):
        basis = Tensor._make(identity[start : start + chunk])
        size = basis.shape[0]
        with batching.new_level(size) as level:
            seed = BatchTracer.wrap(basis, level)
            try:
                grads = run_backward([out], [seed], True, True, inputs)
            except Exception:  # a rule that cannot take a batch (NeedsValues, ...): loop instead
                return None
        for j, (x, g) in enumerate(zip(inputs, grads)):
            if g is None:
                g = Tensor._make(np.zeros((size, *x.shape), x.dtype))
            elif isinstance(g, BatchTracer) and g.level == level:
                g = g.inner
            else:  # a gradient that does not depend on the cotangent (cannot happen for ops)
                return None
            if tuple(g.shape) != (size, *x.shape) or isinstance(g, BatchTracer):
                return None
            chunks[j].append(g)
    rows = [parts[0] if len(parts) == 1 else cat(parts) for parts in chunks]
    return [r if nested else Tensor._make(np.array(r._array)) for r in rows]  # owned, writable


def _plain_graph(out: Tensor) -> bool:
    """Whether every node behind ``out`` is an op row without hooks: the graphs whose
    backward can run on a batch of cotangents."""
    if out.grad_fn is None:
        return True
    return all(
        type(node) is OpNode and not node.hooks and not node.retained
        for node in node_order([out.grad_fn])
    )


def jacfwd(f: Callable, argnums=0) -> Callable:
    """The Jacobian by forward mode: one ``jvp`` per input element (cheap for few inputs).

    >>> import chainrule as cr
    >>> jacfwd(lambda x: x**2)(cr.tensor([1.0, 3.0])).tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    """

    def wrapper(*args):
        args = [_as_tensor(a, "jacfwd") for a in args]
        nums = _argnums(argnums, len(args), "jacfwd")
        jacobians = []
        for i in nums:
            columns, out_shape = [], ()
            for index in np.ndindex(args[i].shape):
                tangents = [Tensor._make(np.zeros(a.shape, a.dtype)) for a in args]
                tangents[i]._array[index] = 1
                out, column = jvp(f, args, tangents)
                out_shape = out.shape
                columns.append(column)
            jacobians.append(_jacobian_layout(out_shape, args[i].shape, columns, rows=False))
        return jacobians[0] if isinstance(argnums, int) else tuple(jacobians)

    return wrapper


def jacobian(f: Callable, argnums=0) -> Callable:
    """The Jacobian of ``f`` (reverse mode, as ``jacrev``)."""
    return jacrev(f, argnums)


def hessian(f: Callable, argnums=0) -> Callable:
    """The Hessian of a scalar ``f``: reverse mode over reverse mode, ``jacrev(jacrev(f))``.

    >>> import chainrule as cr
    >>> hessian(lambda x: (x[0] ** 2 * x[1]).sum())(cr.tensor([1.0, 2.0])).tolist()
    [[4.0, 2.0], [2.0, 0.0]]
    """
    return jacrev(jacrev(f, argnums), argnums)


__all__ = [
    "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jvp", "value_and_grad", "vjp",
]  # fmt: skip


def grad_and_value(f: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning ``(grad, f(*args))`` (``(grad, (out, aux))`` with ``has_aux``):
    `value_and_grad` with the pair in PyTorch's order.

    >>> import chainrule as cr
    >>> g, value = grad_and_value(lambda x: (x**2).sum())(cr.tensor([1.0, 2.0]))
    >>> g.tolist(), value.item()
    ([2.0, 4.0], 5.0)
    """
    value_and_grad_f = value_and_grad(f, argnums, has_aux)

    def wrapper(*args):
        value, g = value_and_grad_f(*args)
        return g, value

    return wrapper


def linearize(f: Callable, *primals) -> tuple:
    """``(f(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the Jacobian of ``f`` at
    ``primals`` applied to ``tangents``.

    PyTorch traces ``f`` once and replays the linear part; here each ``jvp_fn`` call runs
    forward mode again at the same primals (same numbers, more work per call).

    >>> import chainrule as cr
    >>> out, jvp_fn = linearize(lambda x: x.sin(), cr.tensor([0.0, 1.0]))
    >>> jvp_fn(cr.tensor([1.0, 1.0]))
    tensor([1.0000, 0.5403])
    """
    primals = tuple(_as_tensor(p, "linearize").detach() for p in primals)
    out = f(*primals)

    def jvp_fn(*tangents):
        if len(tangents) != len(primals):
            raise ValueError(
                f"linearize: jvp_fn expects {len(primals)} tangents, one per primal, "
                f"got {len(tangents)}"
            )
        return jvp(f, primals, tangents)[1]

    return out, jvp_fn


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The tensor under vmap's wrapper: inside `vmap`, all examples with the batch dimension
    first (every level with ``recurse``, else the innermost one); a plain tensor unchanged.

    >>> import chainrule as cr
    >>> seen = []
    >>> _ = cr.func.vmap(lambda x: seen.append(debug_unwrap(x).shape) or x)(cr.zeros(3, 2))
    >>> seen, debug_unwrap(cr.ones(2))
    ([(3, 2)], tensor([1., 1.]))
    """
    if not recurse:
        return tensor.inner if isinstance(tensor, BatchTracer) else tensor
    return batching.unwrap(tensor)


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` itself. PyTorch rewrites in-place ops into out-of-place ones (for compilers);
    chainrule runs no such pass, and its transforms already handle in-place ops, so there is
    nothing to remove. ``remove`` is checked as PyTorch checks it.

    >>> import chainrule as cr
    >>> functionalize(lambda x: x.add_(1))(cr.zeros(2))
    tensor([1., 1.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise DomainError(
            f"functionalize: remove must be 'mutations' or 'mutations_and_views', got {remove!r}"
        )
    return func
