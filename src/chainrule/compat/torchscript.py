"""``torch.jit`` for programs that script or trace a model on the way: chainrule runs Python as
written, so `script` and `trace` give back what they are given, the decorators (`ignore`,
`unused`, `export`) change nothing, and `is_scripting` is False. Saving or loading a TorchScript
file raises `chainrule.errors.UnsupportedError`; chainrule's own graph compiler is
`chainrule.compile`."""

from __future__ import annotations

from typing import Any

from ..errors import UnsupportedError


def script(obj: Any, *args, **kwargs) -> Any:
    """``obj`` itself (a Module, a function or a class), which runs as Python.

    >>> script(abs) is abs
    True
    """
    return obj


def trace(func: Any, example_inputs: Any = None, *args, **kwargs) -> Any:
    """``func`` itself (a Module or a function): nothing is recorded, it runs as Python."""
    return func


def trace_module(mod: Any, inputs: Any = None, *args, **kwargs) -> Any:
    """``mod`` itself, as `trace`."""
    return mod


def unused(fn: Any) -> Any:
    """``fn`` unchanged."""
    return fn


def ignore(drop: Any = False, **kwargs) -> Any:
    """The decorator that keeps a function out of TorchScript: the function unchanged (used
    bare, ``@ignore``, or called, ``@ignore(drop=True)``)."""
    return drop if callable(drop) else unused


def export(fn: Any) -> Any:
    """``fn`` unchanged."""
    return fn


def interface(obj: Any) -> Any:
    """``obj`` unchanged."""
    return obj


def is_scripting() -> bool:
    """False: code always runs as Python."""
    return False


def is_tracing() -> bool:
    """False: nothing is traced."""
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    """``the_value`` (the type is only for TorchScript)."""
    return the_value


def save(m: Any, f: Any, *args, **kwargs) -> None:
    """Raises `UnsupportedError`: there is no TorchScript file to write."""
    raise UnsupportedError(
        "torch.jit.save: chainrule writes no TorchScript files; save the "
        "state_dict with torch.save instead"
    )


def load(f: Any, *args, **kwargs) -> Any:
    """Raises `UnsupportedError`: chainrule cannot run a TorchScript file."""
    raise UnsupportedError(
        "torch.jit.load: chainrule cannot run TorchScript files; load a "
        "state_dict with torch.load into the model's Python class instead"
    )


#: ``typing.Final``'s TorchScript spelling, for class attributes.
Final = Any

__all__ = ["Final", "annotate", "export", "ignore", "interface", "is_scripting", "is_tracing",
           "load", "save", "script", "trace", "trace_module", "unused"]  # fmt: skip
