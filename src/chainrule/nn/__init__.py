"""Neural networks on Tensors: `Module` and its containers, initialisers (`nn.init`) and
gradient clipping (`nn.utils`). Layers and losses are in `nn.layers` and `nn.functional`."""

from . import init, utils
from .module import (
    Flatten,
    Identity,
    IncompatibleKeys,
    Module,
    ModuleDict,
    ModuleList,
    Parameter,
    Sequential,
    StateDictError,
)

__all__ = [
    "Flatten", "Identity", "IncompatibleKeys", "Module", "ModuleDict", "ModuleList", "Parameter",
    "Sequential", "StateDictError", "init", "utils",
]  # fmt: skip
