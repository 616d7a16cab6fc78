"""Linear's initialisation against PyTorch's formulas. Linear, Bilinear and their functions
are rows of the tables in test_nn_layers.py, test_nn_functional.py and test_nn_surface.py."""

import math

import numpy as np
from nn_checks import uniform_bound_check as _uniform_bound_check

import chainrule
from chainrule import nn


def test_linear_init_bounds(torch):
    chainrule.manual_seed(0)
    layer = nn.Linear(300, 200)
    gain = torch.nn.init.calculate_gain("leaky_relu", math.sqrt(5))
    fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(200, 300))
    _uniform_bound_check(layer.weight.detach().numpy(), gain * math.sqrt(3 / fan_in))
    _uniform_bound_check(layer.bias.detach().numpy(), 1 / math.sqrt(fan_in))
    assert layer.weight.dtype == np.float32
