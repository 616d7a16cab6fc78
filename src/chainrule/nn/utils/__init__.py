"""PyTorch's ``torch.nn.utils``, re-exported from modules with its file names: gradient
clipping (`clip_grad`), parameter vectors (`convert_parameters`), the weight and spectral
normalization hooks (`weight_norm`, `spectral_norm`), BatchNorm folding (`fusion`), the
memory-format no-ops (`memory_format`), `skip_init` (`init`) and padding and packing
sequences (`rnn`), and parametrizations (`parametrize`, `parametrizations`): those three are
submodules, as in PyTorch."""

from ..modules.module import zero_grads
from . import parametrizations as parametrizations
from . import parametrize as parametrize
from . import rnn as rnn
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .init import skip_init
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
    "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
    "get_total_norm", "parameters_to_vector", "remove_spectral_norm", "remove_weight_norm", "rnn",
    "parametrize", "parametrizations",
    "skip_init", "spectral_norm", "vector_to_parameters", "weight_norm", "zero_grads",
]  # fmt: skip
