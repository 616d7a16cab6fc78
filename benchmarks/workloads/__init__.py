"""Every workload of the suite, W1 to W9, by key; each module holds one family of them."""

from __future__ import annotations

from ..suite import Workload
from . import cnn, gpt, hessian, memory, mlp, scalar, tiny


def all_workloads(quick: bool = False) -> list[Workload]:
    """Every workload in key order; ``quick`` gives tiny sizes."""
    found = [
        workload
        for module in (scalar, tiny, mlp, cnn, hessian, memory, gpt)
        for workload in module.workloads(quick)
    ]
    return sorted(found, key=lambda w: w.key)


def select(workloads: list[Workload], only: str | None) -> list[Workload]:
    """The workloads whose key starts with one of the comma-separated keys in ``only``
    ("W6" selects W6a and W6b); all of them when ``only`` is None."""
    if not only:
        return workloads
    wanted = [key.strip().upper() for key in only.split(",") if key.strip()]
    unknown = [k for k in wanted if not any(w.key.upper().startswith(k) for w in workloads)]
    if unknown:
        keys = ", ".join(w.key for w in workloads)
        raise ValueError(f"--only: no workload {', '.join(unknown)}; choose from {keys}")
    return [w for w in workloads if any(w.key.upper().startswith(k) for k in wanted)]
