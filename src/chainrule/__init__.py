"""chainrule: automatic differentiation from scratch on NumPy.

`Value` and `Dual` differentiate Python floats in reverse and forward mode; `gradcheck`
compares any of them with finite differences.
"""

from .dual import Dual, derivative, forward_gradient
from .errors import ChainruleError, DomainError, DTypeError, GraphError, ShapeError
from .gradcheck import Report, gradcheck
from .scalar_nn import MLP, Layer, Neuron
from .value import Value

__version__ = "0.1.0"

__all__ = [
    "MLP",
    "ChainruleError",
    "DTypeError",
    "DomainError",
    "Dual",
    "GraphError",
    "Layer",
    "Neuron",
    "Report",
    "ShapeError",
    "Value",
    "derivative",
    "forward_gradient",
    "gradcheck",
]
