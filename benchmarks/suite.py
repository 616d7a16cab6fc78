"""The benchmark harness: implementations of a workload, the agreement check, interleaved timing.

A `Workload` lists its `Impl`s; `run_workload` builds each, checks that all agree with the
floor's values and gradients, then times them interleaved and returns one `Row` each. The
workloads themselves live in `benchmarks.workloads`; printing and files in `benchmarks.report`.
"""

from __future__ import annotations

import gc
import math
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

#: What a step returns: the values and gradients that every implementation must agree on.
Result = Sequence[np.ndarray | float]


class Unavailable(Exception):
    """Raised by ``Impl.build`` (or by a step's warm-up calls) when an implementation cannot
    do the workload here: chainrule lacks a feature, a peer's compiler cannot run. The
    message is the row's status; ``note``, when given, goes under the table (the reason)."""

    def __init__(self, status: str, note: str = "") -> None:
        super().__init__(status)
        self.note = note


@dataclass
class Impl:
    """One implementation of a workload.

    ``build()`` imports what it needs and returns ``step``, a callable taking no argument
    that does one unit of work and returns its `Result`; or a pair ``(prepare, step)`` where
    ``prepare()`` runs untimed before each call and ``step`` takes what it returns (W6 times
    the backward pass alone). ``module`` names the peer library: when it does not import,
    the row says missing and how to install it. ``torch_threads`` is set before each sample.

    ``warmup`` is for compilers: that many first calls trace and compile, and their total
    time is the row's compile cost, reported next to the step time and never timed as a
    step. A step with a ``describe()`` method (a compiled step) adds its words to the row's
    note after timing: whether it replayed, and why not.
    """

    name: str
    build: Callable[[], Callable | tuple[Callable, Callable]]
    module: str | None = None
    pip: str | None = None
    torch_threads: int | None = None
    warmup: int = 0


@dataclass
class Target:
    """One of the issue's targets: ``impl``'s value at most ``at_most`` times ``versus``'s
    (or at most ``at_most`` in the workload's unit when ``versus`` is None), and its results
    in ``dtype`` when one is given.

    ``measure``, when given, replaces the rows: a measurement of its own (in other
    processes, say) returning the value compared with ``at_most`` and a line that says how
    it was found, printed under the targets.
    """

    text: str
    at_most: float | None = None
    versus: str | None = None
    dtype: str | None = None
    impl: str = "chainrule"
    measure: Callable[[], tuple[float, str]] | None = None


@dataclass
class Workload:
    """A unit of work, its implementations, and how to report it.

    ``factor`` turns seconds per call into the unit (1e6 / 1000 gives µs per op for a
    1,000-op chain). The first implementation is the floor every ratio divides by and the
    reference the others must agree with, within ``rtol * max|reference| + atol`` per array.
    ``metric="memory"`` reports peak traced MiB instead of time.
    """

    key: str
    title: str
    unit: str
    factor: float
    impls: list[Impl]
    rtol: float = 1e-9
    atol: float = 1e-12
    repeats: int = 7
    min_time: float = 0.05
    targets: list[Target] = field(default_factory=list)
    metric: str = "time"

    @property
    def floor(self) -> str:
        """The name of the floor implementation (the first one)."""
        return self.impls[0].name


@dataclass
class Row:
    """One line of the table: an implementation of a workload and what it measured."""

    workload: str
    title: str
    impl: str
    status: str
    value: float | None = None
    unit: str = ""
    ratio: float | None = None
    dtype: str = ""
    torch_threads: int | None = None
    samples: int = 0
    compile_s: float | None = None
    note: str = ""


def _root(module: str) -> str:
    return module.split(".")[0]


def _as_arrays(result: Result) -> list[np.ndarray]:
    return [np.array(r, copy=True) for r in result]


def _call(step) -> Result:
    if isinstance(step, tuple):
        prepare, run = step
        return run(prepare())
    return step()


#: PyTorch's thread count before the harness first changed it, put back after each workload.
_torch_threads_before: list[int] = []


def _set_threads(impl: Impl) -> None:
    torch = sys.modules.get("torch")
    if impl.torch_threads is not None and torch is not None:
        if not _torch_threads_before:
            _torch_threads_before.append(torch.get_num_threads())
        torch.set_num_threads(impl.torch_threads)


def mismatch(result: list[np.ndarray], reference: list[np.ndarray], rtol: float, atol: float):
    """None when ``result`` agrees with ``reference``; else a few words saying how it differs."""
    if len(result) != len(reference):
        return f"returned {len(result)} arrays, expected {len(reference)}"
    for i, (a, b) in enumerate(zip(result, reference)):
        if a.shape != b.shape:
            return f"array {i} has shape {a.shape}, expected {b.shape}"
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        error = float(np.max(np.abs(a.astype(np.float64) - b))) if b.size else 0.0
        if not error <= rtol * scale + atol:  # also catches NaN
            return f"array {i} off by {error:.2g} (largest reference entry {scale:.2g})"
    return None


def _build(impl: Impl, calls: int):
    """(step, result of call number ``calls``, status, seconds of the ``impl.warmup`` first
    calls or None, note): the status is "ok" or why the row has no number."""
    try:
        step = impl.build()  # imports the peer, so threads are set after it
        _set_threads(impl)
        start = time.perf_counter()
        for _ in range(impl.warmup):
            _call(step)
        compile_s = time.perf_counter() - start if impl.warmup else None
        for _ in range(calls - 1 - impl.warmup):
            _call(step)
        return step, _as_arrays(_call(step)), "ok", compile_s, ""
    except ModuleNotFoundError as exc:
        if impl.module is None or exc.name is None or _root(exc.name) != _root(impl.module):
            return None, None, f"failed: {type(exc).__name__}: {exc}", None, ""
        return None, None, f"missing (pip install {impl.pip or impl.module})", None, ""
    except Unavailable as exc:
        return None, None, str(exc), None, exc.note
    except Exception as exc:  # a peer that cannot do the workload is a result, not a crash
        message = str(exc).splitlines()[0] if str(exc) else ""
        return None, None, f"failed: {type(exc).__name__}: {message}"[:120], None, ""


def _time_calls(step, number: int) -> float:
    """Seconds per call, over ``number`` calls (prepare, if any, untimed).

    Objects that exist before timing starts are frozen out of the garbage collector's scans:
    every peer is imported into this one process, a setting no user has, and without this
    each full collection during one engine's timing would walk the other engines' objects.
    """
    gc.collect()
    gc.freeze()
    try:
        if isinstance(step, tuple):
            prepare, run = step
            total = 0.0
            for _ in range(number):
                arg = prepare()
                start = time.perf_counter()
                run(arg)
                total += time.perf_counter() - start
            return total / number
        start = time.perf_counter()
        for _ in range(number):
            step()
        return (time.perf_counter() - start) / number
    finally:
        gc.unfreeze()


def _peak_mib(step) -> float:
    """Peak traced memory of one call, in MiB (prepare, if any, untraced)."""
    gc.collect()
    arg = step[0]() if isinstance(step, tuple) else None
    tracemalloc.start()
    try:
        if isinstance(step, tuple):
            step[1](arg)
        else:
            step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def run_workload(workload: Workload, quick: bool = False) -> list[Row]:
    """Build, check and measure every implementation; one Row each, floor first.

    PyTorch's thread count is put back afterwards, so a test run leaves it as it was.
    """
    try:
        return _run_workload(workload, quick)
    finally:
        if _torch_threads_before:
            sys.modules["torch"].set_num_threads(_torch_threads_before.pop())


def _run_workload(workload: Workload, quick: bool) -> list[Row]:
    rows, steps, built = [], {}, {}
    reference = None
    # Every implementation is compared at the same step: the first one after the compilers'
    # warm-up calls, so that what is compared is a replay, from weights updated as often.
    calls = 1 + max(impl.warmup for impl in workload.impls)
    for impl in workload.impls:
        step, result, status, compile_s, note = _build(impl, calls)
        built[impl.name] = step
        if status == "ok":
            if reference is None:
                reference = result
            else:
                why = mismatch(result, reference, workload.rtol, workload.atol)
                if why:
                    status = f"disagrees: {why}"
        if status == "ok":
            steps[impl.name] = step
        dtypes = sorted({str(r.dtype) for r in result}) if result else []
        rows.append(
            Row(
                workload.key,
                workload.title,
                impl.name,
                status,
                unit=workload.unit,
                dtype="/".join(dtypes),
                torch_threads=impl.torch_threads,
                compile_s=compile_s,
                note=note,
            )
        )
    if workload.floor not in steps:
        raise RuntimeError(f"{workload.key}: the floor {workload.floor!r} failed: {rows[0].status}")

    impls = [impl for impl in workload.impls if impl.name in steps]
    repeats = 1 if quick else workload.repeats
    samples: dict[str, list[float]] = {impl.name: [] for impl in impls}
    if workload.metric == "memory":
        for impl in impls:
            samples[impl.name] = [_peak_mib(steps[impl.name]) for _ in range(repeats)]
    else:
        numbers = {
            impl.name: _calibrate(steps[impl.name], impl, quick, workload.min_time)
            for impl in impls
        }
        for r in range(repeats):
            # Interleaved, and each round starts with a different one: drift in the machine's
            # load spreads over every implementation instead of landing on one.
            for impl in impls[r % len(impls) :] + impls[: r % len(impls)]:
                _set_threads(impl)
                samples[impl.name].append(_time_calls(steps[impl.name], numbers[impl.name]))

    factor = 1.0 if workload.metric == "memory" else workload.factor
    floor_value = float(np.median(samples[workload.floor])) * factor
    for row in rows:
        if row.impl in samples:
            row.value = float(np.median(samples[row.impl])) * factor
            row.ratio = row.value / floor_value
            row.samples = len(samples[row.impl])
        describe = getattr(built[row.impl], "describe", None)
        if describe is not None:
            row.note = describe()
    return rows


def _calibrate(step, impl: Impl, quick: bool, min_time: float) -> int:
    """Calls per sample so that one sample lasts at least ``min_time`` (one when quick)."""
    if quick or isinstance(step, tuple):
        return 1
    _set_threads(impl)
    once = _time_calls(step, 1)
    return max(1, min(10_000, math.ceil(min_time / max(once, 1e-9))))


def check_targets(workload: Workload, rows: list[Row]) -> list[dict]:
    """Each target of ``workload`` with the measured ratio (or value) and met/missed/n/a."""
    by_name = {row.impl: row for row in rows if row.workload == workload.key}
    checked = []
    for target in workload.targets:
        if target.measure is not None:
            checked.append(_measure(workload, target))
            continue
        row = by_name.get(target.impl)
        other = by_name.get(target.versus) if target.versus else None
        measured, verdict = None, "n/a"
        if row is not None and row.value is not None:
            if target.dtype is not None:
                verdict = "met" if row.dtype == target.dtype else f"missed ({row.dtype})"
            elif target.versus is None:
                measured = row.value
            elif other is not None and other.value is not None:
                measured = row.value / other.value
            if measured is not None:
                verdict = "met" if measured <= target.at_most else "missed"
        if row is not None and row.value is None:
            verdict = f"n/a ({row.status})"
        elif target.versus and (other is None or other.value is None):
            verdict = f"n/a ({target.versus}: {other.status if other else 'absent'})"
        checked.append(
            {
                "workload": workload.key,
                "target": target.text,
                "measured": measured,
                "verdict": verdict,
            }
        )
    return checked


def _measure(workload: Workload, target: Target) -> dict:
    """A target with a measurement of its own, checked; a failure is its verdict, not a crash."""
    measured, detail = None, ""
    try:
        measured, detail = target.measure()
        verdict = "met" if measured <= target.at_most else "missed"
    except Exception as exc:
        message = str(exc).splitlines()[0] if str(exc) else ""
        verdict = f"n/a (failed: {type(exc).__name__}: {message})"[:120]
    return {
        "workload": workload.key,
        "target": target.text,
        "measured": measured,
        "verdict": verdict,
        "detail": detail,
    }
