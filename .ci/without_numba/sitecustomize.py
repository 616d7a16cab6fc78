"""On PYTHONPATH, this makes ``import numba`` fail in every Python process (subprocesses
too), as on a machine without chainrule's ``fast`` extra: `.ci/run` runs the compiler's tests
so, to check that the NumPy replay runs bit for bit without Numba."""

import sys

sys.modules["numba"] = None  # type: ignore[assignment]  # import numba: ImportError
