"""One corpus program in this process, on PyTorch or on chainrule (as ``chainrule run`` runs
it), stopped after a fixed number of optimizer steps; writes the time of each step and the
memory the run added to a JSON file. W10 (`benchmarks.programs`) starts one such process per
program, library and thread count.

Run: python -m benchmarks.program_run LIBRARY THREADS STEPS OUT.json PROGRAM [ARGS...]
(LIBRARY is torch or chainrule; THREADS 0 leaves both libraries their default thread counts).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import runpy
import sys
import time
from pathlib import Path


class _Enough(BaseException):
    """Raised from inside the program once it has taken the steps asked for."""


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _watch_steps(optimizer_base: type, steps: int, times: list[float]) -> None:
    """Wrap ``step`` of every optimizer class so each call's end is timed; the run stops
    after ``steps`` + 1 calls (the first step's time is not a step's, it includes setup)."""
    _watch(_subclasses(optimizer_base), "step", steps, times)


def _subclasses(base: type) -> set:
    classes, todo = set(), [base]
    while todo:
        cls = todo.pop()
        classes.add(cls)
        todo += [c for c in cls.__subclasses__() if c not in classes]
    return classes


def _watch(classes, method: str, steps: int, times: list[float]) -> None:
    """Time the end of each call of ``method`` on ``classes``; stop after ``steps`` + 1."""
    for cls in classes:
        original = cls.__dict__.get(method)
        if original is None:
            continue

        def step(self, *args, _original=original, **kwargs):
            result = _original(self, *args, **kwargs)
            times.append(time.perf_counter())
            if len(times) > steps:
                raise _Enough
            return result

        setattr(cls, method, step)


def _warm_up() -> None:
    """A few ops, a backward pass and an optimizer step, so that what either library sets up
    on first use (thread pools, kernels, caches) is counted before the program, not in it."""
    import torch  # PyTorch, or chainrule's names once installed

    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3), torch.nn.Flatten(), torch.nn.Linear(72, 3)
    )
    x = torch.randn(2, 1, 8, 8)
    optimizer = torch.optim.Adam(model.parameters())
    torch.nn.functional.cross_entropy(model(x), torch.tensor([0, 1])).backward()
    optimizer.step()


def main(argv: list[str]) -> int:
    """Run the program as the module docstring says; returns the exit status."""
    library, threads, steps, out, program, *args = argv
    threads, steps = int(threads), int(steps)
    if threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    if library == "torch":
        import torch

        if threads:
            torch.set_num_threads(threads)
        optimizer_base, tensor_class = torch.optim.Optimizer, torch.Tensor
    else:
        import chainrule
        from chainrule import allocator
        from chainrule.apps import torch_names

        allocator.keep_freed_memory()
        torch_names.install()
        optimizer_base, tensor_class = chainrule.optim.Optimizer, chainrule.Tensor
    _warm_up()
    before = _resident_bytes()
    times: list[float] = []
    _watch_steps(optimizer_base, steps, times)
    # A program that updates its parameters by hand: a step is a backward() call.
    backwards: list[float] = []
    _watch([tensor_class], "backward", steps, backwards)
    path = Path(program).resolve()
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.parent))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(_Enough, SystemExit):
        runpy.run_path(str(path), run_name="__main__")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    marks = times if len(times) > 1 else backwards
    step_times = [b - a for a, b in zip(marks, marks[1:])]
    Path(out).write_text(json.dumps({"steps": step_times, "peak_bytes": max(peak, 0)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
