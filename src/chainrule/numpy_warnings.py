"""NumPy's floating-point RuntimeWarnings (log of 0, 0 / 0, exp overflowing), silenced where
chainrule computes: PyTorch gives the same inf and nan and warns of none of them.

How, and what it costs:

- Eager ops: `FILTER`, a warnings filter that ignores NumPy's floating-point RuntimeWarnings
  raised from chainrule's own modules. NumPy attributes a ufunc's warning to the Python frame
  that called it, one of chainrule's for every NumPy call an op makes, so the filter silences
  exactly chainrule's calls, nothing of the user's own NumPy code (nor a RuntimeWarning
  chainrule raises on purpose), and costs nothing until a warning happens.
  `apply_op` keeps it first in ``warnings.filters`` with `keep_first`, one identity check per
  op (about 20 ns, against about 900 ns for a ``np.errstate`` block, more than a small op
  costs): first, because a filter added later goes in front of it (``simplefilter("error")``,
  ``python -W error``, pytest's ``-W`` and ``filterwarnings``), and pytest runs each test in a
  ``catch_warnings`` block, which drops a filter added inside it. The first op puts it there,
  not the import: importing chainrule changes nothing.
- The backward pass and compiled replays: NumPy's floating-point warnings off for the whole
  pass or call (`quietly`). Their NumPy calls include some made inside NumPy's own Python
  functions (np.mean in a rule), which NumPy attributes to its own modules, and a replay's
  generated code is in no module. `quietly` sets the context variable that ``np.errstate``
  sets (about 0.2 µs; ``np.errstate`` itself costs about 0.9 µs, 5% of the smallest
  backward pass), and is ``np.errstate`` where NumPy has no such variable (before 2.0).

NumPy's own Python-level warnings (``Mean of empty slice``) are not floating-point errors: the
ops that could meet them avoid them (an empty mean is computed without np.mean).

Measured on ``x * y`` for (10,)-shaped tensors, 1.33 µs before and 1.34 µs after; on
``(a * b).sum().backward()``, about 0.3 µs more than before, in 17 µs.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable

import numpy as np

#: NumPy's messages for floating-point errors ("divide by zero encountered in log"); a
#: RuntimeWarning chainrule raises on purpose says something else, and is not silenced.
MESSAGES = r"(divide by zero|invalid value|overflow|underflow) encountered in"

#: Ignore those RuntimeWarnings where raised in chainrule's modules (the tuple
#: ``warnings.filterwarnings`` makes for these arguments; `keep_first` puts this very object
#: first).
FILTER = ("ignore", re.compile(MESSAGES, re.I), RuntimeWarning, re.compile(r"chainrule\."), 0)


def keep_first() -> None:
    """Put `FILTER` first in ``warnings.filters`` (the engine calls this when it is not)."""
    warnings.filterwarnings("ignore", MESSAGES, RuntimeWarning, FILTER[3].pattern)
    warnings.filters[0] = FILTER  # the same filter, as the object the engine's check knows


def quietly(fn: Callable) -> Callable:
    """``fn`` run with NumPy's floating-point warnings off, as in ``np.errstate(all="ignore")``.

    >>> quietly(np.log)(np.zeros(1))  # no RuntimeWarning, even under simplefilter("error")
    array([-inf])
    """
    if _ERRSTATE is None:  # NumPy 1.x

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)

        return run

    @functools.wraps(fn)
    def run_fast(*args, **kwargs):
        token = _ERRSTATE.set(_IGNORE_ALL)
        try:
            return fn(*args, **kwargs)
        finally:
            _ERRSTATE.reset(token)

    return run_fast


# NumPy 2 keeps its error state in a context variable; np.errstate sets it (and checks its
# arguments) at each entry. Read once what it holds under errstate(all="ignore").
try:
    from numpy._core._multiarray_umath import _extobj_contextvar as _ERRSTATE
except ImportError:
    _ERRSTATE = None
else:
    with np.errstate(all="ignore"):
        _IGNORE_ALL = _ERRSTATE.get()
