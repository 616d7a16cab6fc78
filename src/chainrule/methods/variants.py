"""In-place variants: every ``name_`` method that writes the result of ``name`` into self
(PyTorch's in-place forms), from one table."""

from __future__ import annotations

#: `chainrule.ops`, set by `chainrule._tensor` once the ops exist (the one upward seam).
ops = None


class InPlaceMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()
