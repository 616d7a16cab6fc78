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

from ..compat.backends import Backend


class MissingName(AttributeError):
    """A PyTorch name chainrule does not have (yet). Also an AttributeError, so ``hasattr``
    and ``getattr(torch, name, default)`` in a program see it as absent."""

    def __init__(self, name: str) -> None:
        super().__init__(f"chainrule has no {name} yet")
        self.torch_name = name


#: PyTorch modules and the chainrule module (or object) whose names each shows, where the two
#: paths differ; ``None`` is a namespace that only holds submodules. Below `SUBTREES`, a module
#: needs no row when chainrule has one of the same path.
MODULES: dict[str, str | None] = {
    "torch": "chainrule",
    "torch.utils": None,
    "torch.utils.checkpoint": "chainrule.checkpoint",
    "torch.utils.tensorboard": "chainrule.tensorboard",  # built beside this (issue 34 item 7)
    "torch.autograd": "chainrule.autograd",
    "torch.autograd.function": "chainrule.function",
    "torch.autograd.grad_mode": "chainrule.autograd",
    "torch.autograd.functional": "chainrule.autograd",
    "torch.autograd.graph": "chainrule.autograd",
    "torch.autograd.forward_ad": "chainrule.autograd",
    "torch.autograd.anomaly_mode": "chainrule.autograd",
    "torch.autograd.variable": "chainrule.autograd",
    "torch.autograd.gradcheck": "chainrule.gradcheck",
    "torch.optim.adamw": "chainrule.optim.adam",  # the Adam family shares one module
    "torch.optim.adamax": "chainrule.optim.adam",
    "torch.optim.nadam": "chainrule.optim.adam",
    "torch.optim.radam": "chainrule.optim.adam",
    "torch.optim.sparse_adam": "chainrule.optim.adam",
    "torch.special": "chainrule",  # chainrule's special functions are top-level (`_EXTRAS`)
    "torch.random": "chainrule.random",
    "torch.profiler": "chainrule.profiler",
    "torch.cuda": "chainrule.compat.cuda",
    "torch.cuda.amp": "chainrule.compat.amp",
    "torch.amp": "chainrule.compat.amp",
    "torch.backends": "chainrule.compat.backends",
    "torch.accelerator": "chainrule.compat.accelerator",
    "torch.jit": "chainrule.compat.torchscript",
    "torch.onnx": "chainrule.compat.onnx",
    "torch.hub": "chainrule.compat.hub",
    "torch.distributed": "chainrule.compat.process_groups",
}

#: PyTorch packages whose public submodules are chainrule's of the same relative path:
#: ``torch.nn.modules.conv`` is ``chainrule.nn.modules.conv``, ``torch.distributions.normal``
#: is ``chainrule.distributions.normal``, ``torch.backends.cudnn`` is
#: ``chainrule.compat.backends.cudnn`` (an attribute there, not a file).
SUBTREES: dict[str, str] = {
    "torch.nn": "chainrule.nn",
    "torch.optim": "chainrule.optim",
    "torch.utils.data": "chainrule.data",
    "torch.distributions": "chainrule.distributions",
    "torch.func": "chainrule.func",
    "torch.linalg": "chainrule.linalg",
    "torch.backends": "chainrule.compat.backends",
}

#: Extra names per alias module, beyond its chainrule module's attributes.
_EXTRAS: dict[str, dict[str, Any]] = {
    "torch": {"Size": tuple},  # Tensor.shape is a plain tuple; torch.compile is chainrule's
    "torch.autograd": {"Function": chainrule.Function},
    "torch.special": {  # torch.special's spellings of chainrule's top-level functions
        "expit": chainrule.sigmoid, "gammaln": chainrule.lgamma, "psi": chainrule.digamma,
        "multigammaln": chainrule.mvlgamma, "i0": chainrule.i0,
    },
}  # fmt: skip


def target_of(name: str) -> str | None:
    """The path of the chainrule module (or object) that the PyTorch module ``name`` resolves
    to, found whether it exists or not; None for a namespace of submodules only.

    >>> target_of("torch.nn.modules.conv"), target_of("torch.optim.adamw")
    ('chainrule.nn.modules.conv', 'chainrule.optim.adam')

    Raises KeyError for a name with no rule (a private module, or one outside the subtrees).
    """
    if name in MODULES:
        return MODULES[name]
    for prefix in sorted(SUBTREES, key=len, reverse=True):
        if name.startswith(prefix + "."):
            rest = name[len(prefix) + 1 :]
            if not any(part.startswith("_") for part in rest.split(".")):
                return f"{SUBTREES[prefix]}.{rest}"
    if name in SUBTREES:
        return SUBTREES[name]
    raise KeyError(name)


def _is_namespace(obj: object) -> bool:
    """A module, or an object standing for one (``torch.backends.cudnn``'s flags)."""
    return isinstance(obj, (types.ModuleType, Backend))


_resolved: dict[str, object] = {}
_NOTHING = object()  # what a name resolves to when chainrule has nothing for it


def resolve(name: str) -> object:
    """The chainrule module or object that the PyTorch module ``name`` shows (None for a
    namespace of submodules only); raises ModuleNotFoundError, in one line, when there is none.

    >>> resolve("torch.nn.modules.linear").Linear is chainrule.nn.Linear
    True
    """
    if name not in _resolved:
        _resolved[name] = _find(name)
    if _resolved[name] is _NOTHING:
        raise ModuleNotFoundError(f"chainrule has no {name} yet", name=name)
    return _resolved[name]


def _find(name: str) -> object:
    try:
        path = target_of(name)
    except KeyError:
        return _NOTHING
    if path is None:
        return None
    return _load(path)


def _load(path: str) -> object:
    """Import ``path``, or take it as an attribute of the module above it."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as error:
        if error.name is None or not path.startswith(error.name):
            raise  # the module exists; something it imports does not
    parent, _, attr = path.rpartition(".")
    if not parent.startswith("chainrule"):
        return _NOTHING
    found = _load(parent)
    value = getattr(found, attr, _NOTHING) if found is not _NOTHING else _NOTHING
    return value if _is_namespace(value) else _NOTHING


def resolves(name: str) -> bool:
    """Whether ``import name`` works under `install`."""
    try:
        resolve(name)
    except ModuleNotFoundError:
        return False
    return True


class AliasModule(types.ModuleType):
    """``torch.<something>`` during ``chainrule run``: its names are those of a chainrule
    module (and a few extras); its submodules are alias modules too. A name once found is kept
    in the module's ``__dict__``, so a program's hot loop reads ``torch.tanh`` at full speed."""

    def __init__(self, name: str) -> None:
        super().__init__(name, f"chainrule's names under PyTorch's module {name}")
        self.__dict__["_target"] = resolve(name)
        self.__path__ = []  # a package: `import torch.nn` looks its submodules up here

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        full = f"{self.__name__}.{attr}"
        extras = _EXTRAS.get(self.__name__, {})
        if attr in extras:
            value = extras[attr]
        elif resolves(full):
            value = alias(full)
        else:
            target = self.__dict__["_target"]
            value = getattr(target, attr, _NOTHING) if not attr.startswith("_") else _NOTHING
            if value is _NOTHING or isinstance(value, types.ModuleType):
                raise MissingName(full)  # a chainrule module that is no PyTorch module
        self.__dict__[attr] = value
        return value


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
        resolve(fullname)  # ModuleNotFoundError, "chainrule has no torch.X yet", if missing
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
