"""The names ``import torch`` gives a program, resolved to chainrule's own objects, for
``chainrule run`` only: `install` puts a finder on ``sys.meta_path`` that answers ``torch`` and
its submodules with alias modules, and `uninstall` takes it away again. The mapping is names
only; every object a program gets is chainrule's. A name chainrule lacks raises `MissingName`,
which ``chainrule run`` reports in one line."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

import chainrule


class MissingName(AttributeError):
    """A PyTorch name chainrule does not have (yet). Also an AttributeError, so ``hasattr``
    and ``getattr(torch, name, default)`` in a program see it as absent."""

    def __init__(self, name: str) -> None:
        super().__init__(f"chainrule has no {name} yet")
        self.torch_name = name


def _false(*args, **kwargs) -> bool:
    return False


def _nothing(*args, **kwargs) -> None:
    return None


def _zero(*args, **kwargs) -> int:
    return 0


class _Settings(types.SimpleNamespace):
    """Flags a program sets and reads back (``torch.backends.cudnn.benchmark = True``)."""


#: Extra names per alias module, beyond its chainrule module's attributes.
_EXTRAS: dict[str, dict[str, Any]] = {
    "torch": {"Size": tuple},  # torch.compile is chainrule.compile
    "torch.cuda": {
        "is_available": _false,
        "device_count": _zero,
        "manual_seed": _nothing,
        "manual_seed_all": _nothing,
        "synchronize": _nothing,
        "empty_cache": _nothing,
        "is_bf16_supported": _false,
    },  # fmt: skip
    "torch.backends": {
        "cudnn": _Settings(benchmark=False, deterministic=False, enabled=False, allow_tf32=False),
        "mps": _Settings(is_available=_false, is_built=_false),
        "cuda": _Settings(matmul=_Settings(allow_tf32=False)),
    },
    "torch.autograd": {"Function": chainrule.Function},
    "torch.nn.parameter": {},
}

#: Each alias and the chainrule module whose names it shows (None: only its extras).
TARGETS = {
    "torch": "chainrule",
    "torch.nn": "chainrule.nn",
    "torch.nn.functional": "chainrule.nn.functional",
    "torch.nn.init": "chainrule.nn.init",
    "torch.nn.utils": "chainrule.nn.utils",
    "torch.nn.parameter": "chainrule.nn",
    "torch.optim": "chainrule.optim",
    "torch.optim.lr_scheduler": "chainrule.optim.lr_scheduler",
    "torch.utils": None,
    "torch.utils.data": "chainrule.data",
    "torch.autograd": "chainrule.autograd",
    "torch.func": "chainrule.func",
    "torch.linalg": "chainrule.linalg",
    "torch.profiler": "chainrule.profiler",
    "torch.cuda": None,
    "torch.backends": None,
}


class AliasModule(types.ModuleType):
    """``torch.<something>`` during ``chainrule run``: its names are those of a chainrule
    module (and a few extras); its submodules are alias modules too."""

    def __init__(self, name: str) -> None:
        super().__init__(name, f"chainrule's names under PyTorch's module {name}")
        target = TARGETS[name]
        self.__dict__["_target"] = None if target is None else importlib.import_module(target)
        self.__path__ = []  # a package: `import torch.nn` looks its submodules up here

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        full = f"{self.__name__}.{attr}"
        if full in TARGETS:
            return alias(full)
        extras = _EXTRAS.get(self.__name__, {})
        if attr in extras:
            return extras[attr]
        target = self.__dict__["_target"]
        if target is not None and not attr.startswith("_") and hasattr(target, attr):
            return getattr(target, attr)
        raise MissingName(full)


_aliases: dict[str, AliasModule] = {}


def alias(name: str) -> AliasModule:
    """The alias module for ``torch.<something>``, one per name: a program that keeps ``torch``
    reaches ``torch.nn.init`` through it even after `uninstall` (not the real PyTorch's)."""
    if name not in _aliases:
        _aliases[name] = AliasModule(name)
    return _aliases[name]


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``import torch...`` with alias modules; other ``torch.X`` modules are missing."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        if fullname not in TARGETS:
            raise ModuleNotFoundError(f"chainrule has no {fullname} yet", name=fullname)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec) -> AliasModule:
        return alias(spec.name)

    def exec_module(self, module: AliasModule) -> None:
        pass


_finder = _Finder()
_saved: dict[str, types.ModuleType] = {}


def install() -> None:
    """Make ``import torch`` (and its submodules) give chainrule's names in this process."""
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        _saved[name] = sys.modules.pop(name)  # a real torch imported earlier steps aside
    sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Undo `install`: ``import torch`` means what it meant before."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        if isinstance(sys.modules[name], AliasModule):
            del sys.modules[name]
    sys.modules.update(_saved)
    _saved.clear()
