"""Weight initialisers with PyTorch's names and formulas; each fills a tensor in place.

Each draws as ``torch.nn.init`` draws: through the tensor's own fills (``uniform_``,
``normal_``) on the default generator (or ``generator=``), the same calls in the same order,
so that under one `chainrule.manual_seed` the weights are PyTorch's, bit for bit.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .._tensor import Tensor
from ..autograd import no_grad
from ..errors import DomainError, DTypeError, fmt_shape
from ..random import Generator, randperm

_LINEAR_FNS = (
    "linear", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
)  # fmt: skip


def _check(tensor, op: str) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise DTypeError(f"{op}: expected a Tensor, got {type(tensor).__name__}")
    return tensor


def _fill(tensor: Tensor, values) -> Tensor:
    """Write ``values`` into ``tensor`` in place, outside the graph (as PyTorch's init does)."""
    with no_grad():
        tensor.copy_(np.asarray(values))
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended scale of weights feeding ``nonlinearity`` (PyTorch's table).

    >>> round(calculate_gain("relu"), 4), calculate_gain("tanh")
    (1.4142, 1.6666666666666667)
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise DomainError(f"calculate_gain: negative_slope {param!r} is not a number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise DomainError(
        f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; choose one of "
        f"{[*_LINEAR_FNS, 'sigmoid', 'tanh', 'relu', 'leaky_relu', 'selu']}"
    )


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel): in and out times kernel size.

    >>> import chainrule
    >>> _calculate_fan_in_and_fan_out(chainrule.zeros(16, 3, 5, 5))
    (75, 400)
    """
    if tensor.ndim < 2:
        raise DomainError(
            f"init: fan in and fan out need a tensor of at least 2 dimensions, got shape "
            f"{fmt_shape(tensor.shape)}"
        )
    receptive_field = int(np.prod(tensor.shape[2:], dtype=np.int64))
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise DomainError(f"init: mode {mode!r} is not supported; use 'fan_in' or 'fan_out'")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill with samples from U(a, b), in place; returns the tensor.

    >>> import chainrule
    >>> w = uniform_(chainrule.zeros(1000), -2.0, 2.0)
    >>> bool(w.min() >= -2.0 and w.max() < 2.0)
    True
    """
    _check(tensor, "uniform_")
    if a > b:
        raise DomainError(f"uniform_: the lower bound {a} is above the upper bound {b}")
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill with samples from N(mean, std²), in place; returns the tensor."""
    _check(tensor, "normal_")
    if std < 0:
        raise DomainError(f"normal_: std must be non-negative, got {std}")
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``, in place; returns the tensor.

    >>> import chainrule
    >>> constant_(chainrule.zeros(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    _check(tensor, "constant_")
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0, in place; returns the tensor."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1, in place; returns the tensor."""
    return constant_(tensor, 1.0)


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)); in place.

    >>> import chainrule
    >>> w = xavier_uniform_(chainrule.zeros(30, 20))
    >>> bool(w.abs().max() <= (6 / 50) ** 0.5)
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(_check(tensor, "xavier_uniform_"))
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Glorot normal: N(0, std²) with std = gain * sqrt(2 / (fan_in + fan_out)); in place."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(_check(tensor, "xavier_normal_"))
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    if 0 in tensor.shape:
        warnings.warn("init: initialising a tensor with no elements does nothing", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He uniform: U(-b, b) with b = gain * sqrt(3 / fan); in place.

    ``a`` is the negative slope of the leaky ReLU that follows; ``mode`` picks the fan.

    >>> import chainrule
    >>> w = kaiming_uniform_(chainrule.zeros(64, 27), nonlinearity="relu")
    >>> bool(w.abs().max() <= (6 / 27) ** 0.5)
    True
    """
    std = _kaiming_std(_check(tensor, "kaiming_uniform_"), a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """He normal: N(0, std²) with std = gain / sqrt(fan); in place."""
    std = _kaiming_std(_check(tensor, "kaiming_normal_"), a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def _scratch(tensor: Tensor) -> Tensor:
    """A new tensor with ``tensor``'s shape, dtype and memory layout (PyTorch's empty_like)."""
    return Tensor._make(np.empty_like(tensor._array))


def _normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Tensor:
    """Fill with N(mean, std²) samples conditioned to lie in [a, b]; in place.

    ``a`` and ``b`` are absolute bounds, not multiples of ``std`` (as in PyTorch). Drawn as
    PyTorch 2.13 draws: when [a, b] holds more than 30% of the mass, whole tensors of normal
    samples, each kept where the ones before fell outside; else uniform candidates in [a, b]
    accepted with the normal density's ratio to its peak (also redrawn whole, per round).

    >>> import chainrule
    >>> w = trunc_normal_(chainrule.zeros(1000), std=2.0, a=-1.0, b=3.0)
    >>> bool(w.min() >= -1.0 and w.max() <= 3.0)
    True
    """
    _check(tensor, "trunc_normal_")
    if not a < b:
        raise DomainError(f"trunc_normal_: the lower bound a={a} must be below b={b}")
    if not std > 0:
        raise DomainError(f"trunc_normal_: std must be positive, got {std}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            f"trunc_normal_: mean {mean} lies more than 2 std from [{a}, {b}]; the values may "
            "not follow the truncated distribution",
            stacklevel=2,
        )
    mass = _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std)
    with no_grad():
        if mass > 0.3:
            values = _truncated_by_redraws(tensor, mean, std, a, b, generator)
        else:
            values = _truncated_by_acceptance(tensor, mean, std, a, b, generator)
        tensor.copy_(values)
    return tensor


def _truncated_by_redraws(tensor: Tensor, mean, std, a, b, generator) -> np.ndarray:
    """Normal samples, the ones outside [a, b] (bounds rounded to the dtype) taken from a fresh
    whole-tensor draw, round after round."""
    kind = tensor.dtype.type
    low, high = kind(a), kind(b)
    values = tensor.normal_(mean, std, generator=generator)._array.copy()
    outside = (values < low) | (values > high)
    while outside.any():
        fresh = _scratch(tensor).normal_(mean, std, generator=generator)._array
        values = np.where(outside, fresh, values)
        outside = (values < low) | (values > high)
    return values


def _truncated_by_acceptance(tensor: Tensor, mean, std, a, b, generator) -> np.ndarray:
    """Uniform candidates in [a, b], each kept when log U < -((x - mean) / std)² / 2 minus its
    value at the mode; the rejected ones redrawn (whole tensors, one round at a time). The
    arithmetic is PyTorch's, step by step in the tensor's dtype."""
    kind = tensor.dtype.type
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_ratio(x: np.ndarray) -> np.ndarray:
        z = (x - kind(mean)) / kind(std)
        return z * z * kind(-0.5) - kind(log_peak)

    def rejected(candidates: np.ndarray) -> np.ndarray:
        u = _scratch(tensor).uniform_(generator=generator)._array
        with np.errstate(divide="ignore"):  # log 0 = -inf: that candidate is kept
            return np.log(u) > log_ratio(candidates)

    values = tensor.uniform_(a, b, generator=generator)._array.copy()
    pending = rejected(values)
    while pending.any():
        candidates = _scratch(tensor).uniform_(a, b, generator=generator)._array
        values = np.where(pending, candidates, values)
        pending = pending & rejected(candidates)
    return values


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal); in place.

    >>> import chainrule
    >>> eye_(chainrule.zeros(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if _check(tensor, "eye_").ndim != 2:
        raise DomainError(f"eye_: needs a 2-D tensor, got shape {fmt_shape(tensor.shape)}")
    return _fill(tensor, np.eye(*tensor.shape))


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix times ``gain``, in place: the tensor is seen as
    (rows, everything else), and its rows (or columns, if fewer) are orthonormal.

    Made as PyTorch makes it: the Q of a Gaussian matrix's QR, its columns' signs fixed by
    R's diagonal so that the distribution is uniform. The Gaussian draws are PyTorch's; the QR
    is NumPy's LAPACK call, so Q agrees with PyTorch's to rounding, not bit for bit.

    >>> import chainrule
    >>> w = orthogonal_(chainrule.zeros(3, 5))
    >>> bool((w @ w.T - chainrule.eye(3)).abs().max() < 1e-6)
    True
    """
    if _check(tensor, "orthogonal_").ndim < 2:
        raise DomainError(
            f"orthogonal_: needs a tensor of at least 2 dimensions, got shape "
            f"{fmt_shape(tensor.shape)}"
        )
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    columns = tensor.numel() // rows
    flat = Tensor._make(np.empty((rows, columns), tensor.dtype))
    flat = flat.normal_(0.0, 1.0, generator=generator)._array
    if rows < columns:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = (q * np.sign(np.diag(r))).astype(tensor.dtype)
    if rows < columns:
        q = q.T
    with no_grad():
        tensor.copy_(q.reshape(tensor.shape))
        return tensor.mul_(gain)


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None
) -> Tensor:
    """Fill a 2-D tensor with N(0, std²) samples, then zero ``ceil(sparsity * rows)`` of each
    column's entries, chosen at random; in place.

    As in PyTorch, ``generator`` draws the normal samples only: the rows to zero come from a
    `chainrule.randperm` per column on the default generator.

    >>> import chainrule
    >>> w = sparse_(chainrule.zeros(10, 3), sparsity=0.3)
    >>> (w == 0).sum(0).tolist()
    [3, 3, 3]
    """
    if _check(tensor, "sparse_").ndim != 2:
        raise DomainError(f"sparse_: needs a 2-D tensor, got shape {fmt_shape(tensor.shape)}")
    if not 0 <= sparsity <= 1:
        raise DomainError(f"sparse_: sparsity must lie in [0, 1], got {sparsity}")
    rows, columns = tensor.shape
    zeros_per_column = math.ceil(sparsity * rows)
    with no_grad():
        values = tensor.normal_(0.0, std, generator=generator)._array.copy()
        for column in range(columns):
            values[randperm(rows)._array[:zeros_per_column], column] = 0
        return tensor.copy_(values)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight so that the convolution copies its input: in each
    of ``groups`` groups, output channel d takes input channel d at the kernel's centre (for as
    many channels as both sides have); zeros elsewhere. In place.

    >>> import chainrule
    >>> dirac_(chainrule.empty(2, 2, 3))
    tensor([[[0., 1., 0.],
             [0., 0., 0.]],
    <BLANKLINE>
            [[0., 0., 0.],
             [0., 1., 0.]]])
    """
    if _check(tensor, "dirac_").ndim not in (3, 4, 5):
        raise DomainError(
            f"dirac_: needs a 3-, 4- or 5-D convolution weight, got shape {fmt_shape(tensor.shape)}"
        )
    if not isinstance(groups, numbers.Integral) or groups < 1 or tensor.shape[0] % groups:
        raise DomainError(
            f"dirac_: groups={groups!r} must be a positive int dividing the {tensor.shape[0]} "
            "output channels"
        )
    per_group = tensor.shape[0] // groups
    channels = np.arange(min(per_group, tensor.shape[1]))
    centre = tuple(size // 2 for size in tensor.shape[2:])
    values = np.zeros(tensor.shape)
    for g in range(groups):
        values[(g * per_group + channels, channels, *centre)] = 1
    return _fill(tensor, values)
