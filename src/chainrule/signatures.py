"""PyTorch's argument conventions that span every op: NumPy's names for dimensions, and ``out=``.

PyTorch takes ``axis=`` wherever it takes ``dim=`` (and ``keepdims=`` for ``keepdim=``), so
``x.sum(axis=0)`` works as in NumPy; its functions also take ``out=``, a tensor to write into.
chainrule declares its functions with PyTorch's own names, and `numpy_names` wraps each
public function and Tensor method once, where they are bound, to add the aliases and to refuse
``out=`` with a message that says what to write instead (chainrule never writes a result into
a tensor the caller gave: gradients could not follow the write).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

from .errors import ArgumentError

#: NumPy's name for an argument → PyTorch's.
ALIASES = {"axis": "dim", "keepdims": "keepdim"}
#: The keyword names `translate` acts on.
TRANSLATED = frozenset((*ALIASES, "out"))


def _parameters(fn: Callable) -> tuple[str, ...]:
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # a builtin without a signature
        return ()


def numpy_names(fn: Callable, name: str, *, refuse_out: bool = True) -> Callable:
    """``fn``, also taking ``axis=``/``keepdims=`` for its ``dim``/``keepdim`` and refusing
    ``out=`` (when ``refuse_out`` and it has no ``out`` of its own); ``fn`` itself when it has
    nothing to translate.

    >>> def total(x, dim=None, keepdim=False):
    ...     return (dim, keepdim)
    >>> numpy_names(total, "total")([1], axis=0, keepdims=True)
    (0, True)
    """
    params = _parameters(fn)
    renames = {numpy: torch for numpy, torch in ALIASES.items() if torch in params}
    refuse = refuse_out and "out" not in params
    if not renames and not refuse:
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs and not TRANSLATED.isdisjoint(kwargs):
            kwargs = translate(name, kwargs, renames, refuse)
        return fn(*args, **kwargs)

    return wrapper


def translate(name: str, kwargs: dict, renames: dict = ALIASES, refuse: bool = True) -> dict:
    """``kwargs`` with NumPy's names renamed to PyTorch's; an `ArgumentError` for ``out=`` (when
    ``refuse``) or for one argument given under both names."""
    if refuse and "out" in kwargs:
        raise ArgumentError(
            f"{name}: out= is not supported: chainrule returns a new tensor and never writes "
            f"into one you pass, so gradients can follow; write `y = chainrule.{name}(...)` "
            f"(or `y.copy_(chainrule.{name}(...))` to fill an existing tensor)"
        )
    kwargs = dict(kwargs)
    for numpy, torch in renames.items():
        if numpy in kwargs:
            if torch in kwargs:
                raise ArgumentError(
                    f"{name}: got both {torch}= and {numpy}= (NumPy's name for {torch}); give one"
                )
            kwargs[torch] = kwargs.pop(numpy)
    return kwargs
