"""`vmap`: a function mapped over a batch dimension of its arguments, in one batched run through
each op row's batching rule (`chainrule.func.batching`), or one run per example when that
cannot be done.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import numbers
from collections.abc import Callable

import numpy as np

from .._tensor import Tensor
from ..errors import ShapeError, fmt_shape
from ..random import default_generator, drawn_per_batch
from . import batching
from .batching import BatchTracer, NeedsValues
from .transforms import _same_sequence


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
        batching.unwrap(a)._array, batching.unwrap(b)._array
    )


def _loop(func: Callable, args, kwargs, in_dims, out_dims, size: int, same_draws: bool):
    """vmap without batching rules: ``func`` on each example, the results stacked."""
    if size == 0:
        raise ShapeError(
            "vmap: func needs the per-example loop (an op without a batching rule, or values "
            "read), which cannot run on a batch of size 0"
        )
    state = default_generator.snapshot() if same_draws else None
    results = []
    with contextlib.ExitStack() as stack:
        examples = None if same_draws else stack.enter_context(drawn_per_batch(size))
        for b in range(size):
            if same_draws:
                default_generator.restore(state)
            else:
                examples.start(b)
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
        from ..ops import stack

        return stack(items, dim=_out_dim(path, dim, leaf.ndim + 1))

    return _tree_map(stack_leaf, results[0], out_dims, "output", "out_dims")


__all__ = ["vmap"]
