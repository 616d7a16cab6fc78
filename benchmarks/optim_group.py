"""An optimizer step one parameter at a time against the same step in packs (small parameters'
values, gradients and state laid end to end, each formula line once per pack), for every
elementwise optimizer, on two sets of parameters: 20 of a small transformer's (about 1M
floats) and 120 small ones (about 32K floats, where the fixed cost of each NumPy call
dominates). ``--before SRC`` adds a column timed on another checkout's ``src`` (the default
path there), in a child process of the same run.
Run: python -m benchmarks.optim_group [--quick] [--dtype float32|float64] [--before SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

import chainrule as cr
from chainrule import optim

OPTIMIZERS = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-4}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9}),
    ("Adagrad", {"lr": 0.01}),
    ("Adadelta", {}),
    ("Adam", {"lr": 1e-3}),
    ("AdamW", {"lr": 1e-3, "amsgrad": True}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("ASGD", {}),
    ("Rprop", {}),
]

# A two-block transformer's 20 parameters in its order (999,896 floats): an embedding; per
# block a layer norm, attention in and out projections with biases, a layer norm; a final
# layer norm and an output bias. And 120 small ones: 30 two-layer MLPs.
_BLOCK = [(256,), (256,), (256, 768), (768,), (256, 256), (256,), (256,), (256,)]
MIXED = [(1000, 470), *_BLOCK, *_BLOCK, (256,), (256,), (1000,)]
SMALL = [(16, 32), (32,), (32, 16), (16,)] * 30
SETS = [("20 mixed (~1M floats)", MIXED), ("120 small (~32K floats)", SMALL)]


def _params(shapes: list[tuple], dtype: np.dtype, rng: np.random.Generator) -> list[cr.Tensor]:
    params = [cr.nn.Parameter(cr.tensor(rng.normal(size=s).astype(dtype))) for s in shapes]
    for p in params:
        p.grad = cr.tensor(rng.normal(size=p.shape).astype(dtype) * 1e-3)
    return params


def _median_step(optimizer: optim.Optimizer, steps: int) -> float:
    optimizer.step()  # the state is made (and the packs laid out) outside the timing
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.step()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _time(shapes: list[tuple], dtype: np.dtype, steps: int, paths: tuple[bool, ...]) -> list:
    """Per optimizer, the best of 3 median step times of each path (packs on or off; the two
    alternate, so that both see the same machine)."""
    rows = []
    for name, options in OPTIMIZERS:
        rng = np.random.default_rng(0)
        best = dict.fromkeys(paths, np.inf)
        for _ in range(3):
            for packed in paths:
                optimizer = getattr(optim, name)(_params(shapes, dtype, rng), **options)
                optimizer._pack_small_params = packed  # an older checkout ignores it
                best[packed] = min(best[packed], _median_step(optimizer, steps))
        rows.append([best[packed] for packed in paths])
    return rows


def _before(src: str, dtype: str, quick: bool) -> list:
    """The default path's times in a child process that imports chainrule from ``src``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.getcwd()]))
    command = [sys.executable, "-m", "benchmarks.optim_group", "--json", "--dtype", dtype]
    out = subprocess.run(command + ["--quick"] * quick, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"optim_group --before {src}: the child failed:\n{out.stderr}")
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--before", metavar="SRC", help="another checkout's src to time too")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    dtype, steps = np.dtype(args.dtype), 10 if args.quick else 40
    if args.json:  # the child of --before: the default path only
        print(json.dumps([_time(shapes, dtype, steps, (True,)) for _, shapes in SETS]))
        return
    before = _before(args.before, args.dtype, args.quick) if args.before else None
    print(f"per-step time in ms ({args.dtype}); ratio = packs / one at a time")
    for i, (label, shapes) in enumerate(SETS):
        total = sum(int(np.prod(s)) for s in shapes)
        print(f"\n{label}: {len(shapes)} parameters, {total} floats")
        print(
            f"{'optimizer':<34}{'before' if before else '':>8}{'one at a time':>14}"
            f"{'packs':>10}{'ratio':>8}"
        )
        for j, (one, packs) in enumerate(_time(shapes, dtype, steps, (False, True))):
            name, options = OPTIMIZERS[j]
            title = f"{name} {options}" if options else name
            old = f"{before[i][j][0] * 1e3:>8.3f}" if before else " " * 8
            print(f"{title[:33]:<34}{old}{one * 1e3:>14.3f}{packs * 1e3:>10.3f}{packs / one:>8.2f}")


if __name__ == "__main__":
    main()
