"""``count_ops``: how many elementary ops (and matmul FLOPs) a forward and backward pass run.

Convention: each forward op counts 1. In backward, each gradient sent along an edge counts 2:
one multiply by the incoming gradient (the VJP) and one add into the input's gradient. So
the cheap-gradient principle reads: backward ops <= 4 x forward ops for binary ops.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager


class OpCounts:
    """Counts by op name for the forward and the backward pass, and matmul FLOPs.

    Prints as a table; ``forward_total`` and ``backward_total`` sum the columns.
    """

    def __init__(self) -> None:
        self.forward: Counter[str] = Counter()
        self.backward: Counter[str] = Counter()
        self.forward_flops = 0
        self.backward_flops = 0

    @property
    def forward_total(self) -> int:
        """Elementary forward ops counted."""
        return sum(self.forward.values())

    @property
    def backward_total(self) -> int:
        """Elementary backward ops counted."""
        return sum(self.backward.values())

    @property
    def ratio(self) -> float:
        """backward_total / forward_total (0 when nothing ran forward)."""
        return self.backward_total / self.forward_total if self.forward_total else 0.0

    def record_forward(self, name: str, flops: int = 0) -> None:
        """Count one forward op."""
        self.forward[name] += 1
        self.forward_flops += flops

    def record_backward(self, name: str, edges: int, flops: int = 0) -> None:
        """Count the backward of one op that sent gradients along ``edges`` inputs."""
        self.backward[name] += 2 * edges
        self.backward_flops += flops

    def __str__(self) -> str:
        names = sorted(set(self.forward) | set(self.backward))
        width = max([len(n) for n in names] + [5])
        lines = [f"{'op':<{width}}  {'forward':>8}  {'backward':>8}"]
        lines += [f"{n:<{width}}  {self.forward[n]:>8}  {self.backward[n]:>8}" for n in names]
        lines.append(f"{'total':<{width}}  {self.forward_total:>8}  {self.backward_total:>8}")
        if self.forward_flops or self.backward_flops:
            lines.append(f"{'FLOPs':<{width}}  {self.forward_flops:>8}  {self.backward_flops:>8}")
        lines.append(f"backward / forward = {self.ratio:.2f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


#: The counter in use, or None outside ``count_ops`` (the engines check it on every op).
active: OpCounts | None = None
#: What an intercept's ``run_op`` or ``run_function`` returns to let the engine run the call
#: as usual (the compiler's tracer, for another thread's op or its own op being recorded).
PLAIN = object()

#: What intercepts the tensor engine: a `chainrule.profiler.profile` recording or the compiler's
#: tracer (`chainrule.compiler.tracer.Tracer`), else None. The engine tests it next to
#: ``active``; while it is set, each op, `Function` and backward node runs through it
#: (``run_op``, ``run_function``, ``run_node``), and a tracer also sees what it must record
#: or refuse (its ``traces`` is True).
intercept = None


@contextmanager
def count_ops():
    """Count the ops run inside the block, on both engines.

    >>> import chainrule as cr
    >>> with count_ops() as counts:
    ...     x, y = cr.Value(2.0), cr.Value(3.0)
    ...     z = x * y + x
    ...     z.backward()
    >>> counts.forward_total, counts.backward_total
    (2, 8)
    """
    global active
    previous, active = active, OpCounts()
    try:
        yield active
    finally:
        active = previous


def replayed_whole(fn: Callable | None = None, *, pure: bool = False) -> Callable:
    """Mark ``fn`` as work the compiler's tracer records as one call, run again as it is at
    each replay: what it does is not made of recorded ops (an optimizer's step updates the
    parameters' arrays in place; zero_grad sets ``.grad``; class indices are checked and
    turned into index arrays in NumPy), or must differ each time (a random draw gives fresh
    numbers). Tensors and arrays among its arguments and results become the call's inputs and
    outputs in the program. ``pure=True``: its results depend on its arguments alone, so a
    call whose inputs are constants is run once, when the program is built. Outside tracing
    it costs one test.
    """
    if fn is None:
        return functools.partial(replayed_whole, pure=pure)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tracer = intercept
        if tracer is None or not tracer.traces:
            return fn(*args, **kwargs)
        return tracer.run_whole(fn, args, kwargs, pure)

    return wrapper


def reads_values(what: str) -> None:
    """Tell the compiler's tracer, if one runs, that ``what`` takes a tensor's values into
    Python or NumPy (``.item()``, ``np.asarray``, an output size decided from values): what
    is done with them there cannot be recorded, so the record ends (a graph break). Outside
    tracing it costs one test."""
    tracer = intercept
    if tracer is not None and tracer.traces and tracer.records():
        tracer.graph_break(f"{what} reads a tensor's values, which the record cannot follow")
