"""Deprecated layers kept so that old programs run: Container, PyTorch's pre-Sequential module
holder (it warns on construction with a FutureWarning, as PyTorch's does)."""

from __future__ import annotations

import warnings

from .module import Module

__all__ = ["Container"]


class Container(Module):
    """A Module whose submodules are given by keyword, as the deprecated
    ``torch.nn.Container``; it warns, like PyTorch's. Use `chainrule.nn.Module` instead.

    >>> import warnings, chainrule
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     box = Container(layer=chainrule.nn.Linear(2, 3))
    >>> [name for name, _ in box.named_children()]
    ['layer']
    """

    def __init__(self, **kwargs: Module) -> None:
        super().__init__()
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now implemented in "
            "`nn.Module`. Subclass that instead.",
            FutureWarning,
            stacklevel=2,
        )
        for key, value in kwargs.items():
            self.add_module(key, value)
