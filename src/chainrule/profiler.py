"""`profile`, PyTorch's ``torch.profiler.profile``: where the time of a program goes, op by op,
forward and backward, as a table or as a Chrome trace. `record_function` adds spans of your own.

A profile is an `chainrule.observe.Observer`: the engine reports to it through that one seam
(``observe.current``, one test per op when nobody watches); this module does the rest.
"""

from __future__ import annotations

import enum
import json
import os
import threading
import warnings
from collections.abc import Callable, Iterable
from contextlib import ContextDecorator
from pathlib import Path
from time import perf_counter_ns

import numpy as np

from . import observe
from ._tensor import Tensor
from .dispatch import apply_op
from .observe import PLAIN, Observer


class ProfilerActivity(enum.Enum):
    """What a profile records, as ``torch.profiler.ProfilerActivity``: chainrule runs on the CPU
    only, so CPU is recorded and the others are accepted and empty."""

    CPU = "CPU"
    CUDA = "CUDA"
    XPU = "XPU"
    MTIA = "MTIA"


class FunctionEvent:
    """One timed span: an op's forward, a graph node's backward, a ``backward()`` call, or a
    `record_function` block. Times are in nanoseconds from `time.perf_counter_ns`; the µs
    properties have PyTorch's names."""

    __slots__ = ("name", "phase", "start_ns", "end_ns", "child_ns", "input_shapes", "thread")

    def __init__(self, name: str, phase: str, start_ns: int, thread: int, shapes=None) -> None:
        self.name, self.phase, self.thread, self.input_shapes = name, phase, thread, shapes
        self.start_ns = self.end_ns = start_ns
        self.child_ns = 0  # time of the spans directly inside this one

    @property
    def cpu_time_total(self) -> float:
        """Duration in µs, the spans inside it included."""
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self) -> float:
        """Duration in µs, less the spans directly inside it."""
        return (self.end_ns - self.start_ns - self.child_ns) / 1e3

    def __repr__(self) -> str:
        return f"<FunctionEvent {self.name} ({self.phase}) {self.cpu_time_total:.3f}us>"


class FunctionEventAvg:
    """The events of one name and phase (and input shapes, when grouped by them) summed."""

    def __init__(self, key: str, phase: str, input_shapes=None) -> None:
        self.key, self.phase, self.input_shapes = key, phase, input_shapes
        self.count = 0
        self.cpu_time_total = 0.0  # µs
        self.self_cpu_time_total = 0.0  # µs

    def add(self, event: FunctionEvent) -> None:
        """Count ``event`` in."""
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total

    @property
    def cpu_time(self) -> float:
        """Mean duration per call in µs."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg {self.key} ({self.phase}) count={self.count} "
            f"self={self.self_cpu_time_total:.3f}us total={self.cpu_time_total:.3f}us>"
        )


#: ``table(sort_by=...)``: PyTorch's keys and chainrule's ``self_time``, each the row attribute
#: it sorts by (largest first).
SORT_KEYS = {
    "self_time": "self_cpu_time_total",
    "self_cpu_time_total": "self_cpu_time_total",
    "cpu_time_total": "cpu_time_total",
    "cpu_time": "cpu_time",
    "count": "count",
}


class EventList(list):
    """`FunctionEventAvg` rows (what `profile.key_averages` returns), printable with `table`."""

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of the rows' self times in µs: the time the profile accounts for."""
        return sum(row.self_cpu_time_total for row in self)

    def table(
        self, sort_by: str | None = None, row_limit: int = 100, max_name_column_width: int = 55,
        header: str | None = None,
    ) -> str:  # fmt: skip
        """The rows as PyTorch's profiler prints them: Name, Self CPU %, Self CPU, CPU total %,
        CPU total, CPU time avg, # of Calls (and Input Shapes when grouped by them).
        ``sort_by`` is one of `SORT_KEYS` (largest first; None keeps first-seen order);
        ``row_limit`` < 0 prints every row."""
        if sort_by is not None and sort_by not in SORT_KEYS:
            raise ValueError(
                f"table: unknown sort_by {sort_by!r}; use one of {', '.join(SORT_KEYS)}"
            )
        rows = list(self)
        if sort_by is not None:
            attribute = SORT_KEYS[sort_by]
            rows.sort(key=lambda row: getattr(row, attribute), reverse=True)
        if row_limit >= 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total
        names = [_shorten(row.key, max_name_column_width) for row in rows]
        width = max([len(name) for name in names] + [4]) + 4
        shapes = any(row.input_shapes is not None for row in self)
        widths = [width] + [12] * 6 + ([28] if shapes else [])
        titles = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                  "# of Calls"] + (["Input Shapes"] if shapes else [])  # fmt: skip
        rule = "  ".join("-" * w for w in widths)
        lines = ([header] if header else []) + [rule, _row(titles, widths), rule]
        for name, row in zip(names, rows):
            cells = [
                name,
                _percent(row.self_cpu_time_total, total),
                _format_time(row.self_cpu_time_total),
                _percent(row.cpu_time_total, total),
                _format_time(row.cpu_time_total),
                _format_time(row.cpu_time),
                str(row.count),
            ] + ([str(row.input_shapes)] if shapes else [])
            lines.append(_row(cells, widths))
        lines += [rule, f"Self CPU time total: {_format_time(total)}"]
        return "\n".join(lines)


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(f"{cell:>{w}}" for cell, w in zip(cells, widths))


def _shorten(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.2f}%" if whole else "0.00%"


def _format_time(us: float) -> str:
    """µs as PyTorch's profiler prints them: 12.345us, 1.234ms or 1.234s."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _shapes(values: Iterable) -> list:
    return [list(np.shape(v._array if isinstance(v, Tensor) else v)) for v in values]


#: Per thread, the spans open now, innermost last, whichever profile recorded them: an event's
#: time counts as child time of the span it ran in.
_open_spans: dict[int, list[FunctionEvent]] = {}


def _node_name(node) -> str:
    """``MulBackward``: the name a graph node has in ``grad_fn`` (`OpNode`, `Function`...)."""
    op = getattr(node, "op", None)
    if op is not None:
        return op.backward_name
    return node.name[:1].upper() + node.name[1:] + "Backward"


class profile(Observer):
    """Record where time goes inside a ``with`` block, as ``torch.profiler.profile``.

    Every op run forward and every graph node run backward becomes an event (name, phase,
    start, duration, and with ``record_shapes=True`` its input shapes), as does each
    ``backward()`` call and each `record_function` block; spans nest, and a span's self time
    excludes the spans inside it. Read them with `key_averages` (rows per name and phase),
    `table`, `events` or `export_chrome_trace`. Backward rows are named like ``grad_fn``
    (``MulBackward``); ops a backward node runs with ``create_graph=True`` nest inside it.

    Differences from PyTorch: ops are chainrule's rows (``mul``, not ``aten::mul``); there is
    no ``schedule`` (``step()`` is accepted and records nothing) and no memory, stack, FLOP
    or module recording (asking for them warns). While an op runs, the ops it runs itself
    (vmap's batching rules) count as part of it.

    >>> import chainrule as cr
    >>> x = cr.ones(3, 3, requires_grad=True)
    >>> with cr.profile() as prof:
    ...     with cr.profiler.record_function("step"):
    ...         loss = (x @ x @ x).sum()
    ...     loss.backward()
    >>> [(row.key, row.phase, row.count) for row in prof.key_averages()]
    [('step', 'user', 1), ('matmul', 'forward', 2), ('sum', 'forward', 1),
     ('backward', 'backward', 1), ('SumBackward', 'backward', 1),
     ('MatmulBackward', 'backward', 2)]
    >>> print(prof.table(sort_by="self_time", row_limit=2))  # doctest: +ELLIPSIS
    ---...
      Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls
    ---...
    Self CPU time total: ...
    """

    def __init__(
        self, *, activities: Iterable[ProfilerActivity] | None = None,
        schedule: Callable | None = None, on_trace_ready: Callable | None = None,
        record_shapes: bool = False, profile_memory: bool = False, with_stack: bool = False,
        with_flops: bool = False, with_modules: bool = False,
    ) -> None:  # fmt: skip
        if schedule is not None:
            raise NotImplementedError(
                "profile: schedule= is not supported; chainrule records the whole block "
                "(wrap only the steps you want in the with-block instead)"
            )
        asked = [name for name, on in [("profile_memory", profile_memory),
                 ("with_stack", with_stack), ("with_flops", with_flops),
                 ("with_modules", with_modules)] if on]  # fmt: skip
        if asked:
            warnings.warn(
                f"profile: {', '.join(asked)} not recorded by chainrule (times and shapes are)",
                stacklevel=2,
            )
        super().__init__()
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self._events: list[FunctionEvent] = []
        # Where an event goes: this profile's list, and those of the profiles it runs inside
        # (a program's own profile under ``chainrule run --profile``), which see it too.
        self._lists = [self._events]
        self._running = False
        self.step_num = 0

    # Starting and stopping.

    def start(self) -> None:
        """Begin recording (what entering the ``with`` block does)."""
        if self._running:
            raise RuntimeError("profile: already started")
        outer = observe.current
        self.attach()
        self._lists = [self._events] + (outer._lists if isinstance(outer, profile) else [])
        self._running = True

    def stop(self) -> None:
        """End recording (what leaving the ``with`` block does) and call ``on_trace_ready``."""
        if not self._running:
            return
        self.detach()
        self._running = False
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def step(self) -> None:
        """Mark the end of a training step (PyTorch's schedules use it); only counted here."""
        self.step_num += 1

    # What the engine reports (`chainrule.observe.Observer`). The work an op or a Function
    # does runs unobserved: its own ops (vmap's batching rules) count as part of it.

    def run_op(self, op, args: tuple, params: dict):
        """`apply_op` while profiling: the op run and timed as one event."""
        if self.busy():
            return PLAIN  # inside an op being timed: it counts as part of that one
        start = perf_counter_ns()
        try:
            return self.unobserved(apply_op, op, *args, **params)
        finally:
            self._leaf(op.name, start, perf_counter_ns(), args)

    def run_function(self, cls, args: tuple, kwargs: dict):
        """`Function.apply` while profiling: the user's forward timed as one event."""
        if self.busy():
            return PLAIN
        start = perf_counter_ns()
        try:
            return self.unobserved(cls.apply, *args, **kwargs)
        finally:
            self._leaf(cls.__name__, start, perf_counter_ns(), args)

    def run_node(self, node, grads: list, create_graph: bool, release: bool) -> list:
        """A graph node's backward, timed; ops it records (``create_graph``) nest inside."""
        event = self.span_begins(_node_name(node), "backward")
        if event is not None and self.record_shapes:
            event.input_shapes = [list(shape) for shape, _ in node.out_meta]
        try:
            return node.propagate(grads, create_graph, release)
        finally:
            self.span_ends(event)

    def backward_begins(self, create_graph: bool, to_leaves: bool) -> FunctionEvent | None:
        """A ``backward()`` (or ``grad()``) call: a span the nodes' events nest in."""
        return self.span_begins("backward" if to_leaves else "grad", "backward")

    def backward_ends(self, begun: FunctionEvent | None) -> None:
        """The end of the span `backward_begins` opened."""
        self.span_ends(begun)

    def span_begins(self, name: str, phase: str) -> FunctionEvent | None:
        """Start a span (a ``backward()`` call, a user's block) on this thread (None inside
        an op being timed)."""
        if self.busy():
            return None
        thread = threading.get_native_id()
        event = FunctionEvent(name, phase, perf_counter_ns(), thread)
        _open_spans.setdefault(thread, []).append(event)
        for events in self._lists:
            events.append(event)
        return event

    def span_ends(self, event: FunctionEvent | None) -> None:
        """End the span ``event``, which `span_begins` started (and every span left open inside
        it)."""
        if event is None:
            return
        event.end_ns = end = perf_counter_ns()
        stack = _open_spans[event.thread]
        while stack and stack.pop() is not event:
            pass  # a span opened inside and never closed ends here
        if stack:
            stack[-1].child_ns += end - event.start_ns

    def _leaf(self, name: str, start: int, end: int, inputs: tuple) -> None:
        thread = threading.get_native_id()
        event = FunctionEvent(name, "forward", start, thread, None)
        event.end_ns = end
        if self.record_shapes:
            event.input_shapes = _shapes(inputs)
        for events in self._lists:
            events.append(event)
        stack = _open_spans.get(thread)
        if stack:
            stack[-1].child_ns += end - start

    # Reading the record.

    def events(self) -> list[FunctionEvent]:
        """Every event, in order of start."""
        return sorted(self._events, key=lambda event: event.start_ns)

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """One row per name and phase (and input shapes, if asked), in order of first start."""
        rows: dict[tuple, FunctionEventAvg] = {}
        for event in self.events():
            shapes = str(event.input_shapes or []) if group_by_input_shape else None
            key = (event.name, event.phase, shapes)
            row = rows.get(key)
            if row is None:
                row = rows[key] = FunctionEventAvg(event.name, event.phase, shapes)
            row.add(event)
        return EventList(rows.values())

    def table(self, sort_by: str | None = None, row_limit: int = 100, **options) -> str:
        """``key_averages().table(...)``: the rows as PyTorch prints them (see `EventList`)."""
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit, **options)

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write the events as Chrome trace-event JSON, which chrome://tracing and Perfetto
        (ui.perfetto.dev) open: one complete event (``"ph": "X"``) per span, ``ts`` and
        ``dur`` in µs from the first event, ``cat`` the phase (forward, backward, user)."""
        events = self.events()
        origin = events[0].start_ns if events else 0
        pid = os.getpid()
        trace = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                  "args": {"name": "chainrule"}}]  # fmt: skip
        for thread in sorted({event.thread for event in events}):
            trace.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": thread,
                          "args": {"name": f"thread {thread}"}})  # fmt: skip
        for event in events:
            args = {} if event.input_shapes is None else {"Input Dims": event.input_shapes}
            trace.append({
                "name": event.name, "cat": event.phase, "ph": "X",
                "ts": (event.start_ns - origin) / 1e3, "dur": (event.end_ns - event.start_ns) / 1e3,
                "pid": pid, "tid": event.thread, "args": args,
            })  # fmt: skip
        Path(path).write_text(json.dumps({"traceEvents": trace, "displayTimeUnit": "ms"}))


class record_function(ContextDecorator):
    """A named span of your own inside a `profile` (a ``with`` block or a decorator), as
    ``torch.profiler.record_function``; outside a profile it does nothing.

    >>> import chainrule as cr
    >>> with cr.profile() as prof:
    ...     with record_function("outer"):
    ...         with record_function("inner"):
    ...             y = cr.ones(2) * 3
    >>> [(event.name, event.phase) for event in prof.events()]
    [('outer', 'user'), ('inner', 'user'), ('mul', 'forward')]
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._open: list[tuple] = []  # (profiler, event) per entry: a decorator may recurse

    def __enter__(self) -> record_function:
        observer = observe.current
        self._open.append(
            None if observer is None else (observer, observer.span_begins(self.name, "user"))
        )
        return self

    def __exit__(self, *exc_info) -> bool:
        entry = self._open.pop()
        if entry is not None:
            entry[0].span_ends(entry[1])
        return False


__all__ = [
    "EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerActivity", "profile",
    "record_function",
]  # fmt: skip
