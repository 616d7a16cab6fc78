"""`weight_norm` (``w = g v / |v|``, recomputed by a forward pre-hook before each forward) and
`remove_weight_norm`, PyTorch's older hook API for it (``torch.nn.utils.weight_norm``; the
newer one is `chainrule.nn.utils.parametrizations.weight_norm`)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...errors import DomainError, GraphError
from ..modules.module import Module, ModuleT
from ..parameter import Parameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def _hooks_of(module: Module, kind: type, name: str) -> list:
    """The module's forward pre-hook entries that are a ``kind`` reparametrisation of ``name``."""
    return [
        entry
        for entry in module._forward_pre_hooks
        if isinstance(entry.fn, kind) and entry.fn.name == name
    ]


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dimension but ``dim``, kept for broadcasting; over all
    of ``v`` when ``dim`` is -1 (PyTorch's convention for ``dim=None``)."""
    if dim == -1:
        return v.norm()
    dims = tuple(d for d in range(v.ndim) if d != dim % v.ndim)
    return v.norm(2, dim=dims, keepdim=True)


class WeightNorm:
    """The forward pre-hook `weight_norm` installs: sets ``module.<name>`` to
    ``<name>_g * <name>_v / |<name>_v|`` before each forward."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        """The weight from the module's current ``_g`` and ``_v`` parameters (differentiable)."""
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def remove(self, module: Module) -> None:
        """Make the current weight a plain parameter again."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        delattr(module, self.name + "_g")
        delattr(module, self.name + "_v")
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: ModuleT, name: str = "weight", dim: int | None = 0) -> ModuleT:
    """Replace parameter ``name`` of ``module`` by a magnitude ``<name>_g`` and a direction
    ``<name>_v``, the weight being recomputed as ``g v / |v|`` before each forward.

    The norm is taken over every dimension but ``dim`` (one magnitude per output channel by
    default), or over the whole tensor with ``dim=None``. Returns the module. (PyTorch
    deprecates this hook API for `chainrule.nn.utils.parametrizations.weight_norm`.)

    >>> import chainrule
    >>> layer = weight_norm(chainrule.nn.Linear(3, 2))
    >>> sorted(name for name, _ in layer.named_parameters())
    ['bias', 'weight_g', 'weight_v']
    >>> layer.weight_g.shape
    (2, 1)
    """
    if _hooks_of(module, WeightNorm, name):
        raise GraphError(f"weight_norm: {name!r} of this module already has a weight_norm hook")
    weight = module._parameters.get(name)
    if weight is None:
        raise DomainError(
            f"weight_norm: {type(module).__name__} has no parameter {name!r} to normalize"
        )
    fn = WeightNorm(name, dim)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: ModuleT, name: str = "weight") -> ModuleT:
    """Undo `weight_norm`: ``name`` becomes one parameter again, holding the current weight.

    >>> import chainrule
    >>> layer = remove_weight_norm(weight_norm(chainrule.nn.Linear(3, 2)))
    >>> sorted(name for name, _ in layer.named_parameters())
    ['bias', 'weight']
    """
    entries = _hooks_of(module, WeightNorm, name)
    if not entries:
        raise DomainError(f"remove_weight_norm: no weight_norm of {name!r} in {module}")
    entries[0].fn.remove(module)
    module._forward_pre_hooks.remove(entries[0])
    return module
