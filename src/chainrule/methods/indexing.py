"""Shape and indexing methods: contiguous, tril/triu, diagonal, masked and scatter writes..."""

from __future__ import annotations

#: `chainrule.ops`, set by `chainrule._tensor` once the ops exist: the rows make Tensors, so
#: they cannot be imported while Tensor's bases are (the one upward seam, written once there).
ops = None


class IndexingMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()
