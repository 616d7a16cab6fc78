"""Tensor methods by op family, one mixin class per module, as `chainrule.ops` holds the rows
by family: `chainrule.Tensor` inherits them all. Each method is a one-line call into
`chainrule.ops` with PyTorch's argument names; the core methods (operators, dtype
conversion, backward) stay in `chainrule._tensor`.

The mixins reach the rows as ``methods.ops`` and the random fills as ``methods.random``: both
modules make Tensors, so they cannot be imported while Tensor's bases are, and
`chainrule._tensor` sets the two once they exist (the one upward seam, written once there).
"""

#: `chainrule.ops`, set by `chainrule._tensor` once the rows exist.
ops = None
#: `chainrule.random`, set by `chainrule._tensor` once the random fills exist.
random = None
