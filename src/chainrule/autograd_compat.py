"""PyTorch's smaller ``torch.autograd`` names, re-exported by `chainrule.autograd`: the legacy
`Variable`, `set_detect_anomaly`, and switches that choose how PyTorch's engine runs (threads,
gradient layout, view replay, the Kineto profiler) which chainrule accepts and reports on."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from ._tensor import Tensor
from .errors import DomainError, DTypeError, GraphError
from .graph import state


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)  # every tensor is a Variable, as in PyTorch


class Variable(metaclass=_VariableMeta):
    """The legacy wrapper: ``Variable(tensor, requires_grad=False)`` returns a Tensor sharing
    ``tensor``'s data, cut from its graph (a new leaf), and every Tensor is an instance of
    Variable. ``Variable()`` is an empty tensor.

    >>> import chainrule
    >>> x = chainrule.ones(2, requires_grad=True)
    >>> v = Variable(x * 2, requires_grad=True)
    >>> v, v.is_leaf, isinstance(x, Variable)
    (tensor([2., 2.], requires_grad=True), True, True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False, volatile=False):
        if data is None:
            return Tensor._make(np.empty((0,), np.float32))
        if not isinstance(data, Tensor):
            raise DTypeError(f"Variable: data has to be a Tensor, got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


def variable(*args: Any, **kwargs: Any) -> Tensor:
    """Removed in PyTorch (calling it raises there too): use `chainrule.tensor`.

    >>> variable([1.0])
    Traceback (most recent call last):
    ...
    chainrule.errors.GraphError: autograd.variable(...) is deprecated; use chainrule.tensor(...)
    """
    raise GraphError("autograd.variable(...) is deprecated; use chainrule.tensor(...)")


class set_detect_anomaly(contextlib.ContextDecorator):
    """Turn anomaly detection (see `chainrule.detect_anomaly`) on or off: at once when called,
    until the end of the ``with`` block when used as one.

    ``check_nan=False`` (PyTorch: record creation stacks without checking gradients) is refused:
    chainrule's anomaly mode always checks for NaN and Inf.

    >>> import chainrule
    >>> with set_detect_anomaly(True):
    ...     chainrule.autograd.state.anomaly
    True
    >>> chainrule.autograd.state.anomaly
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        if not check_nan:
            raise DomainError(
                "set_detect_anomaly: check_nan=False is not supported; chainrule's anomaly "
                "mode always checks gradients for NaN and Inf"
            )
        self.prev = state.anomaly
        state.anomaly = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        state.anomaly = self.prev


def is_tensor_like(inp: Any) -> bool:
    """Whether ``inp`` is a chainrule Tensor (PyTorch also counts objects that override
    torch functions; chainrule has no such protocol).

    >>> import chainrule
    >>> is_tensor_like(chainrule.ones(1)), is_tensor_like([1.0])
    (True, False)
    """
    return isinstance(inp, Tensor)


_multithreading = [True]


class set_multithreading_enabled(contextlib.ContextDecorator):
    """Record whether backward may use worker threads, at once or for a ``with`` block.

    PyTorch runs device backward passes on worker threads; chainrule's backward always runs
    on the calling thread, so this only changes what `is_multithreading_enabled` says.

    >>> with set_multithreading_enabled(False):
    ...     is_multithreading_enabled()
    False
    >>> is_multithreading_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        self.prev, self.mode = _multithreading[0], bool(mode)
        _multithreading[0] = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _multithreading[0] = self.prev

    def clone(self) -> set_multithreading_enabled:
        """A new switch with the same mode (PyTorch's decorator protocol)."""
        return type(self)(self.mode)


def is_multithreading_enabled() -> bool:
    """What `set_multithreading_enabled` last set (True by default, as in PyTorch)."""
    return _multithreading[0]


class enforce_grad_layout_policy(contextlib.ContextDecorator):
    """Accepted for PyTorch's code, and changes nothing: PyTorch may give ``.grad`` the
    strides of the incoming gradient when ``enable=False``; NumPy gradients here always have
    their parameter's shape and a fresh C-ordered layout.

    >>> with enforce_grad_layout_policy(False):
    ...     pass
    """

    def __init__(self, enable: bool = True) -> None:
        self.enable = bool(enable)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


def is_view_replay_enabled() -> bool:
    """False: chainrule never replays a view's chain of view ops in backward.

    >>> is_view_replay_enabled()
    False
    """
    return False


def kineto_available() -> bool:
    """False: PyTorch's Kineto profiler library is not part of chainrule.

    >>> kineto_available()
    False
    """
    return False
