"""Parametrizations, as PyTorch's ``torch.nn.utils.parametrize``: a module's tensor becomes
computed, on each read, by small modules from tensors kept under
``module.parametrizations[<name>]`` (`register_parametrization`, `remove_parametrizations`,
`cached`). Only a parametrized module changes class, so ordinary modules pay nothing."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..._tensor import Tensor
from ...autograd import no_grad
from ...errors import DomainError, DTypeError
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module, ModuleT
from ..parameter import Parameter

__all__ = [
    "ParametrizationList", "cached", "is_parametrized", "register_parametrization",
    "remove_parametrizations", "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]  # fmt: skip

# Inside `cached()`: (id(module), name) -> the computed tensor. None outside it.
_cache: dict[tuple[int, str], Tensor] | None = None
_cache_depth = 0


@contextmanager
def cached() -> Iterator[None]:
    """Within this block each parametrized tensor is computed once, at its first read, and
    reused (a weight read at every step of an RNN's loop, a tied weight); leaving the
    outermost block forgets the values.

    >>> import chainrule
    >>> layer = register_parametrization(chainrule.nn.Linear(2, 2), "weight", chainrule.nn.Tanh())
    >>> with cached():
    ...     layer.weight is layer.weight
    True
    >>> layer.weight is layer.weight
    False
    """
    global _cache, _cache_depth
    if _cache_depth == 0:
        _cache = {}
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if _cache_depth == 0:
            _cache = None


def _register_tensor(module: Module, name: str, tensor: Tensor) -> None:
    """Register ``tensor`` as a parameter if it is one, else as a buffer (as it was before)."""
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def _set_in_place(dest: Tensor, src: Tensor) -> None:
    """Give ``dest`` the values (and shape) of ``src`` keeping its identity, so that an
    optimizer holding ``dest`` keeps training it (PyTorch's ``set_``)."""
    with no_grad():
        dest.data = src.detach()


def _check_same(kind: str, name: str, expected: Tensor, got: Any, what: str) -> None:
    """A ValueError unless ``got`` is a Tensor of ``expected``'s dtype and shape."""
    if not isinstance(got, Tensor):
        raise ValueError(f"{kind}: {what} must return a Tensor, got {type(got).__name__}")
    if got.dtype != expected.dtype or got.shape != expected.shape:
        raise ValueError(
            f"{kind}: {what} changes {name!r} from dtype {expected.dtype}, shape "
            f"{tuple(expected.shape)} to dtype {got.dtype}, shape {tuple(got.shape)}; pass "
            "unsafe=True to allow it"
        )


def _right_inverse(parametrization: Module, value: Any, required: bool) -> Any:
    """``parametrization.right_inverse(value)``; the identity where it has none (or it raises
    NotImplementedError), unless ``required`` (an assignment, which needs a real inverse)."""
    inverse = getattr(parametrization, "right_inverse", None)
    if inverse is None:
        if required:
            raise RuntimeError(
                f"parametrization {type(parametrization).__name__} does not implement "
                "right_inverse, so the parametrized tensor cannot be assigned"
            )
        return value
    try:
        return inverse(value)
    except NotImplementedError:
        if required:
            raise
        return value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor (``module.parametrizations[<name>]``), applied in
    order, and the tensor(s) they start from: ``original``, or ``original0``, ``original1``,
    ... when the first parametrization's ``right_inverse`` returns several tensors.

    Made by `register_parametrization`, not by hand.
    """

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList: needs at least one parametrization")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for parametrization in reversed(list(self)):
                new = _right_inverse(parametrization, new, required=False)
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError(
                "register_parametrization: right_inverse must return a Tensor or a sequence of "
                f"Tensors, got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != original.dtype:
                raise ValueError(
                    "register_parametrization: a right_inverse that returns one tensor may not "
                    f"change its dtype ({original.dtype} became {new.dtype})"
                )
            _set_in_place(original, new)  # the same Parameter object: optimizers keep it
            _register_tensor(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        "register_parametrization: right_inverse must return Tensors, got "
                        f"a {type(part).__name__} at position {i}"
                    )
                part = part.detach()
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                _register_tensor(self, f"original{i}", part)
        if not unsafe:
            _check_same(
                "register_parametrization", "the tensor", original, self(), "the parametrization"
            )

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` as the parametrized tensor: run each parametrization's
        ``right_inverse``, last first, into the original tensor(s), in place."""
        with no_grad():
            for parametrization in reversed(list(self)):
                value = _right_inverse(parametrization, value, required=True)
            if self.is_tensor:
                if not isinstance(value, Tensor) or value.dtype != self.original.dtype:
                    raise ValueError(
                        "right_inverse: must return a Tensor of dtype "
                        f"{self.original.dtype}, got {getattr(value, 'dtype', type(value))}"
                    )
                _set_in_place(self.original, value)
                return
            if not isinstance(value, Sequence) or len(value) != self.ntensors:
                raise ValueError(
                    f"right_inverse: must return a sequence of {self.ntensors} tensors, got "
                    f"{type(value).__name__}"
                )
            for i, part in enumerate(value):
                target = getattr(self, f"original{i}")
                if not isinstance(part, Tensor) or part.dtype != target.dtype:
                    raise ValueError(
                        f"right_inverse: tensor {i} must have dtype {target.dtype}, got "
                        f"{getattr(part, 'dtype', type(part))}"
                    )
                _set_in_place(target, part)

    def forward(self) -> Tensor:
        """The parametrized tensor, from the original(s) through every parametrization."""
        first, *rest = self._modules.values()
        if self.is_tensor:
            x = first(self.original)
        else:
            x = first(*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for parametrization in rest:
            x = parametrization(x)
        return x


def _parametrized_value(module: Module, name: str) -> Tensor:
    parametrizations = module._modules["parametrizations"][name]
    if _cache is None:
        return parametrizations()
    key = (id(module), name)
    value = _cache.get(key)
    if value is None:
        value = _cache[key] = parametrizations()
    return value


def _property(name: str) -> property:
    """The attribute ``name`` of a parametrized class: computed on read, inverted on write."""

    def get(module: Module) -> Tensor:
        return _parametrized_value(module, name)

    def set_(module: Module, value: Tensor) -> None:
        module._modules["parametrizations"][name].right_inverse(value)

    return property(get, set_, doc=f"{name}, computed by module.parametrizations[{name!r}]")


class _Parametrized:
    """Mixed into the class a parametrized module gets (``Parametrized<Class>``): assigning a
    parametrized name, even a Parameter, goes to its parametrization's ``right_inverse``."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(type(self).__dict__.get(name), property):
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one of ``tensor_name``).

    >>> import chainrule
    >>> layer = chainrule.nn.Linear(2, 2)
    >>> is_parametrized(layer)
    False
    >>> is_parametrized(register_parametrization(layer, "weight", chainrule.nn.Tanh()), "bias")
    False
    """
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization (its own class if it has none)."""
    return type(module).__bases__[1] if is_parametrized(module) else type(module)


def register_parametrization(
    module: ModuleT, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> ModuleT:
    """Make ``module.<tensor_name>`` computed as ``parametrization(original)`` on every read,
    the parameter (or buffer) moving to ``module.parametrizations[tensor_name].original``.

    If the parametrization has a ``right_inverse``, the original starts as
    ``right_inverse(current value)`` (in place: the same Parameter object, so an optimizer
    built before keeps working), and assigning ``module.<tensor_name> = value`` stores
    ``right_inverse(value)``; a ``right_inverse`` that returns several tensors keeps them as
    ``original0``, ``original1``, ... and the parametrization takes them all. Registering again
    chains: the new parametrization is applied to the previous one's output. The value must keep
    its shape and dtype unless ``unsafe``. The module's class becomes ``Parametrized<Class>``.
    Returns the module.

    >>> import chainrule
    >>> class Symmetric(chainrule.nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).mT
    >>> layer = register_parametrization(chainrule.nn.Linear(3, 3), "weight", Symmetric())
    >>> bool((layer.weight == layer.weight.mT).all())
    True
    >>> type(layer).__name__, sorted(layer.state_dict())
    ('ParametrizedLinear', ['bias', 'parametrizations.weight.original'])
    """
    if not isinstance(parametrization, Module):
        raise DTypeError(
            "register_parametrization: the parametrization must be a Module, got "
            f"{type(parametrization).__name__}"
        )
    if is_parametrized(module, tensor_name):
        parametrizations = module.parametrizations[tensor_name]
        if not unsafe:
            current = getattr(module, tensor_name)
            value = parametrization(current)
            _check_same("register_parametrization", tensor_name, current, value, "it")
            inverse = _right_inverse(parametrization, value, required=False)
            _check_same("register_parametrization", tensor_name, current, inverse, "right_inverse")
        parametrizations.append(parametrization)
        parametrizations.unsafe |= unsafe
        return module
    original = module._parameters.get(tensor_name, module._buffers.get(tensor_name))
    if original is None:
        raise DomainError(
            f"register_parametrization: {type(module).__name__} has no parameter, buffer or "
            f"parametrized tensor named {tensor_name!r}"
        )
    parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        cls = type(module)
        parametrized_cls = type(f"Parametrized{cls.__name__}", (_Parametrized, cls), {})
        parametrized_cls.__module__ = cls.__module__
        parametrized_cls.__qualname__ = f"Parametrized{cls.__qualname__}"
        module.__class__ = parametrized_cls
        module.parametrizations = ModuleDict()
    setattr(type(module), tensor_name, _property(tensor_name))
    module.parametrizations[tensor_name] = parametrizations
    return module


def remove_parametrizations(
    module: ModuleT, tensor_name: str, leave_parametrized: bool = True
) -> ModuleT:
    """Undo `register_parametrization` for ``tensor_name``: it becomes a plain parameter (or
    buffer) again, holding its current parametrized value (``leave_parametrized``, in the
    original Parameter object when there is one original) or the original itself.

    >>> import chainrule
    >>> layer = register_parametrization(chainrule.nn.Linear(2, 2), "weight", chainrule.nn.Tanh())
    >>> layer = remove_parametrizations(layer, "weight")
    >>> type(layer).__name__, sorted(layer.state_dict())
    ('Linear', ['bias', 'weight'])
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(
            f"remove_parametrizations: {type(module).__name__} has no parametrization of "
            f"{tensor_name!r}"
        )
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            _set_in_place(original, value)
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value.detach()
    else:
        raise ValueError(
            f"remove_parametrizations: {tensor_name!r} is parametrized by several tensors, so "
            "it cannot be left unparametrized (leave_parametrized=False)"
        )
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[1]
    return module


def transfer_parametrizations_and_params(
    from_module: Module, to_module: ModuleT, tensor_name: str | None = None
) -> ModuleT:
    """Register ``from_module``'s parametrizations (of ``tensor_name``, or all) on
    ``to_module`` too, sharing the same original tensors; a missing tensor is created first.
    Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        originals = (
            ["original"] if source.is_tensor else [f"original{i}" for i in range(source.ntensors)]
        )
        for original in originals:
            _register_tensor(target, original, getattr(source, original))
    return to_module
