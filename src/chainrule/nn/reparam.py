"""Reparametrising a module's weight through a forward pre-hook, PyTorch's older API for it:
`weight_norm` (``w = g v / |v|``) and `spectral_norm` (``w = w_orig / σ(w_orig)``, σ by power
iteration), with the functions that undo them. PyTorch's newer ``nn.utils.parametrizations``
is not here."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from .._tensor import Tensor
from ..autograd import no_grad
from ..errors import DomainError, GraphError
from ..random import numpy_generator
from .conv import _ConvTransposeNd
from .module import Module, Parameter

ModuleT = TypeVar("ModuleT", bound=Module)


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
    deprecates this hook API for ``nn.utils.parametrizations.weight_norm``, which chainrule
    does not have.)

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


def _normalize(x: np.ndarray, eps: float) -> np.ndarray:
    return x / max(float(np.sqrt(np.sum(x * x))), eps)


class SpectralNorm:
    """The forward pre-hook `spectral_norm` installs: sets ``module.<name>`` to
    ``<name>_orig / σ`` before each forward, refining the singular vectors ``<name>_u`` and
    ``<name>_v`` (buffers) by power iteration first when the module is training."""

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        if n_power_iterations <= 0:
            raise DomainError(
                f"spectral_norm: n_power_iterations must be positive, got {n_power_iterations}"
            )
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """The weight as a matrix with dimension ``dim`` as its rows."""
        if self.dim != 0:
            order = [self.dim] + [d for d in range(weight.ndim) if d != self.dim % weight.ndim]
            weight = weight.permute(*order)
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """``<name>_orig / σ``, σ = uᵀ W v (differentiable in W; u and v are constants)."""
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            w = matrix.data
            for _ in range(self.n_power_iterations):  # updates the buffers in place
                v.data[...] = _normalize(w.T @ u.data, self.eps)
                u.data[...] = _normalize(w @ v.data, self.eps)
        u, v = u.detach().clone(), v.detach().clone()
        sigma = (u * (matrix @ v)).sum()
        return weight / sigma

    def remove(self, module: Module) -> None:
        """Make the current normalized weight a plain parameter again."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(
    module: ModuleT,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> ModuleT:
    """Divide parameter ``name`` of ``module`` by its largest singular value σ before each
    forward; σ is estimated by ``n_power_iterations`` steps of power iteration per training
    forward, from the vectors kept in buffers ``<name>_u`` and ``<name>_v``.

    The raw weight moves to ``<name>_orig``. ``dim`` is the output dimension (default 0, 1
    for transposed convolutions); a weight of more than 2 dimensions is seen as a matrix with
    that dimension as rows. The starting u and v come from chainrule's generator. Returns the
    module.

    >>> import chainrule
    >>> layer = spectral_norm(chainrule.nn.Linear(4, 3))
    >>> sorted(name for name, _ in layer.named_buffers()), layer.weight_u.shape
    (['weight_u', 'weight_v'], (3,))
    """
    if _hooks_of(module, SpectralNorm, name):
        raise GraphError(f"spectral_norm: {name!r} of this module already has a spectral_norm hook")
    weight = module._parameters.get(name)
    if weight is None:
        raise DomainError(
            f"spectral_norm: {type(module).__name__} has no parameter {name!r} to normalize"
        )
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    rows, columns = fn.reshape_weight_to_matrix(weight).shape
    rng = numpy_generator(None, "spectral_norm")
    dtype = weight.dtype
    u = _normalize(rng.normal(0.0, 1.0, rows), eps).astype(dtype)
    v = _normalize(rng.normal(0.0, 1.0, columns), eps).astype(dtype)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, Tensor._make(weight.data))  # a plain tensor until the first forward
    module.register_buffer(name + "_u", Tensor._make(u))
    module.register_buffer(name + "_v", Tensor._make(v))
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: ModuleT, name: str = "weight") -> ModuleT:
    """Undo `spectral_norm`: ``name`` becomes one parameter again, holding the normalized
    weight (with the current u and v, no further power iteration).

    >>> import chainrule
    >>> layer = remove_spectral_norm(spectral_norm(chainrule.nn.Linear(4, 3)))
    >>> sorted(name for name, _ in layer.named_parameters()), list(layer.named_buffers())
    (['bias', 'weight'], [])
    """
    entries = _hooks_of(module, SpectralNorm, name)
    if not entries:
        raise DomainError(f"remove_spectral_norm: no spectral_norm of {name!r} in {module}")
    entries[0].fn.remove(module)
    module._forward_pre_hooks.remove(entries[0])
    return module
