"""Neural networks on Tensors: `Module` and `Parameter` (`nn.module`), the containers
(`nn.container`), initialisers (`nn.init`) and gradient clipping (`nn.utils`). Layers and losses
are in `nn.layers` (with `nn.activation`, `nn.conv`, `nn.normalization`, `nn.attention`) and
their functional forms in `nn.functional`."""

from . import functional, init, utils
from .activation import (
    ELU,
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, Sequential
from .conv import AdaptiveAvgPool2d, AvgPool2d, Conv1d, Conv2d, MaxPool2d
from .layers import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Flatten,
    HuberLoss,
    Identity,
    L1Loss,
    Linear,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import IncompatibleKeys, Module, Parameter, StateDictError
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm

__all__ = [
    "Flatten", "Identity", "IncompatibleKeys", "Module", "ModuleDict", "ModuleList", "Parameter",
    "Sequential", "StateDictError", "init", "utils",
    "AdaptiveAvgPool2d", "AvgPool2d", "Conv1d", "Conv2d", "MaxPool2d",
    "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "CrossEntropyLoss", "Dropout",
    "ELU", "Embedding", "GELU", "HuberLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax", "MSELoss", "MultiheadAttention", "NLLLoss", "ReLU", "SiLU", "Sigmoid",
    "SmoothL1Loss", "Softmax", "Softplus", "Tanh", "functional",
]  # fmt: skip
