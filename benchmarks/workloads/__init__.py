"""Every workload of the suite, W1 to W12, by key; each module holds one family of them."""

from __future__ import annotations

from ..suite import Workload
from . import cnn, gpt, hessian, memory, mlp, paths, scalar, small_ops, tiny


def all_workloads(quick: bool = False) -> list[Workload]:
    """Every workload in key order; ``quick`` gives tiny sizes."""
    found = [
        workload
        for module in (scalar, tiny, mlp, cnn, hessian, memory, gpt, paths, small_ops)
        for workload in module.workloads(quick)
    ]
    return sorted(found, key=_number_first)


def _number_first(workload: Workload) -> tuple[int, str]:
    """W2 before W11a: the workload's number, then its letter."""
    digits = "".join(c for c in workload.key[1:] if c.isdigit())
    return int(digits), workload.key


def select(workloads: list[Workload], only: str | None) -> list[Workload]:
    """The workloads named by the comma-separated keys in ``only``, a key also naming its
    lettered family ("W6" selects W6a and W6b, "W1" only W1); all of them when ``only`` is
    None."""
    if not only:
        return workloads
    wanted = [key.strip().upper() for key in only.split(",") if key.strip()]
    unknown = [k for k in wanted if not any(_selects(k, w) for w in workloads)]
    if unknown:
        keys = ", ".join(w.key for w in workloads)
        raise ValueError(f"--only: no workload {', '.join(unknown)}; choose from {keys}")
    return [w for w in workloads if any(_selects(k, w) for k in wanted)]


def _selects(key: str, workload: Workload) -> bool:
    """``key`` names ``workload`` or its family: W6 selects W6a, but W1 not W11a."""
    name = workload.key.upper()
    return name.startswith(key) and name[len(key) :].isalpha() or name == key
