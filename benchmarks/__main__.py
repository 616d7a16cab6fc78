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


_threads = _blas_threads(sys.argv[1:])
for _var in BLAS_ENV:
    os.environ[_var] = _threads

from .cli import main  # noqa: E402  (NumPy loads here, after the variables are set)

sys.exit(main())
