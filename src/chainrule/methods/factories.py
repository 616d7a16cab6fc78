"""Methods that make or fill tensors: new_zeros..., random fills (normal_...), dtype and device."""

from __future__ import annotations

#: `chainrule.ops`, set by `chainrule._tensor` once the ops exist: the rows make Tensors, so
#: they cannot be imported while Tensor's bases are (the one upward seam, written once there).
ops = None


class FactoryMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()
