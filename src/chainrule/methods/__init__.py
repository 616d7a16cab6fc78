"""Tensor methods by op family, one mixin class per module, as `chainrule.ops` holds the rows
by family: `chainrule.Tensor` inherits them all. Each method is a one-line call into
`chainrule.ops` with PyTorch's argument names; the core methods (operators, dtype
conversion, backward) stay in `chainrule._tensor`."""
