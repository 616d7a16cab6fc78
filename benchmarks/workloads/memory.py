"""W8: peak memory of one W4 training step, with and without `checkpoint_sequential`.

Peak traced memory (tracemalloc; NumPy reports its allocations to it, so the NumPy-based
engines are comparable) of one step after a warm-up step. PyTorch allocates outside
Python's allocator, where tracemalloc cannot see, so it has no row here.
"""

from __future__ import annotations

from ..suite import Impl, Target, Workload
from .engines import chainrule_engine, impls
from .mlp import w4_floor, w4_sizes, w4_step


def checkpointed(sizes: tuple[int, ...], batch: int):
    """The W4 step on chainrule with its layers in two checkpointed segments."""
    import chainrule as cr

    def run_layers(functions, x):
        return cr.checkpoint_sequential(functions, 2, x)

    return w4_step(chainrule_engine(), sizes, batch, run_layers)


def workloads(quick: bool) -> list[Workload]:
    """W8."""
    sizes, batch = w4_sizes(quick)
    return [
        Workload(
            "W8",
            f"peak memory of one W4 step (batch {batch}, float32)",
            "MiB peak",
            1.0,
            [
                Impl("numpy", lambda: w4_floor(sizes, batch)),
                *impls(lambda engine: w4_step(engine, sizes, batch), torch_threads=()),
                Impl("chainrule + checkpoint", lambda: checkpointed(sizes, batch)),
            ],
            rtol=1e-4,
            atol=1e-6,
            repeats=1,
            metric="memory",
            targets=[Target("chainrule ≤ 1.5× numpy", 1.5, "numpy")],
        ),
    ]
