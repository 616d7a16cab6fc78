"""Neural networks on Tensors, laid out as ``torch.nn`` (this module only re-exports): the
Module classes by family in `nn.modules`, their functional forms by the same families in
`nn.functional`, `Parameter` (`nn.parameter`), initialisers (`nn.init`), `nn.utils`, the
gradients of convolutions (`nn.grad`) and the attention-kernel choice (`nn.attention`)."""

from . import attention, functional, grad, init, modules, utils
from .functional.loss_linear_cross_entropy import LinearCrossEntropyOptions
from .modules import *  # noqa: F403  (every Module class)
from .parameter import Parameter

__all__ = [
    *modules.__all__, "LinearCrossEntropyOptions", "Parameter", "attention", "functional", "grad",
    "init", "utils",
]  # fmt: skip
