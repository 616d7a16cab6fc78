"""The wider torch.nn surface against PyTorch: each layer is built in both libraries, PyTorch's
float64 weights are loaded (parameter names must agree), then outputs and the gradients of the
inputs and parameters must agree; the functional forms likewise. Also what spans families:
starting weights, the 3-D layers, the deprecated names, error messages and docstrings. Each
family's own tests are in tests/test_nn_<family>.py."""

import warnings

import numpy as np
import pytest
from conftest import TORCH_TOL
from nn_checks import check_first_output as _check

import chainrule
import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.errors import DomainError, ShapeError

RNG = np.random.default_rng(2024)


class Fixed:
    """An input given to both libraries without requires_grad (indices, targets, masks)."""

    def __init__(self, array):
        self.array = np.asarray(array)


def normal(*shape, scale=1.0):
    return RNG.normal(0, scale, shape)


def distinct(*shape):
    """Values far apart (max pooling without near-ties)."""
    return RNG.permutation(np.arange(int(np.prod(shape)), dtype=float)).reshape(shape) * 0.37


def _tensors(lib, inputs):
    return [
        lib.tensor(item.array)
        if isinstance(item, Fixed)
        else lib.tensor(item, requires_grad=item.dtype.kind == "f")
        for item in (i if isinstance(i, Fixed) else np.asarray(i) for i in inputs)
    ]


def _backward(lib, tensors, outs):
    outs = [o for o in (outs if isinstance(outs, tuple) else (outs,)) if o is not None]
    floats = (
        [o for o in outs if o.dtype.is_floating_point]
        if lib is not chainrule
        else [o for o in outs if o.dtype.kind == "f"]
    )
    rng = np.random.default_rng(0)
    total = sum((o * lib.tensor(rng.normal(size=tuple(o.shape)))).sum() for o in floats)
    if getattr(total, "requires_grad", False):
        total.backward()
    return [o.detach().numpy() for o in outs], [
        t.grad.numpy() if t.grad is not None else None for t in tensors if t.requires_grad
    ]


def assert_close(mine, theirs):
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        if b is None:
            assert a is None or not np.any(a)
            continue
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, **TORCH_TOL)


def check_module(torch, make, inputs, call=lambda m, *xs: m(*xs)):
    ours, theirs = make(chainrule), make(torch)
    theirs.double()
    ours.double().load_state_dict(theirs.state_dict())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    results = []
    for lib, module in ((chainrule, ours), (torch, theirs)):
        tensors = _tensors(lib, inputs)
        outs, grads = _backward(lib, tensors, call(module, *tensors))
        params = {n: p.grad.numpy() for n, p in module.named_parameters() if p.grad is not None}
        state = {n: t.numpy() for n, t in module.state_dict().items()}
        results.append((outs, grads, params, state))
    (outs, grads, params, state), (t_outs, t_grads, t_params, t_state) = results
    assert_close(outs, t_outs)
    assert_close(grads, t_grads)
    assert list(params) == list(t_params)
    assert_close(list(params.values()), list(t_params.values()))
    assert_close(list(state.values()), list(t_state.values()))


MODULES = {
    "GLU": (lambda lib: lib.nn.GLU(dim=1), [normal(3, 4, 2)]),
    "PReLU": (lambda lib: lib.nn.PReLU(), [normal(3, 4)]),
    "PReLU_channels": (lambda lib: lib.nn.PReLU(3, init=0.1), [normal(2, 3, 4)]),
    "SELU": (lambda lib: lib.nn.SELU(), [normal(3, 4)]),
    "Mish": (lambda lib: lib.nn.Mish(), [normal(3, 4, scale=3.0)]),
    "Hardtanh": (lambda lib: lib.nn.Hardtanh(-0.5, 0.7), [np.append(normal(9), [-0.5, 0.7])]),
    "ReLU6": (lambda lib: lib.nn.ReLU6(), [np.append(normal(9, scale=5.0), [0.0, 6.0])]),
    "Softsign": (lambda lib: lib.nn.Softsign(), [normal(3, 4)]),
    "CosineSimilarity": (lambda lib: lib.nn.CosineSimilarity(dim=-1), [normal(3, 4), normal(1, 4)]),
    "PairwiseDistance": (lambda lib: lib.nn.PairwiseDistance(p=3.0), [normal(3, 4), normal(3, 4)]),
    "Unflatten": (lambda lib: lib.nn.Unflatten(1, (2, 3)), [normal(2, 6)]),
    "Bilinear": (lambda lib: lib.nn.Bilinear(3, 2, 4), [normal(5, 3), normal(5, 2)]),
    "Bilinear_no_bias": (lambda lib: lib.nn.Bilinear(3, 2, 4, bias=False),
                         [normal(2, 5, 3), normal(2, 5, 2)]),
    "KLDivLoss": (lambda lib: lib.nn.KLDivLoss(reduction="batchmean"),
                  [normal(4, 3), RNG.dirichlet(np.ones(3), 4)]),
    "KLDivLoss_log_target": (lambda lib: lib.nn.KLDivLoss(reduction="sum", log_target=True),
                             [normal(4, 3), normal(4, 3)]),
    "KLDivLoss_zero_target": (lambda lib: lib.nn.KLDivLoss(reduction="none"),
                              [normal(2, 3), Fixed([[0.0, 0.3, 0.7], [0.5, 0.5, 0.0]])]),
    "CosineEmbeddingLoss": (lambda lib: lib.nn.CosineEmbeddingLoss(margin=0.2),
                            [normal(5, 3), normal(5, 3), Fixed([1, -1, 1, -1, -1])]),
    "MarginRankingLoss": (lambda lib: lib.nn.MarginRankingLoss(margin=0.3, reduction="sum"),
                          [normal(6), normal(6), Fixed([1.0, -1, 1, -1, 1, 1])]),
    "TripletMarginLoss": (lambda lib: lib.nn.TripletMarginLoss(margin=2.0, p=1.5),
                          [normal(4, 3), normal(4, 3), normal(4, 3)]),
    "TripletMarginLoss_swap": (lambda lib: lib.nn.TripletMarginLoss(swap=True, reduction="none"),
                               [normal(4, 3), normal(4, 3), normal(4, 3)]),
    "GroupNorm": (lambda lib: lib.nn.GroupNorm(2, 4), [normal(3, 4, 5)]),
    "GroupNorm_no_affine": (lambda lib: lib.nn.GroupNorm(1, 2, eps=1e-3, affine=False),
                            [normal(2, 2, 3, 3)]),
    "InstanceNorm1d": (lambda lib: lib.nn.InstanceNorm1d(3), [normal(2, 3, 5)]),
    "InstanceNorm1d_unbatched": (lambda lib: lib.nn.InstanceNorm1d(3, affine=True),
                                 [normal(3, 5)]),
    "InstanceNorm2d_tracked": (
        lambda lib: lib.nn.InstanceNorm2d(2, affine=True, track_running_stats=True),
        [normal(3, 2, 3, 4)]),
    "RMSNorm": (lambda lib: lib.nn.RMSNorm(4), [normal(3, 4)]),
    "RMSNorm_2d_eps": (lambda lib: lib.nn.RMSNorm([2, 3], eps=1e-3), [normal(4, 2, 3)]),
    "RMSNorm_plain": (lambda lib: lib.nn.RMSNorm(3, elementwise_affine=False), [normal(2, 3)]),
    "Dropout2d_eval": (lambda lib: lib.nn.Dropout2d().eval(), [normal(2, 3, 2, 2)]),
    "MaxPool1d": (lambda lib: lib.nn.MaxPool1d(3, stride=2, padding=1, dilation=1,
                                               ceil_mode=True), [distinct(2, 3, 8)]),
    "MaxPool1d_indices": (lambda lib: lib.nn.MaxPool1d(2, return_indices=True), [distinct(3, 7)]),
    "AvgPool1d": (lambda lib: lib.nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False),
                  [normal(2, 3, 8)]),
    "AdaptiveAvgPool1d": (lambda lib: lib.nn.AdaptiveAvgPool1d(3), [normal(2, 3, 7)]),
    "AdaptiveMaxPool1d": (lambda lib: lib.nn.AdaptiveMaxPool1d(3, return_indices=True),
                          [distinct(2, 3, 7)]),
    "AdaptiveMaxPool2d": (lambda lib: lib.nn.AdaptiveMaxPool2d((3, None)), [distinct(2, 2, 5, 4)]),
    "AdaptiveMaxPool2d_indices": (lambda lib: lib.nn.AdaptiveMaxPool2d(2, return_indices=True),
                                  [distinct(2, 5, 3)]),
    "Upsample_nearest": (lambda lib: lib.nn.Upsample(scale_factor=2), [normal(1, 2, 2, 3)]),
    "Upsample_bilinear": (lambda lib: lib.nn.Upsample(size=(5, 4), mode="bilinear"),
                          [normal(1, 2, 3, 3)]),
    "UpsamplingBilinear2d": (lambda lib: lib.nn.UpsamplingBilinear2d(scale_factor=2),
                             [normal(1, 2, 3, 2)]),
    "PixelShuffle": (lambda lib: lib.nn.PixelShuffle(2), [normal(2, 8, 2, 3)]),
    "PixelUnshuffle": (lambda lib: lib.nn.PixelUnshuffle(2), [normal(2, 2, 4, 6)]),
    "ConvTranspose1d": (lambda lib: lib.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1,
                                                           output_padding=1, groups=2),
                        [normal(2, 4, 5)]),
    "ConvTranspose2d": (lambda lib: lib.nn.ConvTranspose2d(2, 3, (3, 2), stride=(2, 1),
                                                           padding=(1, 0), dilation=(1, 2)),
                        [normal(2, 2, 3, 4)]),
    "ConvTranspose2d_output_size": (
        lambda lib: lib.nn.ConvTranspose2d(2, 3, 3, stride=2, bias=False), [normal(1, 2, 3, 3)],
        lambda m, x: m(x, output_size=[8, 7])),
    "Conv3d": (lambda lib: lib.nn.Conv3d(2, 4, (2, 3, 2), stride=(1, 2, 1), padding=1, groups=2),
               [normal(2, 2, 3, 4, 3)]),
    "Conv3d_unbatched": (lambda lib: lib.nn.Conv3d(1, 2, 2, dilation=2), [normal(1, 4, 3, 3)]),
    "ZeroPad2d": (lambda lib: lib.nn.ZeroPad2d((1, 0, 2, 1)), [normal(1, 2, 3)]),
    "ConstantPad1d": (lambda lib: lib.nn.ConstantPad1d(2, 3.5), [normal(2, 3)]),
    "ReflectionPad2d": (lambda lib: lib.nn.ReflectionPad2d((2, 1, 0, 1)), [normal(1, 2, 3, 3)]),
    "ReplicationPad1d": (lambda lib: lib.nn.ReplicationPad1d((3, 1)), [normal(1, 2, 3)]),
    "CircularPad2d": (lambda lib: lib.nn.CircularPad2d(1), [normal(1, 1, 3, 2)]),
    "Embedding_max_norm": (lambda lib: lib.nn.Embedding(6, 3, max_norm=1.0),
                           [Fixed([[1, 4], [4, 0]])]),
    "Embedding_scale_grad": (lambda lib: lib.nn.Embedding(5, 2, scale_grad_by_freq=True,
                                                          padding_idx=0),
                             [Fixed([1, 1, 3, 0, 1])]),
    "EmbeddingBag_mean": (lambda lib: lib.nn.EmbeddingBag(6, 3), [Fixed([[1, 2, 2], [0, 5, 3]])]),
    "EmbeddingBag_sum_offsets_weights": (
        lambda lib: lib.nn.EmbeddingBag(6, 3, mode="sum"),
        [Fixed([1, 2, 4, 5, 4, 3]), Fixed([0, 2, 2, 5]), normal(6)],
        lambda m, i, o, w: m(i, o, per_sample_weights=w)),
    "EmbeddingBag_max_padding": (
        lambda lib: lib.nn.EmbeddingBag(6, 3, mode="max", padding_idx=2),
        [Fixed([1, 2, 4, 2, 2, 3, 0]), Fixed([0, 3, 4, 6])], lambda m, i, o: m(i, o)),
    "EmbeddingBag_mean_last_offset": (
        lambda lib: lib.nn.EmbeddingBag(6, 3, include_last_offset=True, padding_idx=4),
        [Fixed([1, 4, 4, 5, 0]), Fixed([0, 2, 4, 5])], lambda m, i, o: m(i, o)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(MODULES))
def test_module_matches_torch(torch, name):
    make, inputs, *call = MODULES[name]
    check_module(torch, make, inputs, *call)


@pytest.mark.parametrize("name", list(MODULES))
def test_repr_matches_torch(torch, name):
    make = MODULES[name][0]
    assert repr(make(chainrule)) == repr(make(torch))


def check_functional(torch, fn, inputs):
    results = []
    for lib, functional in ((chainrule, F), (torch, torch.nn.functional)):
        tensors = _tensors(lib, inputs)
        results.append(_backward(lib, tensors, fn(functional, *tensors)))
    (outs, grads), (t_outs, t_grads) = results
    assert_close(outs, t_outs)
    assert_close(grads, t_grads)


MASK = Fixed(RNG.uniform(size=(4, 5)) < 0.5)
MASK.array[0] = False  # a query that may attend to no key

FUNCTIONS = {
    "normalize": (lambda F, x: F.normalize(x), [np.vstack([normal(2, 3), np.zeros((1, 3))])]),
    "normalize_p1_dim0": (lambda F, x: F.normalize(x, p=1.0, dim=0), [normal(3, 4)]),
    "cosine_similarity": (lambda F, a, b: F.cosine_similarity(a, b), [normal(3, 4), normal(3, 4)]),
    "pairwise_distance": (lambda F, a, b: F.pairwise_distance(a, b, keepdim=True),
                          [normal(3, 4), normal(4)]),
    "one_hot": (lambda F, t: F.one_hot(t, 5), [Fixed([[0, 4], [2, 2]])]),
    "embedding": (lambda F, i, w: F.embedding(i, w, padding_idx=-1),
                  [Fixed([[0, 4], [2, 4]]), normal(5, 3)]),
    "pad_constant": (lambda F, x: F.pad(x, (1, 2, 0, 1), value=0.5), [normal(2, 3, 2)]),
    "pad_crop": (lambda F, x: F.pad(x, (-1, 2)), [normal(2, 3, 4)]),
    "pad_reflect": (lambda F, x: F.pad(x, (2, 1, 1, 2), mode="reflect"), [normal(1, 2, 3, 4)]),
    "pad_replicate": (lambda F, x: F.pad(x, (3, 1), mode="replicate"), [normal(2, 2, 3)]),
    "pad_circular": (lambda F, x: F.pad(x, (1, 2, 2, 0), mode="circular"), [normal(1, 1, 3, 4)]),
    "glu": (lambda F, x: F.glu(x), [normal(3, 4)]),
    "prelu": (lambda F, x, w: F.prelu(x, w), [normal(2, 3, 4), normal(3)]),
    "selu": (lambda F, x: F.selu(x), [np.append(normal(7), 0.0)]),
    "mish": (lambda F, x: F.mish(x), [normal(7, scale=4.0)]),
    "hardtanh": (lambda F, x: F.hardtanh(x, -2.0, 0.5), [np.append(normal(7), [-2.0, 0.5])]),
    "relu6": (lambda F, x: F.relu6(x), [normal(7, scale=5.0)]),
    "softsign": (lambda F, x: F.softsign(x), [np.append(normal(7), 0.0)]),
    "bilinear": (lambda F, a, b, w, c: F.bilinear(a, b, w, c),
                 [normal(4, 2), normal(4, 3), normal(5, 2, 3), normal(5)]),
    "kl_div": (lambda F, x, t: F.kl_div(x, t, reduction="sum"),
               [normal(3, 4), RNG.dirichlet(np.ones(4), 3)]),
    "cosine_embedding_loss": (
        lambda F, a, b, t: F.cosine_embedding_loss(a, b, t, reduction="none"),
        [normal(4), normal(4), Fixed(-1)]),
    "margin_ranking_loss": (lambda F, a, b, t: F.margin_ranking_loss(a, b, t, margin=0.1),
                            [normal(5), normal(5), Fixed([1.0, 1, -1, -1, 1])]),
    "triplet_margin_loss": (lambda F, a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
                            [normal(3), normal(3), normal(3)]),
    "group_norm": (lambda F, x, w, b: F.group_norm(x, 3, w, b), [normal(2, 6, 2), normal(6),
                                                                 normal(6)]),
    "instance_norm": (lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b),
                      [normal(2, 3, 4), normal(3), normal(3)]),
    "instance_norm_running": (
        lambda F, x, m, v: F.instance_norm(x, m, v, use_input_stats=False, eps=0.1),
        [normal(2, 3, 4), Fixed(normal(3)), Fixed(RNG.uniform(0.5, 2, 3))]),
    "rms_norm": (lambda F, x, w: F.rms_norm(x, (3,), w), [normal(2, 3), normal(3)]),
    "max_pool1d_indices": (lambda F, x: F.max_pool1d(x, 2, 1, return_indices=True),
                           [distinct(2, 6)]),
    "avg_pool1d": (lambda F, x: F.avg_pool1d(x, 2, ceil_mode=True), [normal(1, 2, 5)]),
    "adaptive_avg_pool1d": (lambda F, x: F.adaptive_avg_pool1d(x, 4), [normal(2, 3, 6)]),
    "adaptive_max_pool2d": (lambda F, x: F.adaptive_max_pool2d(x, (2, 3), return_indices=True),
                            [distinct(1, 2, 5, 7)]),
    "interpolate_nearest_size": (lambda F, x: F.interpolate(x, size=(5, 2)),
                                 [normal(1, 2, 3, 4)]),
    "interpolate_nearest_exact": (lambda F, x: F.interpolate(x, scale_factor=1.5,
                                                             mode="nearest-exact"),
                                  [normal(1, 2, 3)]),
    "interpolate_linear": (lambda F, x: F.interpolate(x, scale_factor=2.5, mode="linear"),
                           [normal(1, 2, 3)]),
    "interpolate_linear_down": (lambda F, x: F.interpolate(x, size=3, mode="linear"),
                                [normal(1, 2, 7)]),
    "interpolate_bilinear_corners": (
        lambda F, x: F.interpolate(x, size=(4, 5), mode="bilinear", align_corners=True),
        [normal(2, 1, 3, 2)]),
    "interpolate_bilinear_recompute": (
        lambda F, x: F.interpolate(x, scale_factor=(1.7, 0.5), mode="bilinear",
                                   recompute_scale_factor=True), [normal(1, 1, 3, 4)]),
    "interpolate_trilinear": (lambda F, x: F.interpolate(x, scale_factor=2, mode="trilinear"),
                              [normal(1, 1, 2, 2, 3)]),
    "interpolate_area": (lambda F, x: F.interpolate(x, size=(2, 3), mode="area"),
                         [normal(1, 2, 5, 4)]),
    "conv_transpose2d_groups": (
        lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                              groups=2),
        [normal(1, 4, 3, 2), normal(4, 1, 3, 3), normal(2)]),
    "conv_transpose1d_unbatched": (
        lambda F, x, w: F.conv_transpose1d(x, w, stride=3, dilation=2, output_padding=2),
        [normal(2, 4), normal(2, 3, 2)]),
    "embedding_bag_sum": (lambda F, i, w: F.embedding_bag(i, w, mode="sum"),
                          [Fixed([[0, 2], [3, 3]]), normal(4, 2)]),
    "sdpa_fully_masked_row": (
        lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [normal(2, 4, 3), normal(2, 5, 3), normal(2, 5, 2), MASK]),
    "sdpa_gqa": (lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                  enable_gqa=True),
                 [normal(2, 4, 3, 2), normal(2, 2, 3, 2), normal(2, 2, 3, 3)]),
}  # fmt: skip


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_functional_matches_torch(torch, name):
    fn, inputs = FUNCTIONS[name]
    check_functional(torch, fn, inputs)


# Modules: hooks, buffers, parameter containers.


# Initialisers and starting weights.


def test_new_layers_start_like_torch(torch):
    layer = nn.Bilinear(4, 3, 2)
    bound = 1 / 2  # 1 / sqrt(in1_features)
    assert abs(layer.weight.data).max() <= bound and abs(layer.bias.data).max() <= bound
    assert nn.PReLU(3).weight.tolist() == torch.nn.PReLU(3).weight.tolist()
    transposed = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert transposed.weight.shape == tuple(
        torch.nn.ConvTranspose2d(4, 6, 3, groups=2).weight.shape
    )
    assert abs(transposed.weight.data).max() <= 1 / np.sqrt(3 * 9)  # fan_in = out/groups * k
    table = nn.EmbeddingBag(5, 2, padding_idx=1)
    assert table.weight[1].tolist() == [0.0, 0.0]
    pretrained = nn.Embedding.from_pretrained(chainrule.eye(3))
    assert not pretrained.weight.requires_grad
    np.testing.assert_array_equal(pretrained(chainrule.tensor([2])).data, [[0.0, 0.0, 1.0]])


# Random layers.


def test_instance_norm_running_stats_then_eval_match_torch(torch):
    make = MODULES["InstanceNorm2d_tracked"][0]
    ours, theirs = make(chainrule).double(), make(torch).double()
    for step in range(3):
        x = normal(2, 2, 3, 3) * (step + 1) + step
        ours(chainrule.tensor(x)), theirs(torch.tensor(x))
    for (name, mine), expected in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(mine.numpy(), expected.numpy(), **TORCH_TOL, err_msg=name)
    ours.eval(), theirs.eval()
    x = normal(2, 2, 3, 3)
    np.testing.assert_allclose(ours(chainrule.tensor(x)).data,
                               theirs(torch.tensor(x)).detach().numpy(), **TORCH_TOL)  # fmt: skip


# Across families: the 3-D layers, their refusals, the deprecated names.


def test_3d_layers_match_pytorch_values_gradients_and_reprs(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 4, 5, 6))
    for make in [lambda m: m.MaxPool3d(2, stride=1, padding=1), lambda m: m.AvgPool3d(3, 2, 1),
                 lambda m: m.AdaptiveAvgPool3d((2, 3, None)), lambda m: m.AdaptiveMaxPool3d(2),
                 lambda m: m.LPPool3d(2, 2), lambda m: m.ChannelShuffle(2),
                 lambda m: m.LocalResponseNorm(3),
                 lambda m: m.ConstantPad3d((1, 0, 2, 1, 0, 1), 3.5),
                 lambda m: m.ReflectionPad3d(1), lambda m: m.ReplicationPad3d((2, 0, 1, 1, 0, 1)),
                 lambda m: m.CircularPad3d(1), lambda m: m.ZeroPad3d(2),
                 lambda m: m.InstanceNorm3d(4)]:  # fmt: skip
        ours, theirs = make(nn), make(torch.nn)
        assert repr(ours) == repr(theirs)
        data = np.abs(x) if isinstance(ours, nn.LPPool3d) else x
        _check(torch, ours, theirs, [data])
    for make in [lambda m: m.LPPool1d(3, 2), lambda m: m.LPPool2d(2, (2, 3), ceil_mode=True)]:
        ours, theirs = make(nn), make(torch.nn)
        assert repr(ours) == repr(theirs)
        data = np.abs(x[:, :, 0, 0]) if isinstance(ours, nn.LPPool1d) else np.abs(x[:, :, 0])
        _check(torch, ours, theirs, [data])


def test_local_response_norm_and_channel_shuffle_refuse_bad_inputs():
    with pytest.raises(ShapeError, match="local_response_norm: input must have 3 or more dims"):
        F.local_response_norm(cr.zeros(2, 3), 2)
    with pytest.raises(ShapeError, match=r"channel_shuffle: .* C divisible by groups=4"):
        cr.channel_shuffle(cr.zeros(1, 6, 2), 4)
    with pytest.raises(DomainError, match="channel_shuffle: groups must be a positive int"):
        cr.channel_shuffle(cr.zeros(1, 6, 2), 0)


def test_deprecated_names_warn_as_pytorchs_do():
    with pytest.warns(FutureWarning, match="nn.Container. is deprecated"):
        box = nn.Container(a=nn.Identity())
    assert [name for name, _ in box.named_children()] == ["a"]
    with pytest.warns(UserWarning, match="upsample is deprecated"):
        out = F.upsample(cr.ones(1, 1, 2), scale_factor=2)
    assert out.shape == (1, 1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert F.upsample_nearest(cr.ones(1, 1, 2, 2), 3).shape == (1, 1, 3, 3)
        assert F.upsample_bilinear(cr.ones(1, 1, 2, 2), scale_factor=2).shape == (1, 1, 4, 4)


# Errors.


def test_errors_name_the_op_and_the_problem():
    x = chainrule.ones(2, 3)
    with pytest.raises(ShapeError, match=r"glu: dim -1 of the input of shape \(2, 3\)"):
        F.glu(x)
    with pytest.raises(DomainError, match="group_norm: num_groups=2 must be a positive int"):
        F.group_norm(x, 2)
    with pytest.raises(ShapeError, match=r"rms_norm: input of shape \(2, 3\) does not end"):
        F.rms_norm(x, (2,))
    with pytest.raises(ShapeError, match=r"bilinear: input1 \(2, 3\), input2 \(2, 3\)"):
        F.bilinear(x, x, chainrule.ones(1, 2, 3))
    with pytest.raises(DomainError, match="interpolate: give exactly one of size and scale"):
        F.interpolate(chainrule.ones(1, 1, 2))
    with pytest.raises(DomainError, match="interpolate: align_corners only applies to linear"):
        F.interpolate(chainrule.ones(1, 1, 2), size=3, align_corners=True)
    with pytest.raises(ShapeError, match=r"mode 'bilinear' needs a 4-D input"):
        F.interpolate(chainrule.ones(1, 1, 2), size=3, mode="bilinear")
    with pytest.raises(ShapeError, match="pixel_shuffle: input of shape"):
        F.pixel_shuffle(chainrule.ones(1, 3, 2, 2), 2)
    with pytest.raises(DomainError, match="conv_transpose2d: output_padding"):
        F.conv_transpose2d(chainrule.ones(1, 1, 2, 2), chainrule.ones(1, 1, 2, 2), output_padding=1)
    with pytest.raises(ShapeError, match="conv_transpose1d: input has 2 channels"):
        F.conv_transpose1d(chainrule.ones(1, 2, 3), chainrule.ones(3, 1, 2))
    with pytest.raises(ShapeError, match=r"conv3d: weight must have shape \(out_channels"):
        F.conv3d(chainrule.ones(1, 1, 2, 2, 2), chainrule.ones(1, 1, 2, 2))
    with pytest.raises(DomainError, match="embedding_bag: per_sample_weights need mode='sum'"):
        F.embedding_bag(chainrule.tensor([[0]]), x, per_sample_weights=chainrule.ones(1, 1))
    with pytest.raises(DomainError, match="embedding_bag: a 1-D input needs offsets"):
        F.embedding_bag(chainrule.tensor([0, 1]), x)
    with pytest.raises(ShapeError, match="scaled_dot_product_attention: with enable_gqa"):
        F.scaled_dot_product_attention(chainrule.ones(3, 2, 2), chainrule.ones(2, 2, 2),
                                       chainrule.ones(2, 2, 2), enable_gqa=True)  # fmt: skip
    with pytest.raises(DomainError, match="kl_div: reduction must be"):
        F.kl_div(x, x, reduction="average")
    with pytest.raises(ShapeError, match="margin_ranking_loss: input1, input2 and target"):
        F.margin_ranking_loss(x, x, chainrule.ones(2))
    with pytest.raises(DomainError, match="GroupNorm: num_channels=3 must be divisible"):
        nn.GroupNorm(2, 3)
    with pytest.raises(DomainError, match="ConvTranspose2d: only padding_mode='zeros'"):
        nn.ConvTranspose2d(1, 1, 2, padding_mode="reflect")
    with pytest.raises(ShapeError, match=r"ConvTranspose2d: output_size \(9, 9\) is not"):
        nn.ConvTranspose2d(1, 1, 3, stride=2)(chainrule.ones(1, 1, 3, 3), output_size=(9, 9))
    with pytest.raises(DomainError, match="hardtanh: min_val 1 is above max_val 0"):
        F.hardtanh(x, 1, 0)
    with pytest.raises(ShapeError, match=r"prelu: weight of shape \(2,\)"):
        F.prelu(x, chainrule.ones(2))


def test_every_new_public_name_has_a_docstring():
    for module in (nn, F):
        for name in module.__all__:
            assert getattr(module, name).__doc__, name
