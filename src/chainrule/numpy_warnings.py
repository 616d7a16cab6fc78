"""NumPy's floating-point RuntimeWarnings (log of 0, 0 / 0, exp overflowing), silenced where
chainrule computes: PyTorch gives the same inf and nan and warns of none of them.

Nothing here runs per op: a ``np.errstate`` block costs about 0.9 µs, more than a small op,
and even reading ``warnings.filters`` in `apply_op` costs 5% of ``x * y`` on (10,)-shaped
tensors. So:

- `FILTER`, a warnings filter, ignores NumPy's floating-point warnings raised from chainrule's
  modules. NumPy attributes a ufunc's warning to the Python frame that called it, one of
  chainrule's for every NumPy call an op makes, so it silences exactly chainrule's calls,
  nothing of the user's NumPy code (nor a RuntimeWarning chainrule raises on purpose), and
  costs nothing until a warning happens. `keep_first` puts it first in ``warnings.filters``
  where it is not; making a tensor (`chainrule.creation`) and each backward pass call it, not
  the import: importing chainrule changes nothing. First, because pytest runs each test in a
  ``catch_warnings`` block (a filter added during collection is gone in the tests), and a
  filter added later (``simplefilter("always")``, pytest's ``-W``) goes in front of it.
- A filter in front of it that makes warnings errors (``simplefilter("error")``, ``python -W
  error``, pytest's ``filterwarnings = error``) turns an op's warning into an exception:
  `apply_op` catches it, at no cost until then, and runs the op's forward again with
  `rerun_quietly`.
- The backward pass and compiled replays run with NumPy's floating-point warnings off
  (`silence`, then `restore`), whatever the filters: their NumPy calls include some made
  inside NumPy's own Python functions (np.mean in a rule), which NumPy attributes to its
  own modules, and a replay's generated code is in no module. `silence` sets the context
  variable that ``np.errstate`` sets (about 0.3 µs, against 0.9 µs), and is
  ``np.errstate`` before NumPy 2.0. The hooks and `Function` backwards a pass runs run
  quietly too.

Measured against the tree before: ``x * y`` on (10,)-shaped tensors 1.25 µs both; a backward
pass of one node 5.1 µs before, 5.6 µs after (`silence` and `restore`).

What remains: a filter added in front of `FILTER` after the last tensor was made or backward
ran, that shows warnings (``simplefilter("always")``) or removes all filters
(``resetwarnings``), shows the warnings of the ops in between. NumPy's own Python-level
warnings (``Mean of empty slice``) are not floating-point errors: the ops that could meet them
avoid them (an empty mean is computed without np.mean).
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
    """Put `FILTER` first in ``warnings.filters``, unless it is."""
    filters = warnings.filters
    if not filters or filters[0] is not FILTER:
        warnings.filterwarnings("ignore", MESSAGES, RuntimeWarning, FILTER[3].pattern)
        warnings.filters[0] = FILTER  # the same filter, as the object the check above knows


def silence():
    """Turn NumPy's floating-point warnings off in this context (and put `FILTER` first, for
    the ops after it) until `restore` is given what this returns: a backward pass and a
    compiled replay do this once, inline, rather than through a wrapper's extra frame."""
    keep_first()
    if _ERRSTATE is None:  # NumPy 1.x: np.errstate itself
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    return _ERRSTATE.set(_IGNORE_ALL)


def restore(token) -> None:
    """Put back NumPy's warning state as it was before the `silence` that gave ``token``."""
    if _ERRSTATE is None:
        token.__exit__(None, None, None)
    else:
        _ERRSTATE.reset(token)


def quietly(fn: Callable) -> Callable:
    """``fn`` run with NumPy's floating-point warnings off, as in ``np.errstate(all="ignore")``
    (and `FILTER` put first, for the ops after it).

    >>> quietly(np.log)(np.zeros(1))  # no RuntimeWarning, even under simplefilter("error")
    array([-inf])
    """

    @functools.wraps(fn)
    def run(*args, **kwargs):
        token = silence()
        try:
            return fn(*args, **kwargs)
        finally:
            restore(token)

    return run


def rerun_quietly(op, arrays: list, params: dict, saving: bool) -> tuple:
    """(out, residuals) of ``op``'s forward run again with NumPy's warnings off, after a filter
    in front of `FILTER` made the first run's warning an error. ``saving``: the engine keeps
    residuals for backward (the forward that computes them runs)."""
    if saving and op.forward_saving is not None:
        return quietly(op.forward_saving)(*arrays, **params)
    return quietly(op.forward)(*arrays, **params), None


# NumPy 2 keeps its error state in a context variable; np.errstate sets it (and checks its
# arguments) at each entry. Read once what it holds under errstate(all="ignore").
try:
    from numpy._core._multiarray_umath import _extobj_contextvar as _ERRSTATE
except ImportError:
    _ERRSTATE = None
else:
    with np.errstate(all="ignore"):
        _IGNORE_ALL = _ERRSTATE.get()
