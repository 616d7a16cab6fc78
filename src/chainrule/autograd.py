"""The tensor engine's backward pass: `run_backward`, and `grad` and `backward` on top of it.

`run_backward` walks the nodes once each, newest first, summing each gradient back to its
input's shape and dtype. What a node is, the version counters and the grad-mode switches are
in `chainrule.graph`; the nodes are recorded by `chainrule.dispatch`.
"""

from __future__ import annotations

import heapq
import importlib
import threading
from collections.abc import Sequence

import numpy as np

from . import counting, kernels, observe
from ._tensor import Tensor
from .autograd_compat import (
    Variable,
    enforce_grad_layout_policy,
    is_multithreading_enabled,
    is_tensor_like,
    is_view_replay_enabled,
    kineto_available,
    set_detect_anomaly,
    set_multithreading_enabled,
    variable,
)
from .errors import GraphError, ShapeError, fmt_shape
from .graph import (
    Node,
    RemovableHandle,
    SliceGrad,
    _GradMode,
    detect_anomaly,
    edge_of,
    enable_grad,
    is_grad_enabled,
    latest_change,
    no_grad,
    set_grad_enabled,
    state,
)
from .numpy_warnings import restore, silence
from .tensor_base import AfterAccumulate

#: What NumPy arithmetic returns: arrays, or scalars for 0-d results.
ARRAY_TYPES = (np.ndarray, np.generic)


def node_order(starts: Sequence[Node]) -> list[Node]:
    """Nodes reachable from ``starts``, each after every node that sends it a gradient.

    Iterative depth-first search: graph depth is not bounded by the recursion limit.
    """
    order: list[Node] = []
    visited: set[Node] = set()
    stack = [(node, False) for node in starts]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        for edge in node.edges:
            if type(edge) is tuple and edge[0] not in visited:
                stack.append((edge[0], False))
    order.reverse()
    return order


def deliver(sums: dict, create_graph: bool) -> None:
    """Each leaf's total gradient, ``sums[leaf] = [total, owned]``, through the leaf's hooks
    (a returned tensor replaces it) into its ``.grad``, then to its post-accumulate hooks:
    once per backward pass, as PyTorch's AccumulateGrad does. ``owned``: the total is an
    array the pass made itself."""
    for leaf, (total, owned) in sums.items():
        hooks = leaf._hooks
        if hooks:
            for hook in hooks:
                if type(hook) is not AfterAccumulate:
                    result = hook(_as_tensor(total))
                    if result is not None:
                        total, owned = (result if create_graph else result._array), False
        if create_graph:
            grad = leaf._grad  # the slot itself: these sums have the leaf's shape and dtype
            leaf._grad = _as_tensor(total) if grad is None else grad + total
        else:
            accumulate_grad(leaf, total, owned)
        if hooks:
            for hook in hooks:
                if type(hook) is AfterAccumulate:
                    hook.fn(leaf)


def accumulate_grad(leaf: Tensor, total: np.ndarray, owned: bool) -> np.ndarray:
    """Add the array ``total`` into ``leaf.grad`` (set it when there is none), as a backward
    pass without create_graph does, and return the new ``.grad``'s array; ``owned``: the pass
    made ``total`` itself. A compiled program's replay delivers its gradients through this."""
    grad = leaf._grad
    # Without a .grad, a copy unless the pass made the sum: g may be shared with other leaves
    # or be a read-only broadcast view.
    fresh = grad is None
    # A NumPy scalar (a 0-d rule's result) becomes a 0-d array: ``.grad`` is written in place
    # (``p.grad.zero_()``).
    kept = owned and type(total) is np.ndarray
    array = (total if kept else np.array(total)) if fresh else np.asarray(grad._array + total)
    leaf._grad = Tensor._make(array)
    return array


def run_backward(
    outputs: Sequence,
    seeds: Sequence,
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence | None = None,
) -> list | None:
    """Propagate ``seeds`` (one per output) back through the graph.

    With ``inputs`` None, gradients accumulate into the ``.grad`` of leaves (``backward``);
    otherwise they are returned, one per input, and no ``.grad`` changes (``grad``).

    The loop, as in a textbook: send gradients along edges (the seeds first), summing those
    that meet at one node or leaf; run the newest node that has gradients waiting, which
    gives gradients for its inputs; repeat; at the end, hand each leaf its total. A node is
    always created after the nodes of its inputs, so when the newest waiting node runs,
    every gradient it will receive has arrived: a heap ordered by ``sequence`` stands in for
    a topological sort, and each node runs once.
    """
    if state.forward_ad:
        # Backward rules run on arrays, so tangents would not flow through them and the
        # result would be silently zero.
        raise GraphError(
            "backward: reverse mode inside forward mode (grad, vjp or jacrev under jvp or "
            "jacfwd) is not supported; differentiate with reverse mode twice instead, e.g. "
            "jacrev(jacrev(f)) or hessian(f)"
        )
    if observe.current is not None:  # a replay in pieces runs the recorded pass instead
        done = observe.current.run_backward(outputs, seeds, retain_graph, create_graph, inputs)
        if done is not observe.PLAIN:
            return done
    # grad(): where each requested input's gradient is found (a leaf by id, a non-leaf by
    # its node's output), and the position(s) it goes to in the result.
    capture = None
    if inputs is not None:
        capture = {}
        for i, t in enumerate(inputs):
            edge = edge_of(t)
            capture.setdefault(id(t) if edge is t else edge, []).append(i)
        captured: list = [None] * len(inputs)

    waiting: dict[Node, list] = {}  # per node, the sum so far of each output's gradient
    # The ids of the arrays in `waiting` that the pass made (a sum, or zeros a `SliceGrad`
    # went into): only those are added into in place; a node's leave the set as it runs.
    owned: set[int] = set()
    # Per leaf, [the sum so far, whether the pass made that array (so it may add into it)];
    # with capture (grad()), only the leaves asked for.
    leaves: dict = {}
    queue: list[tuple[int, Node]] = []  # the waiting nodes by -sequence: newest first
    counter = counting.active
    observer = observe.current  # read once per pass: each node then tests a local
    # While the compiler records, the rules run on Tensors, as for create_graph, so that their
    # ops are recorded; they record graph nodes only when create_graph was asked for.
    tracing = observer is not None and observer.recording()
    record_nodes = create_graph
    if observer is not None:
        begun = observer.backward_begins(create_graph, inputs is None)
    if tracing:
        create_graph = True
        seeds = [None if g is None else _as_tensor(g) for g in seeds]
    anomaly = state.anomaly
    changes = latest_change
    # Nodes free their saved arrays as they finish, unless op counting still reads them.
    release = not retain_graph and counter is None
    previous_mode = state.grad_enabled
    state.grad_enabled = record_nodes  # the rules' own ops are recorded only for create_graph
    edges, grads, sender = list(map(edge_of, outputs)), seeds, None
    quiet = silence()  # NumPy's RuntimeWarnings stay silent, as PyTorch's (numpy_warnings)
    try:
        while True:
            # Send: each gradient along its edge, summed back to the shape and dtype of
            # where it goes; a node's first gradient queues it.
            for edge, g in zip(edges, grads):
                if edge is None or g is None:
                    continue
                if type(edge) is tuple:
                    node, index = edge
                    shape, dtype = node.out_meta[index]
                    sums = waiting.get(node)
                    if sums is None:
                        sums = waiting[node] = [None] * len(node.out_meta)
                        heapq.heappush(queue, (-node.sequence, node))
                    total = sums[index]
                    if type(g) is SliceGrad:
                        if total is None or id(total) not in owned:
                            # A copy that is an array (a 0-d rule's result is a scalar).
                            total = np.zeros(shape, dtype) if total is None else np.array(total)
                            sums[index] = total
                            owned.add(id(total))
                        g.add_into(total)
                        continue
                    if g.shape != shape or g.dtype != dtype:
                        g = _fit(g, shape, dtype, sender)
                    if total is None:
                        sums[index] = g
                    elif id(total) in owned and not create_graph:
                        total += g
                    else:
                        sums[index] = total = total + g
                        if type(total) is np.ndarray and not create_graph:  # not a 0-d scalar
                            owned.add(id(total))
                else:
                    data = edge._array
                    if capture is not None and id(edge) not in capture:
                        continue  # grad(): a leaf nobody asked for
                    entry = leaves.get(edge)
                    if type(g) is SliceGrad:
                        if entry is None:
                            entry = leaves[edge] = [np.zeros(data.shape, data.dtype), True]
                        elif not entry[1]:
                            entry[0], entry[1] = np.array(entry[0]), True
                        g.add_into(entry[0])
                        continue
                    if g.shape != data.shape or g.dtype != data.dtype:
                        g = _fit(g, data.shape, data.dtype, sender)
                    if entry is None:
                        leaves[edge] = [g, False]
                    elif entry[1] and not create_graph:
                        entry[0] += g
                    else:
                        entry[0], entry[1] = entry[0] + g, True
            if not queue:
                break
            # Run the newest waiting node.
            node = heapq.heappop(queue)[1]
            out_grads = waiting.pop(node)
            if owned:
                for g in out_grads:
                    owned.discard(id(g))
            if len(out_grads) > 1 and node.materialize_grads:  # one output alone is waiting
                _fill_missing(node, out_grads, create_graph)  # only once its gradient came
            if node.hooks or node.retained:
                _run_node_hooks(node, out_grads, create_graph)
            if capture is not None:
                for i, g in enumerate(out_grads):
                    for j in capture.get((node, i), ()):
                        captured[j] = g if captured[j] is None else captured[j] + g
            if changes[0] > node.sequence:  # something changed in place since node was made
                node.check_versions()
            if observer is None:
                grads = node.propagate(out_grads, create_graph, release)
            else:
                grads = observer.run_node(node, out_grads, create_graph, release)
            if counter is not None:
                _count_backward(node, grads)
                if not retain_graph:
                    node.release()
            if anomaly:
                _check_finite(node, grads)
            edges, sender = node.edges, node
        if capture is None:
            if tracing:
                observer.deliver(leaves)
            else:
                deliver(leaves, create_graph)
    finally:
        restore(quiet)
        state.grad_enabled = previous_mode
        if observer is not None:
            observer.backward_ends(begun)
    if capture is None:
        return None
    for leaf, (total, _) in leaves.items():
        for i in capture[id(leaf)]:
            captured[i] = total
    return [None if g is None else _as_tensor(g) for g in captured]


def _as_tensor(g) -> Tensor:
    return g if isinstance(g, Tensor) else Tensor._make(np.asarray(g))


def _fill_missing(node: Node, out_grads: list, create_graph: bool) -> None:
    """Zeros for the outputs of ``node`` that no gradient reached."""
    for i, g in enumerate(out_grads):
        if g is None:
            shape, dtype = node.out_meta[i]
            zeros = np.zeros(shape, dtype)
            out_grads[i] = Tensor._make(zeros) if create_graph else zeros


def _run_node_hooks(node: Node, out_grads: list, create_graph: bool) -> None:
    for i, g in enumerate(out_grads):
        for hook in (node.hooks or {}).get(i, ()):
            # None: an output no gradient reached, of a Function that asked for None.
            result = hook(None if g is None else _as_tensor(g))
            if result is not None and g is None:
                raise GraphError(
                    f"hook on output {i} of {node.name}: can't replace a None gradient with a "
                    "non-None value"
                )
            if result is not None:
                g = result if create_graph else result._array
        out_grads[i] = g
        ref = (node.retained or {}).get(i)
        tensor = ref() if ref is not None else None
        if tensor is not None and g is not None:
            tensor._grad = _as_tensor(g) if tensor._grad is None else tensor._grad + _as_tensor(g)


def _fit(g, shape: tuple, dtype, sender: Node | None):
    """Sum ``g`` back to an input's broadcast ``shape`` and cast it to the input's dtype;
    ``sender`` is the node an error names (None: the seed of ``backward``)."""
    if g.shape != shape:
        g = sum_to_shape(g, shape, "backward" if sender is None else sender.name)
    if g.dtype != dtype:
        g = g.astype(dtype) if isinstance(g, ARRAY_TYPES) else g.to(dtype)
    return g


_LEADING_AXES = [tuple(range(n)) for n in range(65)]  # NumPy arrays have at most 64 dims


def sum_to_shape(g, shape: tuple, op: str = "sum_to_shape"):
    """Sum an array or Tensor over the axes that broadcasting added or stretched to ``shape``."""
    lead = g.ndim - len(shape)
    if lead < 0:
        return np.broadcast_to(g, shape) if isinstance(g, ARRAY_TYPES) else g.expand(shape)
    if lead and g.shape[lead:] == shape and isinstance(g, ARRAY_TYPES):
        return kernels.add_reduce(g, _LEADING_AXES[lead])  # a bias: over the leading dims only
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    if axes and isinstance(g, ARRAY_TYPES):
        g = kernels.add_reduce(g, axes, keepdims=True)  # ndarray.sum without its Python wrapper
    elif axes:
        g = g.sum(axes, True)
    if lead:
        g = g.reshape(shape)
    if g.shape != shape:
        raise ShapeError(
            f"{op}: gradient of shape {fmt_shape(g.shape)} does not fit input of shape "
            f"{fmt_shape(shape)}"
        )
    return g


def _count_backward(node: Node, in_grads: list) -> None:
    edges = sum(1 for edge, g in zip(node.edges, in_grads) if edge is not None and g is not None)
    op = getattr(node, "op", None)
    flops = 0
    if op is not None and callable(op.flops) and node.saved:
        saved = node.saved
        shapes = [np.shape(saved.get(name, ())) for name in op.inputs]
        # A node saves every op parameter, and inputs, their shapes, out and residuals by
        # their names.
        named = {*op.inputs, *(f"{name}_shape" for name in op.inputs), "out"}
        named.update(node.plan.residuals)
        params = {key: value for key, value in saved.items() if key not in named}
        flops = op.flops(*shapes, **params) * edges  # one product of the same size per input
    counting.active.record_backward(node.name, edges, flops)


def _check_finite(node: Node, in_grads: list) -> None:
    for i, g in enumerate(in_grads):
        if g is None:
            continue
        array = g.values if type(g) is SliceGrad else g if isinstance(g, ARRAY_TYPES) else g._array
        if not np.all(np.isfinite(array)):
            kind = "NaN" if np.any(np.isnan(array)) else "Inf"
            where = "".join(node.trace[-3:]) if node.trace else "(creation stack not recorded)\n"
            raise GraphError(
                f"{node.name}: backward produced {kind} in the gradient of input {i}; "
                f"the forward op was created at:\n{where}"
            )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.

    Follows ``torch.autograd.grad``: ``grad_outputs`` defaults to ones for scalar outputs;
    with ``create_graph=True`` the result is itself differentiable.

    >>> from chainrule import Tensor
    >>> x = Tensor(3.0, requires_grad=True)
    >>> (dx,) = grad(x**3, x, create_graph=True)
    >>> (d2x,) = grad(dx, x)
    >>> float(dx), float(d2x)
    (27.0, 18.0)
    """
    single_input = isinstance(inputs, Tensor)
    inputs = [inputs] if single_input else list(inputs)
    outputs, grad_outputs = _paired(outputs, grad_outputs, "grad")
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise GraphError(f"grad: input {i} does not require grad")
    seeds = [seed_gradient(out, g, create_graph, "grad") for out, g in zip(outputs, grad_outputs)]
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outputs, seeds, retain_graph, create_graph, inputs)
    for i, g in enumerate(result):
        if g is None and not allow_unused:
            raise GraphError(
                f"grad: input {i} was not used to compute the outputs; "
                "pass allow_unused=True to get None for it"
            )
    return tuple(result)


def seed_gradient(output, gradient, create_graph: bool, op: str = "backward"):
    """The starting gradient for ``output``: ones for a scalar, else the checked ``gradient``."""
    if not isinstance(output, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(output).__name__}")
    if not output.requires_grad:
        raise GraphError(
            f"{op}: the output does not require grad and has no grad_fn; make an input with "
            "requires_grad=True, and do not compute it under no_grad()"
        )
    if gradient is None:
        if output._array.size != 1:
            raise GraphError(
                f"{op}: output has shape {fmt_shape(output.shape)}; pass gradient= of that "
                "shape or reduce to a scalar first"
            )
        seed = np.array(1, output.dtype).reshape(output.shape)  # np.ones_like costs more
    else:
        seed = gradient._array if isinstance(gradient, Tensor) else np.asarray(gradient)
        if seed.shape != output.shape:
            raise ShapeError(
                f"{op}: gradient has shape {fmt_shape(seed.shape)} but the output has shape "
                f"{fmt_shape(output.shape)}"
            )
        seed = seed.astype(output.dtype, copy=False)
    if create_graph:
        return gradient if isinstance(gradient, Tensor) else Tensor._make(seed)
    return seed


def _paired(outputs, grads, op: str) -> tuple[list, list]:
    """Outputs and their gradients as two lists of the same length, as PyTorch takes them:
    each a tensor or a sequence. One output may also take an array-like gradient, and a
    sequence of outputs one gradient for all."""
    single = isinstance(outputs, Tensor)
    outputs = [outputs] if single else list(outputs)
    is_sequence = isinstance(grads, (list, tuple)) and all(
        g is None or isinstance(g, (Tensor, np.ndarray)) for g in grads
    )
    if not is_sequence or (single and not grads):
        return outputs, [grads] * len(outputs)
    if len(grads) != len(outputs):
        raise GraphError(
            f"{op}: {len(grads)} gradients given for {len(outputs)} outputs; pass one "
            "gradient (or None) per output"
        )
    return outputs, list(grads)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False) -> None:
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad`` (PyTorch's form)."""
    tensors, grad_tensors = _paired(tensors, grad_tensors, "backward")
    seeds = [seed_gradient(t, g, create_graph) for t, g in zip(tensors, grad_tensors)]
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(tensors, seeds, retain_graph, create_graph)


class _InferenceState(threading.local):
    enabled = False  # per thread, as grad mode


_inference = _InferenceState()


class inference_mode(_GradMode):
    """Context manager and decorator for code that only evaluates: ops record no graph, as
    under `no_grad` (PyTorch's inference_mode; chainrule has no separate inference tensors).
    ``inference_mode(False)`` turns it off inside, recording again.

    >>> import chainrule
    >>> x = chainrule.ones(1, requires_grad=True)
    >>> with chainrule.inference_mode():
    ...     y = x * 2
    ...     on = chainrule.is_inference_mode_enabled()
    >>> y.requires_grad, on, chainrule.is_inference_mode_enabled()
    (False, True, False)
    """

    def __new__(cls, mode=True):
        if callable(mode):  # used bare, as @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        super().__init__(not mode)
        self.mode, self._was = bool(mode), []

    def __enter__(self):
        self._was.append(_inference.enabled)
        _inference.enabled = self.mode
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        _inference.enabled = self._was.pop()


def is_inference_mode_enabled() -> bool:
    """Whether code runs inside `inference_mode`."""
    return _inference.enabled


#: torch.autograd names for what stands above the backward pass here (a Function records
#: graph nodes, gradcheck runs backward): looked up on first use, so that this module keeps
#: importing only what is below it.
_ABOVE = {
    "Function": ("chainrule.function", "Function"),
    # PyTorch's: True or an error (chainrule.gradcheck returns the report).
    "gradcheck": ("chainrule.gradcheck", "gradcheck_as_torch"),
    "gradgradcheck": ("chainrule.gradcheck", "gradgradcheck_as_torch"),
}


def __getattr__(name: str):
    if name == "function":  # torch.autograd.function: FunctionCtx, once_differentiable...
        return importlib.import_module("chainrule.function")
    if name in _ABOVE:
        module, attr = _ABOVE[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'chainrule.autograd' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ABOVE) | {"function"})


__all__ = [
    "Variable",
    "enforce_grad_layout_policy",
    "is_multithreading_enabled",
    "is_tensor_like",
    "is_view_replay_enabled",
    "kineto_available",
    "set_detect_anomaly",
    "set_multithreading_enabled",
    "variable",
    "Node",
    "node_order",
    "RemovableHandle",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
    "state",
]
