"""``chainrule run SCRIPT.py [ARGS...]``: run a PyTorch program on chainrule. For this run only,
``import torch`` and its submodules give chainrule's names (`chainrule.apps.torch_names`);
``--count-ops`` prints the ops of each training step, ``--profile`` the time per op (a
`chainrule.profile` table), ``--draw FILE`` the graph of the first loss that calls ``backward``,
``--traceback`` the whole stack where a missing name would otherwise stop the run in one line."""

from __future__ import annotations

import runpy
import sys
import traceback
from pathlib import Path

from .. import allocator, counting, profiler
from .._tensor import Tensor
from . import torch_names


class StepCounts:
    """Op counts per step of a run: a step ends where a ``backward`` call ends."""

    def __init__(self) -> None:
        self.steps: list[counting.OpCounts] = []
        self.current = counting.OpCounts()

    def end_step(self) -> None:
        """Close the step that a finished ``backward`` call ends."""
        self.steps.append(self.current)
        self.current = counting.OpCounts()

    def report(self) -> str:
        """The first step's table and the per-step totals of all steps."""
        if not self.steps:
            return "chainrule run --count-ops: no step ran (nothing called backward)"
        forward = [s.forward_total for s in self.steps]
        backward = [s.backward_total for s in self.steps]
        lines = [
            f"op counts of step 1 (of {len(self.steps)}):",
            str(self.steps[0]),
            f"per step over {len(self.steps)} steps: forward {min(forward)}-{max(forward)} ops, "
            f"backward {min(backward)}-{max(backward)} ops",
        ]
        return "\n".join(lines)


def _draw(root: Tensor, path: Path) -> None:
    from ..viz import draw_graph

    if path.suffix == ".dot":
        path.write_text(draw_graph(root, format=None).source)
        return
    fmt = path.suffix.lstrip(".") or "svg"
    path.write_bytes(draw_graph(root, format=fmt).pipe(format=fmt))


def run(
    script: str, args: list[str], count_ops: bool = False, draw: str | None = None,
    profile: bool = False, show_traceback: bool = False,
) -> int:  # fmt: skip
    """Run ``script`` as ``__main__`` with ``sys.argv = [script, *args]`` and torch's names
    resolved to chainrule; returns the exit code (1, with one line naming the PyTorch name and
    the program's line, for a name, keyword or feature chainrule lacks; ``show_traceback``
    raises it instead, with the whole stack).
    The run keeps freed memory for reuse (`chainrule.allocator`), as training programs want."""
    path = Path(script)
    if not path.is_file():
        print(f"chainrule run: no such file: {script}", file=sys.stderr)
        return 2
    allocator.keep_freed_memory()
    counts = StepCounts() if count_ops else None
    recording = profiler.profile() if profile else None
    drawn = [draw is None]
    original_backward = Tensor.backward

    def backward(self, *args, **kwargs):
        if not drawn[0]:
            drawn[0] = True
            _draw(self, Path(draw))
        original_backward(self, *args, **kwargs)
        if counts is not None:
            counts.end_step()
            counting.active = counts.current

    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))
    torch_names.install()
    Tensor.backward = backward
    if counts is not None:
        previous, counting.active = counting.active, counts.current
    if recording is not None:
        recording.start()
    try:
        runpy.run_path(str(path), run_name="__main__")
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if not isinstance(exit_.code, int) and exit_.code is not None:
            print(exit_.code, file=sys.stderr)
    except Exception as error:
        missing = None if show_traceback else torch_names.missing_name(error)
        if missing is None:
            raise  # the program's own mistake, or --traceback: the whole stack
        print(f"chainrule run: {missing}{_program_line(error, path)}", file=sys.stderr)
        code = 1
    finally:
        Tensor.backward = original_backward
        torch_names.uninstall()
        sys.argv, sys.path[:] = saved_argv, saved_path
        if counts is not None:
            counting.active = previous
        if recording is not None:
            recording.stop()
    if counts is not None:
        print(counts.report())
    if recording is not None:
        print("chainrule run --profile: time per op, most self time first")
        print(recording.table(sort_by="self_time", row_limit=25))
    return code


def _program_line(error: BaseException, path: Path) -> str:
    """`` (script.py, line N)``: the innermost line of the program's own files (the script
    and the modules beside it) that the error passed through."""
    home, ours = path.resolve().parent, Path(torch_names.__file__).resolve().parents[1]
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if Path(frame.filename).resolve().is_relative_to(home)
        and not Path(frame.filename).resolve().is_relative_to(ours)
    ]
    return f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno})" if frames else ""
