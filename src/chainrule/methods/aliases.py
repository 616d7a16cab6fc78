"""PyTorch's other names for existing methods (absolute, multiply, greater...), and the
Tensor attributes a PyTorch program reads (nelement, ndimension, retains_grad...)."""

from __future__ import annotations

#: `chainrule.ops`, set by `chainrule._tensor` once the ops exist (the one upward seam).
ops = None


class AliasMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()
