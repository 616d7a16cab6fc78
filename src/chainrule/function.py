"""`Function`, the user-facing way to add an op with a hand-written backward (PyTorch's
``torch.autograd.Function``): its context `FunctionCtx`, the node a call records, and
`once_differentiable`. Rows declared with `chainrule.op` are the other way, and the one the op
table uses.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable

import numpy as np

from . import dispatch, observe
from ._tensor import Tensor
from .errors import GraphError, UnsupportedError
from .graph import Node, edge_of, no_grad, state


class FunctionCtx:
    """The ``ctx`` a PyTorch-style `Function`'s ``forward`` (or ``setup_context``) fills and its
    ``backward`` reads: tensors saved for backward, flags, and any attribute you set on it
    (``ctx.alpha = alpha``)."""

    def __init__(self) -> None:
        self._saved: tuple | None = ()
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self._node: Callable | None = None  # a weak reference to the node, once recorded
        self.materialize_grads = True
        self.needs_input_grad: tuple = ()

    def save_for_backward(self, *tensors) -> None:
        """Keep Tensors (or None) for ``backward``, which reads them from `saved_tensors`;
        backward raises if one of them is modified in place after this call."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward: can only save Tensors or None, got {type(t).__name__} "
                    "(keep other values as attributes of ctx)"
                )
        self._saved = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep Tensors for ``jvp`` (forward mode); they are read from `saved_tensors` too."""
        self.save_for_backward(*tensors)

    @property
    def saved_tensors(self) -> tuple:
        """The Tensors given to `save_for_backward`, as Tensors whose history is kept (so a
        backward written with Tensor ops can be differentiated again)."""
        if self._saved is None:
            raise GraphError(
                "saved_tensors: the tensors saved for backward were freed by an earlier "
                "backward; pass retain_graph=True to the first backward()"
            )
        node = self._node() if self._node is not None else None
        return tuple(s.unpack(node) if type(s) is _SavedOutput else s for s in self._saved)

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Say that ``forward`` changed these inputs in place (and returns them)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Say that these outputs have no gradient (indices, masks): they do not require grad,
        and backward still receives a gradient (zeros) for each."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` gets None, not zeros, for an output no gradient reached."""
        self.materialize_grads = bool(value)


class _SavedOutput:
    """An output saved for backward, kept as its array and counter, not as the Tensor (which
    points to the node: the node would then keep itself alive through its own context)."""

    __slots__ = ("array", "counter", "index")

    def __init__(self, tensor: Tensor, index: int) -> None:
        self.array, self.counter, self.index = tensor._array, tensor._version_counter, index

    def unpack(self, node) -> Tensor:
        t = Tensor._make(self.array, node, self.index)
        t._requires_grad = node is not None
        t._version_counter = self.counter
        return t


class FunctionBackward(Node):
    """The node a PyTorch-style `Function` call records (``y.grad_fn``): it runs the class's
    ``backward(ctx, *grads)`` on Tensors, so with ``create_graph=True`` the ops it runs are
    recorded and the result can be differentiated again. Each Function class has its own
    subclass, named as PyTorch names it (``SoftSignBackward``)."""

    function: type  # the Function class, set on each subclass

    def __init__(self, ctx: FunctionCtx, edges: tuple, out_meta: tuple, watched: tuple) -> None:
        super().__init__(edges, out_meta, watched)
        self.ctx = ctx
        self.materialize_grads = ctx.materialize_grads
        ctx._node = weakref.ref(self)

    @property
    def name(self) -> str:
        """The Function's name, as for the array style's nodes (the profiler adds Backward)."""
        return self.function.__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __getattr__(self, name: str):
        # PyTorch's grad_fn is the ctx itself: ``y.grad_fn.saved_tensors`` reads the context.
        # Not the names the engine looks for on other nodes (an `OpNode`'s), nor private ones.
        if name in ("ctx", "op", "saved", "plan") or name.startswith("_"):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        return getattr(self.ctx, name)

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
        fn = self.function
        backward = fn.backward if _overrides(fn, "backward") else fn.vjp
        grads = [g if g is None or isinstance(g, Tensor) else Tensor._make(g) for g in grads]
        out = backward(self.ctx, *grads)
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        n = len(self.edges)
        if len(out) > n and all(g is None for g in out[n:]):
            del out[n:]  # PyTorch accepts extra Nones
        if len(out) != n:
            raise GraphError(
                f"function {type(self).__name__} returned an incorrect number of gradients "
                f"(expected {n}, got {len(out)})"
            )
        for i, g in enumerate(out):
            if g is not None and self.edges[i] is None:
                out[i] = None  # an input that needs no gradient (or is no Tensor)
            elif g is not None and not create_graph:
                out[i] = g._array if isinstance(g, Tensor) else np.asarray(g)
        if release:
            self.release()
        return out

    def release(self) -> None:
        if self.ctx._saved:
            self.ctx._saved, self.watched = None, ()


class Function(Node):
    """Base class for ops with a hand-written backward, in one of two styles.

    **PyTorch's style** (what ``torch.autograd.Function`` is under ``chainrule run``):
    ``forward`` and ``backward`` are staticmethods that see Tensors. ``forward(ctx, *args)``
    (or ``forward(*args)`` with a separate ``setup_context(ctx, inputs, output)``) runs with
    grad mode off and returns a Tensor or a tuple; ``backward(ctx, *grads)`` returns one
    gradient (Tensor or None) per forward argument. The context is a `FunctionCtx`
    (``save_for_backward``, ``saved_tensors``, ``needs_input_grad``, ``mark_dirty``,
    ``mark_non_differentiable``, ``set_materialize_grads``, your own attributes). Backward
    runs its Tensor ops with grad mode on when ``create_graph=True``, so it can be
    differentiated again (unless decorated with `once_differentiable`). A ``jvp(ctx,
    *tangents)`` staticmethod gives forward mode; vmap runs the Function once per example.

    >>> class Cube(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x**3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 3 * x**2 * g
    >>> x = Tensor([1.0, 2.0], requires_grad=True)
    >>> from chainrule.autograd import grad
    >>> (dx,) = grad(Cube.apply(x).sum(), x, create_graph=True)
    >>> dx, grad(dx.sum(), x)[0]
    (tensor([ 3., 12.], grad_fn=<MulBackward>), tensor([ 6., 12.]))

    **The array style** (chainrule's own, for teaching): ``forward(self, *arrays)`` and
    ``backward(self, *grads)`` are instance methods that see NumPy arrays; the instance is
    the graph node and ``self.save_for_backward``/``self.saved_tensors`` keep arrays. Such a
    backward cannot be differentiated twice (``create_graph=True`` raises). A class is in
    PyTorch's style when its ``forward`` is a staticmethod (or it defines ``setup_context``).

    >>> class ArrayCube(Function):
    ...     def forward(self, x):
    ...         self.save_for_backward(x)
    ...         return x**3
    ...     def backward(self, g):
    ...         (x,) = self.saved_tensors
    ...         return 3 * x**2 * g
    >>> ArrayCube.apply(x).sum().backward()
    >>> x.grad
    tensor([ 3., 12.])
    """

    #: Whether the class is in PyTorch's style (set for each subclass when it is defined).
    _ctx_style = False
    _backward_cls: type = FunctionBackward
    generate_vmap_rule = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._ctx_style = isinstance(
            inspect.getattr_static(cls, "forward"), staticmethod
        ) or _overrides(cls, "setup_context")
        cls._backward_cls = type(f"{cls.__name__}Backward", (FunctionBackward,), {"function": cls})

    def __init__(self) -> None:
        super().__init__((), (), ())
        self._saved: tuple | None = ()
        self._inputs: tuple = ()

    def forward(self, *args, **kwargs):
        """Compute the output(s) from the inputs (see the class docstring for both styles)."""
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def backward(self, *grads):
        """Return one gradient per forward input, given one per output."""
        raise NotImplementedError(
            f"{type(self).__name__}: you must implement either the backward or vjp method "
            "for your custom autograd.Function to use it with backward mode AD"
        )

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output) -> None:
        """PyTorch's style, newer form: fill ``ctx`` from ``forward(*inputs)``'s ``output``
        (then ``forward`` takes no ctx)."""
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def vjp(ctx: FunctionCtx, *grads):
        """Another name for ``backward`` (define either)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD"
        )

    @staticmethod
    def jvp(ctx: FunctionCtx, *tangents):
        """Forward mode: the output tangents from the inputs' (define it to use jvp/jacfwd)."""
        raise NotImplementedError(
            "You must implement the jvp function for your custom autograd.Function to use it "
            "with forward mode AD"
        )

    def save_for_backward(self, *arrays) -> None:
        """Keep arrays for ``backward``; an input modified in place later is detected."""
        self._saved = arrays

    @property
    def saved_tensors(self) -> tuple:
        """The arrays given to ``save_for_backward``."""
        if self._saved is None:
            raise GraphError(
                f"{type(self).__name__}: its saved arrays were freed by an earlier backward; "
                "pass retain_graph=True to the first backward()"
            )
        return self._saved

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__}Backward>"

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the op on Tensors and record it in the graph; returns a Tensor (or a tuple)."""
        if observe.current is not None:
            result = observe.current.run_function(cls, args, kwargs)
            if result is not observe.PLAIN:
                return result
        if dispatch.batch_hook is not None:
            dispatch.batch_hook(cls, args, kwargs)  # no batching rule: vmap loops over examples
        if cls._ctx_style:
            return _apply_with_ctx(cls, args, kwargs)
        node = cls()
        arrays = [arg._array if isinstance(arg, Tensor) else arg for arg in args]
        outputs = node.forward(*arrays, **kwargs)
        is_tuple = isinstance(outputs, tuple)
        outs = [np.asarray(o) for o in (outputs if is_tuple else (outputs,))]
        needs_grad = state.grad_enabled and any(
            isinstance(a, Tensor) and a.requires_grad for a in args
        )
        # Results are of the first input Tensor's class, so a Tensor subclass (a teaching
        # text's) keeps its kind through the Functions it defines.
        kind = next((type(a) for a in args if isinstance(a, Tensor)), Tensor)
        results = [kind._make(o) for o in outs]
        if needs_grad:
            node.edges = tuple(
                edge_of(a) if isinstance(a, Tensor) and a.requires_grad else None for a in args
            )
            node.out_meta = tuple((o.shape, o.dtype) for o in outs)
            # Saved inputs and outputs alike: an output changed in place breaks backward too.
            # Outputs by their counters (`Node.watched` says why).
            saved = node._saved or ()
            node.watched = tuple(
                a for a in args if isinstance(a, Tensor) and any(a._array is s for s in saved)
            ) + tuple(r._version_counter for r in results if any(r._array is s for s in saved))
            for i, result in enumerate(results):
                result._requires_grad = True
                result._grad_fn = node
                result._output_nr = i
        return tuple(results) if is_tuple else results[0]

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
        if create_graph:
            raise GraphError(
                f"{self.name}: a Function's backward works on arrays, so it cannot be "
                "differentiated twice (create_graph=True); write it with tensor ops instead"
            )
        out = self.backward(*grads)
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(out) != len(self.edges):
            raise GraphError(
                f"{self.name}: backward returned {len(out)} gradients for {len(self.edges)} inputs"
            )
        if release:
            self.release()
        return out

    def release(self) -> None:
        if self._saved:
            self._saved, self.watched = None, ()


def _overrides(cls: type, name: str) -> bool:
    """Whether ``cls`` defines ``name`` itself rather than inheriting `Function`'s."""
    return inspect.getattr_static(cls, name) is not inspect.getattr_static(Function, name)


def _apply_with_ctx(cls: type, args: tuple, kwargs: dict):
    """``cls.apply(*args, **kwargs)`` for a PyTorch-style Function: forward with grad mode off,
    then its outputs made the outputs of a `FunctionBackward` node when gradients are needed."""
    setup = _overrides(cls, "setup_context")
    if setup:  # forward's defaults become inputs too, as PyTorch binds them
        bound = inspect.signature(cls.forward).bind(*args, **kwargs)
        bound.apply_defaults()
        args, kwargs = bound.args, bound.kwargs
    grad_on = state.grad_enabled
    ctx = FunctionCtx()
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    needs_grad = grad_on and any(ctx.needs_input_grad)
    edges = tuple(edge_of(a) if needs else None for a, needs in zip(args, ctx.needs_input_grad))
    with no_grad():
        if setup:
            output = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args, **kwargs)
    is_tuple = isinstance(output, tuple)
    outs = list(output if is_tuple else (output,))
    dirty = ctx._dirty
    for i, out in enumerate(outs):
        if isinstance(out, Tensor) and any(out is a for a in args):
            if any(out is d for d in dirty):
                if needs_grad and out.requires_grad and out.grad_fn is None:
                    raise GraphError(
                        f"{cls.__name__}: a leaf tensor that requires grad was changed in place "
                        "(mark_dirty); clone() it before passing it"
                    )
            else:
                outs[i] = out.detach()  # an input returned as is: a new Tensor, same memory
    if state.forward_ad and any(isinstance(a, Tensor) and a._tangent is not None for a in args):
        _forward_tangents(cls, ctx, args, outs)
    if needs_grad:
        positions = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
        saved = tuple(
            _SavedOutput(s, positions[id(s)]) if id(s) in positions else s
            for s in (ctx._saved or ())
        )
        ctx._saved = saved
        watched = tuple(s.counter if type(s) is _SavedOutput else s for s in saved)
        out_meta = tuple(
            (o.shape, o.dtype) if isinstance(o, Tensor) else ((), np.dtype(np.float64))
            for o in outs
        )
        # Made after forward, so that in-place changes forward made (mark_dirty) come before it.
        node = cls._backward_cls(ctx, edges, out_meta, watched)
        non_differentiable = ctx._non_differentiable
        for i, out in enumerate(outs):
            if not isinstance(out, Tensor) or any(out is n for n in non_differentiable):
                continue
            if out.dtype.kind in "fc":
                out._requires_grad, out._grad_fn, out._output_nr = True, node, i
    return tuple(outs) if is_tuple else outs[0]


def _forward_tangents(cls: type, ctx: FunctionCtx, args: tuple, outs: list) -> None:
    """Forward mode through a PyTorch-style Function: its ``jvp`` staticmethod gives the output
    tangents (without one, the error PyTorch raises)."""
    if not _overrides(cls, "jvp"):
        raise UnsupportedError(
            f"{cls.__name__}: forward mode (jvp, jacfwd, forward_ad) through a custom Function "
            "needs its jvp staticmethod, which it does not define"
        )
    tangents = [
        Tensor._make(a._tangent) if isinstance(a, Tensor) and a._tangent is not None else None
        for a in args
    ]
    with no_grad():
        result = cls.jvp(ctx, *tangents)
    result = result if isinstance(result, tuple) else (result,)
    for out, tangent in zip(outs, result):
        if isinstance(out, Tensor) and tangent is not None:
            array = tangent._array if isinstance(tangent, Tensor) else np.asarray(tangent)
            out._tangent = array.astype(out.dtype, copy=False)


class _OnceDifferentiated(Node):
    """Stands for a `once_differentiable` backward in the graph of its gradients: reaching it
    in a second backward raises."""

    def __init__(self, name: str, edges: tuple, out_meta: tuple) -> None:
        super().__init__(edges, out_meta, ())
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
        raise GraphError(
            f"{self._name}: trying to differentiate twice a function that was marked with "
            "@once_differentiable"
        )


def once_differentiable(backward: Callable) -> Callable:
    """Decorate a PyTorch-style ``backward`` that cannot itself be differentiated: it runs
    with grad mode off, and a second backward through its results raises.

    >>> class Square(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = Tensor([3.0], requires_grad=True)
    >>> Square.apply(x).backward()
    >>> x.grad
    tensor([6.])
    """

    name = ".".join(backward.__qualname__.split(".")[-2:])  # Square.backward

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        grad_on = state.grad_enabled
        with no_grad():
            result = backward(ctx, *grads)
        tracked = [g for g in grads if isinstance(g, Tensor) and g.requires_grad]
        if not grad_on or not tracked:
            return result
        edges = tuple(edge_of(g) for g in tracked)
        outs = result if isinstance(result, tuple) else (result,)
        wrapped = []
        for g in outs:
            if isinstance(g, Tensor) and g.dtype.kind in "fc":
                node = _OnceDifferentiated(name, edges, ((g.shape, g.dtype),))
                g = Tensor._make(g._array, node, 0)
            wrapped.append(g)
        return tuple(wrapped) if isinstance(result, tuple) else wrapped[0]

    return wrapper


__all__ = ["Function", "FunctionBackward", "FunctionCtx", "once_differentiable"]
