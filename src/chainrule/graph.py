"""What the tensor engine's graph is made of: `Node`, the version counters that catch in-place
changes, and the engine switches (grad mode, forward mode, anomaly detection).

Nodes are made by `chainrule.dispatch` (and `chainrule.function`) and run by the backward pass
in `chainrule.autograd`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import traceback
from collections.abc import Callable

from .errors import GraphError


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


class SliceGrad:
    """The gradient a basic-indexing view (``x[:, t]``, a piece of ``chunk``, ``unbind``)
    sends its base: zeros of the base's shape with ``values`` at ``index``. The backward pass
    never makes those zeros per view: it adds ``values`` in place into the base's gradient
    sum, one array for all the views of a base (an RNN's T steps of ``unbind`` write T slices
    of one array, not T arrays of the whole that are then added up). ``view(array, index)``
    is the view of an array at the index (the getitem row's forward)."""

    __slots__ = ("values", "index", "view")

    def __init__(self, values, index: tuple, view) -> None:
        self.values, self.index, self.view = values, index, view

    def add_into(self, total) -> None:
        """Add the values into ``total`` at the index, in place."""
        target = self.view(total, self.index)
        target += self.values


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

    #: Whether backward fills outputs no gradient reached with zeros before `propagate` (a
    #: custom Function's ``ctx.set_materialize_grads(False)`` asks for None instead).
    materialize_grads = True

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

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
        """The gradient of each input (None for one without) from those of the outputs
        (``grads``, Tensors when ``create_graph``, else arrays); then, when ``release`` is
        true, free what was saved (`release`). The backward pass calls it once per node."""
        raise NotImplementedError

    def release(self) -> None:
        """Free what was saved for backward."""

    def check_versions(self) -> None:
        """Raise if an array saved for backward was modified in place since it was saved."""
        for item in self.watched:  # Tensors, counters, and numbers (skipped)
            counter = item if type(item) is VersionCounter else getattr(item, "_counter", None)
            if counter is not None and counter.changed_at > self.sequence:
                raise GraphError(
                    f"{self.name}: a tensor saved for backward was modified in place by "
                    f"{counter.last_op} after it was saved (it is now at version "
                    f"{counter.value}); use the out-of-place op, or clone() the tensor before "
                    "changing it"
                )


def edge_of(tensor):
    """Where the gradient of ``tensor`` goes (an entry of `Node.edges`): the leaf itself, or
    (the node that made it, which of that node's outputs it is)."""
    node = tensor.grad_fn
    return tensor if node is None else (node, tensor._output_nr)


#: chainrule's own directory: a frame in a file under it is chainrule's, any other the user's.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _user_frames() -> list[str]:
    """The creation stack without chainrule's own frames (for detect_anomaly)."""
    frames = [f for f in traceback.extract_stack() if not f.filename.startswith(_PACKAGE_DIR)]
    return traceback.format_list(frames)


def user_line() -> str:
    """``file:line`` of the innermost frame outside chainrule: the user's line that led here."""
    for frame in reversed(traceback.extract_stack()):
        if not frame.filename.startswith(_PACKAGE_DIR):
            return f"{frame.filename}:{frame.lineno}"
    return "<unknown>"


# The switches.


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
