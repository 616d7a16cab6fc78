"""chainrule: automatic differentiation from scratch on NumPy.

`Value` and `Dual` differentiate Python floats in reverse and forward mode (`chainrule.scalar`);
`Tensor` does reverse and forward mode on NumPy arrays; `gradcheck` compares either with finite
differences. `chainrule.MLP`, `Layer` and `Neuron` are the scalar networks of
`chainrule.scalar.nn` (micrograd's names); the tensor layers are in `chainrule.nn`.
"""

import sys

from . import autograd, data, distributed, func, linalg, nn, ops, optim, scalar
from ._tensor import Tensor
from .autograd import (
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .checkpoint import checkpoint, checkpoint_sequential
from .counting import count_ops
from .creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    is_floating_point,
    is_tensor,
    linspace,
    logspace,
    numel,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from .dtypes import (
    bfloat16,
    bool_,
    device,
    double,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from .dtypes import bool_ as bool  # PyTorch's aliases; only here, so the package's modules
from .dtypes import float32 as float  # keep the builtins (this module uses none of them
from .dtypes import int32 as int  # after this point)
from .errors import (
    ChainruleError,
    DomainError,
    DTypeError,
    GraphError,
    OutOfRangeError,
    ShapeError,
)
from .function import Function
from .gradcheck import Report, gradcheck, gradgradcheck, numerical_gradient_check
from .io import SerializationError, load, save
from .op import LINEAR, Op, elementwise
from .ops.public import *  # noqa: F403  (every public tensor function: chainrule.exp, ...)
from .random import (
    Generator,
    bernoulli,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)
from .scalar import MLP, Dual, Layer, Neuron, Scalar, Value, derivative, forward_gradient
from .scalar import Dual as DualNumber  # the teaching material's name for Dual
from .viz import draw_graph, trace

__version__ = "0.1.0"

__all__ = [
    "LINEAR", "MLP", "ChainruleError", "DTypeError", "DomainError", "Dual", "Function",
    "GraphError", "Layer", "Neuron", "Op", "OutOfRangeError", "Report", "ShapeError", "Tensor",
    "Value", "arange",
    "autograd", "bool_", "checkpoint", "checkpoint_sequential", "count_ops", "func",
    "gradgradcheck", "default_generator", "derivative", "detect_anomaly", "elementwise",
    "enable_grad", "eye", "float16", "float32", "float64", "forward_gradient", "from_numpy",
    "full", "full_like", "gradcheck", "int16", "int32", "int64", "int8", "is_grad_enabled",
    "linspace", "manual_seed", "no_grad", "ones", "ones_like", "ops", "rand", "randint", "randn",
    "set_grad_enabled", "tensor", "uint8", "zeros", "zeros_like", "draw_graph", "trace", "data",
    "nn", "optim", "save", "load", "SerializationError", "distributed", "Scalar", "DualNumber",
    "numerical_gradient_check", "scalar", "linalg",
]  # fmt: skip
__all__ += ops.__all__
__all__ += [
    "Generator", "as_tensor", "bernoulli", "bfloat16", "bool", "device", "double", "empty",
    "empty_like", "float", "get_default_dtype", "get_rng_state", "half", "inference_mode",
    "initial_seed", "int", "is_floating_point", "is_inference_mode_enabled", "is_tensor",
    "logspace", "long", "multinomial", "normal", "numel", "poisson", "rand_like", "randint_like",
    "randn_like", "randperm", "seed", "set_default_dtype", "set_rng_state", "short",
]  # fmt: skip

# The scalar engine's modules were top-level before `chainrule.scalar`; programs that import
# them by their old paths (``from chainrule.value import topological_order``) keep working.
for _old, _new in (("value", "value"), ("dual", "dual"), ("rules", "rules"), ("scalar_nn", "nn")):
    sys.modules[f"{__name__}.{_old}"] = getattr(scalar, _new)
del _old, _new
