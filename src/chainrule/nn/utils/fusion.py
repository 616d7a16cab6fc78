"""Folding a BatchNorm in evaluation mode into the convolution or linear layer before it
(`fuse_conv_bn_eval`, `fuse_linear_bn_eval` and their ``_weights`` forms), as
``torch.nn.utils.fusion``."""

from __future__ import annotations

import copy

from ..._tensor import Tensor
from ...errors import DomainError, ShapeError
from ..modules.module import Module, ModuleT
from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
]  # fmt: skip


def _check_eval(op: str, layer: Module, bn: Module) -> None:
    if layer.training or bn.training:
        raise DomainError(
            f"{op}: fusing needs both modules in evaluation mode (call .eval() first); the "
            "batch statistics of training mode cannot be folded into weights"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise DomainError(f"{op}: the BatchNorm keeps no running statistics to fold in")


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """The weight and bias of one convolution doing what the convolution with
    (``conv_w``, ``conv_b``) followed by an evaluation-mode BatchNorm does: each output channel
    scaled by ``bn_w / sqrt(bn_rv + bn_eps)`` and shifted. ``transpose`` for a transposed
    convolution (output channels on dimension 1).

    >>> import chainrule
    >>> w, b = fuse_conv_bn_weights(chainrule.ones(2, 1, 1), None, chainrule.zeros(2),
    ...     chainrule.ones(2), 0.0, chainrule.tensor([2.0, 3.0]), chainrule.ones(2))
    >>> w.flatten().tolist(), b.tolist()
    ([2.0, 3.0], [1.0, 1.0])
    """
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    conv_b = Tensor._make(bn_rm._array * 0) if conv_b is None else conv_b
    bn_w = Tensor._make(bn_rm._array * 0 + 1) if bn_w is None else bn_w
    bn_b = Tensor._make(bn_rm._array * 0) if bn_b is None else bn_b
    rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(weight_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(bias_dtype)
    return Parameter(fused_w.detach(), conv_w.requires_grad), Parameter(
        fused_b.detach(), conv_b.requires_grad
    )


def fuse_conv_bn_eval(conv: ModuleT, bn: Module, transpose: bool = False) -> ModuleT:
    """A new convolution (a deep copy of ``conv``) that computes ``bn(conv(x))``, both in
    evaluation mode, in one layer.

    >>> import chainrule
    >>> conv, bn = chainrule.nn.Conv2d(1, 2, 3).eval(), chainrule.nn.BatchNorm2d(2).eval()
    >>> x = chainrule.randn(1, 1, 5, 5)
    >>> bool(((fuse_conv_bn_eval(conv, bn)(x) - bn(conv(x))).abs().max() < 1e-5))
    True
    """
    _check_eval("fuse_conv_bn_eval", conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose,
    )  # fmt: skip
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple[Parameter, Parameter]:
    """The weight and bias of one linear layer doing what (``linear_w``, ``linear_b``)
    followed by an evaluation-mode BatchNorm does.

    >>> import chainrule
    >>> w, b = fuse_linear_bn_weights(chainrule.ones(2, 3), None, chainrule.zeros(2),
    ...     chainrule.ones(2), 0.0, chainrule.tensor([2.0, 3.0]), chainrule.zeros(2))
    >>> w
    Parameter containing:
    tensor([[2., 2., 2.],
            [3., 3., 3.]])
    """
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    linear_b = Tensor._make(bn_rm._array * 0) if linear_b is None else linear_b
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * scale.unsqueeze(-1).to(weight_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(bias_dtype)
    return Parameter(fused_w.detach(), linear_w.requires_grad), Parameter(
        fused_b.detach(), linear_b.requires_grad
    )


def fuse_linear_bn_eval(linear: ModuleT, bn: Module) -> ModuleT:
    """A new linear layer (a deep copy of ``linear``) that computes ``bn(linear(x))``, both in
    evaluation mode; the BatchNorm has ``out_features`` features, or 1.

    >>> import chainrule
    >>> linear, bn = chainrule.nn.Linear(3, 2).eval(), chainrule.nn.BatchNorm1d(2).eval()
    >>> x = chainrule.randn(4, 3)
    >>> bool(((fuse_linear_bn_eval(linear, bn)(x) - bn(linear(x))).abs().max() < 1e-5))
    True
    """
    _check_eval("fuse_linear_bn_eval", linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise ShapeError(
            f"fuse_linear_bn_eval: the linear layer has {linear.out_features} outputs but the "
            f"BatchNorm {bn.num_features} features; they must be equal (or the BatchNorm 1)"
        )
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused
