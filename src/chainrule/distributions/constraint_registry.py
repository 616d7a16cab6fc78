"""`biject_to` and `transform_to`: the transform from unconstrained reals onto each
constraint's set, for optimising a constrained parameter through an unconstrained one.
``biject_to(c)`` is a bijection (for reparameterising densities); ``transform_to(c)`` need only
reach the set (for optimisation), as in ``torch.distributions.constraint_registry``.

>>> import chainrule as cr
>>> transform_to(constraints.positive)(cr.tensor([0.0]))
tensor([1.])
"""

from __future__ import annotations

import numbers

from .._tensor import Tensor
from . import constraints, transforms


class ConstraintRegistry:
    """A table from constraint types to functions that build a transform for a constraint."""

    def __init__(self, name: str = "ConstraintRegistry") -> None:
        self._name = name
        self._registry: dict = {}

    def register(self, constraint, factory=None):
        """Register ``factory(constraint) -> Transform`` for ``constraint``'s type (a
        Constraint class or instance); usable as a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"register: expected a Constraint class or object, got {constraint!r}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint) -> transforms.Transform:
        """The transform onto ``constraint``'s set."""
        factory = self._registry.get(type(constraint))
        if factory is None:
            raise NotImplementedError(
                f"{self._name}: no transform for {constraint!r}; register a factory for its "
                f"type {type(constraint).__name__} with {self._name}.register"
            )
        return factory(constraint)


biject_to = ConstraintRegistry("biject_to")
"""``biject_to(constraint)``: a bijection from unconstrained reals onto the constraint's set."""
transform_to = ConstraintRegistry("transform_to")
"""``transform_to(constraint)``: a transform from unconstrained reals onto the constraint's set
(not necessarily injective: softmax onto the simplex)."""


def _is_number(x, value) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, Tensor) and x == value


def _to_real(constraint):
    return transforms.identity_transform


def _to_independent(registry):
    def factory(constraint):
        inner = registry(constraint.base_constraint)
        return transforms.IndependentTransform(inner, constraint.reinterpreted_batch_ndims)

    return factory


def _to_greater_than(constraint):
    if _is_number(constraint.lower_bound, 0):
        return transforms.ExpTransform()
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)]
    )


def _to_less_than(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)]
    )


def _to_interval(constraint):
    low, high = constraint.lower_bound, constraint.upper_bound
    if _is_number(low, 0) and _is_number(high, 1):
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(), transforms.AffineTransform(low, high - low)]
    )


for _registry in (biject_to, transform_to):
    _registry.register(constraints.real, _to_real)
    _registry.register(constraints.independent, _to_independent(_registry))
    _registry.register(constraints.greater_than, _to_greater_than)
    _registry.register(constraints.greater_than_eq, _to_greater_than)
    _registry.register(constraints.less_than, _to_less_than)
    _registry.register(constraints.interval, _to_interval)
    _registry.register(constraints.half_open_interval, _to_interval)
# Onto matrices only transform_to: the maps from all square matrices are not injective.
transform_to.register(constraints.lower_cholesky, lambda c: transforms.LowerCholeskyTransform())
transform_to.register(
    constraints.positive_definite, lambda c: transforms.PositiveDefiniteTransform()
)
biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]
