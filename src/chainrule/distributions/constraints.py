"""Constraints: the sets a distribution's parameters and values live in (``real``,
``positive``, ``simplex``, ``interval(a, b)``...), each able to ``check`` a tensor. Names as
in ``torch.distributions.constraints``; checks run on the arrays and are never differentiated.

>>> positive.check(Tensor([1.0, -1.0]))
tensor([ True, False])
>>> interval(0.0, 1.0)
Interval(lower_bound=0.0, upper_bound=1.0)
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor


def _array(x) -> np.ndarray:
    return x._array if isinstance(x, Tensor) else np.asarray(x)


def _bool_tensor(array) -> Tensor:
    return Tensor._make(np.asarray(array, dtype=bool))


class Constraint:
    """A region of values: ``check(value)`` gives a bool tensor, one entry per event
    (``event_dim`` rightmost dims form an event); ``is_discrete`` for sets of integers."""

    is_discrete = False
    event_dim = 0

    def check(self, value) -> Tensor:
        """Whether each event of ``value`` lies in the set."""
        return _bool_tensor(self._holds(_array(value)))

    def _holds(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} does not define check()")

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (Uniform's ``low``);
    never checked."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented) -> _Dependent:
        """A dependent constraint with these facts known."""
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value) -> Tensor:
        raise ValueError("cannot check a dependent constraint: it depends on other parameters")


def is_dependent(constraint) -> bool:
    """Whether ``constraint`` is a dependent one (not checked when a distribution is made)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property on a distribution whose value is a constraint depending on its parameters
    (Uniform's ``support``); on the class it reads as a dependent constraint."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base`` with ``reinterpreted_batch_ndims`` more dims in its events: an event holds
    when every element of it does."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def _holds(self, x):
        result = self.base_constraint._holds(x)
        n = self.reinterpreted_batch_ndims
        if n == 0:
            return result
        if np.ndim(result) < n:
            raise ValueError(f"independent: expected {n} more dims than the event, got {x.shape}")
        return np.all(result, axis=tuple(range(-n, 0)))

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def _holds(self, x):
        return (x == 0) | (x == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def _holds(self, x):
        return np.all((x == 0) | (x == 1), -1) & (np.sum(x, -1) == 1)


class _IntegerInterval(Constraint):
    """Integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def __init__(self, lower_bound, upper_bound) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _holds(self, x):
        lower, upper = _array(self.lower_bound), _array(self.upper_bound)
        return (x % 1 == 0) & (lower <= x) & (x <= upper)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    """Integers at least lower_bound."""

    is_discrete = True

    def __init__(self, lower_bound) -> None:
        self.lower_bound = lower_bound

    def _holds(self, x):
        return (x % 1 == 0) & (x >= _array(self.lower_bound))

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def _holds(self, x):
        return x == x  # everything but nan


class _GreaterThan(Constraint):
    def __init__(self, lower_bound) -> None:
        self.lower_bound = lower_bound

    def _holds(self, x):
        return _array(self.lower_bound) < x

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def _holds(self, x):
        return _array(self.lower_bound) <= x

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound) -> None:
        self.upper_bound = upper_bound

    def _holds(self, x):
        return x < _array(self.upper_bound)

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """Reals in [lower_bound, upper_bound]."""

    def __init__(self, lower_bound, upper_bound) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _holds(self, x):
        return (_array(self.lower_bound) <= x) & (x <= _array(self.upper_bound))

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    """Reals in [lower_bound, upper_bound)."""

    def _holds(self, x):
        return (_array(self.lower_bound) <= x) & (x < _array(self.upper_bound))

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    """Nonnegative vectors (the last dim) summing to 1, within 1e-6."""

    event_dim = 1

    def _holds(self, x):
        return np.all(x >= 0, -1) & (np.abs(np.sum(x, -1) - 1) < 1e-6)


class _Square(Constraint):
    event_dim = 2

    def _holds(self, x):
        return np.full(x.shape[:-2], x.shape[-1] == x.shape[-2], dtype=bool)


class _Symmetric(_Square):
    def _holds(self, x):
        if x.shape[-1] != x.shape[-2]:
            return np.zeros(x.shape[:-2], bool)
        return np.all(np.isclose(x, np.swapaxes(x, -1, -2), atol=1e-6), (-2, -1))


class _LowerTriangular(Constraint):
    event_dim = 2

    def _holds(self, x):
        return np.all(np.tril(x) == x, (-2, -1))


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""

    event_dim = 2

    def _holds(self, x):
        diagonal = np.diagonal(x, axis1=-2, axis2=-1)
        return np.all(np.tril(x) == x, (-2, -1)) & np.all(diagonal > 0, -1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: a positive diagonal and rows of unit
    norm (within 10 eps per dim)."""

    event_dim = 2

    def _holds(self, x):
        tolerance = np.finfo(x.dtype).eps * x.shape[-1] * 10 if x.dtype.kind == "f" else 0
        unit_rows = np.all(np.abs(np.linalg.norm(x, axis=-1) - 1) <= tolerance, -1)
        return _LowerCholesky()._holds(x) & unit_rows


class _PositiveSemidefinite(_Symmetric):
    def _holds(self, x):
        symmetric = super()._holds(x)
        if not symmetric.any():
            return symmetric
        return symmetric & np.all(np.linalg.eigvalsh(x) >= 0, -1)


class _PositiveDefinite(_Symmetric):
    def _holds(self, x):
        symmetric = super()._holds(x)
        if not symmetric.any():
            return symmetric
        return symmetric & np.all(np.linalg.eigvalsh(x) > 0, -1)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
square = _Square()
symmetric = _Symmetric()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()

__all__ = [
    "Constraint", "boolean", "corr_cholesky", "dependent", "dependent_property", "greater_than",
    "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval",
    "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "nonnegative",
    "nonnegative_integer", "one_hot", "positive", "positive_definite", "positive_integer",
    "positive_semidefinite", "real", "real_vector", "simplex", "square", "symmetric",
    "unit_interval",
]  # fmt: skip
