"""`spectral_norm` (``w = w_orig / σ(w_orig)``, σ by power iteration in a forward pre-hook)
and `remove_spectral_norm`, PyTorch's older hook API for it (``torch.nn.utils.spectral_norm``;
the newer one is `chainrule.nn.utils.parametrizations.spectral_norm`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...autograd import no_grad
from ...errors import DomainError, GraphError
from ..modules.conv import _ConvTransposeNd
from ..modules.module import Module, ModuleT
from ..parameter import Parameter
from .weight_norm import _hooks_of

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


def _normalize(x: np.ndarray, eps: float) -> np.ndarray:
    return x / max(float(np.sqrt(np.sum(x * x))), eps)


def _random_unit_vector(weight: Tensor, size: int, eps: float) -> np.ndarray:
    """A starting singular vector as PyTorch draws it: ``size`` values filled by ``normal_`` in
    the weight's dtype (PyTorch's numbers under one seed), then normalized (to rounding: the
    norm is NumPy's sum, not PyTorch's vectorised one)."""
    draws = Tensor._make(np.empty(size, weight.dtype)).normal_(0.0, 1.0)._array
    return _normalize(draws, eps).astype(weight.dtype)


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
            w = matrix._array
            for _ in range(self.n_power_iterations):  # updates the buffers in place
                v._array[...] = _normalize(w.T @ u._array, self.eps)
                u._array[...] = _normalize(w @ v._array, self.eps)
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
    that dimension as rows. The starting u and v are drawn as PyTorch draws them (``normal_``,
    u first), then normalized. Returns the module.

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
    u = _random_unit_vector(weight, rows, eps)
    v = _random_unit_vector(weight, columns, eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, Tensor._make(weight._array))  # a plain tensor until the first forward
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
