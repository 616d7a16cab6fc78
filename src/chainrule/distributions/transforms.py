"""Transforms: invertible maps y = f(x) with log|det df/dx|, from which a
`TransformedDistribution` gets its density. ``Transform`` (the base, with ``inv`` and a
one-entry cache), ``ComposeTransform`` and the common maps: exp, power, sigmoid, tanh, abs,
affine, softplus, softmax."""

from __future__ import annotations

import math
import weakref

from .. import ops
from .._tensor import Tensor
from ..creation import full_like, zeros_like
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


__all__ = [
    "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "TanhTransform", "Transform",
    "identity_transform",
]  # fmt: skip
