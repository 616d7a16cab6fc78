"""What a graph break costs a compiled step: W9's GPT training step eagerly, compiled whole,
and compiled with a value read into Python at one of the places training loops read it
(replayed in pieces), at one thread; the median step time and its ratio to the eager step of
the same variant, from one run.
Run: python -m benchmarks.graph_breaks [--quick]
"""

from __future__ import annotations

import argparse
import io
import time
import warnings

import numpy as np

from .machine import limit_blas
from .workloads import gpt

#: Where the step reads a value, as training loops do; "return loss" reads nothing.
VARIANTS = (
    "return loss",
    "return loss.item()",
    "loss.item() between forward and backward",
    "print(loss) after the step",
    "if loss < best: best = loss.item()",
)


def build(variant: str, batch: int, tokens: int):
    """The W9 model (its PyTorch program, run by chainrule), a step reading as ``variant``
    says, and a batch."""
    program = gpt.load_program(True)
    torch = program.torch
    model = program.GPT(gpt.VOCAB, tokens, gpt.LAYERS, gpt.HEADS, gpt.WIDTH, 0.0, manual=False)
    model.load_state_dict({k: torch.tensor(v) for k, v in gpt.initial_weights(tokens).items()})
    optimizer = model.configure_optimizers(0.1, 3e-4, (0.9, 0.95))
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.integers(0, gpt.VOCAB, (batch, tokens)))
    y = torch.tensor(rng.integers(0, gpt.VOCAB, (batch, tokens)))
    best, sink = [float("inf")], io.StringIO()

    def step(x, y):
        _, loss = model(x, y)
        if variant == VARIANTS[2]:
            best.append(loss.item())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if variant == VARIANTS[3]:
            print(loss, file=sink)
        if variant == VARIANTS[4] and loss < best[0]:
            best[0] = loss.item()
        return loss.item() if variant == VARIANTS[1] else loss

    return step, x, y


def measure(quick: bool = False, calls: int = 20) -> list[tuple[str, float, float, dict]]:
    """(variant, eager ms, compiled ms, the compiled function's stats) per variant."""
    import chainrule

    batch, tokens = gpt.sizes(quick)
    rows = []
    with limit_blas(1), warnings.catch_warnings():
        warnings.simplefilter("error")  # a compiled step that runs eagerly is an error here
        for variant in VARIANTS:
            eager, x, y = build(variant, batch, tokens)
            compiled_step, cx, cy = build(variant, batch, tokens)
            compiled = chainrule.compile(compiled_step)
            for fn, a, b in ((eager, x, y), (compiled, cx, cy)):
                fn(a, b), fn(a, b)  # the compiled step's trace and check
            times: dict = {"eager": [], "compiled": []}
            for _ in range(calls):  # alternated, so that the machine's noise hits both alike
                for key, fn, a, b in (("eager", eager, x, y), ("compiled", compiled, cx, cy)):
                    start = time.perf_counter()
                    fn(a, b)
                    times[key].append(time.perf_counter() - start)
            rows.append((variant, 1e3 * np.median(times["eager"]),
                         1e3 * np.median(times["compiled"]), dict(compiled.stats)))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small GPT batch")
    args = parser.parse_args(argv)
    print("| where the step reads a value | eager | compiled | compiled / eager | replayed |")
    print("|---|---|---|---|---|")
    for variant, eager, compiled, stats in measure(args.quick):
        how = "whole" if variant == VARIANTS[0] else "in pieces"
        print(f"| `{variant}` | {eager:.2f} ms | {compiled:.2f} ms | {compiled / eager:.2f}× | "
              f"{how}, {stats['replayed']} of {sum(stats.values())} calls |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
