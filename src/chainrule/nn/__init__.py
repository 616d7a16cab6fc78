"""Neural networks on Tensors, laid out as ``torch.nn`` (this module only re-exports): the
Module classes by family in `nn.modules`, their functional forms by the same families in
`nn.functional`, `Parameter` (`nn.parameter`), initialisers (`nn.init`) and `nn.utils`."""

from . import functional, init, modules, utils
from .functional.loss_linear_cross_entropy import LinearCrossEntropyOptions
from .modules import *  # noqa: F403  (every Module class)
from .parameter import Parameter

__all__ = [
    *modules.__all__, "LinearCrossEntropyOptions", "Parameter", "functional", "init", "utils",
]  # fmt: skip
