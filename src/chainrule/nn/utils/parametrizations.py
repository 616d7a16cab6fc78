"""Weight normalization, spectral normalization and orthogonal weights as parametrizations,
PyTorch's ``torch.nn.utils.parametrizations`` (`weight_norm`, `spectral_norm`, `orthogonal`),
each registered through `chainrule.nn.utils.parametrize`."""

from __future__ import annotations

from enum import Enum

import numpy as np

from ... import linalg
from ..._tensor import Tensor
from ...creation import eye, zeros
from ...linalg.matrix_functions import matrix_exp
from ...ops.shape import cat
from ...random import randn
from ..modules.conv import _ConvTransposeNd
from ..modules.module import Module, ModuleT
from .parametrize import register_parametrization
from .spectral_norm import _normalize, _random_unit_vector
from .weight_norm import _norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _tensor_named(module: Module, name: str, caller: str) -> Tensor:
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"{caller}: {type(module).__name__} has no parameter or buffer {name!r}")
    return weight


class _WeightNorm(Module):
    """``g v / |v|`` from ``original0`` = g (one magnitude per slice of ``dim``) and
    ``original1`` = v."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: ModuleT, name: str = "weight", dim: int | None = 0) -> ModuleT:
    """Parametrize ``module.<name>`` as ``g v / |v|``: the magnitude g is
    ``parametrizations.<name>.original0`` and the direction v ``original1``; the norm is over
    every dimension but ``dim`` (over the whole tensor with ``dim=None``). Returns the module.

    >>> import chainrule
    >>> layer = weight_norm(chainrule.nn.Linear(3, 2))
    >>> layer.parametrizations.weight.original0.shape, layer.parametrizations.weight.original1.shape
    ((2, 1), (2, 3))
    """
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    """``W / σ(W)``, σ estimated by power iteration from the buffers ``_u`` and ``_v``
    (refined on each read in training mode); a vector is just normalized."""

    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if not -ndim <= dim < max(ndim, 1):
            raise IndexError(
                f"spectral_norm: dim {dim} is out of range for a weight of {ndim} dimensions"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                f"spectral_norm: n_power_iterations must be positive, got {n_power_iterations}"
            )
        self.dim = dim % ndim if ndim else 0
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            rows, columns = self._reshape_weight_to_matrix(weight).shape
            self.register_buffer("_u", Tensor._make(_random_unit_vector(weight, rows, eps)))
            self.register_buffer("_v", Tensor._make(_random_unit_vector(weight, columns, eps)))
            self._power_method(self._reshape_weight_to_matrix(weight), 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, matrix: Tensor, n_power_iterations: int) -> None:
        w, u, v = matrix._array, self._u._array, self._v._array
        for _ in range(n_power_iterations):  # updates the buffers in place
            u[...] = _normalize(w @ v, self.eps)
            v[...] = _normalize(w.T @ u, self.eps)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return weight / weight.norm().clamp_min(self.eps)
        matrix = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.detach().clone(), self._v.detach().clone()
        return weight / (u * (matrix @ v)).sum()

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: ModuleT,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> ModuleT:
    """Parametrize ``module.<name>`` as ``W / σ(W)``, σ its largest singular value, estimated
    by power iteration (15 steps at registration, ``n_power_iterations`` at each read in
    training mode) from the buffers ``parametrizations.<name>.0._u`` and ``._v``. ``dim`` is the
    output dimension (default 0, 1 for transposed convolutions). Returns the module.

    >>> import chainrule
    >>> layer = spectral_norm(chainrule.nn.Linear(4, 3))
    >>> sorted(layer.state_dict())  # doctest: +NORMALIZE_WHITESPACE
    ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v',
     'parametrizations.weight.original']
    """
    weight = _tensor_named(module, name, "spectral_norm")
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    parametrization = _SpectralNorm(weight, n_power_iterations, dim, eps)
    return register_parametrization(module, name, parametrization)


class _OrthogonalMap(Enum):
    matrix_exp = "matrix_exp"
    cayley = "cayley"
    householder = "householder"


def _make_orthogonal(a: np.ndarray) -> np.ndarray:
    """The Q of ``a = QR`` with R's diagonal non-negative (so the same Q for any LAPACK)."""
    q, r = np.linalg.qr(a)
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    return q * np.where(signs == 0, 1, signs)[..., None, :]


def _is_orthogonal(q: np.ndarray) -> bool:
    n, k = q.shape[-2:]
    eps = 10.0 * n * np.finfo(q.dtype).eps
    return bool(np.allclose(np.swapaxes(q, -1, -2) @ q, np.eye(k, dtype=q.dtype), atol=eps, rtol=0))


def _householder_reflectors(q: np.ndarray) -> np.ndarray:
    """LAPACK's geqrf reflectors of ``q`` (the strict lower triangle), with a diagonal of
    ±1 saying which columns the reflectors' product must flip to give back ``q``."""
    out = np.empty_like(q)
    for index in np.ndindex(q.shape[:-2]):
        h, tau = np.linalg.qr(q[index], mode="raw")
        reflectors = h.T.copy()
        diagonal = np.sign(np.diagonal(reflectors)).copy()
        diagonal[tau == 0.0] *= -1
        np.fill_diagonal(reflectors, diagonal)
        out[index] = reflectors
    return out


class _Orthogonal(Module):
    """An orthogonal matrix (orthonormal columns, or rows when wide) from an unconstrained
    one, by the matrix exponential or the Cayley map of a skew-symmetric matrix, or by a product
    of Householder reflectors; with ``base`` (the dynamic trivialization) the result is
    ``base @ Q``."""

    def __init__(
        self, weight: Tensor, orthogonal_map: _OrthogonalMap, *, use_trivialization: bool = True
    ) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2:]
        transposed = n < k
        if transposed:
            x, n, k = x.mT, k, n
        if self.orthogonal_map is _OrthogonalMap.householder:
            reflectors = x.tril(-1)
            tau = 2.0 / (1.0 + (reflectors * reflectors).sum(-2))
            q = linalg.householder_product(reflectors, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).detach().int().unsqueeze(-2)
        else:
            x = x.tril()
            if n != k:
                x = cat([x, zeros(*x.shape[:-2], n, n - k, dtype=x.dtype)], -1)
            skew = x - x.mT
            if self.orthogonal_map is _OrthogonalMap.matrix_exp:
                q = matrix_exp(skew)
            else:
                identity = eye(n, dtype=skew.dtype)
                q = linalg.solve(identity - 0.5 * skew, identity + 0.5 * skew)
            q = q[..., :k]
        if "base" in self._buffers:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        if tuple(q.shape) != tuple(self.shape):
            raise ValueError(
                f"orthogonal: expected a matrix (or batch) of shape {tuple(self.shape)}, got "
                f"{tuple(q.shape)}"
            )
        array = q.detach()._array
        n, k = array.shape[-2:]
        transposed = n < k
        if transposed:
            array, n, k = np.swapaxes(array, -1, -2), k, n
        if "base" not in self._buffers:
            if self.orthogonal_map is not _OrthogonalMap.householder:
                raise NotImplementedError(
                    "orthogonal: the matrix_exp and cayley maps cannot be assigned to with "
                    "use_trivialization=False"
                )
            reflectors = _householder_reflectors(array)
            if transposed:
                reflectors = np.swapaxes(reflectors, -1, -2)
            return Tensor._make(np.ascontiguousarray(reflectors))
        if n == k:
            base = array.copy() if _is_orthogonal(array) else _make_orthogonal(array)
        else:
            extra = randn(*array.shape[:-2], n, n - k, dtype=array.dtype)._array
            base = _make_orthogonal(np.concatenate([array, extra], -1))
        self.base = Tensor._make(base)
        minus_identity = np.zeros(self.shape, dtype=array.dtype)
        diagonal = np.arange(min(self.shape[-2:]))
        minus_identity[..., diagonal, diagonal] = -1.0  # -I, rectangular for a wide or tall one
        return Tensor._make(minus_identity)


def orthogonal(
    module: ModuleT,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> ModuleT:
    """Parametrize the matrix (or batch of matrices) ``module.<name>`` to stay orthogonal:
    ``QᵀQ = I`` when it is tall or square, ``QQᵀ = I`` when wide. ``orthogonal_map`` is
    ``"matrix_exp"`` (default for square matrices), ``"cayley"`` or ``"householder"`` (default
    otherwise). With ``use_trivialization`` (default) a buffer ``base`` holds the starting
    orthogonal matrix (the weight, orthogonalized by QR if it is not orthogonal; a tall
    matrix is completed with ``randn`` columns, drawn as PyTorch draws them). Returns the module.

    >>> import chainrule
    >>> layer = orthogonal(chainrule.nn.Linear(3, 3))
    >>> w = layer.weight
    >>> bool(chainrule.allclose(w @ w.mT, chainrule.eye(3), atol=1e-5))
    True
    """
    weight = _tensor_named(module, name, "orthogonal")
    if weight.ndim < 2:
        raise ValueError(
            f"orthogonal: expected a matrix or batch of matrices, got {weight.ndim} dimensions"
        )
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _OrthogonalMap.__members__:
        raise ValueError(
            'orthogonal: orthogonal_map must be "matrix_exp", "cayley" or "householder", got '
            f"{orthogonal_map!r}"
        )
    parametrization = _Orthogonal(
        weight, _OrthogonalMap[orthogonal_map], use_trivialization=use_trivialization
    )
    return register_parametrization(module, name, parametrization, unsafe=True)
