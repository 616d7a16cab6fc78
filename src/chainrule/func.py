"""Composable function transforms in JAX's style: grad, value_and_grad, vjp, jvp, jacrev,
jacfwd, jacobian, hessian.

Reverse-mode transforms run the tensor engine's backward; when their inputs already take part
in an outer graph they build their result with ``create_graph=True``, so ``grad(grad(f))``
works. ``jvp`` and ``jacfwd`` run forward mode: one pass that carries a tangent beside every
value, using each op's JVP rule.
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from .autograd import grad as autograd_grad
from .autograd import state
from .errors import GraphError, ShapeError, fmt_shape
from .tensor import Tensor


def _as_tensor(x, fn: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (numbers.Real, np.ndarray, list, tuple)):
        return Tensor(np.asarray(x, dtype=np.float64) if not isinstance(x, np.ndarray) else x)
    raise TypeError(f"{fn}: expected Tensors or numbers, got {type(x).__name__}")


def _track(x: Tensor) -> tuple[Tensor, bool]:
    """An input to differentiate with respect to, and whether an outer transform watches it.

    If ``x`` is already part of a graph (an outer ``grad`` differentiates through us), the
    input is an identity op on ``x``, so our result stays connected to it.
    """
    if x.requires_grad:
        return x.view_as(x), True
    return x.detach().requires_grad_(True), False


def _argnums(argnums, n: int, fn: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -n <= i < n:
            raise ValueError(f"{fn}: argnums {i} is out of range for {n} arguments")
    return tuple(i % n for i in nums)


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
            grads = autograd_grad(
                out, [args[i] for i in nums], create_graph=nested, allow_unused=True
            )
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
        grads = autograd_grad(
            [o for o, _ in pairs], args, grad_outputs=[c for _, c in pairs],
            retain_graph=True, create_graph=nested, allow_unused=True,
        )  # fmt: skip
        return tuple(
            Tensor._make(np.zeros_like(a.data)) if g is None else g for a, g in zip(args, grads)
        )

    result = out if nested else _detach_all(out)
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def _detach_all(out):
    if hasattr(out, "_fields"):  # a namedtuple such as max's (values, indices)
        return type(out)(*(o.detach() for o in out))
    if isinstance(out, (tuple, list)):
        return type(out)(o.detach() for o in out)
    return out.detach()


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
        dual = p.detach()
        dual._tangent = t.data.astype(p.dtype, copy=False)
        inputs.append(dual)
    with _forward_mode():
        out, aux = _split_aux(f(*inputs), has_aux, "jvp")
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    tangents_out = []
    for o in outs:
        t = o._tangent if o._tangent is not None else np.zeros_like(o.data)
        tangents_out.append(Tensor._make(t))
        o._tangent = None
    for dual in inputs:
        dual._tangent = None
    if not isinstance(out, (tuple, list)):
        tangent_out = tangents_out[0]
    elif hasattr(out, "_fields"):  # a namedtuple such as max's (values, indices)
        tangent_out = type(out)(*tangents_out)
    else:
        tangent_out = type(out)(tangents_out)
    return (out, tangent_out, aux) if has_aux else (out, tangent_out)


def _jacobian_layout(out_shape: tuple, in_shape: tuple, columns: list, rows: bool) -> Tensor:
    stacked = np.stack([c.data for c in columns])
    if rows:  # one row per output element (reverse mode)
        return Tensor._make(stacked.reshape(out_shape + in_shape))
    # one column per input element (forward mode)
    moved = np.moveaxis(stacked.reshape(in_shape + out_shape), range(len(in_shape)), range(
        len(out_shape), len(out_shape) + len(in_shape)))  # fmt: skip
    return Tensor._make(np.ascontiguousarray(moved))


def jacrev(f: Callable, argnums=0) -> Callable:
    """The Jacobian by reverse mode: one backward pass per output element.

    The result has shape ``out.shape + input.shape``. Composable (``jacrev(jacrev(f))``).

    >>> import chainrule as cr
    >>> jacrev(lambda x: x**2)(cr.tensor([1.0, 3.0])).tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    """

    def wrapper(*args):
        args, nums, nested = _prepare(args, argnums, "jacrev")
        out = f(*args)
        if not isinstance(out, Tensor):
            raise TypeError(f"jacrev: f must return a Tensor, got {type(out).__name__}")
        inputs = [args[i] for i in nums]
        per_input: list[list] = [[] for _ in inputs]
        # Row k of the Jacobian is the gradient of output element k.
        elements = [out] if out.data.size == 1 else list(out.reshape(-1))
        for element in elements:
            if not out.requires_grad:
                grads = [None] * len(inputs)
            else:
                grads = autograd_grad(element, inputs, retain_graph=True, create_graph=nested,
                                      allow_unused=True)  # fmt: skip
            for j, g in enumerate(grads):
                per_input[j].append(Tensor._make(np.zeros_like(inputs[j].data)) if g is None else g)
        jacobians = []
        for x, rows in zip(inputs, per_input):
            if nested:
                from .ops import reshape, stack

                jac = reshape(stack(rows), out.shape + x.shape)
            else:
                jac = _jacobian_layout(out.shape, x.shape, rows, rows=True)
            jacobians.append(jac)
        return jacobians[0] if isinstance(argnums, int) else tuple(jacobians)

    return wrapper


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
                tangents = [Tensor._make(np.zeros_like(a.data)) for a in args]
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


__all__ = ["grad", "hessian", "jacfwd", "jacobian", "jacrev", "jvp", "value_and_grad", "vjp"]
