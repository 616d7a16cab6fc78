"""Weight initialisers with PyTorch's names and formulas; each fills a tensor in place.

Each draws as ``torch.nn.init`` draws: the same in-place fills (``uniform_``, ``normal_``) on the
same tensors, from `chainrule.default_generator` or the ``generator`` argument, so under one
`chainrule.manual_seed` the weights are PyTorch's, bit for bit (`orthogonal_`'s QR is LAPACK's:
equal to rounding).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import random
from .._tensor import Tensor
from ..autograd import no_grad
from ..errors import DomainError, DTypeError, fmt_shape
from ..generator import Generator
from ..random import randperm

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
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    generator: Generator | None = None,
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
        return None  # nothing to fill (PyTorch warns and returns)
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


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Tensor:
    """Fill with samples of N(mean, std²) truncated to [a, b]; in place. Drawn as PyTorch
    draws them: when [a, b] holds more than 30% of the mass, normal draws of the whole
    tensor, redrawn where they fall outside; else uniform proposals on [a, b], each kept with
    probability its density over the peak's (a uniform's log below the log density ratio).

    ``a`` and ``b`` are absolute bounds, not multiples of ``std`` (as in PyTorch).

    >>> import chainrule
    >>> w = trunc_normal_(chainrule.zeros(1000), std=2.0, a=-1.0, b=3.0)
    >>> bool(w.min() >= -1.0 and w.max() <= 3.0)
    True
    """
    _check(tensor, "trunc_normal_")
    if not a < b:
        raise DomainError(f"trunc_normal_: the lower bound a={a} must be below b={b}")
    if std < 0:
        raise DomainError(f"trunc_normal_: std must be non-negative, got {std}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "trunc_normal_: mean is more than 2 std from [a, b]; the distribution of values "
            "may be incorrect",
            stacklevel=2,
        )
    mass = _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std)
    with no_grad():
        if mass > 0.3:
            result = _redrawn_normals(tensor, mean, std, a, b, generator)
        else:
            result = _accepted_uniforms(tensor, mean, std, a, b, generator)
        return tensor.copy_(result)


def _redrawn_normals(tensor: Tensor, mean, std, a, b, generator) -> np.ndarray:
    cast = tensor.dtype.type
    low, high = cast(a), cast(b)
    result = random.normal_values(tensor, mean, std, generator)
    while True:
        outside = (result < low) | (result > high)
        if not outside.any():
            return result
        result = np.where(outside, random.normal_values(tensor, mean, std, generator), result)


def _accepted_uniforms(tensor: Tensor, mean, std, a, b, generator) -> np.ndarray:
    cast = tensor.dtype.type
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_ratio(x: np.ndarray) -> np.ndarray:  # PyTorch's in-place steps, in the dtype
        x = (x - cast(mean)) / cast(std)
        return x * x * cast(-0.5) - cast(log_peak)

    def rejected(ratio: np.ndarray) -> np.ndarray:
        return np.log(random.uniform_values(tensor, 0.0, 1.0, generator)) > ratio

    result = random.uniform_values(tensor, a, b, generator)
    pending = rejected(log_ratio(result))
    while pending.any():
        candidates = random.uniform_values(tensor, a, b, generator)
        result = np.where(pending, candidates, result)
        pending = np.where(pending, rejected(log_ratio(candidates)), pending)
    return result


def _normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


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
    R's diagonal so that the distribution is uniform.

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
    flat = tensor.new_empty((rows, columns)).normal_(0, 1, generator=generator)._array
    if rows < columns:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < columns:
        q = q.T
    _fill(tensor, q.reshape(tensor.shape))
    with no_grad():
        return tensor.mul_(gain)


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None
) -> Tensor:
    """Fill a 2-D tensor with N(0, std²) samples, then zero ``ceil(sparsity * rows)`` entries
    of each column, the rows picked by a permutation per column (drawn, as in PyTorch, from
    the default generator whatever ``generator`` is); in place.

    >>> import chainrule
    >>> w = sparse_(chainrule.zeros(10, 3), sparsity=0.3)
    >>> (w == 0).sum(0).tolist()
    [3, 3, 3]
    """
    if _check(tensor, "sparse_").ndim != 2:
        raise DomainError(
            f"sparse_: only tensors with 2 dimensions are supported, got shape "
            f"{fmt_shape(tensor.shape)}"
        )
    rows, columns = tensor.shape
    zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for column in range(columns):
            tensor[randperm(rows)[:zeros], column] = 0
    return tensor


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
