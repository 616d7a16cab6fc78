"""`compile`, PyTorch's ``torch.compile``: for now the function or module unchanged, so
programs that compile their model run as they are. This module is the one place a compiler
would replace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def compile(
    model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
    backend: str | Callable | None = "inductor", mode: str | None = None,
    options: dict[str, Any] | None = None, name: str | None = None, disable: bool = False,
    recompile_limit: int | None = None, isolate_recompiles: bool = False, shapes_spec: Any = None,
) -> Callable:  # fmt: skip
    """``model`` itself (a function or a module), as ``torch.compile(model)`` would return an
    equivalent one; with no model, a decorator that does the same. Every keyword PyTorch
    takes is accepted and changes nothing: chainrule runs each op as NumPy calls.

    >>> double = compile(lambda x: 2 * x, mode="max-autotune")
    >>> double(3)
    6
    >>> @compile(fullgraph=True)
    ... def square(x):
    ...     return x * x
    >>> square(4)
    16
    """
    if model is None:
        return lambda fn: fn
    return model
