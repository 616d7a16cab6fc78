"""Composable function transforms in JAX's style: grad, value_and_grad, vjp, jvp, jacrev,
jacfwd, jacobian, hessian, vmap.

Reverse-mode transforms run the tensor engine's backward; when their inputs already take part
in an outer graph they build their result with ``create_graph=True``, so ``grad(grad(f))``
works. ``jvp`` and ``jacfwd`` run forward mode: one pass that carries a tangent beside every
value, using each op's JVP rule. ``vmap`` runs a function once on a whole batch through the
batching rules in `chainrule.batching`; inside it the other transforms work per example.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from . import batching
from ._tensor import Tensor
from .autograd import grad as autograd_grad
from .autograd import node_order, run_backward, state
from .batching import BatchTracer, NeedsValues
from .errors import DomainError, GraphError, ShapeError, fmt_shape
from .function import OpNode
from .ops.shape import cat
from .random import default_generator


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
        if not isinstance(out, Tensor) or out.data.size != 1:
            shape = fmt_shape(out.shape) if isinstance(out, Tensor) else type(out).__name__
            raise ShapeError(
                f"grad: f must return a one-element Tensor, got {shape}; "
                "use jacrev or jacobian for non-scalar outputs, or vjp"
            )
        if not out.requires_grad:
            grads = tuple(Tensor._make(np.zeros_like(args[i].data)) for i in nums)
        else:
            grads = _autograd(out, [args[i] for i in nums], create_graph=nested, allow_unused=True)
            grads = tuple(
                Tensor._make(np.zeros_like(args[i].data)) if g is None else g
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
            return tuple(Tensor._make(np.zeros_like(a.data)) for a in args)
        grads = _autograd(
            [o for o, _ in pairs], args, grad_outputs=[c for _, c in pairs],
            retain_graph=True, create_graph=nested, allow_unused=True,
        )  # fmt: skip
        return tuple(
            Tensor._make(np.zeros_like(a.data)) if g is None else g for a, g in zip(args, grads)
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
        batching.unwrap(dual)._tangent = batching.unwrap(t).data.astype(p.dtype, copy=False)
        inputs.append(dual)
    with _forward_mode():
        out, aux = _split_aux(f(*inputs), has_aux, "jvp")
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    tangents_out = []
    for o in outs:
        real = batching.unwrap(o)
        t = real._tangent if real._tangent is not None else np.zeros_like(real.data)
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
        from .ops import permute, reshape, stack

        if rows:
            return reshape(stack(columns), out_shape + in_shape)
        moved = reshape(stack(columns), in_shape + out_shape)
        n_in, n_out = len(in_shape), len(out_shape)
        return permute(moved, (*range(n_in, n_in + n_out), *range(n_in)))
    stacked = np.stack([c.data for c in columns])
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
            batched = _batched_rows(out, inputs, nested, chunk_size or out.data.size)
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
    elements = [out] if out.data.size == 1 else list(out.reshape(-1))
    for element in elements:
        if not out.requires_grad:
            grads = [None] * len(inputs)
        else:
            grads = _autograd(element, inputs, retain_graph=True, create_graph=nested,
                              allow_unused=True)  # fmt: skip
        for j, g in enumerate(grads):
            per_input[j].append(Tensor._make(np.zeros_like(inputs[j].data)) if g is None else g)
    return per_input


def _batched_rows(out: Tensor, inputs: list, nested: bool, chunk: int) -> list[Tensor] | None:
    """Per input, all rows of the Jacobian stacked (shape ``(out.size, *input.shape)``) from
    backward passes seeded with ``chunk`` rows of the identity each, as a batch of
    cotangents; None when the per-row loop must run instead.

    The backward runs in Tensor mode (``create_graph``), so every VJP rule records ops, and
    ops on the batched cotangent go through the batching rules. Without ``nested`` the rows
    are returned detached.
    """
    n = out.data.size
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
    return [r if nested else Tensor._make(np.array(r.data)) for r in rows]  # owned, writable


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
                tangents[i].data[index] = 1
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


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error") -> Callable:
    """``func`` mapped over a batch dimension of its arguments, as in JAX and torch.func.

    ``in_dims`` says where each positional argument's batch dim is: an int for all of them,
    None (not mapped: every example sees the whole argument), or a tuple with one entry per
    argument, nested like the arguments (tuples, lists, dicts; an int or None there covers a
    whole sub-tree). Keyword arguments are not mapped. ``out_dims`` places the batch dim in
    each output the same way (None: an output that does not depend on the mapped inputs).

    ``func`` runs once, on `chainrule.batching.BatchTracer` arguments that have one example's
    shape, and each op runs once on the whole batch through the batching rule its row
    carries (``chainrule.ops.REGISTRY[name].batch``): every elementwise op, comparison,
    reduction, shape, indexing, contraction and convolution row has one. When ``func`` does
    what one batched run cannot (a row that loops on purpose, such as ``max(x, dim)`` and so
    max_pool2d, or a `chainrule.Function`; reading values with ``.item()``, ``if`` on a
    tensor or NumPy on ``.data``; changing a mapped tensor in place; indexing with a mapped
    index tensor), or
    the batched run fails in any other way, vmap runs ``func`` once per example instead and
    stacks the results: the same values at a Python loop's cost (a genuine error of ``func``
    is raised by that loop). ``func`` may then run twice, so keep it free of side effects.

    ``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian`` inside vmap work per
    example in one batched pass (``vmap(grad(loss), in_dims=(None, 0))`` gives per-example
    gradients); vmap nests, and differentiates from outside. ``randomness`` says what random
    draws inside ``func`` do: "error" (raise), "same" (every example sees one draw) or
    "different" (each example its own, by the per-example loop).

    >>> import chainrule as cr
    >>> w = cr.tensor([[1.0, 0.0], [0.0, 2.0]])
    >>> vmap(lambda x: (w @ x).sum())(cr.tensor([[1.0, 1.0], [2.0, 3.0]]))
    tensor([3., 8.])
    """
    if randomness not in ("error", "different", "same"):
        raise ValueError(
            f"vmap: randomness must be 'error', 'different' or 'same', got {randomness!r}"
        )
    _check_dims_spec(in_dims, "in_dims")
    _check_dims_spec(out_dims, "out_dims")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if isinstance(in_dims, (tuple, list)) and len(in_dims) != len(args):
            raise ValueError(
                f"vmap: in_dims has {len(in_dims)} entries but func was called with "
                f"{len(args)} positional arguments; give one per argument (None: not mapped)"
            )
        mapped = []
        _map_args(args, in_dims, lambda *leaf: mapped.append(_checked_input(*leaf)))
        size = _batch_size(mapped)
        with batching.new_level(size) as level:
            try:
                with contextlib.ExitStack() as stack:
                    if randomness != "same":
                        stack.enter_context(batching.guard_random(randomness, level))
                    batched = _map_args(args, in_dims, lambda path, x, dim: BatchTracer.wrap(
                        _move_dim(x, dim, 0), level))  # fmt: skip
                    out = func(*batched, **kwargs)
            except NeedsValues as exc:
                if exc.level < level:  # an outer vmap's batched run is stuck: it loops
                    raise
                out = _LOOP
            except batching.VmapError:
                raise
            except Exception:  # code not written for batched tensors: the loop is exact
                out = _LOOP
            if out is not _LOOP:
                return _tree_map(
                    lambda path, o, dim: _unbatched_output(path, o, dim, level, size),
                    out, out_dims, "output", "out_dims",
                )  # fmt: skip
        with contextlib.ExitStack() as stack:
            if randomness == "error":
                stack.enter_context(batching.guard_random(randomness, None))
            return _loop(func, args, kwargs, in_dims, out_dims, size, randomness == "same")

    return wrapper


#: What the batched run gives when vmap must loop over the examples instead.
_LOOP = object()


def _check_dims_spec(spec, name: str) -> None:
    if isinstance(spec, (tuple, list)):
        for entry in spec:
            _check_dims_spec(entry, name)
    elif isinstance(spec, dict):
        for entry in spec.values():
            _check_dims_spec(entry, name)
    elif spec is not None and (not isinstance(spec, numbers.Integral) or isinstance(spec, bool)):
        raise TypeError(f"vmap: {name} must be an int, None, or a tuple of them, got {spec!r}")


def _entry(spec, i):
    """Entry ``i`` of an in_dims / out_dims spec (an int or None covers everything)."""
    return spec[i] if isinstance(spec, (tuple, list)) else spec


def _tree_map(fn: Callable, tree, spec, path: str, name: str):
    """``tree`` (nested tuples, lists, dicts) with each leaf replaced by
    ``fn(path, leaf, dim)``, ``spec`` matched against it as a prefix."""
    if not isinstance(tree, (tuple, list, dict)):
        if isinstance(spec, (tuple, list, dict)):
            raise ValueError(
                f"vmap: {name} for {path} is a {type(spec).__name__}, but {path} is a "
                f"{type(tree).__name__}, not a container"
            )
        return fn(path, tree, spec)
    keys = list(tree) if isinstance(tree, dict) else list(range(len(tree)))
    if isinstance(spec, (tuple, list, dict)) and _shape_of(spec) != _shape_of(tree):
        raise ValueError(
            f"vmap: {name} for {path} has {_shape_of(spec)} but {path} has {_shape_of(tree)}"
        )
    values = [
        _tree_map(fn, tree[k], spec[k] if isinstance(spec, (tuple, list, dict)) else spec,
                  f"{path}[{k!r}]", name)
        for k in keys
    ]  # fmt: skip
    if isinstance(tree, dict):
        return dict(zip(keys, values))
    return _same_sequence(tree, values)


def _shape_of(tree) -> str:
    """A container's outline, for messages: "2 entries" or "keys ['a', 'b']"."""
    if isinstance(tree, dict):
        return f"keys {sorted(map(str, tree))}"
    return f"{len(tree)} entries"


def _map_args(args: tuple, in_dims, fn: Callable) -> tuple:
    """The arguments with each mapped leaf replaced by ``fn(path, leaf, dim)``."""
    return tuple(
        _tree_map(lambda path, x, dim: x if dim is None else fn(path, x, dim), arg,
                  _entry(in_dims, i), f"argument {i}", "in_dims")
        for i, arg in enumerate(args)
    )  # fmt: skip


def _checked_input(path: str, x, dim: int) -> tuple:
    """(path, tensor, dim) for a mapped leaf, checked."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"vmap: in_dims={dim} for {path}, a {type(x).__name__}; only Tensors can be "
            "mapped, so give it in_dims None"
        )
    if x.ndim == 0:
        raise ShapeError(
            f"vmap: in_dims={dim} for {path} of shape (): a 0-d tensor has no dimension to map over"
        )
    if not -x.ndim <= dim < x.ndim:
        raise ShapeError(
            f"vmap: in_dims={dim} for {path} of shape {fmt_shape(x.shape)} is out of range "
            f"for its {x.ndim} dimensions"
        )
    return path, x, dim


def _batch_size(mapped: list) -> int:
    if not mapped:
        raise ValueError(
            "vmap: no argument is mapped (every in_dims is None); map at least one Tensor"
        )
    first_path, first, first_dim = mapped[0]
    size = first.shape[first_dim]
    for path, x, dim in mapped[1:]:
        if x.shape[dim] != size:
            raise ShapeError(
                f"vmap: in_dims={dim} for {path} of shape {fmt_shape(x.shape)} but "
                f"{first_path} has batch size {size}; every mapped argument needs that size "
                "along its in_dims"
            )
    return size


def _move_dim(x: Tensor, source: int, destination: int) -> Tensor:
    """``x`` with dimension ``source`` moved to ``destination`` (both in range)."""
    source, destination = source % x.ndim, destination % x.ndim
    if source == destination:
        return x
    order = [d for d in range(x.ndim) if d != source]
    order.insert(destination, source)
    return x.permute(*order)


def _out_dim(path: str, dim: int, ndim: int) -> int:
    """``dim`` for an output with ``ndim`` dims, batch dim included, checked."""
    if not -ndim <= dim < ndim:
        raise ShapeError(
            f"vmap: out_dims={dim} for {path} is out of range for its {ndim} dimensions "
            "(batch dim included)"
        )
    return dim % ndim


def _unbatched_output(path: str, out, dim, level: int, size: int):
    """One output of the batched run with its batch dim at ``dim``."""
    if not isinstance(out, Tensor):
        raise TypeError(
            f"vmap: func must return Tensors (or tuples, lists, dicts of them); {path} is a "
            f"{type(out).__name__}"
        )
    is_batched = isinstance(out, BatchTracer) and out.level == level
    if dim is None:
        if is_batched:
            raise ValueError(
                f"vmap: out_dims=None for {path}, but it depends on the mapped inputs; give "
                "it an int out_dims"
            )
        return out
    # An output that does not depend on the mapped inputs is the same for every example.
    inner = out.inner if is_batched else batching.broadcast_batch(out, size)
    return _move_dim(inner, 0, _out_dim(path, dim, inner.ndim))


def _example(path: str, x: Tensor, dim: int, b: int) -> Tensor:
    """Example ``b`` of ``x`` along ``dim`` (an index op, so gradients flow back to x)."""
    return x[(slice(None),) * (dim % x.ndim) + (b,)]


def _leaves(tree) -> list:
    leaves = []
    _tree_map(lambda path, leaf, dim: leaves.append(leaf), tree, None, "output", "")
    return leaves


def _same_values(a: Tensor, b: Tensor) -> bool:
    if a is b:
        return True
    levels = batching.levels_of(a)
    return levels == batching.levels_of(b) and np.array_equal(
        batching.unwrap(a).data, batching.unwrap(b).data
    )


def _loop(func: Callable, args, kwargs, in_dims, out_dims, size: int, same_draws: bool):
    """vmap without batching rules: ``func`` on each example, the results stacked."""
    if size == 0:
        raise ShapeError(
            "vmap: func needs the per-example loop (an op without a batching rule, or values "
            "read), which cannot run on a batch of size 0"
        )
    state = default_generator().bit_generator.state if same_draws else None
    results = []
    for b in range(size):
        if same_draws:
            default_generator().bit_generator.state = state
        example = _map_args(args, in_dims, functools.partial(_example, b=b))
        results.append(func(*example, **kwargs))
    per_example = []
    for i, result in enumerate(results):
        leaves = _leaves(result)
        if per_example and len(leaves) != len(per_example[0]):
            raise ValueError(
                f"vmap: func returned {len(per_example[0])} tensors for example 0 but "
                f"{len(leaves)} for example {i}"
            )
        per_example.append(leaves)
    position = itertools.count()

    def stack_leaf(path: str, leaf, dim):
        k = next(position)
        items = [leaves[k] for leaves in per_example]
        if not isinstance(leaf, Tensor):
            raise TypeError(
                f"vmap: func must return Tensors (or tuples, lists, dicts of them); {path} "
                f"is a {type(leaf).__name__}"
            )
        for i, item in enumerate(items):
            if item.shape != leaf.shape:
                raise ShapeError(
                    f"vmap: {path} has shape {fmt_shape(leaf.shape)} for example 0 but "
                    f"{fmt_shape(item.shape)} for example {i}; func must return one shape "
                    "for every example"
                )
        if dim is None:
            if not all(_same_values(item, leaf) for item in items):
                raise ValueError(
                    f"vmap: out_dims=None for {path}, but it differs between examples; give "
                    "it an int out_dims"
                )
            return leaf
        from .ops import stack

        return stack(items, dim=_out_dim(path, dim, leaf.ndim + 1))

    return _tree_map(stack_leaf, results[0], out_dims, "output", "out_dims")


__all__ = [
    "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jvp", "value_and_grad", "vjp", "vmap",
]  # fmt: skip
