"""The one seam through which observers watch the tensor engine: `Observer`, what the engine
reports to it, and `current`, the observer watching now (None: nobody, one test per seam).

The compiler's tracer (`chainrule.compiler.tracer`) records what the engine does as a program;
the profiler (`chainrule.profiler`) times it. Both subclass `Observer` and implement what they
watch; every report has a default that changes nothing. The engine calls in at each seam as

    observer = observe.current
    if observer is not None:
        observer.values_read("item()")

so an engine file knows this interface and nothing of who implements it.
"""

from __future__ import annotations

import functools
import threading
import types
from collections.abc import Callable
from typing import Any

#: The observer watching the engine now, or None. The engine reads it once per seam.
current: Observer | None = None

#: What `Observer.run_op` and `Observer.run_function` return to let the engine run the call
#: as usual.
PLAIN = object()


class Observer:
    """What the tensor engine reports while an observer watches it, each with a default that
    changes nothing.

    Calls that run engine work (``run_op``, ``run_function``, ``run_node``, ``run_whole``) may
    run it themselves (to time or record it) or hand it back (`PLAIN`); the others are reports.
    `attach` makes an observer `current` and `detach` puts back the one before it.
    `unobserved` runs work on this thread whose reports the observer leaves alone (the op it
    is recording, which runs through the engine again); `busy` says whether such work runs.
    """

    def __init__(self) -> None:
        self._previous: Observer | None = None
        self._local = threading.local()

    # Watching.

    def attach(self) -> None:
        """Become `current`, the observer the engine reports to."""
        global current
        self._previous, current = current, self

    def detach(self) -> None:
        """Stop being `current`; the observer that was current before comes back."""
        global current
        if current is self:
            current = self._previous
        self._previous = None

    def busy(self) -> bool:
        """Whether this thread is inside `unobserved` (its work then goes unreported)."""
        return getattr(self._local, "busy", False)

    def unobserved(self, fn: Callable, *args, **kwargs) -> Any:
        """``fn(*args, **kwargs)``, with what it makes the engine report on this thread marked
        `busy` (an observer running the op it was told about runs it through the engine)."""
        if self.busy():
            return fn(*args, **kwargs)
        self._local.busy = True
        try:
            return fn(*args, **kwargs)
        finally:
            self._local.busy = False

    def recording(self) -> bool:
        """Whether what this thread does now is being recorded as a program (the tracer's
        answer); the engine then runs backward rules on Tensors, so their ops are seen."""
        return False

    # Engine work: an observer may run it itself.

    def run_op(self, op, args: tuple, params: dict) -> Any:
        """An op row is about to run on ``args``: run it and return the result, or return
        `PLAIN` to let the engine run it."""
        return PLAIN

    def run_function(self, cls, args: tuple, kwargs: dict) -> Any:
        """A `chainrule.Function` subclass's ``apply``: as `run_op`."""
        return PLAIN

    def run_node(self, node, grads: list, create_graph: bool, release: bool) -> list:
        """A graph node's backward: its inputs' gradients from its outputs' ``grads``."""
        return node.propagate(grads, create_graph, release)

    def run_module(self, module, args: tuple, kwargs: dict) -> Any:
        """A module without hooks is called: its ``forward``'s result."""
        return module.forward(*args, **kwargs)

    def run_whole(self, fn: Callable, args: tuple, kwargs: dict, pure: bool) -> Any:
        """A call marked `replayed_whole` (an optimizer's step, a random draw...)."""
        return fn(*args, **kwargs)

    def run_update(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """An optimizer's step, marked `recorded_update` (``args[0]`` the optimizer): by
        default a whole call (`run_whole`); a tracer records its update as equations."""
        return self.run_whole(fn, args, kwargs, False)

    def run_backward(self, outputs, seeds, retain_graph: bool, create_graph: bool,
                     inputs) -> Any:  # fmt: skip
        """A backward pass is about to run (`chainrule.autograd.run_backward`'s arguments): run
        it and return what it returns, or return `PLAIN` to let the engine run it."""
        return PLAIN

    # The backward pass.

    def backward_begins(self, create_graph: bool, to_leaves: bool) -> Any:
        """A backward pass starts (``to_leaves``: ``backward()``, not ``grad()``); what it
        returns comes back to `backward_ends`."""
        return None

    def backward_ends(self, begun: Any) -> None:
        """The backward pass `backward_begins` announced has ended."""

    def deliver(self, sums: dict) -> None:
        """The leaves' total gradients of a backward pass that this observer records
        (`recording` was True when it began), ``{leaf: [total, owned]}``, to be put in
        their ``.grad`` (`chainrule.autograd.deliver` does that when nobody records)."""

    # Reports.

    def grad_assigned(self, tensor, value) -> None:
        """``tensor.grad = value`` ran."""

    def inplace_begins(self, write: Callable, tensor, op, other, name: str) -> None:
        """``write(tensor, op, other, name)``, an in-place op, begins (its op and its writes
        are reported inside it); `inplace_ends` follows."""

    def inplace_ends(self) -> None:
        """The in-place op `inplace_begins` announced has ended."""

    def write(self, target, source) -> bool:
        """An in-place op is about to write the array ``source`` into the array ``target``:
        True when the observer makes the write itself, later (a replay in pieces), False to
        let the engine write now."""
        return False

    def values_read(self, what: str) -> None:
        """A tensor's values were taken into Python or NumPy (``what``: ``"item()"``...)."""

    def data_read(self, tensor, copy) -> None:
        """Code outside chainrule read ``tensor.data``: ``copy``, a new Tensor over the same
        array."""

    def shared(self, tensor, copy) -> None:
        """``copy``, a new Tensor over ``tensor``'s array, was made (``detach()``)."""

    def data_assigned(self, tensor) -> None:
        """Code outside chainrule assigned ``tensor.data``: ``tensor`` now holds another
        array (not told for ``t.data -= x``, whose in-place op wrote into the same one)."""

    def module_called(self, module) -> None:
        """An `nn.Module` was called."""

    def span_begins(self, name: str, phase: str) -> Any:
        """A named span starts (`chainrule.profiler.record_function`); what it returns comes
        back to `span_ends`."""
        return None

    def span_ends(self, span: Any) -> None:
        """The span `span_begins` returned has ended."""


def replayed_whole(
    fn: Callable | None = None, *, pure: bool = False, python: bool = False
) -> Callable:
    """Mark ``fn`` as work the compiler's tracer records as one call, run again as it is at
    each replay: what it does is not made of recorded ops (zero_grad to zeros sets ``.grad``;
    class indices are checked and turned into index arrays in NumPy), or must differ each
    time (a random draw gives fresh numbers). Tensors and arrays among its arguments and
    results become the call's inputs and outputs in the program. ``pure=True``: its results
    depend on its arguments alone, so a call whose inputs are constants is run once, when the
    program is built. ``python=True``: it changes Python numbers only, never an array (a
    learning-rate scheduler's step): given no tensor, a replay in pieces runs it where the
    function's Python calls it, with no stop (``fn.python_only``). Without an observer it
    costs one test.
    """
    if fn is None:
        return functools.partial(replayed_whole, pure=pure, python=python)
    fn.python_only = python

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        observer = current
        if observer is None:
            return fn(*args, **kwargs)
        # A generator (``model.parameters()``) as a list: what the call got can be compared
        # between calls, and given to it again.
        args = tuple(list(a) if isinstance(a, types.GeneratorType) else a for a in args)
        return observer.run_whole(fn, args, kwargs, pure)

    return wrapper


def recorded_update(fn: Callable) -> Callable:
    """Mark an optimizer's ``step``: the compiler's tracer records the update it makes as
    equations (`Observer.run_update`; the optimizer writes it with
    `chainrule.optim.arithmetic.Arithmetic`), other observers see a `replayed_whole` call.
    Without an observer it costs one test."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        observer = current
        if observer is None:
            return fn(*args, **kwargs)
        return observer.run_update(fn, args, kwargs)

    return wrapper


def reads_values(what: str) -> None:
    """Report that ``what`` takes a tensor's values into Python or NumPy (``.item()``,
    ``np.asarray``, an output size decided from values): a recording ends there (a graph
    break), since what is done with them cannot be recorded. Without an observer it costs one
    test."""
    observer = current
    if observer is not None:
        observer.values_read(what)
