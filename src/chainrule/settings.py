"""Process-wide settings PyTorch programs set: how tensors print, BLAS threads, determinism and
float32 matmul precision (the last two recorded only: chainrule is always deterministic and
always computes float32 matmuls in float32), plus two multiprocessing helpers that have
nothing to do here. Dtype facts are in `chainrule.dtypes`."""

from __future__ import annotations

import numbers
import os
import warnings
from typing import Any

from .errors import DomainError, DTypeError

# Printing.


class PrintOptions:
    """What `set_printoptions` sets, read by ``Tensor.__repr__``: decimal places
    (``precision``), the element count above which only the ``edgeitems`` at each end of
    every dimension show (``threshold``), the characters per line (``linewidth``) and
    ``sci_mode`` (True: always scientific notation, False: never, None: NumPy's choice)."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self) -> None:
        self.precision, self.threshold, self.edgeitems, self.linewidth = 4, 1000, 3, 80
        self.sci_mode: bool | None = None

    def array2string_args(self, whole: bool) -> dict[str, Any]:
        """Keywords for ``np.array2string``; ``whole`` when every float is a whole number
        (PyTorch then prints ``1.`` rather than ``1.0000``)."""
        args = dict(
            precision=self.precision, threshold=self.threshold, edgeitems=self.edgeitems,
            max_line_width=self.linewidth, suppress_small=self.sci_mode is False,
            floatmode="maxprec" if whole else "fixed",
        )  # fmt: skip
        if self.sci_mode:
            digits = self.precision
            args["formatter"] = {"float_kind": lambda v: f"{v:.{digits}e}"}
        return args


#: The options in force; ``Tensor.__repr__`` reads them.
print_options = PrintOptions()

#: PyTorch's named profiles: (precision, threshold, edgeitems, linewidth).
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, float("inf"), 3, 80),
}


def set_printoptions(
    precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
    linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None,
) -> None:  # fmt: skip
    """Set how tensors print, as ``torch.set_printoptions``: a ``profile`` ("default",
    "short" or "full") first, then each option given. ``sci_mode`` None (the default) leaves
    the choice of scientific notation to NumPy; True or False forces it either way.

    >>> import chainrule
    >>> set_printoptions(precision=2)
    >>> chainrule.tensor([1.2345, 2.0])
    tensor([1.23, 2.00])
    >>> set_printoptions(sci_mode=True); chainrule.tensor([1.2345, 2.0])
    tensor([1.23e+00, 2.00e+00])
    >>> set_printoptions(profile="default")
    """
    options = print_options
    if profile is not None:
        if profile not in _PROFILES:
            raise DomainError(
                f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}"
            )
        options.precision, options.threshold, options.edgeitems, options.linewidth = _PROFILES[
            profile
        ]
        options.sci_mode = None
    for name, value in (("precision", precision), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):  # fmt: skip
        if value is not None:
            if not isinstance(value, numbers.Integral) or value < 0:
                raise DomainError(f"set_printoptions: {name} must be an int >= 0, got {value!r}")
            setattr(options, name, int(value))
    if threshold is not None:
        if not isinstance(threshold, numbers.Real) or threshold < 0:
            raise DomainError(f"set_printoptions: threshold must be >= 0, got {threshold!r}")
        options.threshold = threshold
    if sci_mode is not None:
        options.sci_mode = bool(sci_mode)


# Threads: NumPy's BLAS library runs matmuls, solves and decompositions on its own threads.


def _threadpoolctl():
    """The threadpoolctl module (the ``threads`` extra), or None when it is not installed."""
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl


#: The limit set by `set_num_threads` (kept alive: threadpoolctl restores on release).
_thread_limit = None


def get_num_threads() -> int:
    """The number of threads NumPy's BLAS library uses (matmul, solve, decompositions), as
    ``torch.get_num_threads``; without threadpoolctl, the CPU count BLAS starts with unless an
    environment variable (OMP_NUM_THREADS...) said otherwise.

    >>> get_num_threads() >= 1
    True
    """
    controller = _threadpoolctl()
    if controller is not None:
        counts = [pool["num_threads"] for pool in controller.threadpool_info()
                  if pool["user_api"] == "blas"]  # fmt: skip
        if counts:
            return max(counts)
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(name, "").isdigit() and int(os.environ[name]) > 0:
            return int(os.environ[name])
    return os.cpu_count() or 1


def set_num_threads(num: int) -> None:
    """Make NumPy's BLAS library use ``num`` threads, as ``torch.set_num_threads``. This needs
    threadpoolctl (``pip install chainrule[threads]``): a BLAS library reads its environment
    variables once, when NumPy loads it, so without threadpoolctl this only warns.

    >>> before = get_num_threads()
    >>> set_num_threads(1); get_num_threads()
    1
    >>> set_num_threads(before)
    """
    global _thread_limit
    if isinstance(num, bool) or not isinstance(num, numbers.Integral):
        raise DTypeError(f"set_num_threads: expects an int, got {type(num).__name__}")
    if num <= 0:
        raise DomainError(f"set_num_threads: expects a positive integer, got {num}")
    controller = _threadpoolctl()
    if controller is None:
        warnings.warn(
            "set_num_threads: NumPy's BLAS threads cannot be changed once NumPy is loaded "
            "without threadpoolctl; install chainrule[threads] (or set OMP_NUM_THREADS before "
            "starting Python)",
            RuntimeWarning,
            stacklevel=2,
        )
        return
    _thread_limit = controller.threadpool_limits(limits=int(num), user_api="blas")


# Recorded flags: chainrule computes the same way whatever they say.

_deterministic = {"mode": False, "warn_only": False}
_MATMUL_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = "highest"


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the flag, as ``torch.use_deterministic_algorithms`` sets it. chainrule's ops are
    deterministic whatever it says (NumPy on the CPU, no atomics), so nothing else changes.

    >>> use_deterministic_algorithms(True); are_deterministic_algorithms_enabled()
    True
    >>> use_deterministic_algorithms(False)
    """
    if not isinstance(mode, bool) or not isinstance(warn_only, bool):
        raise DTypeError(
            f"use_deterministic_algorithms: mode and warn_only must be bools, got {mode!r} "
            f"and {warn_only!r}"
        )
    _deterministic["mode"], _deterministic["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """The flag `use_deterministic_algorithms` last set (False at first)."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The ``warn_only`` flag `use_deterministic_algorithms` last set (False at first)."""
    return _deterministic["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """Record "highest", "high" or "medium", as ``torch.set_float32_matmul_precision``.
    chainrule always multiplies float32 matrices in float32 ("highest"); the lower settings
    allow PyTorch faster, less precise kernels (TF32, bfloat16) that NumPy does not have.
    Another string warns and changes nothing, as in PyTorch.

    >>> set_float32_matmul_precision("high"); get_float32_matmul_precision()
    'high'
    >>> set_float32_matmul_precision("highest")
    """
    global _matmul_precision
    if precision not in _MATMUL_PRECISIONS:
        warnings.warn(
            f"set_float32_matmul_precision: {precision!r} is not one of 'highest', 'high' or "
            f"'medium'; the precision stays {_matmul_precision!r}",
            UserWarning,
            stacklevel=2,
        )
        return
    _matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """The precision `set_float32_matmul_precision` last recorded ("highest" at first)."""
    return _matmul_precision


# Multiprocessing helpers PyTorch exposes at top level.


def thread_safe_generator() -> None:
    """The generator random transforms should draw from in a data-loading thread worker, as
    ``torch.thread_safe_generator``: None (the default generator) everywhere in chainrule,
    whose `chainrule.data.DataLoader` has no thread workers.

    >>> thread_safe_generator() is None
    True
    """
    return None


def prepare_multiprocessing_environment(path: str) -> None:
    """Nothing to prepare: PyTorch's own function is an empty hook for child processes, and
    chainrule shares no memory between processes. Accepted so programs calling it run."""
