"""`skip_init`: a module built without (PyTorch) or despite (here) its initialisation, as
``torch.nn.utils.init``. The initialisers themselves are `chainrule.nn.init`."""

from __future__ import annotations

from typing import Any

from ...errors import DomainError
from ..modules.module import Module, ModuleT

__all__ = ["skip_init"]


def skip_init(module_cls: type[ModuleT], *args: Any, **kwargs: Any) -> ModuleT:
    """``module_cls(*args, **kwargs)``, meant to be initialised by the caller.

    PyTorch builds the module on the "meta" device and then allocates uninitialised memory,
    skipping the initialisers' cost; chainrule has no meta device, so the module is built and
    initialised as usual (the caller overwrites the values anyway). A ``device`` keyword is
    accepted and dropped: chainrule has one device.

    >>> import chainrule
    >>> skip_init(chainrule.nn.Linear, 3, 2).weight.shape
    (2, 3)
    """
    if not isinstance(module_cls, type) or not issubclass(module_cls, Module):
        raise DomainError(f"skip_init: expected a Module class, got {module_cls!r}")
    kwargs.pop("device", None)
    return module_cls(*args, **kwargs)
