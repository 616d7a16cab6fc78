"""Activation layers: modules that apply one function of `chainrule.nn.functional` and hold no
weights (but PReLU's slopes). Their constructor arguments, defaults and reprs are PyTorch's.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..autograd import no_grad
from ..creation import full
from ..errors import DomainError, ShapeError, fmt_shape
from . import functional as F
from .module import Module, Parameter

__all__ = [
    "ELU", "GELU", "GLU", "Hardtanh", "LeakyReLU", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6",
    "SELU", "SiLU", "Sigmoid", "Softmax", "Softplus", "Softsign", "Tanh",
    "CELU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid", "RReLU", "Softmax2d",
    "Softmin", "Softshrink", "Tanhshrink", "Threshold",
]  # fmt: skip


def _inplace_repr(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class ReLU(Module):
    """max(x, 0), elementwise.

    >>> import chainrule as cr
    >>> ReLU()(cr.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x.

    >>> LeakyReLU(0.2)
    LeakyReLU(negative_slope=0.2)
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        suffix = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{suffix}"


class GELU(Module):
    """x * Phi(x) (``approximate="tanh"``: PyTorch's tanh formula).

    >>> GELU("tanh")
    GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x).

    >>> SiLU()
    SiLU()
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Sigmoid(Module):
    """1 / (1 + exp(-x)).

    >>> import chainrule as cr
    >>> Sigmoid()(cr.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Tanh(Module):
    """The hyperbolic tangent.

    >>> import chainrule as cr
    >>> Tanh()(cr.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, and x where beta x > threshold.

    >>> Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1).

    >>> ELU()
    ELU(alpha=1.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        suffix = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{suffix}"


class Softmax(Module):
    """Softmax along ``dim``.

    >>> import chainrule as cr
    >>> Softmax(dim=1)(cr.zeros(1, 2))
    tensor([[0.5000, 0.5000]])
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along ``dim``, computed stably.

    >>> LogSoftmax(dim=-1)
    LogSoftmax(dim=-1)
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class SELU(Module):
    """scale * elu(x, alpha) with the self-normalising constants.

    >>> SELU()
    SELU()
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Mish(Module):
    """x * tanh(softplus(x)).

    >>> import chainrule as cr
    >>> Mish()(cr.tensor([0.0]))
    tensor([0.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardtanh(Module):
    """x clamped to [min_val, max_val] (gradient 0 at the bounds).

    >>> Hardtanh(-2.0, 3.0)
    Hardtanh(min_val=-2.0, max_val=3.0)
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise DomainError(f"Hardtanh: min_val {min_val} is above max_val {max_val}")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        suffix = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{suffix}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6).

    >>> import chainrule as cr
    >>> ReLU6()(cr.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Softsign(Module):
    """x / (1 + |x|).

    >>> Softsign()
    Softsign()
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class GLU(Module):
    """The gated linear unit over ``dim``: first half * sigmoid(second half).

    >>> GLU()
    GLU(dim=-1)
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """x where x > 0, else weight * x, with ``num_parameters`` learned slopes (1, or one per
    channel) starting at ``init``.

    >>> layer = PReLU(3)
    >>> layer, layer.weight.shape
    (PReLU(num_parameters=3), (3,))
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype))

    def reset_parameters(self) -> None:
        """Every slope back to ``init``."""
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class CELU(Module):
    """x where x > 0, else alpha * (exp(x / alpha) - 1) (`functional.celu`).

    >>> CELU(2.0)
    CELU(alpha=2.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        suffix = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{suffix}"


class Hardshrink(Module):
    """x where |x| > lambd, else 0.

    >>> import chainrule as cr
    >>> Hardshrink()(cr.tensor([0.25, -2.0]))
    tensor([ 0., -2.])
    >>> Hardshrink(0.3)
    Hardshrink(0.3)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x - lambd above lambd, x + lambd below -lambd, else 0.

    >>> import chainrule as cr
    >>> Softshrink()(cr.tensor([0.25, -2.0]))
    tensor([ 0.0000, -1.5000])
    """

    def __init__(self, lambd: float = 0.5) -> None:
        if not lambd >= 0:
            raise DomainError(f"Softshrink: lambd must be non-negative, got {lambd!r}")
        super().__init__(lambd)

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class Hardsigmoid(Module):
    """x / 6 + 1/2 clamped to [0, 1] (PyTorch shows no ``inplace`` in the repr).

    >>> import chainrule as cr
    >>> Hardsigmoid()(cr.tensor([0.0, 6.0]))
    tensor([0.5000, 1.0000])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Hardsigmoid):
    """x * hardsigmoid(x).

    >>> import chainrule as cr
    >>> Hardswish()(cr.tensor([3.0]))
    tensor([3.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class LogSigmoid(Module):
    """log(sigmoid(x)), finite for large negative x.

    >>> import chainrule as cr
    >>> LogSigmoid()(cr.tensor([0.0]))
    tensor([-0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Tanhshrink(Module):
    """x - tanh(x).

    >>> import chainrule as cr
    >>> Tanhshrink()(cr.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class Threshold(Module):
    """x where x > threshold, else value.

    >>> import chainrule as cr
    >>> Threshold(0.5, -1.0)(cr.tensor([0.0, 1.0]))
    tensor([-1.,  1.])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        suffix = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{suffix}"


class RReLU(Module):
    """Randomized leaky relu: random slopes in [lower, upper] on x <= 0 while training, their
    mean in eval mode (`functional.rrelu`).

    >>> import chainrule as cr
    >>> RReLU(0.2, 0.4).eval()(cr.tensor([-1.0, 1.0]))
    tensor([-0.3000,  1.0000])
    """

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        suffix = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{suffix}"


class Softmin(Module):
    """softmax(-x) along ``dim``.

    >>> Softmin(dim=1)
    Softmin(dim=1)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) at each location of a (N, C, H, W) or (C, H, W) input.

    >>> import chainrule as cr
    >>> Softmax2d()(cr.zeros(2, 1, 1))
    tensor([[[0.5000]],
    <BLANKLINE>
            [[0.5000]]])
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ShapeError(
                f"Softmax2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape "
                f"{fmt_shape(input.shape)}"
            )
        return F.softmax(input, -3)
