"""The chain W2 and W6 differentiate: h * a, h + b, tanh(h), over and over.

`chain` runs on any engine (Values, Tensors, arrays inside autograd); `chain_floor` is the
same chain differentiated by hand, on floats (math.tanh) or arrays (np.tanh).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def chain(x, a, b, n_ops: int, tanh: Callable):
    """``n_ops`` ops cycling through h * a, h + b, tanh(h), starting from h = x."""
    h = x
    for i in range(n_ops):
        kind = i % 3
        h = h * a if kind == 0 else (h + b if kind == 1 else tanh(h))
    return h


def chain_floor(x, a, b, n_ops: int, tanh: Callable):
    """(prepare, backward) by hand: prepare runs the chain keeping each op's input; backward
    returns the output and d(sum of output)/d(x, a, b), stacked."""

    def prepare():
        inputs, h = [], x
        for i in range(n_ops):
            inputs.append(h)
            kind = i % 3
            h = h * a if kind == 0 else (h + b if kind == 1 else tanh(h))
        return inputs, h

    def backward(forward):
        inputs, out = forward
        g, ga, gb = 1.0, 0.0, 0.0
        for i in range(n_ops - 1, -1, -1):
            kind = i % 3
            if kind == 0:  # h * a
                ga = ga + g * inputs[i]
                g = g * a
            elif kind == 1:  # h + b
                gb = gb + g
            else:  # tanh(h): the derivative from the output, 1 - tanh²
                t = inputs[i + 1] if i + 1 < n_ops else out
                g = g * (1 - t * t)
        return np.sum(out), np.array([g, ga, gb])

    return prepare, backward
