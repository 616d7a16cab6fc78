"""`Module`, the base of every layer (parameters, buffers and submodules registered by
assignment; hooks, modes, state dicts, reprs), and `zero_grads`, which `Module.zero_grad` and
`Optimizer.zero_grad` share. `Parameter` is in `chainrule.nn.parameter`."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar

import numpy as np

from ... import dtypes, observe
from ..._tensor import Tensor
from ...autograd import no_grad
from ...errors import ChainruleError, DomainError, DTypeError, fmt_shape
from ...graph import RemovableHandle
from ..parameter import Parameter

__all__ = ["IncompatibleKeys", "Module", "StateDictError", "zero_grads"]


class StateDictError(ChainruleError, RuntimeError):
    """A state dict does not fit the module: missing or unexpected keys, or shape mismatches."""


def zero_grads(parameters: Iterable[Tensor], set_to_none: bool = True) -> None:
    """Clear each parameter's gradient: to None (default) or to zeros in place.

    To None, each is a ``.grad`` assignment, which a compiled step records as an equation
    (every parameter's, None or not, so that two calls record the same); to zeros, one call
    the compiled step runs whole (`_zero_in_place`)."""
    if not set_to_none:
        _zero_in_place(list(parameters))
        return
    for param in parameters:
        param.grad = None


@observe.replayed_whole
def _zero_in_place(parameters: list[Tensor]) -> None:
    """Set each existing gradient to zeros in place (``zero_grad(set_to_none=False)``)."""
    for param in parameters:
        if param.grad is not None:
            with no_grad():
                param.grad = param.grad.detach().zero_()


class _Hook(NamedTuple):
    """A registered forward (pre-)hook and how it is called."""

    fn: Callable
    with_kwargs: bool

    def __eq__(self, other) -> bool:  # identity, so that a handle removes its own entry
        return self is other

    __hash__ = object.__hash__


class IncompatibleKeys(NamedTuple):
    """What `Module.load_state_dict` returns: the keys it did not find and did not use."""

    missing_keys: list[str]
    unexpected_keys: list[str]


def _add_indent(text: str, spaces: int) -> str:
    """Indent every line but the first (for nested reprs)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


class Module:
    """Base class of networks: parameters, buffers and submodules registered by assignment.

    Subclasses call ``super().__init__()`` first, assign `Parameter`s, Modules and (through
    `register_buffer`) tensors, and define ``forward``; calling the module calls ``forward``.

    >>> import chainrule
    >>> class Scale(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.weight = Parameter(chainrule.ones(3))
    ...     def forward(self, x):
    ...         return x * self.weight
    >>> model = Scale()
    >>> [name for name, _ in model.named_parameters()]
    ['weight']
    >>> model(chainrule.tensor([1.0, 2.0, 3.0]))
    tensor([1., 2., 3.], grad_fn=<MulBackward>)
    """

    training: bool

    def __init__(self) -> None:
        # object.__setattr__: our own __setattr__ needs these dicts to exist already.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_pre_hooks", [])
        object.__setattr__(self, "_forward_hooks", [])

    def forward(self, *args, **kwargs):
        """The computation of this module; every subclass defines it."""
        raise NotImplementedError(
            f"{type(self).__name__}: forward is not defined; define forward(self, ...) in "
            "the subclass (calling the module calls forward)"
        )

    def __call__(self, *args, **kwargs):
        observer = observe.current
        if observer is not None:
            observer.module_called(self)  # a recording guards on its mode (train/eval)
        pre_hooks = self.__dict__.get("_forward_pre_hooks")
        hooks = self.__dict__.get("_forward_hooks")
        if not pre_hooks and not hooks:
            if observer is not None:  # a replay in pieces may give its results at once
                return observer.run_module(self, args, kwargs)
            return self.forward(*args, **kwargs)
        for hook in list(pre_hooks):
            if hook.with_kwargs:
                result = hook.fn(self, args, kwargs)
                if result is not None:
                    args, kwargs = result
            else:
                result = hook.fn(self, args)
                if result is not None:  # a single value stands for a one-tuple, as PyTorch
                    args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in list(hooks):
            if hook.with_kwargs:
                result = hook.fn(self, args, kwargs, output)
            else:
                result = hook.fn(self, args, output)
            if result is not None:
                output = result
        return output

    # Hooks.

    def _add_hook(self, kind: str, hook: Callable, prepend: bool, with_kwargs: bool):
        if not callable(hook):
            raise DTypeError(
                f"register_{kind}: the hook must be callable, got {type(hook).__name__}"
            )
        hooks = self._registry(f"_{kind}s")
        entry = _Hook(hook, with_kwargs)
        hooks.insert(0, entry) if prepend else hooks.append(entry)
        return RemovableHandle(hooks, entry)

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward; a result that is not None
        replaces the positional arguments (a non-tuple stands for a one-tuple). With
        ``with_kwargs`` the hook is ``hook(module, args, kwargs)`` and returns both.
        Returns a handle whose ``remove()`` unregisters it.

        >>> import chainrule
        >>> from chainrule.nn import Identity
        >>> layer = Identity()
        >>> handle = layer.register_forward_pre_hook(lambda module, args: args[0] * 2)
        >>> layer(chainrule.tensor([1.0]))
        tensor([2.])
        >>> handle.remove()
        >>> layer(chainrule.tensor([1.0]))
        tensor([1.])
        """
        return self._add_hook("forward_pre_hook", hook, prepend, with_kwargs)

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward; a result that is not None
        replaces the output. With ``with_kwargs`` it is ``hook(module, args, kwargs, output)``.
        Returns a handle whose ``remove()`` unregisters it.

        >>> import chainrule
        >>> from chainrule.nn import Identity
        >>> layer = Identity()
        >>> handle = layer.register_forward_hook(lambda module, args, out: out + 1)
        >>> layer(chainrule.tensor([1.0]))
        tensor([2.])
        """
        return self._add_hook("forward_hook", hook, prepend, with_kwargs)

    # Registration.

    def _registry(self, kind: str) -> dict:
        try:
            return self.__dict__[kind]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__}: cannot register before Module.__init__() has run; "
                f"call super().__init__() first in {type(self).__name__}.__init__"
            ) from None

    def _check_name(self, name: str, kind: str, registry: str) -> None:
        if not isinstance(name, str):
            raise DTypeError(f"{kind}: the name must be a str, got {type(name).__name__}")
        if not name or "." in name:
            raise DomainError(f"{kind}: invalid name {name!r}; names are non-empty, without '.'")
        if hasattr(self, name) and name not in self._registry(registry):
            raise DomainError(f"{kind}: {type(self).__name__} already has an attribute {name!r}")

    def _forget(self, name: str, keep: str) -> None:
        """Remove ``name`` from every registry but ``keep`` and from the plain attributes
        (before registering it in ``keep``, where it stays in place: replacing a parameter,
        buffer or submodule keeps its position, and so the state dict's order, as PyTorch)."""
        for kind in ("_parameters", "_buffers", "_modules"):
            if kind != keep:
                self.__dict__[kind].pop(name, None)
        self.__dict__["_non_persistent_buffers"].discard(name)
        self.__dict__.pop(name, None)

    @staticmethod
    def _check_parameter(name: str, param: Any) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise DTypeError(
                f"register_parameter: {name!r} must be a Parameter or None, got "
                f"{type(param).__name__}; wrap a tensor as nn.Parameter(tensor)"
            )
        if param is not None and param.grad_fn is not None:
            raise DomainError(
                f"register_parameter: {name!r} is not a leaf (it has a grad_fn); parameters "
                "must be leaves: use Parameter(tensor.detach())"
            )

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (a Parameter, or None for an absent one) under ``name``."""
        self._check_name(name, "register_parameter", "_parameters")
        self._check_parameter(name, param)
        self._forget(name, "_parameters")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (running means, masks...).

        Persistent buffers appear in `state_dict`; all of them in `buffers()`.
        """
        self._check_name(name, "register_buffer", "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise DTypeError(
                f"register_buffer: {name!r} must be a Tensor or None, got {type(tensor).__name__}"
            )
        self._forget(name, "_buffers")
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as a submodule under ``name``."""
        self._check_name(name, "add_module", "_modules")
        if module is not None and not isinstance(module, Module):
            raise DTypeError(
                f"add_module: {name!r} must be a Module or None, got {type(module).__name__}"
            )
        self._forget(name, "_modules")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        # A Parameter or Module replaces whatever had this name before, as in PyTorch.
        if isinstance(value, Parameter):
            self._registry("_parameters")
            self._check_parameter(name, value)
            self._forget(name, "_parameters")
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._registry("_modules")
            self._forget(name, "_modules")
            self._modules[name] = value
        elif name in self.__dict__.get("_parameters", ()):
            if value is not None:
                raise DTypeError(
                    f"{type(self).__name__}: cannot assign a {type(value).__name__} to "
                    f"parameter {name!r}; assign a Parameter or None"
                )
            self._parameters[name] = None
        elif name in self.__dict__.get("_modules", ()):
            if value is not None:
                raise DTypeError(
                    f"{type(self).__name__}: cannot assign a {type(value).__name__} to "
                    f"submodule {name!r}; assign a Module or None"
                )
            self._modules[name] = None
        elif name in self.__dict__.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise DTypeError(
                    f"{type(self).__name__}: cannot assign a {type(value).__name__} to "
                    f"buffer {name!r}; assign a Tensor or None"
                )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        for kind in ("_parameters", "_buffers", "_modules"):
            registry = self.__dict__.get(kind)
            if registry is not None and name in registry:
                return registry[name]
        hint = ""
        if "_parameters" not in self.__dict__:
            hint = f"; did {type(self).__name__}.__init__ call super().__init__()?"
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'{hint}")

    def __delattr__(self, name: str) -> None:
        for kind in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(kind, ()):
                del self.__dict__[kind][name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        for kind in ("_parameters", "_buffers", "_modules"):
            names.update(self.__dict__.get(kind, ()))
        return sorted(names)

    # Traversal.

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """(name, module) for this module and every submodule, depth first ('' for self)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                child_prefix = f"{prefix}.{name}" if prefix else name
                yield from module.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every submodule, each once."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for the direct submodules, each once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct submodules, each once."""
        for _, module in self.named_children():
            yield module

    def _named_members(self, kind: str, prefix: str, recurse: bool) -> Iterator[tuple[str, Any]]:
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in module.__dict__[kind].items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs; a parameter shared by two layers comes once.

        >>> from chainrule.nn import Identity, Sequential
        >>> layer = Sequential(Identity())
        >>> list(layer.named_parameters())
        []
        """
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module (and of its submodules if ``recurse``), each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs, each buffer once."""
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer of this module (and of its submodules if ``recurse``), each once."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    # Modes and bulk changes.

    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, batch norm updating) here and below; returns self."""
        if not isinstance(mode, bool):
            raise DTypeError(f"train: mode must be a bool, got {type(mode).__name__}")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode here and below (``train(False)``); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (freeze with False); returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient: to None (default) or to zeros."""
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule, then on self (e.g. to initialise weights); returns self.

        >>> seen = []
        >>> from chainrule.nn import Identity, Sequential
        >>> _ = Sequential(Identity(), Identity()).apply(lambda m: seen.append(type(m).__name__))
        >>> seen
        ['Identity', 'Identity', 'Sequential']
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, dtype=None, device=None, non_blocking: bool = False) -> Module:
        """Convert every floating-point parameter and buffer (and gradient) to a dtype, in place,
        as PyTorch's ``to``: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
        ``to(tensor)`` (its dtype) or by keyword. chainrule's one device is the CPU, so a
        device only gets checked.

        The Parameter objects stay the same, so optimizers built before still hold them.
        """
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif isinstance(arg, dtypes.device) or (isinstance(arg, str) and not _names_dtype(arg)):
                device = arg
            else:
                dtype = arg
        if device is not None:
            dtypes.device(device)  # raises for a GPU, which chainrule does not have
        if dtype is None:
            return self
        dtype = dtypes.as_dtype(dtype, "Module.to")
        for tensor in [*self.parameters(), *self.buffers()]:
            if tensor._array.dtype.kind == "f":
                tensor._array = tensor._array.astype(dtype)
                if tensor.grad is not None:
                    tensor.grad = Tensor._make(tensor.grad._array.astype(dtype))
        return self

    def cpu(self) -> Module:
        """This module (its tensors already live on the CPU, chainrule's one device)."""
        return self

    def cuda(self, device=None) -> Module:
        """Refused with a clear error: chainrule has no GPU support."""
        dtypes.device("cuda")
        return self

    def float(self) -> Module:
        """Convert floating-point parameters and buffers to float32, in place."""
        return self.to(np.float32)

    def double(self) -> Module:
        """Convert floating-point parameters and buffers to float64, in place."""
        return self.to(np.float64)

    # State dicts.

    def _state_items(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """Parameters then persistent buffers of each module, depth first, as PyTorch orders
        them; tied weights appear under every name."""
        for name, param in self._parameters.items():
            if param is not None:
                yield prefix + name, param
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers:
                yield prefix + name, buffer
        for name, module in self._modules.items():
            if module is not None:
                yield from module._state_items(f"{prefix}{name}.")

    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """An ordered dict from dotted names to parameters and persistent buffers.

        The tensors are detached but share memory with the module (as in PyTorch): copy them
        (or save them with `chainrule.save`) to keep a snapshot.

        >>> import chainrule
        >>> from chainrule.nn import Flatten, Sequential
        >>> model = Sequential(Flatten())
        >>> model.register_buffer("scale", chainrule.ones(1))
        >>> list(model.state_dict())
        ['scale']
        """
        return OrderedDict(
            (name, tensor if keep_vars else tensor.detach())
            for name, tensor in self._state_items(prefix)
        )

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> IncompatibleKeys:
        """Copy values from ``state_dict`` into this module's parameters and buffers.

        Every key and shape is checked before anything is copied, so on an error the module
        keeps its old values. Missing or unexpected keys are errors when ``strict``; shape
        mismatches always are. Values may be Tensors, NumPy arrays or anything NumPy reads as
        an array (a PyTorch state dict loads as it is). Returns ``(missing_keys,
        unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise DTypeError(
                f"load_state_dict: expected a mapping from names to tensors, got "
                f"{type(state_dict).__name__}"
            )
        own = dict(self._state_items())
        missing = [key for key in own if key not in state_dict]
        unexpected = [key for key in state_dict if key not in own]
        problems = []
        if strict and missing:
            problems.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)))
        if strict and unexpected:
            problems.append("Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected)))
        arrays = {}
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if isinstance(value, Tensor):
                array = value._array
            elif isinstance(value, (np.ndarray, np.generic)) or hasattr(value, "__array__"):
                # Anything NumPy reads as an array: a PyTorch state dict loads directly.
                try:
                    array = np.asarray(value)
                except Exception as exc:  # e.g. a PyTorch tensor that requires grad
                    problems.append(f"{key!r} cannot be read as an array: {exc}")
                    continue
            else:
                kind = f"{type(value).__module__}.{type(value).__qualname__}"
                problems.append(f"{key!r} is a {kind}, not a Tensor or array")
                continue
            if array.shape != target.shape:
                problems.append(
                    f"size mismatch for {key!r}: the checkpoint has shape "
                    f"{fmt_shape(array.shape)}, the current model {fmt_shape(target.shape)}"
                )
                continue
            if array.dtype.kind not in "biuf":
                problems.append(f"{key!r} has {array.dtype} data, which is not numeric")
                continue
            arrays[key] = array
        if problems:
            raise StateDictError(
                f"load_state_dict: error(s) loading a state dict into {type(self).__name__} "
                "(nothing was changed):\n    " + "\n    ".join(problems)
            )
        with no_grad():
            for key, array in arrays.items():
                own[key].copy_(array)
        return IncompatibleKeys(missing, unexpected)

    # Printing.

    def extra_repr(self) -> str:
        """The text inside this module's parentheses in its repr (subclasses override)."""
        return ""

    def __repr__(self) -> str:
        extra_lines = self.extra_repr().split("\n") if self.extra_repr() else []
        child_lines = [
            f"({name}): {_add_indent(repr(module), 2)}" for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{type(self).__name__}({body})"


def _names_dtype(name: str) -> bool:
    """Whether a string is a dtype's name ("float64") rather than a device's ("cpu")."""
    try:
        np.dtype(name)
    except TypeError:
        return False
    return True


#: A Module subclass, for functions that return the module they were given.
ModuleT = TypeVar("ModuleT", bound=Module)
