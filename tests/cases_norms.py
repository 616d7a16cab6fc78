"""Cases for the normalisation and binary cross-entropy rows of chainrule.ops.normalizers:
batch norm in training (its statistics, their running update, the channel sums of its
backward), layer norm with its weight and bias, and the two binary cross entropies, against
PyTorch's functions."""

import math

from cases import Case
from hypothesis import strategies as st
from strategies import distinct, reals

DIMS = {3: (-3, -1), 4: (-4, -2, -1)}  # every dim but the channel dim (1), from the end


def _batch_shapes(extra=()):
    """(N, C, *S) with more than one value per channel, then ``extra`` shapes of (C,)."""

    def build(sizes):
        n, c, spatial = sizes
        return ((n, c, *spatial), *[(c,) for _ in extra])

    sizes = st.tuples(
        st.integers(1, 3),
        st.integers(1, 3),
        st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple),
    )
    return sizes.filter(lambda s: s[0] * math.prod(s[2]) > 1).map(build)  # fmt: skip


def _batch_norm(x, weight, bias):
    import chainrule.nn.functional as F

    return F.batch_norm(x, None, None, weight, bias, training=True)


def _torch_batch_norm(x, weight, bias):
    import torch

    return torch.nn.functional.batch_norm(x, None, None, weight, bias, training=True)


def _batch_norm_eval(x, weight, bias, mean, var):
    import chainrule.nn.functional as F

    return F.batch_norm(x, mean, var.abs() + 0.5, weight, bias, training=False)


def _torch_batch_norm_eval(x, weight, bias, mean, var):
    import torch

    return torch.nn.functional.batch_norm(x, mean, var.abs() + 0.5, weight, bias)


def _stats(x):
    from chainrule.ops.normalizers import batch_norm_stats_row

    return batch_norm_stats_row(x, dims=DIMS[x.ndim])


def _torch_stats(x):
    import torch

    dims = DIMS[x.ndim]
    return torch.stack([x.mean(dims), x.var(dims, correction=0)], -2)


def _channel_sum(x):
    from chainrule.ops.normalizers import channel_sum_row

    return channel_sum_row(x, dims=DIMS[x.ndim])


def _running(running, stats):
    from chainrule.ops.normalizers import batch_norm_running_row

    return batch_norm_running_row(running, stats, k=1, momentum=0.1, factor=2.0)


def _layer_norm_shapes(trailing: int):
    """(x, weight, bias): x of 1 to 3 dims, weight and bias its last ``trailing`` dims."""

    def build(x_shape):
        return (x_shape, x_shape[-trailing:], x_shape[-trailing:])

    sizes = st.lists(st.integers(1, 3), min_size=trailing, max_size=3).map(tuple)
    return sizes.filter(lambda s: math.prod(s[-trailing:]) > 1).map(build)


def _layer_norm(x, weight, bias):
    from chainrule.ops.normalizers import layer_norm_row

    return layer_norm_row(x, weight, bias, dims=tuple(range(-weight.ndim, 0)), eps=1e-5)


def _torch_layer_norm(x, weight, bias):
    import torch

    return torch.nn.functional.layer_norm(x, weight.shape, weight, bias, eps=1e-5)


def _bce(x, target):
    from chainrule.ops.normalizers import binary_cross_entropy_row

    return binary_cross_entropy_row(x, target)  # F's checks of the values would stop vmap


def _bce_logits(x, target):
    import chainrule.nn.functional as F

    return F.binary_cross_entropy_with_logits(x, target, reduction="none")


def _torch_loss(name):
    def call(x, target):
        import torch

        return getattr(torch.nn.functional, name)(x, target, reduction="none")

    return call


CASES = {
    # Distinct elements: no channel is constant (where rstd is 1 / sqrt(eps)).
    "batch_norm": Case(_batch_norm, _batch_shapes("wb"), (distinct(), reals()),
                       torch_fn=_torch_batch_norm),
    "layer_norm": Case(_layer_norm, _layer_norm_shapes(1), (distinct(), reals()),
                       torch_fn=_torch_layer_norm),
    "layer_norm[two_dims]": Case(_layer_norm, _layer_norm_shapes(2), (distinct(), reals()),
                                 torch_fn=_torch_layer_norm),
    # The running statistics are buffers: no gradient, as in PyTorch.
    "batch_norm_eval": Case(_batch_norm_eval, _batch_shapes("wbmv"),
                            torch_fn=_torch_batch_norm_eval, grad_inputs=(0, 1, 2)),
    "batch_norm_stats": Case(_stats, _batch_shapes(), (distinct(),), torch_fn=_torch_stats),
    "channel_sum": Case(_channel_sum, _batch_shapes(),
                        torch_fn=lambda x: x.sum(DIMS[x.ndim], keepdim=True)),
    "batch_norm_running": Case(_running, st.integers(1, 3).map(lambda c: ((c,), (2, c))),
                               torch_fn=lambda r, s: 0.1 * (s[..., 1, :] * 2.0) + 0.9 * r),
    # Away from 0 and 1, where the logs' clamp acts.
    "binary_cross_entropy": Case(_bce, st.integers(1, 4).map(lambda n: ((n,), (n,))),
                                 (reals(0.05, 0.95), reals(0.0, 1.0)),
                                 torch_fn=_torch_loss("binary_cross_entropy")),
    "binary_cross_entropy_with_logits": Case(
        _bce_logits, st.integers(1, 4).map(lambda n: ((2, n), (2, n))),
        (reals(-5.0, 5.0), reals(0.0, 1.0)),
        torch_fn=_torch_loss("binary_cross_entropy_with_logits")),
}  # fmt: skip
