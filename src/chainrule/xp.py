"""NumPy-named functions that take arrays or Tensors, for writing backward rules once.

Given arrays, each calls NumPy (fast, no graph). Given a Tensor anywhere in its arguments
(a backward with ``create_graph=True``), it calls the tensor op, so the rule's own work is
recorded and higher derivatives follow. Arguments use the tensor ops' order: ``sum(x, dim,
keepdim)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from . import creation, kernels
from ._tensor import Tensor
from .special import erf as _erf


def run(row, *args, **params):
    """Run an op row inside a rule: its forward on arrays, the row itself on Tensors (a
    backward with create_graph=True records it), as the functions below do for public ops."""
    if any(isinstance(a, Tensor) for a in args):
        return row(*args, **params)
    return row.forward(*args, **params)


def _either(name: str, array_fn: Callable) -> Callable:
    def fn(*args, **kwargs):
        for arg in args:
            if isinstance(arg, Tensor):
                return getattr(ops, name)(*args, **kwargs)
        return array_fn(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = f"``{name}`` on arrays (NumPy) or Tensors (recorded in the graph)."
    return fn


def _sigmoid(x):
    # 1 / (1 + exp(-x)) in place, as PyTorch computes it: far below 0, exp(-x) overflows to inf
    # and the result is 0, as it should be. (exp(-logaddexp(0, -x)) costs ten times as much.)
    if isinstance(x, np.ndarray) and x.dtype.kind not in "fc":  # NumPy negates no bool or uint
        x = x.astype(np.float64)
    e = np.negative(x)
    if type(e) is not np.ndarray:  # a 0-d input gives a NumPy scalar
        return 1 / (1 + np.exp(e))
    np.exp(e, out=e)
    e += 1
    return np.reciprocal(e, out=e)


def _sum(x, dim=None, keepdim=False):
    if type(x) is np.ndarray and x.dtype.kind == "f":
        return kernels.add_reduce(x, dim, keepdim)
    return x.sum(axis=dim, keepdims=keepdim)  # the method: np.sum adds a Python layer


#: Up to this many elements, `expand` on an array copies: ``np.broadcast_to``'s view costs
#: about 2 µs of Python, more than filling a small array.
SMALL_EXPAND = 4096


def _expand(x, shape):
    if math.prod(shape) <= SMALL_EXPAND:
        return np.full(shape, x, dtype=x.dtype)
    return np.broadcast_to(x, shape)


def _reshape(x, shape):
    return x.reshape(shape)  # the method: np.reshape adds a Python layer


def _unsqueeze(x, dim):
    return np.expand_dims(x, dim)


def _transpose(x, dim0, dim1):
    return np.swapaxes(x, dim0, dim1)


def _permute(x, dims):
    return np.transpose(x, dims)


def zeros_like(x):
    """Zeros of x's shape and dtype, for an array or a Tensor; a constant, never recorded
    (as PyTorch's zeros_like in a derivative formula)."""
    return creation.zeros_like(x) if isinstance(x, Tensor) else np.zeros_like(x)


exp = _either("exp", np.exp)
log = _either("log", np.log)
sqrt = _either("sqrt", np.sqrt)
sin = _either("sin", np.sin)
cos = _either("cos", np.cos)
tanh = _either("tanh", np.tanh)
sigmoid = _either("sigmoid", _sigmoid)
sign = _either("sign", np.sign)
abs = _either("abs", np.abs)
where = _either("where", np.where)
maximum = _either("maximum", np.maximum)
minimum = _either("minimum", np.minimum)
reshape = _either("reshape", _reshape)
expand = _either("expand", _expand)
unsqueeze = _either("unsqueeze", _unsqueeze)
transpose = _either("transpose", _transpose)
permute = _either("permute", _permute)
sum = _either("sum", _sum)
cast = _either("cast", lambda x, dtype: x.astype(dtype))
einsum = _either("einsum", lambda *args: np.einsum(*args, optimize=True))
erf = _either("erf", _erf)
flip = _either("flip", np.flip)
roll = _either("roll", np.roll)


from . import ops  # noqa: E402  (the ops' rules call this module's functions)
