"""The scalar engine: `Value` (reverse mode) and `Dual` (forward mode) on Python floats, the
formula table both read (`rules`), and the networks built from Values (`nn`: Neuron, Layer,
MLP). The tensor engine is elsewhere (`chainrule.Tensor`); nothing here imports it.
"""

from . import dual, nn, rules, value
from .dual import Dual, derivative, forward_gradient
from .nn import MLP, Layer, LinearLayer, Neuron
from .rules import RULES, Rule
from .value import Scalar, Value, topological_order

__all__ = [
    "MLP", "RULES", "Dual", "Layer", "LinearLayer", "Neuron", "Rule", "Scalar", "Value",
    "derivative", "dual", "forward_gradient", "nn", "rules", "topological_order", "value",
]  # fmt: skip
