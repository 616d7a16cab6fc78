"""chainrule: automatic differentiation from scratch on NumPy.

`Value` and `Dual` differentiate Python floats in reverse and forward mode (`chainrule.scalar`);
`Tensor` does reverse and forward mode on NumPy arrays; `gradcheck` compares either with finite
differences. `chainrule.MLP`, `Layer` and `Neuron` are the scalar networks of
`chainrule.scalar.nn` (micrograd's names); the tensor layers are in `chainrule.nn`.
"""

from . import (
    allocator,
    autograd,
    data,
    distributed,
    distributions,
    func,
    linalg,
    nn,
    ops,
    optim,
    profiler,
    scalar,
)
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
from .compiler import compile, jit, make_program
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
    Size,
    bfloat16,
    bool_,
    can_cast,
    contiguous_format,
    device,
    double,
    dtype,
    e,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    inf,
    int8,
    int16,
    int32,
    int64,
    legacy_contiguous_format,
    long,
    memory_format,
    nan,
    pi,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from .dtypes import bool_ as bool  # PyTorch's aliases; only here, so the package's modules
from .dtypes import float32 as float  # keep the builtins (this module uses none of them
from .dtypes import int32 as int  # after this point)
from .errors import (
    ChainruleError,
    CompileError,
    DomainError,
    DTypeError,
    DTypeNotImplementedError,
    EmptyReductionError,
    GraphError,
    OutOfRangeError,
    ShapeError,
)
from .function import Function
from .gradcheck import Report, gradcheck, gradgradcheck, numerical_gradient_check
from .io import SerializationError, load, save
from .nn import ModuleDict, ParameterDict  # torch.ModuleDict is torch.nn's
from .nn.functional.toplevel import *  # noqa: F403  (torch.celu, torch.batch_norm, ...)
from .op import LINEAR, Op, elementwise
from .ops import *  # noqa: F403  (every public tensor function: chainrule.exp, ...)
from .ops.public import *  # noqa: F403  (the same, taking axis= and refusing out=, at run time)
from .profiler import profile
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
from .settings import (
    are_deterministic_algorithms_enabled,
    get_float32_matmul_precision,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    prepare_multiprocessing_environment,
    set_float32_matmul_precision,
    set_num_threads,
    set_printoptions,
    thread_safe_generator,
    use_deterministic_algorithms,
)
from .tensor_types import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
)
from .viz import draw_graph, trace_table

__version__ = "0.1.0"
#: x[:, newaxis] adds a dimension, as in NumPy and PyTorch.
newaxis = None

__all__ = [
    "LINEAR", "MLP", "ChainruleError", "CompileError", "DTypeError", "DomainError", "Dual",
    "DTypeNotImplementedError", "EmptyReductionError",
    "Function", "GraphError", "Layer", "Neuron", "Op", "OutOfRangeError", "Report", "ShapeError",
    "Tensor", "Value", "arange",
    "autograd", "bool_", "checkpoint", "checkpoint_sequential", "count_ops", "profile", "func",
    "gradgradcheck", "default_generator", "derivative", "detect_anomaly", "elementwise",
    "enable_grad", "eye", "float16", "float32", "float64", "forward_gradient", "from_numpy",
    "full", "full_like", "gradcheck", "int16", "int32", "int64", "int8", "is_grad_enabled",
    "linspace", "manual_seed", "no_grad", "ones", "ones_like", "ops", "rand", "randint", "randn",
    "set_grad_enabled", "tensor", "uint8", "zeros", "zeros_like", "draw_graph", "trace_table",
    "data", "nn", "optim", "save", "load", "SerializationError", "distributed", "Scalar",
    "DualNumber",
    "numerical_gradient_check", "scalar", "linalg", "profiler", "allocator", "distributions",
]  # fmt: skip
__all__ += ops.__all__
__all__ += nn.functional.toplevel.__all__
__all__ += [
    "Generator", "as_tensor", "bernoulli", "bfloat16", "bool", "device", "double", "empty",
    "empty_like", "float", "get_default_dtype", "get_rng_state", "half", "inference_mode",
    "initial_seed", "int", "is_floating_point", "is_inference_mode_enabled", "is_tensor",
    "logspace", "long", "multinomial", "normal", "numel", "poisson", "rand_like", "randint_like",
    "randn_like", "randperm", "seed", "set_default_dtype", "set_rng_state", "short",
]  # fmt: skip
__all__ += [  # dtype facts, settings and constants PyTorch has at top level
    "ModuleDict", "ParameterDict", "Size", "are_deterministic_algorithms_enabled", "can_cast",
    "compile", "contiguous_format", "dtype", "e", "finfo", "get_float32_matmul_precision",
    "get_num_threads", "iinfo", "inf", "is_deterministic_algorithms_warn_only_enabled", "jit",
    "make_program",
    "legacy_contiguous_format", "memory_format", "nan", "newaxis", "pi",
    "prepare_multiprocessing_environment", "promote_types", "result_type",
    "set_float32_matmul_precision", "set_num_threads", "set_printoptions",
    "thread_safe_generator", "use_deterministic_algorithms",
]  # fmt: skip
__all__ += [  # PyTorch's legacy typed-tensor classes
    "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor",
    "IntTensor", "LongTensor", "ShortTensor", "set_default_tensor_type",
]  # fmt: skip
