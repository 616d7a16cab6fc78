"""`python -m benchmarks`: run the workloads, print the table, write it and plot it on request.

Run: python -m benchmarks [--quick] [--only W1,W2] [--out DIR] [--plot] [--blas-threads N]
     [--profile]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chainrule import allocator

from . import machine, profiles, programs, report
from .suite import Row, check_targets, run_workload
from .workloads import all_workloads, select


def parser(prog: str = "python -m benchmarks") -> argparse.ArgumentParser:
    """The command line, named ``prog`` in usage lines; `benchmarks.__main__` reads
    --blas-threads before NumPy loads."""
    p = argparse.ArgumentParser(
        prog=prog,
        description="Time chainrule against PyTorch, HIPS autograd, MyGrad, micrograd and NumPy.",
        epilog="Every implementation is checked to agree before it is timed; "
        "docs/guides/benchmarks.md says what each workload measures.",
    )
    p.add_argument("--quick", action="store_true", help="tiny sizes, one repeat (for CI)")
    p.add_argument("--only", metavar="KEYS", help="comma-separated workloads, e.g. W1,W2,W6")
    p.add_argument("--out", metavar="DIR", type=Path, help="write results.md and results.json")
    p.add_argument(
        "--plot",
        action="store_true",
        help="draw ratios.png and, with W10, programs.png (into --out or .)",
    )
    p.add_argument(
        "--blas-threads", type=int, default=1, metavar="N", help="NumPy's BLAS threads (default 1)"
    )
    p.add_argument("--date", help="the date printed in the header (default: today)")
    p.add_argument(
        "--profile",
        action="store_true",
        help="then print where chainrule's eager step spends its time, per op (chainrule.profile)",
    )
    return p


def _torch_threads(workloads) -> str:
    counts: dict[int, list[str]] = {}
    for w in workloads:
        for impl in w.impls:
            if impl.torch_threads is not None:
                counts.setdefault(impl.torch_threads, [])
                if w.key not in counts[impl.torch_threads]:
                    counts[impl.torch_threads].append(w.key)
    if not counts:
        return "not run"
    return "; ".join(f"{n} thread(s) on {', '.join(keys)}" for n, keys in sorted(counts.items()))


def run(workloads, quick: bool, log=None) -> tuple[list[Row], list[dict]]:
    """Every workload's rows and checked targets; ``log(text)`` hears progress."""
    rows, targets = [], []
    for workload in workloads:
        if log:
            log(f"{workload.key}: {workload.title} ...")
        workload_rows = run_workload(workload, quick)
        rows += workload_rows
        targets += check_targets(workload, workload_rows)
    return rows, targets


def main(argv: list[str] | None = None, prog: str = "python -m benchmarks") -> int:
    """Run the suite; print the table; write files when asked. Returns the exit status."""
    args = parser(prog).parse_args(argv)
    # malloc keeps freed blocks for every library in the process, as under `chainrule run`.
    allocator.keep_freed_memory()
    keys = [k.strip().upper() for k in (args.only or "").split(",") if k.strip()]
    with_programs = not keys or "W10" in keys
    only = ",".join(k for k in keys if k != "W10")
    try:
        workloads = select(all_workloads(args.quick), only) if only or not keys else []
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    with machine.limit_blas(args.blas_threads):
        meta = machine.describe(args.date)
        meta.update(quick=args.quick, torch_threads=_torch_threads(workloads))
        rows, targets = run(workloads, args.quick, lambda s: print(s, file=sys.stderr))
        tables = [profiles.profile_table(w, args.quick) for w in workloads] if args.profile else []
        corpus = (
            programs.run(args.quick, log=lambda s: print(s, file=sys.stderr))
            if with_programs
            else []
        )
        if corpus and args.profile:
            tables.append(programs.profile_slowest(corpus))
    if workloads:
        print(report.text(rows, targets, meta))
    if corpus:
        print(f"\n{programs.table(corpus)}")
    for table in filter(None, tables):
        print(f"\n{table}")
    if args.out:
        for path in report.write(args.out, rows, targets, meta):
            print(f"wrote {path}")
    if args.plot and rows:
        print(f"wrote {report.plot((args.out or Path('.')) / 'ratios.png', rows)}")
    if args.plot and corpus:
        print(f"wrote {programs.plot((args.out or Path('.')) / 'programs.png', corpus)}")
    return 0
