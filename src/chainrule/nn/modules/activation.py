"""Activation layers: modules that apply one function of `chainrule.nn.functional` and hold no
weights (but PReLU's slopes), and MultiheadAttention (here, as in PyTorch). Their constructor
arguments, defaults, parameter names and reprs are PyTorch's."""

from __future__ import annotations

import math

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...autograd import no_grad
from ...creation import full, zeros
from ...errors import DomainError, ShapeError, fmt_shape
from .. import functional as F
from .. import init
from ..functional._checks import _check_probability
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = [
    "ELU", "GELU", "GLU", "Hardtanh", "LeakyReLU", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6",
    "SELU", "SiLU", "Sigmoid", "Softmax", "Softplus", "Softsign", "Tanh",
    "CELU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid", "RReLU", "Softmax2d",
    "Softmin", "Softshrink", "Tanhshrink", "Threshold",
    "MultiheadAttention",
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


# Attention: the single-head arithmetic is `functional.scaled_dot_product_attention`'s; this
# module adds the projections, heads and PyTorch's mask conventions.


class MultiheadAttention(Module):
    """Attention with ``num_heads`` heads of size embed_dim / num_heads, as PyTorch's.

    Inputs are (L, N, E) for queries and (S, N, E) for keys and values, or (N, L, E) with
    ``batch_first=True``, or unbatched (L, E). ``forward`` returns the output (shaped like the
    query) and, when ``need_weights``, the attention weights (N, L, S), averaged over heads
    unless ``average_attn_weights=False`` gives (N, num_heads, L, S); else None.

    Masks follow PyTorch: in ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or
    (N * num_heads, L, S), True marks a position *not* to attend to; float masks are added to
    the scores. ``is_causal=True`` without an ``attn_mask`` builds the causal mask (PyTorch
    raises there); with one, it is only a hint and the mask is used.

    Parameters: ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E,), or ``q_proj_weight``,
    ``k_proj_weight``, ``v_proj_weight`` when ``kdim`` or ``vdim`` differ from E; ``out_proj``
    is a Linear(E, E). Projections start Xavier-uniform, biases at 0.

    >>> import chainrule as cr
    >>> attention = MultiheadAttention(8, num_heads=2, batch_first=True)
    >>> x = cr.randn(3, 5, 8)
    >>> out, weights = attention(x, x, x)
    >>> out.shape, weights.shape
    ((3, 5, 8), (3, 5, 5))
    >>> [name for name, _ in attention.named_parameters()]
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
    ) -> None:
        super().__init__()
        if num_heads <= 0 or embed_dim % num_heads:
            raise DomainError(
                f"MultiheadAttention: embed_dim {embed_dim} must be divisible by num_heads "
                f"{num_heads}"
            )
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = _check_probability(dropout, "MultiheadAttention", "dropout")
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(zeros(3 * embed_dim, embed_dim))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(zeros(embed_dim, embed_dim))
            self.k_proj_weight = Parameter(zeros(embed_dim, self.kdim))
            self.v_proj_weight = Parameter(zeros(embed_dim, self.vdim))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(zeros(3 * embed_dim))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)
        if add_bias_kv:
            self.bias_k = Parameter(zeros(1, 1, embed_dim))
            self.bias_v = Parameter(zeros(1, 1, embed_dim))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def _projections(self) -> list[tuple[Tensor, Tensor | None]]:
        """(weight, bias) for the query, key and value projections."""
        e = self.embed_dim
        b = self.in_proj_bias
        biases = [None] * 3 if b is None else [b[:e], b[e : 2 * e], b[2 * e :]]
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            weights = [w[:e], w[e : 2 * e], w[2 * e :]]
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        return list(zip(weights, biases))

    def _check_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        shapes = [np.shape(t) for t in (query, key, value)]
        named = ", ".join(
            f"{name} {fmt_shape(s)}" for name, s in zip(("query", "key", "value"), shapes)
        )
        if len(shapes[0]) not in (2, 3) or any(len(s) != len(shapes[0]) for s in shapes):
            raise ShapeError(
                f"MultiheadAttention: query, key and value must all be 3-D (batched) or 2-D "
                f"(unbatched), got {named}"
            )
        dims = (self.embed_dim, self.kdim, self.vdim)
        if any(s[-1] != d for s, d in zip(shapes, dims)) or shapes[1][:-1] != shapes[2][:-1]:
            raise ShapeError(
                f"MultiheadAttention: got {named}; expected last dims {dims} "
                "(embed_dim, kdim, vdim) and key and value of the same length"
            )

    def _additive_mask(self, mask, dtype, expected: tuple, name: str):
        """A float mask to add to the scores: -inf where a bool mask is True."""
        shape = np.shape(mask)
        if shape not in expected:
            wanted = " or ".join(fmt_shape(s) for s in expected)
            raise ShapeError(
                f"MultiheadAttention: {name} has shape {fmt_shape(shape)}, expected {wanted}"
            )
        if not isinstance(mask, Tensor):
            mask = Tensor._make(np.asarray(mask))
        if mask.dtype == bool:
            return Tensor._make(np.where(mask._array, -np.inf, 0.0).astype(dtype))
        return mask

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        self._check_inputs(query, key, value)
        batched = query.ndim == 3
        # Work in (N, L, E) throughout.
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        n, length, _ = query.shape
        source = key.shape[1]
        heads, head_dim = self.num_heads, self.head_dim
        (w_q, b_q), (w_k, b_k), (w_v, b_v) = self._projections()
        q, k, v = F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)

        if is_causal and attn_mask is None:
            attn_mask = np.triu(np.ones((length, source), bool), 1)
        mask = None
        if attn_mask is not None:
            expected = ((length, source), (n * heads, length, source))
            mask = self._additive_mask(attn_mask, q.dtype, expected, "attn_mask")
            mask = mask.reshape(-1, heads, length, source) if mask.ndim == 3 else mask
        if key_padding_mask is not None:
            expected = ((n, source),) if batched else ((source,),)
            padding = self._additive_mask(key_padding_mask, q.dtype, expected, "key_padding_mask")
            padding = padding.reshape(n, 1, 1, source)
            mask = padding if mask is None else mask + padding

        if self.bias_k is not None:
            k = ops.cat([k, self.bias_k.expand(n, 1, self.embed_dim)], dim=1)
            v = ops.cat([v, self.bias_v.expand(n, 1, self.embed_dim)], dim=1)
            mask = None if mask is None else ops.pad(mask, (0, 1))

        def split_heads(t: Tensor) -> Tensor:  # (N, S, E) -> (N, heads, S, head_dim)
            return t.reshape(n, t.shape[1], heads, head_dim).transpose(1, 2)

        q, k, v = split_heads(q), split_heads(k), split_heads(v)
        if self.add_zero_attn:
            empty = zeros(n, heads, 1, head_dim, dtype=k.dtype)
            k, v = ops.cat([k, empty], dim=2), ops.cat([v, empty], dim=2)
            mask = None if mask is None else ops.pad(mask, (0, 1))

        # As PyTorch: scale the queries, then add the mask to the scores.
        scores = ops.matmul(q * math.sqrt(1.0 / head_dim), k.mT)
        if mask is not None:
            scores = scores + mask
        weights = ops.softmax(scores, -1)
        if self.training and self.dropout > 0:
            weights = F.dropout(weights, self.dropout)
        out = ops.matmul(weights, v).transpose(1, 2).reshape(n, length, self.embed_dim)
        out = self.out_proj(out)

        if not batched:
            out = out[0]
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        return out, weights if batched else weights[0]
