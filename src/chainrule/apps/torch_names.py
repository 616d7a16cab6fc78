"""The names ``import torch`` gives a program, resolved to chainrule's own objects, for
``chainrule run`` only: `install` puts a finder on ``sys.meta_path`` that answers ``torch`` and
its submodules with alias modules, and `uninstall` takes it away again. The mapping is names
only; every object a program gets is chainrule's. A name chainrule lacks raises `MissingName`,
which ``chainrule run`` reports in one line."""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import os
import re
import sys
import types
from typing import Any

import chainrule
import chainrule.errors

from ..compat import amp
from ..compat.backends import Backend
from ..nn.modules import utils as module_utils


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
    "torch.autograd.profiler": "chainrule.profiler",
    "torch.nn.parallel": "chainrule.distributed",  # DistributedDataParallel
    "torch.nn.utils.stateless": "chainrule.func.stateless",  # functional_call
    "torch.utils.data.distributed": "chainrule.distributed",  # DistributedSampler
    "torch.functional": "chainrule",  # einsum, meshgrid, split, norm... are top-level
    "torch.serialization": "chainrule.io",
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
    "torch.testing": "chainrule.compat.testing",
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

#: The PyTorch release whose names and behaviour chainrule follows: ``torch.__version__`` under
#: ``chainrule run``.
PYTORCH_VERSION = "2.13.0"

#: Extra names per alias module, beyond its chainrule module's attributes.
_EXTRAS: dict[str, dict[str, Any]] = {
    "torch": {
        "Size": tuple,  # Tensor.shape is a plain tuple
        "autocast": amp.autocast,
        "__version__": PYTORCH_VERSION,  # programs compare it to choose modern code paths
    },
    "torch.autograd": {"Function": chainrule.Function},
    "torch.autograd.gradcheck": {  # PyTorch's: True or an error, not chainrule's report
        "gradcheck": chainrule.autograd.gradcheck,
        "gradgradcheck": chainrule.autograd.gradgradcheck,
        "GradcheckError": chainrule.errors.GraphError,
    },
    "torch.nn.modules.utils": {  # private, but programs import them to write their own layers
        name: getattr(module_utils, name)
        for name in ("_single", "_pair", "_triple", "_quadruple", "_ntuple",
                     "_reverse_repeat_tuple", "_list_with_default")
    },
    "torch.optim.lr_scheduler": {"_LRScheduler": chainrule.optim.lr_scheduler.LRScheduler},
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
        extras = _EXTRAS.get(self.__name__, {})
        if attr.startswith("__") and attr not in extras:
            raise AttributeError(attr)
        full = f"{self.__name__}.{attr}"
        target = self.__dict__["_target"]
        named = getattr(target, attr, _NOTHING) if not attr.startswith("_") else _NOTHING
        if attr in extras:
            value = extras[attr]
        elif named is not _NOTHING and not isinstance(named, types.ModuleType):
            value = named  # torch.autograd.gradcheck is the function, as in PyTorch
        elif resolves(full):
            value = alias(full)
        else:
            value = getattr(target, attr, _NOTHING)
            if attr.startswith("_") and not isinstance(value, type):
                value = _NOTHING  # private classes, as PyTorch's _Loss, are there to subclass
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


# Telling chainrule's missing names from a program's own mistakes, for ``chainrule run``'s one
# line: an AttributeError about a chainrule object, an ImportError from an alias module, or an
# unexpected keyword argument to a chainrule function is chainrule's; anything about the
# program's own objects keeps its traceback.

#: The public names of PyTorch's ``nn.Module`` (2.13), so that a program's own Module subclass
#: missing one of them is chainrule's gap, and missing any other name is the program's mistake.
MODULE_NAMES = frozenset({
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children",
    "compile", "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward",
    "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half", "ipu",
    "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules",
    "named_parameters", "parameters", "register_backward_hook", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_module", "register_parameter",
    "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_",
    "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
    "type", "xpu", "zero_grad",
})  # fmt: skip

#: chainrule's public namespaces under their PyTorch names, most used first: the first that
#: holds an object names it.
_NAMESPACES = [
    ("torch", "chainrule"), ("torch.nn", "chainrule.nn"),
    ("torch.nn.functional", "chainrule.nn.functional"), ("torch.optim", "chainrule.optim"),
    ("torch.optim.lr_scheduler", "chainrule.optim.lr_scheduler"),
    ("torch.utils.data", "chainrule.data"), ("torch.nn.init", "chainrule.nn.init"),
    ("torch.nn.utils", "chainrule.nn.utils"), ("torch.autograd", "chainrule.autograd"),
    ("torch.func", "chainrule.func"), ("torch.linalg", "chainrule.linalg"),
]  # fmt: skip

_KEYWORD = re.compile(r"^([\w.]+)\(\) got an unexpected keyword argument '(\w+)'$")
_CHAINRULE_DIR = os.path.dirname(chainrule.__file__)


@functools.cache
def _pytorch_names() -> tuple[dict[type, str], dict[str, str]]:
    """chainrule's public classes by object, and its functions and methods by qualified name
    (as Python's messages give them: ``relu``, ``Linear.__init__``, ``Tensor.sum``), each
    mapped to its PyTorch name (``torch.nn.Linear``, ``torch.Tensor.sum``)."""
    classes: dict[type, str] = {}
    functions: dict[str, str] = {}
    for theirs, ours in _NAMESPACES:
        module = importlib.import_module(ours)
        for name in dir(module):
            value = getattr(module, name)
            if name.startswith("_") or not _is_ours(value):
                continue
            if isinstance(value, type):
                classes.setdefault(value, f"{theirs}.{name}")
            elif callable(value):
                functions.setdefault(getattr(value, "__qualname__", name), f"{theirs}.{name}")
    for cls, theirs in list(classes.items()):
        functions.setdefault(f"{cls.__name__}.__init__", theirs)
        for name in dir(cls):
            method = getattr(cls, name, None)
            if name.startswith("_") or not callable(method):
                continue
            functions.setdefault(f"{cls.__name__}.{name}", f"{theirs}.{name}")
            functions.setdefault(getattr(method, "__qualname__", name), f"{theirs}.{name}")
    return classes, functions


def _is_ours(value: object) -> bool:
    """Whether ``value`` (a function, a class, or an instance's class) is chainrule's."""
    module = getattr(value, "__module__", None) or ""
    return module == "chainrule" or module.startswith("chainrule.")


def _class_name(cls: type) -> str:
    """A chainrule class's PyTorch name (``torch.nn.Linear``), else its own name."""
    classes, _ = _pytorch_names()
    return classes.get(cls, cls.__name__)


def missing_name(error: BaseException) -> str | None:
    """What chainrule lacks, when ``error`` (raised while a program ran) says chainrule lacks a
    PyTorch name: ``"chainrule has no torch.Tensor.foo yet"``; None for the program's own
    mistakes (an attribute of its own objects, a keyword of its own functions)."""
    if isinstance(error, (MissingName, chainrule.errors.UnsupportedError)):
        return str(error)
    if isinstance(error, chainrule.errors.SerializationError) and str(error).startswith("save:"):
        return str(error)  # torch.save(model): a whole object, which would need pickle
    if isinstance(error, ModuleNotFoundError):
        return str(error) if str(error).startswith("chainrule has no") else None
    if isinstance(error, ImportError):  # from torch.nn import NoSuchLayer
        if error.name in _aliases and "cannot import name" in str(error):
            missing = str(error).split("'")[1]
            return f"chainrule has no {error.name}.{missing} yet"
        return None
    if isinstance(error, AttributeError):
        return _missing_attribute(error)
    if isinstance(error, TypeError):
        return _missing_keyword(error)
    return None


def _missing_attribute(error: AttributeError) -> str | None:
    obj, name = getattr(error, "obj", None), getattr(error, "name", None)
    if name is None or obj is None:
        return None
    if isinstance(obj, chainrule.Tensor) and not hasattr(type(obj), name):
        return f"chainrule has no torch.Tensor.{name} yet"
    if isinstance(obj, type):  # nn.Module.foo, torch.Tensor.foo
        return f"chainrule has no {_class_name(obj)}.{name} yet" if _is_ours(obj) else None
    if _is_ours(type(obj)):
        return f"chainrule has no {_class_name(type(obj))}.{name} yet"
    if isinstance(obj, chainrule.nn.Module) and name in MODULE_NAMES:
        return f"chainrule has no torch.nn.Module.{name} yet"  # reached through a subclass
    return None


def _missing_keyword(error: TypeError) -> str | None:
    match = _KEYWORD.match(str(error))
    if match is None:
        return None
    qualname, keyword = match.groups()
    _, functions = _pytorch_names()
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return None
    frame = tb.tb_frame
    if not frame.f_code.co_filename.startswith(_CHAINRULE_DIR):
        # Raised where the call was written: chainrule's only if the callee is chainrule's.
        head = qualname.split(".")[0]
        named = frame.f_locals.get(head, frame.f_globals.get(head, _NOTHING))
        if named is not _NOTHING and not _is_ours(named):
            return None  # the program's own function or class
        if qualname not in functions:
            return None
    where = functions.get(qualname, qualname)
    return f"chainrule has no keyword argument {keyword}= of {where} yet"
