"""The activation functions of `chainrule.nn.functional` (relu, elu, softmax, hardswish,
rrelu...) and their in-place forms (``relu_``...), composed from the rows of `chainrule.ops`;
their modules are in `chainrule.nn.modules.activation`."""

from __future__ import annotations

import warnings

import numpy as np

from ... import ops, random
from ..._tensor import Tensor
from ...errors import DomainError, ShapeError, fmt_shape
from ...ops import hardshrink, prelu
from ._checks import _array

__all__ = [
    "celu", "celu_", "elu", "elu_", "gelu", "glu", "gumbel_softmax", "hardshrink", "hardsigmoid",
    "hardswish", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "log_softmax",
    "logsigmoid", "mish", "prelu", "relu", "relu6", "relu_", "rrelu", "rrelu_", "selu", "selu_",
    "sigmoid", "silu", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh",
    "tanhshrink", "threshold", "threshold_",
]  # fmt: skip


# Shared by the activations.


def _in_place(input: Tensor, fn, inplace: bool, name: str, *, saves_input: bool = False) -> Tensor:
    """``fn(input)``; with ``inplace``, its result written into ``input`` (returned) by the
    engine's one in-place writer, `Tensor._inplace`, as ``name`` (``"elu_"``).

    The writer refuses a leaf that requires grad, bumps the version counter, rewrites a view's
    base history, and keeps a copy of what the last row saved of ``input``. A composition
    whose inner rows also save ``input`` (``saves_input``: elu clamps it, silu multiplies by
    it) runs on a clone, so that the overwrite reaches nothing backward reads.
    """
    if not inplace:
        return fn(input)
    return input._inplace(lambda x, _: fn(x.clone() if saves_input else x), None, name)


# Activations.


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0), elementwise; the gradient at 0 is 0.

    >>> import chainrule as cr
    >>> relu(cr.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return _in_place(input, ops.relu, inplace, "relu_")


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x.

    >>> import chainrule as cr
    >>> leaky_relu(cr.tensor([-1.0, 2.0]), 0.1)
    tensor([-0.1000,  2.0000])
    """
    return _in_place(input, lambda x: ops.leaky_relu(x, negative_slope), inplace, "leaky_relu_")


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF; ``approximate="tanh"`` uses the tanh formula.

    >>> import chainrule as cr
    >>> gelu(cr.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8413])
    """
    return ops.gelu(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (swish).

    >>> import chainrule as cr
    >>> silu(cr.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])
    """
    return _in_place(input, ops.silu, inplace, "silu_", saves_input=True)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)), exact in both tails.

    >>> import chainrule as cr
    >>> sigmoid(cr.tensor([0.0]))
    tensor([0.5000])
    """
    return ops.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent, elementwise.

    >>> import chainrule as cr
    >>> tanh(cr.tensor([0.0]))
    tensor([0.])
    """
    return ops.tanh(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta; x itself where beta * x > threshold, as in PyTorch.

    >>> import chainrule as cr
    >>> softplus(cr.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    scaled = input if beta == 1 else input * beta
    smooth = ops.softplus(scaled) if beta == 1 else ops.softplus(scaled) / beta
    return ops.where(scaled > threshold, input, smooth)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1); the slope at 0 is alpha, as in PyTorch.

    >>> import chainrule as cr
    >>> elu(cr.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    return _in_place(input, lambda x: _elu(x, alpha), inplace, "elu_", saves_input=True)


def _elu(input: Tensor, alpha: float) -> Tensor:
    # Clamping first keeps exp from overflowing (and its gradient from being inf * 0) for
    # large x, whose branch where() discards anyway.
    negative = ops.expm1(ops.clamp(input, max=0.0)) * alpha
    return ops.where(input > 0, input, negative)


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """exp(x) normalised to sum to 1 along ``dim`` (the input is cast to ``dtype`` first).

    >>> import chainrule as cr
    >>> softmax(cr.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    return ops.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim``, as x - logsumexp(x): finite for inputs like ±1000.

    >>> import chainrule as cr
    >>> log_softmax(cr.tensor([0.0, 1000.0]), dim=0)
    tensor([-1000.,     0.])
    """
    return ops.log_softmax(input if dtype is None else input.to(dtype), dim)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with PyTorch's self-normalising constants (alpha ≈ 1.6733,
    scale ≈ 1.0507).

    >>> import chainrule as cr
    >>> selu(cr.tensor([-1.0, 1.0]))
    tensor([-1.1113,  1.0507])
    """
    return _in_place(
        input, lambda x: _elu(x, _SELU_ALPHA) * _SELU_SCALE, inplace, "selu_", saves_input=True
    )


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x)).

    >>> import chainrule as cr
    >>> mish(cr.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8651])
    """
    return _in_place(
        input, lambda x: x * ops.tanh(ops.softplus(x)), inplace, "mish_", saves_input=True
    )


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """x clamped to [min_val, max_val]; the gradient is 1 strictly inside, else 0 (so 0 at
    the bounds themselves, as PyTorch's hardtanh and unlike its clamp).

    >>> import chainrule as cr
    >>> hardtanh(cr.tensor([-3.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise DomainError(f"hardtanh: min_val {min_val} is above max_val {max_val}")
    return _in_place(input, lambda x: _hardtanh(x, min_val, max_val), inplace, "hardtanh_")


def _hardtanh(input: Tensor, min_val: float, max_val: float) -> Tensor:
    inside = (input > min_val) & (input < max_val)
    bounded = input.detach().clamp(min_val, max_val)  # ops, not NumPy: compiled steps replay it
    return ops.where(inside, input, bounded)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): `hardtanh` on [0, 6].

    >>> import chainrule as cr
    >>> relu6(cr.tensor([-1.0, 3.0, 9.0]))
    tensor([0., 3., 6.])
    """
    return _in_place(input, lambda x: _hardtanh(x, 0.0, 6.0), inplace, "relu6_")


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|).

    >>> import chainrule as cr
    >>> softsign(cr.tensor([-3.0, 1.0]))
    tensor([-0.7500,  0.5000])
    """
    return input / (ops.abs(input) + 1)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: a * sigmoid(b), where a and b are the halves of ``dim``.

    >>> import chainrule as cr
    >>> glu(cr.tensor([2.0, 0.0]))
    tensor([1.])
    """
    shape = np.shape(input)
    if not shape or shape[dim] % 2:
        raise ShapeError(
            f"glu: dim {dim} of the input of shape {fmt_shape(shape)} must have an even size"
        )
    a, b = ops.chunk(input, 2, dim)
    return a * ops.sigmoid(b)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A sample from the Gumbel-softmax (concrete) distribution: softmax((logits + g) / tau)
    with g standard Gumbel noise: -log of ``exponential_()`` draws, as PyTorch draws them.

    With ``hard`` the result is the one-hot of the sample's argmax, while the gradient is the
    soft sample's (the straight-through estimator). ``eps`` is unused, as in PyTorch.

    >>> import chainrule as cr
    >>> sample = gumbel_softmax(cr.zeros(2, 3), tau=0.5, hard=True)
    >>> sample.sum(-1)
    tensor([1., 1.])
    """
    if not tau > 0:
        raise DomainError(f"gumbel_softmax: tau must be positive, got {tau!r}")
    noise = random.exponential_values(
        Tensor._make(np.empty(np.shape(logits), logits.dtype)), 1.0, None
    )
    gumbels = -np.log(noise)
    soft = ops.softmax((logits + gumbels.astype(logits.dtype)) / tau, dim)
    if not hard:
        return soft
    dim %= soft.ndim
    picked = np.expand_dims(np.argmax(soft._array, axis=dim), dim)
    classes = np.arange(soft.shape[dim]).reshape([-1 if d == dim else 1 for d in range(soft.ndim)])
    return soft - soft.detach() + (picked == classes).astype(soft.dtype)


# More activations: the shrinks, the hard approximations, celu, rrelu, threshold, softmin.


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x / alpha) - 1): elu with a slope of 1 at 0 for any
    alpha.

    >>> import chainrule as cr
    >>> celu(cr.tensor([-1.0, 2.0]), alpha=2.0)
    tensor([-0.7869,  2.0000])
    """
    if alpha == 0:
        raise DomainError("celu: alpha must not be 0 (the formula divides by it)")
    return _in_place(input, lambda x: _celu(x, alpha), inplace, "celu_", saves_input=True)


def _celu(input: Tensor, alpha: float) -> Tensor:
    # As in elu: clamping keeps exp finite where the positive branch is taken anyway.
    negative = ops.expm1(ops.clamp(input, max=0.0) * (1.0 / alpha)) * alpha
    return ops.where(input > 0, input, negative)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0; the gradient is 0 on
    [-lambd, lambd], edges included, as PyTorch.

    >>> import chainrule as cr
    >>> softshrink(cr.tensor([-2.0, 0.25, 1.0]))
    tensor([-1.5000,  0.0000,  0.5000])
    """
    if not lambd >= 0:
        raise DomainError(f"softshrink: lambd must be non-negative, got {lambd!r}")
    shrunk = ops.where(input > lambd, input - lambd, input + lambd)
    return ops.where(ops.abs(input) > lambd, shrunk, 0.0)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x).

    >>> import chainrule as cr
    >>> tanhshrink(cr.tensor([0.0, 1.0]))
    tensor([0.0000, 0.2384])
    """
    return input - ops.tanh(input)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) as -softplus(-x): finite for x like -1000, where sigmoid underflows.

    >>> import chainrule as cr
    >>> logsigmoid(cr.tensor([-1000.0, 0.0])).tolist()
    [-1000.0, -0.6931471824645996]
    """
    return -ops.softplus(-input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """x / 6 + 1/2 clamped to [0, 1]; the gradient is 1/6 strictly inside (-3, 3), else 0.

    >>> import chainrule as cr
    >>> hardsigmoid(cr.tensor([-4.0, 0.0, 1.5, 4.0]))
    tensor([0.0000, 0.5000, 0.7500, 1.0000])
    """
    return _in_place(input, _hardsigmoid, inplace, "hardsigmoid_")


def _hardsigmoid(input: Tensor) -> Tensor:
    inside = (input > -3.0) & (input < 3.0)
    outside = (input >= 3.0).to(input.dtype)  # ops, not NumPy: a compiled step replays it
    return ops.where(inside, input * (1.0 / 6.0) + 0.5, outside)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x): 0 up to -3, x from 3, x (x + 3) / 6 between; the gradient at -3 is 0
    and at 3 is 1, as PyTorch's.

    >>> import chainrule as cr
    >>> hardswish(cr.tensor([-4.0, 1.0, 4.0]))
    tensor([-0.0000,  0.6667,  4.0000])
    """
    return _in_place(input, _hardswish, inplace, "hardswish_", saves_input=True)


def _hardswish(input: Tensor) -> Tensor:
    middle = input * (input + 3.0) * (1.0 / 6.0)
    upper = ops.where(input < 3.0, middle, input)
    return ops.where(input <= -3.0, input * 0.0, upper)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value``.

    >>> import chainrule as cr
    >>> threshold(cr.tensor([0.5, 1.0, 2.0]), 1.0, -5.0)
    tensor([-5., -5.,  2.])
    """
    return _in_place(
        input, lambda x: ops.where(x > threshold, x, float(value)), inplace, "threshold_"
    )


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky relu: while training, each x <= 0 is multiplied by a slope drawn
    uniformly from [lower, upper] (one float64 uniform per such element, in order, as
    PyTorch draws them); otherwise the slope is their mean, (lower + upper) / 2.

    >>> import chainrule as cr
    >>> rrelu(cr.tensor([-2.0, 3.0]), 0.25, 0.75)
    tensor([-1.,  3.])
    """
    if not lower <= upper:
        raise DomainError(f"rrelu: lower {lower!r} must not exceed upper {upper!r}")
    if not training:
        return _in_place(input, lambda x: ops.leaky_relu(x, (lower + upper) / 2), inplace, "rrelu_")
    negative = _array(input) <= 0
    u = random.resolve(None, "rrelu").unit(int(negative.sum()), np.float64)
    noise = np.ones(negative.shape, input.dtype)
    # PyTorch's kernel holds the bounds in the input's dtype and draws in float64, unfused.
    low, high = (float(input.dtype.type(v)) for v in (lower, upper))
    noise[negative] = u * (high - low) + low
    return _in_place(input, lambda x: x * noise, inplace, "rrelu_")


def _softmax_dim(ndim: int, op: str) -> int:
    """PyTorch's legacy choice when ``dim`` is omitted (0 for 0-, 1- and 3-D inputs, else 1)."""
    warnings.warn(
        f"{op}: implicit dimension choice is deprecated; pass dim=", UserWarning, stacklevel=3
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along ``dim``: weights that favour the smallest entries.

    >>> import chainrule as cr
    >>> softmin(cr.tensor([0.0, 1.0]), dim=0)
    tensor([0.7311, 0.2689])
    """
    if dim is None:
        dim = _softmax_dim(np.ndim(input), "softmin")
    return ops.softmax(-(input if dtype is None else input.to(dtype)), dim)


# In-place forms, as ``torch.nn.functional.relu_``: the result is written into the input
# (refused on a leaf that requires grad, as PyTorch), which is returned; each is its
# function's ``inplace=True`` path (`_in_place`).


def relu_(input: Tensor) -> Tensor:
    """`relu` written into ``input``.

    >>> import chainrule as cr
    >>> x = cr.tensor([-1.0, 2.0])
    >>> _ = relu_(x); x
    tensor([0., 2.])
    """
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """`elu` written into ``input``.

    >>> import chainrule as cr
    >>> elu_(cr.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return elu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """`selu` written into ``input``.

    >>> import chainrule as cr
    >>> selu_(cr.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """`celu` written into ``input``.

    >>> import chainrule as cr
    >>> celu_(cr.tensor([0.0, 2.0]))
    tensor([0., 2.])
    """
    return celu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """`leaky_relu` written into ``input``.

    >>> import chainrule as cr
    >>> leaky_relu_(cr.tensor([-1.0, 2.0]), 0.5)
    tensor([-0.5000,  2.0000])
    """
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """`hardtanh` written into ``input``.

    >>> import chainrule as cr
    >>> hardtanh_(cr.tensor([-2.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """`threshold` written into ``input``.

    >>> import chainrule as cr
    >>> threshold_(cr.tensor([0.5, 2.0]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return _threshold(input, threshold, value, inplace=True)


_threshold = threshold  # the parameter named threshold hides the function inside threshold_


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """`rrelu` written into ``input``.

    >>> import chainrule as cr
    >>> rrelu_(cr.tensor([-4.0, 1.0]), 0.25, 0.25, training=True)
    tensor([-1.,  1.])
    """
    return rrelu(input, lower, upper, training, inplace=True)
