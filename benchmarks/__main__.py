"""`python -m benchmarks`: pins BLAS threads before NumPy loads, then runs `benchmarks.cli`.

Environment variables are read once, when the BLAS library starts, so they are set here,
first; threadpoolctl (when installed) pins the count again at run time. OMP_NUM_THREADS is
left alone: it would also start PyTorch's pool at one thread, which its 2-thread rows regrow.
"""

import os
import sys

from .machine import BLAS_ENV


def _blas_threads(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--blas-threads" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--blas-threads="):
            return arg.split("=", 1)[1]
    return "1"


def start(argv: list[str], prog: str = "python -m benchmarks") -> int:
    """Pin BLAS threads to ``argv``'s --blas-threads, then run the suite on ``argv``; ``prog``
    names the command in its usage lines (``chainrule bench`` starts it as itself)."""
    threads = _blas_threads(argv)
    for var in BLAS_ENV:
        os.environ[var] = threads
    from .cli import main  # NumPy loads here, after the variables are set

    return main(argv, prog)


if __name__ == "__main__":
    sys.exit(start(sys.argv[1:]))
