"""The tensor engine's backward pass, gradient modes, hooks and anomaly detection.

`Node` is what a Tensor's ``grad_fn`` points to; `run_backward` walks the nodes once each in
reverse topological order, summing each gradient back to its input's shape and dtype. Op
rows and the `Function` API that create nodes live in `chainrule.function`.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import threading
import traceback
from collections.abc import Callable, Sequence

import numpy as np

from . import counting
from .errors import GraphError, ShapeError, fmt_shape

#: What NumPy arithmetic returns: arrays, or scalars for 0-d results.
ARRAY_TYPES = (np.ndarray, np.generic)


class _State(threading.local):
    """Engine switches: gradient recording, forward-mode tangents, anomaly checks.

    Each thread has its own (as in PyTorch), so ``no_grad`` in one thread, such as a server's
    evaluation, cannot stop another thread's training from recording its graph.
    """

    def __init__(self) -> None:
        self.grad_enabled = True
        self.forward_ad = False
        self.anomaly = False


#: The engine switches (per thread); ops read ``state.grad_enabled`` on every call.
state = _State()


#: Numbers nodes in the order they are made (itertools.count is atomic under the GIL).
_sequence = itertools.count()

#: ``[stamp]`` of the latest in-place change to any array (-1: none yet). Backward checks a
#: node for changed inputs only when this is newer than the node, so graphs recorded after
#: the last change (each training step's, after the optimizer's update) pay no check.
latest_change = [-1]


class VersionCounter:
    """Counts in-place changes to an array (shared by a tensor and its views).

    ``changed_at`` stamps the latest change with the node sequence number of that moment, so
    a node tells whether an array it saved was changed after it was recorded.
    """

    __slots__ = ("value", "last_op", "changed_at")

    def __init__(self) -> None:
        self.value = 0
        self.last_op = ""
        self.changed_at = -1

    def bump(self, op: str) -> None:
        """Record one in-place change made by ``op``."""
        self.value += 1
        self.last_op = op
        self.changed_at = latest_change[0] = next(_sequence)


class Node:
    """A recorded op in the graph: where each input's gradient goes, and what it produced.

    ``edges[i]`` is None (input i needs no gradient), a leaf Tensor, or ``(node, index)``
    for an input produced by another node. ``out_meta`` holds each output's shape and dtype.
    ``watched`` holds what backward checks for in-place changes made after the node was
    recorded: the Tensors whose arrays it saved (other items, such as numbers, are skipped)
    and the version counters of saved outputs (a counter, not the output: the output points
    to this node, and a cycle would keep the graph alive until the garbage collector runs).
    ``sequence`` numbers nodes in the order they were made, so a node's is larger than those
    of the nodes that made its inputs (backward runs nodes from the largest down).
    """

    __slots__ = (
        "edges", "out_meta", "watched", "sequence", "hooks", "retained", "trace", "__weakref__"
    )  # fmt: skip

    def __init__(self, edges: tuple, out_meta: tuple, watched: tuple) -> None:
        self.sequence = next(_sequence)
        self.edges = edges
        self.out_meta = out_meta
        self.watched = watched
        self.hooks: dict | None = None
        self.retained: dict | None = None
        self.trace = _user_frames() if state.anomaly else None

    @property
    def name(self) -> str:
        """The op's name, used in messages."""
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        """The nodes (or leaf Tensors) this node sends gradients to, as in PyTorch."""
        return self.edges

    def _backward(self, grads: list, create_graph: bool, release: bool) -> list:
        """The gradient of each input (None for one without) from those of the outputs;
        then, when ``release`` is true, free what was saved (`release`)."""
        raise NotImplementedError

    def release(self) -> None:
        """Free what was saved for backward."""

    def check_versions(self) -> None:
        """Raise if an array saved for backward was modified in place since it was saved."""
        for item in self.watched:
            counter = item._counter if isinstance(item, Tensor) else item
            if isinstance(counter, VersionCounter) and counter.changed_at > self.sequence:
                raise GraphError(
                    f"{self.name}: a tensor saved for backward was modified in place by "
                    f"{counter.last_op} after it was saved (it is now at version "
                    f"{counter.value}); use the out-of-place op, or clone() the tensor before "
                    "changing it"
                )


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _user_frames() -> list[str]:
    """The creation stack without chainrule's own frames (for detect_anomaly)."""
    frames = [f for f in traceback.extract_stack() if not f.filename.startswith(_PACKAGE_DIR)]
    return traceback.format_list(frames)


# Gradient modes.


class _GradMode(contextlib.ContextDecorator):
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._previous: list[bool] = []

    def __enter__(self):
        self._previous.append(state.grad_enabled)
        state.grad_enabled = self.enabled
        return self

    def __exit__(self, *exc) -> None:
        state.grad_enabled = self._previous.pop()


class no_grad(_GradMode):
    """Context manager and decorator: ops inside record no graph (for updates, evaluation).

    >>> from chainrule import Tensor
    >>> x = Tensor([1.0], requires_grad=True)
    >>> with no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(_GradMode):
    """Context manager and decorator: record the graph again, even inside `no_grad`."""

    def __init__(self) -> None:
        super().__init__(True)


class set_grad_enabled(_GradMode):
    """Context manager and decorator: record the graph when ``mode`` is true."""

    def __init__(self, mode: bool) -> None:
        super().__init__(bool(mode))


def is_grad_enabled() -> bool:
    """Whether ops currently record a graph."""
    return state.grad_enabled


class detect_anomaly(contextlib.ContextDecorator):
    """Context manager: backward checks every gradient for NaN or Inf.

    When one appears, the error names the forward op that produced it and shows where that
    op was created. Slower: every op records its creation stack.
    """

    def __init__(self) -> None:
        self._previous: list[bool] = []

    def __enter__(self):
        self._previous.append(state.anomaly)
        state.anomaly = True
        return self

    def __exit__(self, *exc) -> None:
        state.anomaly = self._previous.pop()


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        """Unregister the hook (no error if already removed)."""
        with contextlib.suppress(ValueError):
            self._hooks.remove(self._hook)


# The backward pass.


def topological_order(starts: Sequence[Node]) -> list[Node]:
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


def _add(a, b):
    return b if a is None else a + b


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

    Nodes run newest first. A node is always created after the nodes of its inputs, so when
    the newest waiting node runs, every gradient it will receive has arrived: a heap of
    waiting nodes, ordered by ``sequence``, stands in for a topological sort, and each node
    is visited once.
    """

    if state.forward_ad:
        # Backward rules run on arrays, so tangents would not flow through them and the
        # result would be silently zero.
        raise GraphError(
            "backward: reverse mode inside forward mode (grad, vjp or jacrev under jvp or "
            "jacfwd) is not supported; differentiate with reverse mode twice instead, e.g. "
            "jacrev(jacrev(f)) or hessian(f)"
        )

    capture: dict = {}
    captured: list = []
    if inputs is not None:
        for i, t in enumerate(inputs):
            key = id(t) if t.grad_fn is None else (t.grad_fn, t._output_nr)
            capture.setdefault(key, []).append(i)
        captured = [None] * len(inputs)

    # The .grad Tensors this backward created: nobody else has them yet, so later gradients
    # for the same leaf are added into them in place (without create_graph).
    made: dict[Tensor, Tensor] = {}
    grads: dict[Node, list] = {}  # per waiting node, the gradient of each output so far
    waiting: list[tuple[int, Node]] = []  # a heap of (-sequence, node): newest first
    heappop, heappush = heapq.heappop, heapq.heappush

    for out, seed in zip(outputs, seeds):
        node = out.grad_fn
        if node is None:
            if inputs is None:
                _deliver_to_leaf(out, seed, create_graph, made)
            else:
                for i in capture.get(id(out), ()):
                    captured[i] = _add(captured[i], seed)
            continue
        slot = grads.get(node)
        if slot is None:
            slot = grads[node] = [None] * len(node.out_meta)
            heappush(waiting, (-node.sequence, node))
        slot[out._output_nr] = _add(slot[out._output_nr], seed)

    counter = counting.active
    anomaly = state.anomaly
    changes = latest_change
    previous_mode = state.grad_enabled
    state.grad_enabled = create_graph
    # What lets a leaf's gradient be added in place below, without a call per leaf.
    plain_leaves = inputs is None and not create_graph
    # Nodes free their saved arrays as they finish, unless op counting still reads them.
    free = not retain_graph and counter is None
    try:
        while waiting:
            node = heappop(waiting)[1]
            out_grads = grads.pop(node)
            if len(out_grads) > 1:  # one output alone is waiting only once its gradient came
                _fill_missing(node, out_grads, create_graph)
            if node.hooks or node.retained:
                _run_node_hooks(node, out_grads, create_graph)
            if inputs is not None:
                for i, g in enumerate(out_grads):
                    for j in capture.get((node, i), ()):
                        captured[j] = _add(captured[j], g)
            if changes[0] > node.sequence:  # something changed in place since node was made
                node.check_versions()
            in_grads = node._backward(out_grads, create_graph, free)
            if counter is not None:
                _count_backward(node, in_grads)
                if not retain_graph:
                    node.release()
            if anomaly:
                _check_finite(node, in_grads)
            for edge, g in zip(node.edges, in_grads):
                if edge is None or g is None:
                    continue
                if type(edge) is tuple:
                    # Add g to what the parent has waiting; its first gradient queues it.
                    # Written out here, as for the seeds above: this runs once per edge.
                    parent, index = edge
                    shape, dtype = parent.out_meta[index]
                    if g.shape != shape or g.dtype != dtype:
                        g = _fit(g, shape, dtype, node)
                    slot = grads.get(parent)
                    if slot is None:
                        slot = grads[parent] = [None] * len(parent.out_meta)
                        heappush(waiting, (-parent.sequence, parent))
                    if slot[index] is None:
                        slot[index] = g
                    else:
                        slot[index] = slot[index] + g
                    continue
                data = edge.data
                if g.shape != data.shape or g.dtype != data.dtype:
                    g = _fit(g, data.shape, data.dtype, node)
                if inputs is not None:
                    for i in capture.get(id(edge), ()):
                        captured[i] = _add(captured[i], g)
                    continue
                grad = edge.grad
                if plain_leaves and grad is not None and not edge._hooks and made.get(edge) is grad:
                    grad.data += g  # a .grad this backward made: nobody else holds it
                else:
                    _deliver_to_leaf(edge, g, create_graph, made)
    finally:
        state.grad_enabled = previous_mode
    if inputs is None:
        return None
    return [None if g is None else _as_tensor(g) for g in captured]


def _as_tensor(g) -> Tensor:
    return g if isinstance(g, Tensor) else Tensor._make(np.asarray(g))


def _deliver_to_leaf(leaf: Tensor, g, create_graph: bool, made: dict) -> None:
    """Run the leaf's hooks on ``g`` and add it to ``leaf.grad``; ``made`` maps each leaf to
    the .grad Tensor this backward created for it, which nobody else holds yet."""
    if leaf._hooks:
        for hook in leaf._hooks:
            result = hook(_as_tensor(g))
            if result is not None:
                g = result if create_graph else result.data
    grad = leaf.grad
    if create_graph:
        leaf.grad = g if grad is None else grad + g
    elif grad is None:
        # A copy: g may be shared with other leaves or be a read-only broadcast view.
        leaf.grad = made[leaf] = Tensor._make(np.array(g))
    elif made.get(leaf) is grad:
        grad.data += g
    else:
        leaf.grad = made[leaf] = Tensor._make(np.asarray(grad.data + g))


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
            result = hook(_as_tensor(g))
            if result is not None:
                g = result if create_graph else result.data
        out_grads[i] = g
        ref = (node.retained or {}).get(i)
        tensor = ref() if ref is not None else None
        if tensor is not None:
            tensor.grad = _as_tensor(g) if tensor.grad is None else tensor.grad + _as_tensor(g)


def _fit(g, shape: tuple, dtype, node: Node):
    """Sum ``g`` back to an input's broadcast ``shape`` and cast it to the input's dtype."""
    if g.shape != shape:
        g = sum_to_shape(g, shape, node.name)
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
        return np.add.reduce(g, _LEADING_AXES[lead])  # a bias: sum over the leading dims only
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    if axes and isinstance(g, ARRAY_TYPES):
        g = np.add.reduce(g, axes, keepdims=True)  # ndarray.sum without its Python wrapper
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
        # A node saves every op parameter, and inputs, their shapes and out by their names.
        named = {*op.inputs, *(f"{name}_shape" for name in op.inputs), "out"}
        params = {key: value for key, value in saved.items() if key not in named}
        flops = op.flops(*shapes, **params) * edges  # one product of the same size per input
    counting.active.record_backward(node.name, edges, flops)


def _check_finite(node: Node, in_grads: list) -> None:
    for i, g in enumerate(in_grads):
        if g is None:
            continue
        array = g if isinstance(g, ARRAY_TYPES) else g.data
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
    outputs, grad_outputs = _paired(outputs, grad_outputs)
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
        if output.data.size != 1:
            raise GraphError(
                f"{op}: output has shape {fmt_shape(output.shape)}; pass gradient= of that "
                "shape or reduce to a scalar first"
            )
        seed = np.array(1, output.dtype).reshape(output.shape)  # np.ones_like costs more
    else:
        seed = gradient.data if isinstance(gradient, Tensor) else np.asarray(gradient)
        if seed.shape != output.shape:
            raise ShapeError(
                f"{op}: gradient has shape {fmt_shape(seed.shape)} but the output has shape "
                f"{fmt_shape(output.shape)}"
            )
        seed = seed.astype(output.dtype, copy=False)
    if create_graph:
        return gradient if isinstance(gradient, Tensor) else Tensor._make(seed)
    return seed


def _paired(outputs, grads) -> tuple[list, list]:
    """Outputs and their gradients as two lists of the same length: one output (whose
    gradient may be an array too) or a sequence with one gradient each or one for all."""
    if isinstance(outputs, Tensor):
        return [outputs], [grads]
    outputs = list(outputs)
    if grads is None or isinstance(grads, Tensor):
        grads = [grads] * len(outputs)
    return outputs, grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False) -> None:
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad`` (PyTorch's form)."""
    tensors, grad_tensors = _paired(tensors, grad_tensors)
    seeds = [seed_gradient(t, g, create_graph) for t, g in zip(tensors, grad_tensors)]
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(tensors, seeds, retain_graph, create_graph)


__all__ = [
    "Node",
    "RemovableHandle",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
    "state",
]

from .tensor import Tensor  # noqa: E402  (tensor.py imports this module, so this comes last)
