"""Transforms: invertible maps y = f(x) with log|det df/dx|, from which a
`TransformedDistribution` gets its density. ``Transform`` (the base, with ``inv`` and a
one-entry cache), ``ComposeTransform``, the elementwise maps (exp, power, sigmoid, tanh, abs,
affine, softplus), the maps onto vectors and matrices (softmax, stick-breaking, lower Cholesky,
positive definite), and the structural ones (independent, reshape, cat, stack, a CDF).
The module stays whole: it is one concept, the transforms, and programs import all of them
from this one module (torch.distributions.transforms)."""

from __future__ import annotations

import math
import weakref

import numpy as np

from .. import linalg, ops
from .._tensor import Tensor
from ..creation import full_like, ones_like, zeros_like
from ..dtypes import finfo
from ..nn.functional import logsigmoid
from . import constraints
from .utils import clamp_probs, sum_rightmost


class Transform:
    """An invertible (or at least injective on its domain) map between constraint sets.

    ``t(x)`` applies it, ``t.inv(y)`` the inverse (a Transform too),
    ``t.log_abs_det_jacobian(x, y)`` the log of |det J| summed over ``domain.event_dim``.
    With ``cache_size=1`` the last (x, y) pair is remembered, so ``inv`` of a value it just
    made returns the exact x (tanh and sigmoid lose precision when inverted).
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError(f"Transform: cache_size must be 0 or 1, got {cache_size}")
        self._cache_size = cache_size
        self._cached_x_y = (None, None)
        self._inv = None

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Transform: domain and codomain event dims differ; ask each one")

    @property
    def inv(self) -> Transform:
        """The inverse transform."""
        inverse = self._inv() if self._inv is not None else None
        if inverse is None:
            inverse = _InverseTransform(self)
            self._inv = weakref.ref(inverse)
        return inverse

    @property
    def sign(self) -> int:
        """+1 for an increasing map, -1 for a decreasing one (monotone maps only)."""
        raise NotImplementedError(f"{type(self).__name__} has no sign")

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._call(x)
        cached_x, cached_y = self._cached_x_y
        if x is cached_x:
            return cached_y
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        cached_x, cached_y = self._cached_x_y
        if y is cached_y:
            return cached_x
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not define _call")

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not define _inverse")

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """log |det dy/dx| for the pair (x, y = t(x))."""
        raise NotImplementedError(f"{type(self).__name__} does not define log_abs_det_jacobian")

    def forward_shape(self, shape) -> tuple:
        """The shape of t(x) for x of ``shape``."""
        return tuple(shape)

    def inverse_shape(self, shape) -> tuple:
        """The shape of t.inv(y) for y of ``shape``."""
        return tuple(shape)

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform, swapping its call and inverse."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def inv(self) -> Transform:
        return self._inv

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self) -> bool:
        return self._inv.bijective

    @property
    def sign(self) -> int:
        return self._inv.sign

    def __eq__(self, other) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape) -> tuple:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape) -> tuple:
        return self._inv.forward_shape(shape)

    def __repr__(self) -> str:
        return f"{self._inv!r}.inv"


class ComposeTransform(Transform):
    """``parts`` applied in order (the first to x first); the empty one is the identity."""

    def __init__(self, parts: list, cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim  # the event dims the chain needs at x
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:
        return all(part.bijective for part in self.parts)

    @property
    def sign(self) -> int:
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self) -> Transform:
        inverse = self._inv() if self._inv is not None else None
        if inverse is None:
            inverse = ComposeTransform([part.inv for part in reversed(self.parts)])
            self._inv = weakref.ref(inverse)
            inverse._inv = weakref.ref(self)
        return inverse

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor):
        if not self.parts:
            return zeros_like(x)
        terms = []
        event_dim = self.domain.event_dim
        for part in self.parts:
            y = part(x)
            term = part.log_abs_det_jacobian(x, y)
            terms.append(sum_rightmost(term, event_dim - part.domain.event_dim))
            x = y
            event_dim += part.codomain.event_dim - part.domain.event_dim
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def forward_shape(self, shape) -> tuple:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape) -> tuple:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(part) for part in self.parts)
        return f"ComposeTransform(\n    {inner}\n)"


identity_transform = ComposeTransform([])
"""The identity map (the empty ComposeTransform)."""


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return ops.exp(x)

    def _inverse(self, y):
        return ops.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on positive x."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return ops.sign(self.exponent) if isinstance(self.exponent, Tensor) else (
            1 if self.exponent > 0 else -1)  # fmt: skip

    def __eq__(self, other) -> bool:
        return isinstance(other, PowerTransform) and _same(self.exponent, other.exponent)

    __hash__ = object.__hash__

    def _call(self, x):
        return x**self.exponent

    def _inverse(self, y):
        return y ** (1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return ops.log((self.exponent * y / x).abs())

    def forward_shape(self, shape) -> tuple:
        return tuple(ops.broadcast_shapes(tuple(shape), tuple(getattr(self.exponent, "shape", ()))))

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    """y = sigmoid(x) = 1 / (1 + exp(-x))."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return clamp_probs(ops.sigmoid(x))

    def _inverse(self, y):
        y = clamp_probs(y)
        return ops.log(y) - ops.log1p(-y)

    def log_abs_det_jacobian(self, x, y):
        # log(sigmoid'(x)) = -softplus(-x) - softplus(x), finite for every x.
        return -ops.softplus(-x) - ops.softplus(x)


class TanhTransform(Transform):
    """y = tanh(x); build with ``cache_size=1`` where samples are inverted (atanh near +-1
    is inaccurate)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return ops.tanh(x)

    def _inverse(self, y):
        return ops.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable where tanh saturates.
        return 2.0 * (math.log(2.0) - x - ops.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not injective: the inverse returns the positive root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, elementwise; ``event_dim`` dims of x form one event (their
    log-Jacobians are summed)."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        return _same(self.loc, other.loc) and _same(self.scale, other.scale)

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Tensor):
            return ops.sign(self.scale)
        return 1 if self.scale > 0 else -1 if self.scale < 0 else 0

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        scale = self.scale
        if isinstance(scale, Tensor):
            out = ops.log(scale.abs())
        else:
            out = full_like(x, math.log(abs(scale)))
        shape = tuple(x.shape)
        if tuple(out.shape) != shape:
            out = out.expand(ops.broadcast_shapes(tuple(out.shape), shape))
        if self._event_dim:
            out = sum_rightmost(out, self._event_dim)
        return out

    def forward_shape(self, shape) -> tuple:
        return tuple(ops.broadcast_shapes(
            tuple(shape), tuple(getattr(self.loc, "shape", ())),
            tuple(getattr(self.scale, "shape", ()))))  # fmt: skip

    inverse_shape = forward_shape


def _same(a, b) -> bool:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return a is b or (
            isinstance(a, Tensor) and isinstance(b, Tensor) and bool(ops.eq(a, b).all())
        )
    return a == b


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return ops.softplus(x)

    def _inverse(self, y):
        return y + ops.log(-ops.expm1(-y))  # log(exp(y) - 1), without overflow

    def log_abs_det_jacobian(self, x, y):
        return -ops.softplus(-x)


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim (not bijective: x is recovered up to a constant)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return ops.softmax(x, -1)

    def _inverse(self, y):
        return ops.log(y)


class StickBreakingTransform(Transform):
    """Vectors of K-1 reals onto the simplex of K, by breaking a stick: coordinate i takes the
    fraction sigmoid(x_i - log(K - 1 - i)) of what is left (zero input gives equal parts)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _log_offsets(n: int, like: Tensor) -> Tensor:
        """log(n), log(n - 1), ..., log(1) in ``like``'s dtype."""
        return Tensor._make(np.log(np.arange(n, 0, -1, dtype=like.dtype)))

    def _call(self, x):
        z = ops.sigmoid(x - self._log_offsets(x.shape[-1], x))
        left = ops.cumprod(1 - z, -1)  # what remains after each break
        ones = ones_like(x[..., :1])
        return ops.cat([z, ones], -1) * ops.cat([ones, left], -1)

    def _inverse(self, y):
        head = y[..., :-1]
        left = (1 - ops.cumsum(head, -1)).clamp(min=finfo(y.dtype).tiny)
        return ops.log(head) - ops.log(left) + self._log_offsets(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        shifted = x - self._log_offsets(x.shape[-1], x)
        # 1 - sigmoid(t) = exp(-t) sigmoid(t) keeps each factor in log space.
        return (-shifted + logsigmoid(shifted) + ops.log(y[..., :-1])).sum(-1)

    def forward_shape(self, shape) -> tuple:
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape) -> tuple:
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices onto lower-triangular ones with a positive diagonal: the strict lower
    triangle is kept and the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        diagonal = ops.exp(x.diagonal(dim1=-2, dim2=-1))
        return ops.tril(x, -1) + ops.diag_embed(diagonal)

    def _inverse(self, y):
        diagonal = ops.log(y.diagonal(dim1=-2, dim2=-1))
        return ops.tril(y, -1) + ops.diag_embed(diagonal)


class PositiveDefiniteTransform(Transform):
    """Square matrices onto positive-definite ones: L L^T with L = LowerCholeskyTransform(x)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


def _tril_positions(n: int, diagonal: int) -> tuple:
    """Row and column indices of the lower triangle of an n x n matrix below ``diagonal``,
    row by row."""
    return np.tril_indices(n, diagonal)


def vec_to_tril_matrix(vec: Tensor, diagonal: int = 0) -> Tensor:
    """The n x n lower-triangular matrix (up to ``diagonal``) whose triangle, row by row, is
    the last dim of ``vec``; differentiable (a gather from the vector and a zero)."""
    m = vec.shape[-1]
    # m = n (n + 1) / 2 + diagonal * n, solved for n.
    n = int(round((-(1 + 2 * diagonal) + math.sqrt(1 + 8 * m + 4 * diagonal**2)) / 2))
    rows, cols = _tril_positions(n, diagonal)
    index = np.zeros((n, n), dtype=np.int64)
    index[rows, cols] = np.arange(1, m + 1)
    padded = ops.cat([zeros_like(vec[..., :1]), vec], -1)
    return padded[..., Tensor._make(index.reshape(-1))].reshape(tuple(vec.shape[:-1]) + (n, n))


def tril_matrix_to_vec(mat: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of ``mat`` (up to ``diagonal``), row by row, as a vector."""
    n = mat.shape[-1]
    rows, cols = _tril_positions(n, diagonal)
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat[..., Tensor._make((rows * n + cols).astype(np.int64))]


class CorrCholeskyTransform(Transform):
    """Vectors of n (n - 1) / 2 reals onto Cholesky factors of n x n correlation matrices:
    tanh gives partial correlations in (-1, 1), and each row is filled left to right by a
    stick-breaking of its unit norm."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(ops.tanh(x).clamp(min=-1 + eps, max=1 - eps), diagonal=-1)
        # Row i: y_ij = r_ij sqrt(prod_{k<j} (1 - r_ik^2)), the diagonal takes what is left.
        left = ops.cumprod(ops.sqrt(1 - r**2), -1)
        shifted = ops.cat([ones_like(left[..., :1]), left[..., :-1]], -1)
        eye = Tensor._make(np.eye(r.shape[-1], dtype=x.dtype))
        return (r + eye) * shifted

    def _inverse(self, y):
        remaining = 1 - ops.cumsum(y * y, -1)
        shifted = ops.cat([ones_like(remaining[..., :1]), remaining[..., :-1]], -1)
        partial = tril_matrix_to_vec(y, -1) / ops.sqrt(tril_matrix_to_vec(shifted, -1))
        return ops.atanh(partial)

    def log_abs_det_jacobian(self, x, y):
        remaining = 1 - ops.cumsum(y * y, -1)
        stick = 0.5 * ops.log(tril_matrix_to_vec(remaining, -2)).sum(-1)
        # log(1 - tanh(x)^2), stable where tanh saturates
        tanh = (2.0 * (math.log(2.0) - x - ops.softplus(-2.0 * x))).sum(-1)
        return stick + tanh

    def forward_shape(self, shape) -> tuple:
        m = shape[-1]
        n = int(round((1 + math.sqrt(1 + 8 * m)) / 2))
        if n * (n - 1) // 2 != m:
            raise ValueError(f"CorrCholeskyTransform: {m} is not n (n - 1) / 2 for any n")
        return tuple(shape[:-1]) + (n, n)

    def inverse_shape(self, shape) -> tuple:
        n = shape[-1]
        if shape[-2] != n:
            raise ValueError(f"CorrCholeskyTransform: expected square matrices, got {shape}")
        return tuple(shape[:-2]) + (n * (n - 1) // 2,)


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more dims in its events, so its
    log-Jacobian is summed over them."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:  # fmt: skip
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)  # fmt: skip

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        inner = self.base_transform.log_abs_det_jacobian(x, y)
        return sum_rightmost(inner, self.reinterpreted_batch_ndims)

    def forward_shape(self, shape) -> tuple:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape) -> tuple:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Events of shape ``in_shape`` reshaped to ``out_shape`` (the same number of elements);
    its log-Jacobian is 0."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if int(np.prod(self.in_shape)) != int(np.prod(self.out_shape)):
            raise ValueError(
                f"ReshapeTransform: shapes {self.in_shape} and {self.out_shape} hold different "
                "numbers of elements"
            )
        super().__init__(cache_size=cache_size)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x):
        batch = tuple(x.shape[: x.ndim - len(self.in_shape)])
        return x.reshape(batch + self.out_shape)

    def _inverse(self, y):
        batch = tuple(y.shape[: y.ndim - len(self.out_shape)])
        return y.reshape(batch + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return zeros_like(x).reshape(tuple(x.shape[: x.ndim - len(self.in_shape)]) + (-1,))[..., 0]

    def forward_shape(self, shape) -> tuple:
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape) -> tuple:
        return self._swap(shape, self.out_shape, self.in_shape)

    @staticmethod
    def _swap(shape, old: tuple, new: tuple) -> tuple:
        shape = tuple(shape)
        cut = len(shape) - len(old)
        if cut < 0 or shape[cut:] != old:
            raise ValueError(f"ReshapeTransform: shape {shape} does not end in {old}")
        return shape[:cut] + new


class CumulativeDistributionTransform(Transform):
    """x -> ``distribution``.cdf(x), onto the unit interval; its log-Jacobian is the
    log-density."""

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class CatTransform(Transform):
    """Each of ``tseq`` applied to its piece of x along ``dim`` (pieces of ``lengths``, 1 each
    by default), the results concatenated."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq]
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("CatTransform: give one length per transform")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    def _pieces(self, x):
        start = 0
        for t, length in zip(self.transforms, self.lengths):
            yield t, x.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        return ops.cat([t(piece) for t, piece in self._pieces(x)], self.dim)

    def _inverse(self, y):
        return ops.cat([t.inv(piece) for t, piece in self._pieces(y)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = []
        for (t, xs), (_, ys) in zip(self._pieces(x), self._pieces(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            term = sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim if self.dim < 0 else self.dim - x.ndim
        if dim + self.event_dim >= 0:  # the cat dim is inside the event: add the pieces
            total = terms[0]
            for term in terms[1:]:
                total = total + term
            return total
        return ops.cat(terms, dim + self.event_dim)

    @constraints.dependent_property
    def domain(self):
        return constraints.real if self.event_dim == 0 else constraints.independent(
            constraints.real, self.event_dim)  # fmt: skip

    @constraints.dependent_property
    def codomain(self):
        return self.domain


class StackTransform(Transform):
    """The i-th of ``tseq`` applied to x.select(dim, i), the results stacked along ``dim``."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq]
        self.dim = dim

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    def _slices(self, x):
        return [x.select(self.dim, i) for i in range(x.shape[self.dim])]

    def _call(self, x):
        return ops.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return ops.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [
            t.log_abs_det_jacobian(xs, ys)
            for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y))
        ]
        return ops.stack(terms, self.dim)

    @constraints.dependent_property
    def domain(self):
        return constraints.real

    @constraints.dependent_property
    def codomain(self):
        return constraints.real


__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
    "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform",
    "tril_matrix_to_vec", "vec_to_tril_matrix",
]  # fmt: skip
