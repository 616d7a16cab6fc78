"""The containers: Sequential (modules applied in turn), ModuleList and ModuleDict (modules
held by position or name, so their parameters are registered), ParameterList and ParameterDict
(the same for parameters), and the deprecated Container."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from ..._tensor import Tensor
from ...errors import DTypeError
from ..parameter import Parameter
from .module import Module, _add_indent

__all__ = ["Container", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _index(index: int, length: int, container: str) -> int:
    """A non-negative index into a container of ``length`` items, or an IndexError."""
    if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
        raise DTypeError(f"{container}: indices must be ints or slices, not {type(index).__name__}")
    if not -length <= index < length:
        raise IndexError(f"{container}: index {index} is out of range for {length} modules")
    return int(index) % length


class Sequential(Module):
    """Modules applied one after another: ``Sequential(a, b)(x) == b(a(x))``.

    Built from modules (named "0", "1", ...) or from an OrderedDict of names to modules.
    Indexing gives a module, slicing a Sequential.

    >>> from chainrule.nn import Flatten, Identity
    >>> model = Sequential(Identity(), Flatten())
    >>> model
    Sequential(
      (0): Identity()
      (1): Flatten(start_dim=1, end_dim=-1)
    )
    >>> len(model), type(model[1:]).__name__
    (2, 'Sequential')
    """

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(modules):
                self.add_module(str(i), module)

    def forward(self, x):
        for module in self:
            x = module(x)
        return x

    def __getitem__(self, index: int | slice) -> Module:
        items = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(OrderedDict(items[index]))
        return items[_index(index, len(items), "Sequential")][1]

    def __setitem__(self, index: int, module: Module) -> None:
        keys = list(self._modules)
        self.add_module(keys[_index(index, len(keys), "Sequential")], module)

    def __delitem__(self, index: int | slice) -> None:
        keys = list(self._modules)
        if isinstance(index, slice):
            doomed = keys[index]
        else:
            doomed = [keys[_index(index, len(keys), "Sequential")]]
        for key in doomed:
            del self._modules[key]
        # Renumber so that names stay "0", "1", ... as PyTorch does after a deletion.
        if all(key.isdigit() for key in self._modules):
            modules = list(self._modules.values())
            self._modules.clear()
            for i, module in enumerate(modules):
                self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        """Add each of ``modules`` at the end; returns self."""
        for module in modules:
            self.append(module)
        return self


class ModuleList(Module):
    """A list of modules whose parameters the parent registers (it has no forward).

    >>> from chainrule.nn import Identity
    >>> blocks = ModuleList([Identity() for _ in range(3)])
    >>> len(blocks), type(blocks[-1]).__name__
    (3, 'Identity')
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Module | ModuleList:
        values = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(values[index])
        return values[_index(index, len(values), "ModuleList")]

    def __setitem__(self, index: int, module: Module) -> None:
        self.add_module(str(_index(index, len(self), "ModuleList")), module)

    def __delitem__(self, index: int | slice) -> None:
        values = list(self._modules.values())
        if isinstance(index, slice):
            del values[index]
        else:
            del values[_index(index, len(values), "ModuleList")]
        self._modules.clear()
        for i, module in enumerate(values):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add each of ``modules`` at the end; returns self."""
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise DTypeError(
                "ModuleList.extend: expected an iterable of modules, got a single "
                f"{type(modules).__name__}; use append"
            )
        for module in modules:
            self.append(module)
        return self

    def __repr__(self) -> str:
        # Runs of identical reprs print once, as PyTorch does: "(0-2): 3 x Linear(...)".
        runs: list[list] = []  # [first index, last index, repr]
        for i, module in enumerate(self._modules.values()):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        if not runs:
            return f"{type(self).__name__}()"
        lines = [
            _add_indent(f"({first}): {text}" if first == last else
                        f"({first}-{last}): {last - first + 1} x {text}", 2)
            for first, last, text in runs
        ]  # fmt: skip
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        values = list(self._modules.values())
        values.insert(index, module)
        self._modules.clear()
        for i, value in enumerate(values):
            self.add_module(str(i), value)


class ModuleDict(Module):
    """A dict of modules whose parameters the parent registers (it has no forward).

    >>> from chainrule.nn import Flatten, Identity
    >>> heads = ModuleDict({"a": Identity(), "b": Flatten()})
    >>> list(heads), "a" in heads
    (['a', 'b'], True)
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        try:
            return self._modules[key]
        except KeyError:
            raise KeyError(
                f"ModuleDict: no module named {key!r}; it has {list(self._modules)}"
            ) from None

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        self[key]  # noqa: B018  (raises the KeyError that names the keys)
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        """The names, in insertion order."""
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        """The modules, in insertion order."""
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        """(name, module) pairs, in insertion order."""
        return self._modules.items()

    def update(
        self, modules: Mapping[str, Module] | ModuleDict | Iterable[tuple[str, Module]]
    ) -> None:
        """Add or replace modules from a mapping, a ModuleDict or (name, module) pairs."""
        is_mapping = isinstance(modules, (Mapping, ModuleDict))
        pairs = modules.items() if is_mapping else modules
        for key, module in pairs:
            self[key] = module

    def pop(self, key: str) -> Module:
        """Remove the module named ``key`` and return it."""
        module = self[key]
        del self._modules[key]
        return module

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()


def _as_parameter(value, container: str):
    """A Parameter as it is, a Tensor wrapped as one (as PyTorch does); else a clear error."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value.detach())
    raise DTypeError(
        f"{container}: expected a Parameter or Tensor, got {type(value).__name__}; wrap "
        "values as nn.Parameter(tensor)"
    )


def _parameter_line(name: str, param: Parameter) -> str:
    size = "x".join(map(str, param.shape))
    return f"({name}): Parameter containing: [chainrule.{param.dtype} of size {size}]"


class ParameterList(Module):
    """A list of parameters that the parent module registers (named "0", "1", ...).

    Tensors that are not Parameters are wrapped as Parameters, as in PyTorch.

    >>> import chainrule
    >>> params = ParameterList([Parameter(chainrule.ones(2)), chainrule.zeros(3)])
    >>> [name for name, _ in params.named_parameters()], type(params[1]).__name__
    (['0', '1'], 'Parameter')
    """

    def __init__(self, values: Iterable[Tensor] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, index: int | slice):
        values = list(self._parameters.values())
        if isinstance(index, slice):
            return ParameterList(values[index])
        return values[_index(index, len(values), "ParameterList")]

    def __setitem__(self, index: int, value: Tensor) -> None:
        position = _index(index, len(self), "ParameterList")
        self.register_parameter(str(position), _as_parameter(value, "ParameterList"))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def __iadd__(self, values: Iterable[Tensor]) -> ParameterList:
        return self.extend(values)

    def append(self, value: Tensor) -> ParameterList:
        """Add ``value`` (wrapped as a Parameter if needed) at the end; returns self."""
        self.register_parameter(str(len(self)), _as_parameter(value, "ParameterList"))
        return self

    def extend(self, values: Iterable[Tensor]) -> ParameterList:
        """Add each of ``values`` at the end; returns self."""
        if isinstance(values, Tensor):
            raise DTypeError("ParameterList.extend: expected an iterable of tensors; use append")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_parameter_line(name, p) for name, p in self._parameters.items())


class ParameterDict(Module):
    """A dict of parameters that the parent module registers under their keys.

    >>> import chainrule
    >>> params = ParameterDict({"scale": chainrule.ones(2)})
    >>> params["shift"] = Parameter(chainrule.zeros(2))
    >>> list(params), "scale" in params
    (['scale', 'shift'], True)
    """

    def __init__(self, parameters: Mapping[str, Tensor] | None = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Parameter:
        try:
            return self._parameters[key]
        except KeyError:
            raise KeyError(
                f"ParameterDict: no parameter named {key!r}; it has {list(self._parameters)}"
            ) from None

    def __setitem__(self, key: str, value: Tensor) -> None:
        self.register_parameter(key, _as_parameter(value, "ParameterDict"))

    def __delitem__(self, key: str) -> None:
        self[key]  # noqa: B018  (raises the KeyError that names the keys)
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __contains__(self, key: object) -> bool:
        return key in self._parameters

    def keys(self) -> Iterable[str]:
        """The names, in insertion order."""
        return self._parameters.keys()

    def values(self) -> Iterable[Parameter]:
        """The parameters, in insertion order."""
        return self._parameters.values()

    def items(self) -> Iterable[tuple[str, Parameter]]:
        """(name, parameter) pairs, in insertion order."""
        return self._parameters.items()

    def get(self, key: str, default=None):
        """The parameter named ``key``, or ``default``."""
        return self._parameters.get(key, default)

    def update(self, parameters: Mapping[str, Tensor] | Iterable[tuple[str, Tensor]]) -> None:
        """Add or replace parameters from a mapping, a ParameterDict or (name, value) pairs."""
        is_mapping = isinstance(parameters, (Mapping, ParameterDict))
        for key, value in parameters.items() if is_mapping else parameters:
            self[key] = value

    def pop(self, key: str) -> Parameter:
        """Remove the parameter named ``key`` and return it."""
        value = self[key]
        del self._parameters[key]
        return value

    def clear(self) -> None:
        """Remove every parameter."""
        self._parameters.clear()

    def extra_repr(self) -> str:
        return "\n".join(_parameter_line(name, p) for name, p in self._parameters.items())


# Deprecated, kept so that old programs run.


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
