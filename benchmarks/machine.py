"""Thread counts and a description of the machine, printed above every table.

BLAS threads are pinned with threadpoolctl when it is installed; otherwise by the environment
variables that `benchmarks.__main__` sets before NumPy loads. PyTorch's threads are set per
implementation by the harness (`Impl.torch_threads`).
"""

from __future__ import annotations

import contextlib
import datetime
import importlib.metadata
import os
import platform
import sys

#: Environment variables that fix the BLAS thread count when read at NumPy's import.
BLAS_ENV = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def limit_blas(threads: int) -> contextlib.AbstractContextManager:
    """Context manager pinning NumPy's BLAS to ``threads`` (a no-op without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=threads, user_api="blas")


def blas_threads() -> str:
    """The BLAS library and its thread count as in force now, and how that was learned."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        found = [f"{var}={os.environ[var]}" for var in BLAS_ENV if var in os.environ]
        return "set by " + ", ".join(found) if found else "BLAS default (not pinned)"
    pools = [p for p in threadpool_info() if p["user_api"] == "blas"]
    return ", ".join(f"{p['internal_api']} {p['num_threads']} thread(s)" for p in pools) or "none"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{platform.machine()} {platform.processor()}".strip()


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def describe(date: str | None = None) -> dict:
    """Versions, CPU, thread settings and the date: the table's header and the JSON's meta."""
    import numpy as np  # here, not at the top: `benchmarks.__main__` reads BLAS_ENV first

    return {
        "date": date or datetime.date.today().isoformat(),
        "machine": _cpu_model(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "chainrule": _version("chainrule"),
        "torch": _version("torch"),
        "autograd": _version("autograd"),
        "mygrad": _version("mygrad"),
        "micrograd": _version("micrograd"),
        "jax": _version("jax"),
        "blas": blas_threads(),
        "command": "python -m benchmarks " + " ".join(sys.argv[1:]),
    }
