"""Normalising rows: softmax and log_softmax along one dim, standardizing over trailing dims,
(x - mean) / sqrt(var + eps), and the layer and batch norms built on it; the losses over
classes and the binary cross entropies.

Softmax's Jacobian diag(out) - out outᵀ is symmetric, and so is standardizing's: with
out = (x - mean) * rstd over n elements,

    d out = rstd * (dx - mean(dx) - out * mean(dx * out)),

so for each row the VJP and the JVP are the same expression, of g and of dx. Composed,
standardizing is eight rows and their eight backward nodes (mean, var, sub, add, rsqrt,
mul...); as one row it is one pass forward and one rule backward. Its node keeps the mean
and sqrt(var + eps) the forward computed (residuals, as PyTorch's layer norm keeps mean and
rstd) and recomputes out from x: the output may be changed in place after the forward.

``layer_norm`` is standardizing with its weight and bias; batch norm, in training, is its
statistics (``batch_norm_stats``, once: the running statistics' update ``batch_norm_running``
reads them too) and ``batch_norm``, which normalises by them; ``batch_norm_eval`` normalises
by running statistics. Each was eight to fourteen rows composed.

The losses over classes are rows here too: ``nll_loss`` picks -weight * x at each target, and
``cross_entropy`` does so from logits, log_softmax included, its VJP weight * (softmax - onehot).
Composed, they were seven rows (log_softmax, gather, squeeze, neg, mul, sum, mul). So are the
binary cross entropies, elementwise, from probabilities and from logits.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels, xp
from .._tensor import Tensor
from ..observe import replayed_whole
from ..op import LINEAR, Loops, Op, PerSeed, elementwise, with_rank
from .arguments import as_tensor
from .reduce import _logsumexp, _one_dim, batch_reduction, max_shift

__all__ = ["log_softmax", "softmax"]


def _softmax(x, dim):
    e = np.asarray(x - max_shift(x, dim))  # the largest exponent is 0
    if e.dtype.kind == "f":
        kernels.exp_shifted(e)  # in place: e is this function's own array
    else:
        e = np.exp(e)  # integers: a float result
    e /= kernels.add_reduce(e, dim, keepdims=True)
    return e


def _log_softmax(x, dim):
    """(x - max) - log(sum(exp(x - max))), as PyTorch computes it, when every maximum is
    finite: x - max is kept for the last step, not taken twice. Otherwise (and for integers)
    x - logsumexp(x), which shifts such slices by 0."""
    if type(x) is np.ndarray and x.dtype.kind == "f" and x.ndim and x.size:
        shift = kernels.max_reduce(x, dim, keepdims=True)
        flat = shift.ravel()
        # One dot product tells that every maximum is finite (an overflow only takes the
        # safe way).
        if math.isfinite(np.dot(flat, flat)):
            shifted = x - shift
            total = kernels.add_reduce(kernels.exp_shifted(shifted.copy()), dim, keepdims=True)
            np.log(total, out=total)
            shifted -= total
            return shifted
    return x - _logsumexp(x, dim, True)


# fmt: off
softmax_row = Op(
    "softmax", lambda x, dim: _softmax(x, dim),
    vjp=(lambda g, out, dim: out * (g - xp.sum(g * out, dim, True)),),
    jvp=(lambda dx, out, dim: out * (dx - xp.sum(dx * out, dim, True)),),
    kind="reduction", batch=batch_reduction, doc="exp(x) normalised to sum to 1 along dim.")
# Written with logsumexp: finite at ±1000, where log(softmax(x)) would give -inf.
log_softmax_row = Op(
    "log_softmax", lambda x, dim: _log_softmax(x, dim),
    vjp=(lambda g, out, dim: g - xp.exp(out) * xp.sum(g, dim, True),),
    jvp=(lambda dx, out, dim: dx - xp.sum(xp.exp(out) * dx, dim, True),),
    kind="reduction", batch=batch_reduction, doc="log(softmax(x, dim)), finite for large |x|.")
# fmt: on


def _picks(target: np.ndarray, dim: int) -> tuple:
    """The advanced index that reads each target's class from an input whose class dim is
    ``dim`` (0 or 1): the target there, and positions 0..m-1 along every other dim."""
    if dim == 0:
        return (target,)
    if target.ndim == 1:  # (N, C), the common case
        return np.arange(len(target)), target
    ndim = target.ndim
    grid = [
        np.arange(m).reshape([-1 if k == d else 1 for k in range(ndim)])
        for d, m in enumerate(target.shape)
    ]
    return grid[0], target, *grid[1:]


@replayed_whole(pure=True)  # a compiled step's backward reads the new targets at each call
def _one_hot(shape: tuple, target: np.ndarray, dim: int, dtype) -> np.ndarray:
    """Zeros of ``shape`` with 1 at each target's class along ``dim``."""
    out = np.zeros(shape, dtype)
    out[_picks(target, dim)] = 1
    return out


def _reduced(loss, scale, summed: bool):
    """The per-target ``loss`` itself (reduction='none'), or its sum times ``scale`` (1 for
    'sum', the reciprocal of the weights' sum for 'mean')."""
    return xp.sum(loss) * scale if summed else loss


def _coefficient(g, x, weight, scale, summed: bool):
    """d loss / d picked, up to sign: g spread back to each target and weighed. With x a
    Tensor (a recorded backward) so is g, so that these products are recorded too."""
    if isinstance(x, Tensor):
        g = as_tensor(g, "cross_entropy")
    return (g * scale) * weight if summed else g * weight


def _negated_sum(picked, weight, scale, summed: bool):
    """-weight * picked, reduced by `_reduced`; picked is the forward's own copy."""
    if type(picked) is not np.ndarray:  # a single target (1-D input): a NumPy scalar
        return _reduced(-(picked * weight), scale, summed)
    picked *= weight
    np.negative(picked, out=picked)
    return _reduced(picked, scale, summed)


def _nll_loss_vjp(g, x, weight, scale, target, dim, summed):
    coef = _coefficient(g, x, weight, scale, summed)
    if not isinstance(coef, Tensor):
        out = np.zeros(x.shape, np.result_type(coef))
        out[_picks(target, dim)] = -coef
        return out
    return xp.unsqueeze(coef, dim) * -_one_hot(x.shape, target, dim, x.dtype)


def _cross_entropy(x, weight, scale, target, dim, summed):
    # log_softmax(x)[picks], log_softmax's own numbers: a compiled step, which records the
    # composed rows, trains as eager does, bit for bit.
    picked = _log_softmax(x, (dim,))[_picks(target, dim)]
    return _negated_sum(picked, weight, scale, summed)


def _cross_entropy_vjp(g, x, weight, scale, target, dim, summed):
    """(softmax(x) - onehot(target)) * weight * g along the class dim, with softmax as
    exp(log_softmax(x)): the same numbers as log_softmax's and nll_loss's VJPs in turn."""
    coef = _coefficient(g, x, weight, scale, summed)
    p = xp.exp(xp.run(log_softmax_row, x, dim=(dim,)))
    if type(p) is np.ndarray:  # arrays: the onehot's part taken away in place
        p *= np.expand_dims(coef, dim)
        p[_picks(target, dim)] -= coef
        return p
    return (p - _one_hot(x.shape, target, dim, x.dtype)) * xp.unsqueeze(coef, dim)


def _cross_entropy_jvp(dx, x, weight, scale, target, dim, summed):
    p = xp.run(softmax_row, x, dim=(dim,))
    picked = dx[_picks(target, dim)]
    return _reduced((xp.sum(p * dx, dim) - picked) * weight, scale, summed)


# Weight, scale and target come from the checked targets (nn.functional.loss's `_targets`):
# ``target`` holds each target's class (0 where ignored; its shape is x's without ``dim``),
# ``weight`` each target's class weight (0 where ignored); ``scale`` and ``summed`` as in
# `_reduced`. Weight and scale are operands without gradient, not parameters, so that a
# compiled step reads them anew at each call, as it does the target (made by a replayed call).
_PER_TARGET = Loops("the targets' index is built for unbatched shapes")
nll_loss_row = Op(
    "nll_loss",
    lambda x, weight, scale, target, dim, summed: _negated_sum(
        x[_picks(target, dim)], weight, scale, summed
    ),
    inputs=("x", "weight", "scale"),
    vjp=(
        lambda g, x, weight, scale, target, dim, summed: _nll_loss_vjp(
            g, x, weight, scale, target, dim, summed
        ),
        None,
        None,
    ),
    jvp=(
        lambda dx, weight, scale, target, dim, summed: (
            -_reduced(dx[_picks(target, dim)] * weight, scale, summed)
        ),
        None,
        None,
    ),
    kind="reduction",
    batch=_PER_TARGET,
    doc="-weight * x at each target (x log-probabilities), or their sum times scale.",
)
cross_entropy_row = Op(
    "cross_entropy",
    lambda x, weight, scale, target, dim, summed:
        _cross_entropy(x, weight, scale, target, dim, summed),
    inputs=("x", "weight", "scale"),
    vjp=(lambda g, x, weight, scale, target, dim, summed:
         _cross_entropy_vjp(g, x, weight, scale, target, dim, summed), None, None),
    jvp=(lambda dx, x, weight, scale, target, dim, summed:
         _cross_entropy_jvp(dx, x, weight, scale, target, dim, summed), None, None),
    kind="reduction", batch=_PER_TARGET,
    doc="nll_loss of log_softmax(x, dim), from logits x.")  # fmt: skip


def _mean(x, dims: tuple):
    if x.dtype.char == "e":  # float16: np.mean sums it in float32
        return np.mean(x, axis=dims, keepdims=True)
    return kernels.add_reduce(x, dims, keepdims=True) / math.prod(x.shape[d] for d in dims)


def _standardize_saving(x, dims: tuple, eps: float):
    """(the standardized x, its residuals: the mean and sqrt(var + eps), over dims)."""
    mean = _mean(x, dims)
    centered = x - mean
    std = _mean(centered * centered, dims)
    std += eps
    np.sqrt(std, out=std)
    centered /= std
    return centered, {"mean": mean, "std": std}


def _mean_ops(x, dims: tuple):
    return xp.sum(x, dims, True) / math.prod(x.shape[d] for d in dims)


def _std_ops(x, dims: tuple, eps: float):
    centered = x - _mean_ops(x, dims)
    return xp.sqrt(_mean_ops(centered * centered, dims) + eps)


def _standardize_ops(x, dims: tuple, eps: float):
    """The forward written with ops, as the residuals are: a compiled step records these, so
    that the backward's mean and deviation are the forward's."""
    centered = x - _mean_ops(x, dims)
    return centered / xp.sqrt(_mean_ops(centered * centered, dims) + eps)


def _projected(v, x, mean, std, dims: tuple):
    """rstd * (v - mean(v) - out * mean(v * out)): the Jacobian (symmetric) applied to v, with
    out = (x - mean) * rstd and rstd = 1 / std from the forward's mean and std."""
    n = math.prod(x.shape[d] for d in dims)
    rstd = 1 / std
    out = (x - mean) * rstd
    return rstd * (v - xp.sum(v, dims, True) / n - out * (xp.sum(v * out, dims, True) / n))


standardize_row = Op(
    "standardize", lambda x, dims, eps: _standardize_saving(x, dims, eps)[0],
    vjp=(lambda g, x, mean, std, dims: _projected(g, x, mean, std, dims),),
    jvp=(lambda dx, x, mean, std, dims: _projected(dx, x, mean, std, dims),),
    decomposition=_standardize_ops,
    residuals={"mean": lambda x, dims: _mean_ops(x, dims), "std": _std_ops},
    forward_saving=_standardize_saving,
    kind="reduction",
    # dims count from the end, so a batch dim in front changes nothing.
    batch=lambda op, values, batched, params: op(values[0], **params),
    doc="(x - mean) / sqrt(var + eps) over the trailing dims (negative numbers, biased var).",
)  # fmt: skip


def _layer_norm_saving(x, weight, bias, dims: tuple, eps: float):
    out, residuals = _standardize_saving(x, dims, eps)
    out *= weight
    out += bias
    return out, residuals


# Layer norm with its weight and bias: standardizing, then out * weight + bias in place, one
# node where three were. The engine sums the weight's and the bias's gradients over the
# leading dims.
layer_norm_row = Op(
    "layer_norm",
    lambda x, weight, bias, dims, eps: _layer_norm_saving(x, weight, bias, dims, eps)[0],
    inputs=("x", "weight", "bias"),
    vjp=(lambda g, x, weight, mean, std, dims: _projected(g * weight, x, mean, std, dims),
         lambda g, x, mean, std: g * ((x - mean) / std),
         lambda g: g),
    jvp=(lambda dx, x, weight, mean, std, dims: _projected(dx, x, mean, std, dims) * weight,
         lambda dweight, x, mean, std: (x - mean) / std * dweight,
         lambda dbias: dbias),
    residuals={"mean": lambda x, dims: _mean_ops(x, dims), "std": _std_ops},
    forward_saving=_layer_norm_saving,
    kind="reduction",
    # dims count from the end, and weight and bias are shaped as those dims: a batch dim in
    # front of x broadcasts, one in front of weight or bias is moved past x's leading dims.
    batch=lambda op, values, batched, params: op(
        values[0], *[with_rank(v, values[0].ndim - batched[0]) if b else v
                     for v, b in zip(values[1:], batched[1:])], **params),
    doc="(x - mean) / sqrt(var + eps) over the trailing dims, times weight, plus bias.",
)  # fmt: skip


def softmax(x, dim: int):
    """exp(x) normalised to sum to 1 along ``dim``; finite for inputs like ±1000.

    >>> import chainrule as cr
    >>> softmax(cr.tensor([0.0, 1000.0]), dim=0)
    tensor([0., 1.])
    """
    return softmax_row(x, dim=_one_dim(x, dim, "softmax"))


def log_softmax(x, dim: int):
    """log(softmax(x, dim)), computed as x - logsumexp(x, dim) so it stays finite.

    >>> import chainrule as cr
    >>> log_softmax(cr.tensor([0.0, 1000.0]), dim=0)
    tensor([-1000.,     0.])
    """
    return log_softmax_row(x, dim=_one_dim(x, dim, "log_softmax"))


# Batch norm in training: the statistics over every dim but the channel dim (1), then
# out = x * scale + shift with scale = rstd * weight and shift = bias - mean * scale per channel
# (PyTorch's formula: two passes over x where (x - mean) * rstd * weight + bias takes four).
# Composed, that was fourteen rows. The statistics are a row of their own, run once: the
# running statistics' update reads them, and the normalising row takes them as an operand
# without gradient, its rules being those of the statistics computed from x. Those rules ask
# for the mean and rstd as residuals; a backward on Tensors (create_graph, the compiler's
# record) computes them again through the statistics' row, which is differentiable, so they
# are the forward's bits and second derivatives follow.


def _kept_shape(shape: tuple, dims: tuple) -> tuple:
    """``shape`` with each dim of ``dims`` (negative) reduced to 1."""
    ndim = len(shape)
    return tuple(1 if d - ndim in dims else n for d, n in enumerate(shape))


def _channels_last3(x, dims: tuple):
    """x (..., N, C, *S) as (..., N, C, prod(S)): dims are N's and S's, counted from the end."""
    ndim = len(dims) + 1
    return x.reshape(x.shape[: x.ndim - ndim] + x.shape[x.ndim - ndim : x.ndim - ndim + 2] + (-1,))


def _channel_sum(x, dims: tuple):
    flat = _channels_last3(x, dims)
    if flat.dtype.kind != "f":
        flat = flat.astype(np.float64)
    return np.einsum("...ncs->...c", flat).reshape(_kept_shape(x.shape, dims))


# Batch norm's backward sums over every dim but the channel's: einsum does it in one pass,
# twice as fast as NumPy's reduction over several axes. As a row, a backward on Tensors gets
# the same bits as one on arrays.
channel_sum_row = Op(
    "channel_sum", lambda x, dims: _channel_sum(x, dims),
    vjp=(lambda g, x_shape: xp.expand(g, x_shape),), jvp=LINEAR,
    kind="reduction",
    batch=lambda op, values, batched, params: op(values[0], **params),
    doc="Each channel's (dim 1) sum over dims (all the others, counted from the end), kept.",
)  # fmt: skip


def _batch_norm_stats(x, dims: tuple):
    """(..., 2, C): each channel's mean and biased variance, summed by einsum (one pass each,
    no copy of the squares; NumPy's reduction over several axes is twice as slow)."""
    n = math.prod(x.shape[d] for d in dims)
    flat = _channels_last3(x, dims)
    if flat.dtype.kind != "f":
        flat = flat.astype(np.float64)
    mean = np.einsum("...ncs->...c", flat)
    mean /= n
    centered = flat - mean[..., None, :, None]
    var = np.einsum("...ncs,...ncs->...c", centered, centered)
    var /= n
    return np.stack([mean, var], -2)


#: Which of the pair stacked by `_stack_pair` each of the two rows holds.
_FIRST_OF_TWO = np.array([[True], [False]])


def _stack_pair(a, b):
    """a and b (arrays or Tensors of one shape) stacked along a new dim -2, by where (the
    rows of ops.shape come after this module)."""
    return xp.where(_FIRST_OF_TWO, xp.unsqueeze(a, -2), xp.unsqueeze(b, -2))


def _stats_vjp(g, x, out, dims: tuple):
    """d mean/dx = 1/n, d var/dx = 2 (x - mean) / n, each channel's g spread over its dims."""
    n = math.prod(x.shape[d] for d in dims)
    kept = _kept_shape(x.shape, dims)
    g_mean, g_var = xp.reshape(g[..., 0, :], kept), xp.reshape(g[..., 1, :], kept)
    mean = xp.reshape(out[..., 0, :], kept)
    return (g_mean + (x - mean) * (2 * g_var)) / n


def _stats_jvp(dx, x, out, dims: tuple):
    n = math.prod(x.shape[d] for d in dims)
    mean = xp.reshape(out[..., 0, :], _kept_shape(x.shape, dims))
    reduced = [s for d, s in enumerate(x.shape) if d - x.ndim not in dims]
    d_mean = xp.reshape(xp.sum(dx, dims, True), reduced) / n
    d_var = xp.reshape(xp.sum(dx * (x - mean), dims, True), reduced) * (2 / n)
    return _stack_pair(d_mean, d_var)


# dims count from the end (negative), so a batch dim in front changes nothing; the mean and
# the variance stand side by side along dim -2, as they do for one example.
batch_norm_stats_row = Op(
    "batch_norm_stats", lambda x, dims: _batch_norm_stats(x, dims),
    vjp=(lambda g, x, out, dims: _stats_vjp(g, x, out, dims),),
    jvp=(lambda dx, x, out, dims: _stats_jvp(dx, x, out, dims),),
    kind="reduction",
    batch=lambda op, values, batched, params: op(values[0], **params),
    doc="Each channel's (dim 1) mean and biased variance over dims, stacked: (2, C).",
)  # fmt: skip


# The running statistics' update, in place (`Tensor._inplace` writes the result back), as
# PyTorch's: momentum * batch + (1 - momentum) * running, with the batch's variance made
# unbiased by ``factor`` = n / (n - 1). One row where lerp_ and a pick were three.
batch_norm_running_row = Op(
    "batch_norm_running", lambda running, stats, k, momentum, factor:
        momentum * (stats[..., k, :] * factor) + (1 - momentum) * running,
    vjp=None, inputs=("running", "stats"), kind="indexing",
    # row k is picked from the end and running is (C,): batch dims in front line up.
    batch=lambda op, values, batched, params: op(*values, **params),
    doc="The running statistic moved towards row k of batch_norm_stats' result by momentum.",
)  # fmt: skip


def _per_channel(v, ndim: int):
    """A (C,) operand shaped to broadcast over dim 1 of an ``ndim``-d input."""
    return xp.reshape(v, (-1,) + (1,) * (ndim - 2))


def _rstd(var, eps: float):
    return 1 / xp.sqrt(var + eps)


def _stats_residuals(stats, ndim: int, eps: float) -> tuple:
    """(mean, rstd), each shaped to broadcast over x, from batch_norm_stats' result."""
    return _per_channel(stats[0], ndim), _rstd(_per_channel(stats[1], ndim), eps)


def _stats_of(x, dims: tuple, eps: float) -> tuple:
    """(mean, rstd) of x through the statistics' row: differentiated in a backward on
    Tensors."""
    return _stats_residuals(xp.run(batch_norm_stats_row, x, dims=dims), x.ndim, eps)


class ChannelMoments(PerSeed):
    """What batch norm's node keeps: each channel's ``mean`` and ``rstd`` (shaped to broadcast
    over x) and, for the gradient flowing back, the channel sums of g and of g (x - mean) that
    the rules of x, weight and bias all read, worked out once (`PerSeed`)."""

    __slots__ = ("mean", "rstd")

    def __init__(self, mean, rstd) -> None:
        super().__init__()
        self.mean, self.rstd = mean, rstd

    def sums_of(self, g, x, dims: tuple) -> tuple:
        """(sum of g, sum of g (x - mean), x - mean), the sums over dims, kept."""

        def work():
            centered = x - self.mean
            return _csum(g, dims), _csum(g * centered, dims), centered

        return self.once(g, work)


def _csum(v, dims: tuple):
    return xp.run(channel_sum_row, v, dims=dims)


def _batch_norm_saving(x, weight, bias, stats, dims, eps):
    mean, rstd = _stats_residuals(stats, x.ndim, eps)
    scale = rstd * _per_channel(weight, x.ndim)
    shift = _per_channel(bias, x.ndim) - mean * scale
    out = x * scale
    out += shift
    return out, {"moments": ChannelMoments(mean, rstd)}


def _batch_norm_grad_x(g, x, weight, moments, dims: tuple):
    """weight * rstd * (g - mean(g) - xhat * mean(g * xhat)), xhat = (x - mean) * rstd, means
    over dims: batch norm's Jacobian for x (symmetric, as standardizing's) applied to g."""
    n = math.prod(x.shape[d] for d in dims)
    total, dot, centered = moments.sums_of(g, x, dims)
    rstd = moments.rstd
    return (g - total / n - centered * (dot * (rstd * rstd) / n)) * (
        rstd * _per_channel(weight, x.ndim)
    )


def _batch_norm_tangent_x(dx, x, weight, moments, dims: tuple):
    n = math.prod(x.shape[d] for d in dims)
    centered, rstd = x - moments.mean, moments.rstd
    total, dot = _csum(dx, dims), _csum(dx * centered, dims)
    return (dx - total / n - centered * (dot * (rstd * rstd) / n)) * (
        rstd * _per_channel(weight, x.ndim)
    )


batch_norm_row = Op(
    "batch_norm", lambda x, weight, bias, stats, dims, eps:
        _batch_norm_saving(x, weight, bias, stats, dims, eps)[0],
    inputs=("x", "weight", "bias", "stats"),
    vjp=(lambda g, x, weight, moments, dims: _batch_norm_grad_x(g, x, weight, moments, dims),
         lambda g, x, weight_shape, moments, dims:
             xp.reshape(moments.sums_of(g, x, dims)[1] * moments.rstd, weight_shape),
         lambda g, x, bias_shape, moments, dims:
             xp.reshape(moments.sums_of(g, x, dims)[0], bias_shape),
         None),
    jvp=(lambda dx, x, weight, moments, dims: _batch_norm_tangent_x(dx, x, weight, moments, dims),
         lambda dweight, x, moments:
             (x - moments.mean) * moments.rstd * _per_channel(dweight, x.ndim),
         lambda dbias, x_shape: _per_channel(dbias, len(x_shape)),
         None),
    residuals={"moments": lambda x, dims, eps: ChannelMoments(*_stats_of(x, dims, eps))},
    forward_saving=_batch_norm_saving,
    kind="reduction",
    batch=Loops("its (C,) operands broadcast over dim 1 of x, which a batch dim in front moves"),
    doc="Batch norm in training: x normalised per channel (dim 1) over dims by its own "
        "statistics ``stats`` (from batch_norm_stats), times weight, plus bias.",
)  # fmt: skip


def _batch_norm_eval(x, weight, bias, mean, var, eps: float):
    scale = _rstd(var, eps) * weight
    out = x * _per_channel(scale, x.ndim)
    out += _per_channel(bias - mean * scale, x.ndim)
    return out


# Batch norm on running statistics (eval mode): x * scale + shift per channel, as in training,
# with the statistics operands without gradient (as PyTorch's buffers). The rules are those of
# an affine map of x.
batch_norm_eval_row = Op(
    "batch_norm_eval", lambda x, weight, bias, mean, var, dims, eps:
        _batch_norm_eval(x, weight, bias, mean, var, eps),
    inputs=("x", "weight", "bias", "mean", "var"),
    vjp=(lambda g, weight, var, eps: g * _per_channel(_rstd(var, eps) * weight, g.ndim),
         lambda g, x, weight_shape, mean, var, dims, eps: xp.reshape(
             _csum(g * (x - _per_channel(mean, x.ndim)), dims), weight_shape)
             * _rstd(var, eps),
         lambda g, bias_shape, dims: xp.reshape(_csum(g, dims), bias_shape),
         None, None),
    jvp=(lambda dx, weight, var, eps: dx * _per_channel(_rstd(var, eps) * weight, dx.ndim),
         lambda dweight, x, mean, var, eps:
             (x - _per_channel(mean, x.ndim)) * _per_channel(_rstd(var, eps) * dweight, x.ndim),
         lambda dbias, x_shape: _per_channel(dbias, len(x_shape)),
         None, None),
    kind="reduction",
    batch=Loops("its (C,) operands broadcast over dim 1 of x, which a batch dim in front moves"),
    doc="Batch norm on given statistics (eval mode): (x - mean) / sqrt(var + eps) per channel "
        "(dim 1), times weight, plus bias.",
)  # fmt: skip


# Binary cross entropy, elementwise, as PyTorch's kernels: one row each where the composed
# forms were ten to fifteen (clamped logs, wheres, products, softplus...).


def _clamped_log(x):
    """max(log(x), -100) for x in [0, 1], with no warning at 0 (log(0) is -inf)."""
    x = np.asarray(x)
    out = np.full(x.shape, -100.0, x.dtype if x.dtype.kind == "f" else np.float64)
    np.log(x, out=out, where=x > 0)
    return np.maximum(out, -100.0, out=out)


def _binary_cross_entropy(x, target):
    # (t - 1) max(log(1 - x), -100) - t max(log x, -100), in PyTorch's order.
    return (target - 1) * _clamped_log(1 - x) - target * _clamped_log(x)


def _clamped_reciprocal(x):
    """1 / x where max(log x, -100) is log x (its derivative), else 0: the clamp's flat part."""
    kept = x >= math.exp(-100)
    return xp.where(kept, 1 / xp.where(kept, x, 1.0), 0.0)


def _clamped_log_ops(x):
    """max(log(x), -100) written with ``xp``, for the rules."""
    kept = x >= math.exp(-100)
    return xp.where(kept, xp.log(xp.where(kept, x, 1.0)), -100.0)


binary_cross_entropy_row = elementwise(
    "binary_cross_entropy", _binary_cross_entropy,
    lambda x, target: (1 - target) * _clamped_reciprocal(1 - x) - target * _clamped_reciprocal(x),
    lambda x: _clamped_log_ops(1 - x) - _clamped_log_ops(x),
    inputs=("x", "target"),
    doc="-(t log(x) + (1 - t) log(1 - x)) for probabilities x, each log clamped at -100.",
)  # fmt: skip


def _binary_cross_entropy_with_logits(x, target):
    """(1 - t) x - log(sigmoid(x)), with -log(sigmoid(x)) = log1p(exp(-|x|)) - min(x, 0),
    finite for any x, as PyTorch computes it (NumPy's logaddexp is four times slower)."""
    softplus = np.abs(x)  # softplus(-x), in place
    if type(softplus) is not np.ndarray:  # 0-d: a NumPy scalar
        softplus = np.asarray(softplus)
    np.negative(softplus, out=softplus)
    np.exp(softplus, out=softplus)
    np.log1p(softplus, out=softplus)
    softplus -= np.minimum(x, 0)
    out = (1 - target) * x
    out += softplus
    return out


binary_cross_entropy_with_logits_row = elementwise(
    "binary_cross_entropy_with_logits",
    _binary_cross_entropy_with_logits,
    lambda x, target: xp.sigmoid(x) - target,
    lambda x: -x,
    inputs=("x", "target"),
    doc="Binary cross entropy of sigmoid(x) against target: (1 - t) x + log(1 + exp(-x)).",
)  # fmt: skip
