"""chainrule: automatic differentiation from scratch on NumPy.

`Value` and `Dual` differentiate Python floats in reverse and forward mode; `Tensor` does
reverse mode on NumPy arrays; `gradcheck` compares either with finite differences.
"""

from . import autograd, data, distributed, func, nn, ops, optim
from ._tensor import Tensor
from .autograd import detect_anomaly, enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .checkpoint import checkpoint, checkpoint_sequential
from .counting import count_ops
from .creation import (
    arange,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from .dtypes import bool_, float16, float32, float64, int8, int16, int32, int64, uint8
from .dual import Dual, derivative, forward_gradient
from .dual import Dual as DualNumber  # the teaching material's name for Dual
from .errors import ChainruleError, DomainError, DTypeError, GraphError, ShapeError
from .function import Function
from .gradcheck import Report, gradcheck, gradgradcheck, numerical_gradient_check
from .io import SerializationError, load, save
from .op import LINEAR, Op, elementwise
from .ops import *  # noqa: F403  (every public tensor function: chainrule.exp, ...)
from .random import default_generator, manual_seed, rand, randint, randn
from .scalar_nn import MLP, Layer, Neuron
from .value import Scalar, Value
from .viz import draw_graph, trace

__version__ = "0.1.0"

__all__ = [
    "LINEAR", "MLP", "ChainruleError", "DTypeError", "DomainError", "Dual", "Function",
    "GraphError", "Layer", "Neuron", "Op", "Report", "ShapeError", "Tensor", "Value", "arange",
    "autograd", "bool_", "checkpoint", "checkpoint_sequential", "count_ops", "func",
    "gradgradcheck", "default_generator", "derivative", "detect_anomaly", "elementwise",
    "enable_grad", "eye", "float16", "float32", "float64", "forward_gradient", "from_numpy",
    "full", "full_like", "gradcheck", "int16", "int32", "int64", "int8", "is_grad_enabled",
    "linspace", "manual_seed", "no_grad", "ones", "ones_like", "ops", "rand", "randint", "randn",
    "set_grad_enabled", "tensor", "uint8", "zeros", "zeros_like", "draw_graph", "trace", "data",
    "nn", "optim", "save", "load", "SerializationError", "distributed", "Scalar", "DualNumber",
    "numerical_gradient_check",
]  # fmt: skip
__all__ += ops.__all__
