"""W9's compile cost across processes: the compiled step's warm-up calls (trace, verify, build
the fused kernels) timed in a first process with an empty kernel cache, then in a second
process given the same cache, which should load the kernels instead of compiling them.

Run: python -m benchmarks.compile_cost [--quick] (prints both times and their ratio); the
child process is ``python -m benchmarks.compile_cost --child OUT.json [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .machine import BLAS_ENV
from .programs import _environment

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class CompileCost:
    """Seconds of the warm-up in each process, and the kernels each built (``compiled`` of
    them by Numba, the rest loaded from its disk cache)."""

    first_s: float
    second_s: float
    first_kernels: dict
    second_kernels: dict

    @property
    def ratio(self) -> float:
        """The second process's cost over the first's."""
        return self.second_s / self.first_s

    def line(self) -> str:
        """The two numbers, their ratio and the kernels, in one line."""

        def kernels(counts: dict) -> str:
            if not counts.get("numba"):
                return "Numba absent: no kernels"
            loaded = counts["built"] - counts["compiled"]
            return f"{counts['compiled']} kernels compiled, {loaded} loaded"

        return (
            f"first process {self.first_s:.2f} s ({kernels(self.first_kernels)}), "
            f"second {self.second_s:.2f} s ({kernels(self.second_kernels)}): "
            f"{self.ratio:.2f}x"
        )


def warm_up(quick: bool) -> dict:
    """In this process: build W9's compiled step and time its warm-up calls."""
    from chainrule.compiler import backend_numba

    from .machine import limit_blas
    from .workloads.compiled import WARMUP
    from .workloads.gpt import gpt_step, sizes

    with limit_blas(1):
        step = gpt_step(True, *sizes(quick), compiled=True)
        start = time.perf_counter()
        for _ in range(WARMUP):
            step()
        seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "kernels": {**backend_numba.COUNTS, "numba": backend_numba.available()},
        "note": step.describe(),
    }


def measure(quick: bool, timeout: float = 600) -> CompileCost:
    """Two child processes one after the other, sharing a fresh ``CHAINRULE_CACHE``."""
    with tempfile.TemporaryDirectory(prefix="chainrule-cache-") as folder:
        env = {
            **_environment(str(ROOT)),
            "CHAINRULE_CACHE": str(Path(folder) / "kernels"),
            **dict.fromkeys(BLAS_ENV, "1"),
        }
        results = []
        for k in range(2):
            out = Path(folder) / f"run{k}.json"
            command = [sys.executable, "-m", "benchmarks.compile_cost", "--child", str(out)]
            done = subprocess.run(
                command + (["--quick"] if quick else []),
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            if done.returncode != 0 or not out.exists():
                raise RuntimeError(f"process {k + 1}: {done.stderr.strip()[-400:]}")
            results.append(json.loads(out.read_text()))
    for k, result in enumerate(results):
        if result["note"]:
            raise RuntimeError(f"process {k + 1} did not replay: {result['note']}")
    first, second = results
    return CompileCost(first["seconds"], second["seconds"], first["kernels"], second["kernels"])


def target(quick: bool):
    """What `benchmarks.suite.Target.measure` calls: (ratio, the line that explains it)."""
    cost = measure(quick)
    return cost.ratio, f"compile across processes: {cost.line()}"


def main(argv: list[str] | None = None) -> int:
    """Parent: print the measurement. Child (``--child OUT``): write this process's warm-up."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.compile_cost")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--child", metavar="OUT", type=Path)
    args = p.parse_args(argv)
    if args.child:
        args.child.write_text(json.dumps(warm_up(args.quick)))
        return 0
    print(measure(args.quick).line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
