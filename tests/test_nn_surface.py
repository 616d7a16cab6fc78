"""The wider torch.nn surface against PyTorch: each layer is built in both libraries, PyTorch's
float64 weights are loaded (parameter names must agree), then outputs and the gradients of the
inputs and parameters must agree; the functional forms likewise. Also hooks, parameter
containers, initialisers, random layers, reprs and error messages."""

import numpy as np
import pytest
from conftest import TORCH_TOL

import chainrule
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.errors import DomainError, DTypeError, ShapeError

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


def test_forward_hooks_change_inputs_and_outputs_and_are_removable():
    layer = nn.Linear(2, 2)
    calls = []
    pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    post = layer.register_forward_hook(lambda m, args, out: calls.append(args[0]) or out * 2)
    x = chainrule.ones(1, 2)
    np.testing.assert_allclose(layer(x).data, 2 * layer.bias.data[None])
    np.testing.assert_array_equal(calls[0].data, [[0.0, 0.0]])  # the hook saw the new args
    pre.remove(), post.remove()
    pre.remove()  # a second remove does nothing
    np.testing.assert_allclose(layer(x).data, F.linear(x, layer.weight, layer.bias).data)


def test_forward_hooks_with_kwargs_and_prepend_run_in_order():
    order = []
    layer = nn.Identity()
    layer.register_forward_hook(lambda m, a, out: order.append("second"))
    layer.register_forward_hook(lambda m, a, out: order.append("first"), prepend=True)
    layer.register_forward_pre_hook(lambda m, args, kwargs: (args, kwargs), with_kwargs=True)
    layer.register_forward_hook(lambda m, a, kw, out: out + 1, with_kwargs=True)
    assert layer(chainrule.tensor([1.0])).item() == 2.0
    assert order == ["first", "second"]
    with pytest.raises(DTypeError, match="register_forward_hook: the hook must be callable"):
        layer.register_forward_hook("not a function")


def test_non_persistent_buffers_stay_out_of_state_dict_and_load_strictly(torch):
    def make(lib):
        module = lib.nn.Linear(2, 2)
        module.register_buffer("mask", lib.ones(2), persistent=False)
        module.register_buffer("scale", lib.ones(2))
        return module

    ours, theirs = make(chainrule), make(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "bias", "scale"]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    state = {k: v * 0 + 3 for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)
    np.testing.assert_array_equal(ours.scale.data, [3.0, 3.0])
    np.testing.assert_array_equal(ours.mask.data, [1.0, 1.0])
    missing = ours.load_state_dict({"weight": state["weight"]}, strict=False)
    assert missing.missing_keys == ["bias", "scale"]


def test_parameter_list_and_dict_register_like_torch(torch):
    def make(lib):
        outer = lib.nn.Module()
        outer.plist = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2)), lib.zeros(3)])
        outer.pdict = lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.ones(1))})
        outer.pdict["a"] = lib.zeros(2, 2)
        outer.plist.append(lib.ones(1))
        return outer

    ours, theirs = make(chainrule), make(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in ours.parameters())
    assert len(ours.plist) == 3 and list(ours.pdict) == ["b", "a"] and "a" in ours.pdict
    assert ours.pdict.pop("b").shape == (1,) and list(ours.pdict.keys()) == ["a"]
    ours.plist[0] = chainrule.zeros(4)
    assert ours.plist[0].shape == (4,) and ours.plist[-1].shape == (1,)
    with pytest.raises(KeyError, match="no parameter named 'z'"):
        ours.pdict["z"]
    with pytest.raises(DTypeError, match="ParameterList: expected a Parameter or Tensor"):
        ours.plist.append(3.0)


def test_parameters_to_vector_round_trip_matches_torch(torch):
    theirs = torch.nn.Linear(3, 2).double()
    ours = nn.Linear(3, 2).double()
    ours.load_state_dict(theirs.state_dict())
    vector = nn.utils.parameters_to_vector(ours.parameters())
    expected = torch.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_array_equal(vector.data, expected.detach().numpy())
    nn.utils.vector_to_parameters(vector * 2, ours.parameters())
    np.testing.assert_array_equal(ours.bias.data, 2 * theirs.bias.detach().numpy())
    with pytest.raises(DomainError, match="vec has 3 elements but the parameters hold 8"):
        nn.utils.vector_to_parameters(chainrule.zeros(3), ours.parameters())


# Initialisers and starting weights.


def test_eye_orthogonal_and_trunc_normal():
    np.testing.assert_array_equal(nn.init.eye_(chainrule.zeros(2, 3)).data, np.eye(2, 3))
    for shape in ((3, 5), (5, 3), (4, 2, 2)):
        w = nn.init.orthogonal_(chainrule.zeros(*shape), gain=2.0).data.reshape(shape[0], -1)
        small = min(w.shape)
        gram = w @ w.T if w.shape[0] == small else w.T @ w
        np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-5)
    chainrule.manual_seed(0)
    w = nn.init.trunc_normal_(chainrule.zeros(20000), mean=1.0, std=2.0, a=0.0, b=1.5).data
    assert w.min() >= 0.0 and w.max() <= 1.5
    # The truncated normal's mean: 1 + 2 (phi(-0.5) - phi(0.25)) / (Phi(0.25) - Phi(-0.5)).
    assert abs(w.mean() - 0.7615) < 0.02
    with pytest.raises(DomainError, match="eye_: needs a 2-D tensor"):
        nn.init.eye_(chainrule.zeros(2, 2, 2))


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


def test_gumbel_softmax_samples_and_straight_through_gradient():
    chainrule.manual_seed(1)
    logits = chainrule.tensor([[0.0, 3.0, -1.0]] * 2000, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.data.sum(-1), 1.0, rtol=1e-6)
    frequencies = np.bincount(soft.data.argmax(-1), minlength=3) / 2000
    probabilities = np.exp([0.0, 3.0, -1.0]) / np.exp([0.0, 3.0, -1.0]).sum()
    np.testing.assert_allclose(frequencies, probabilities, atol=0.03)  # argmax ~ Categorical
    hard = F.gumbel_softmax(logits[:5], hard=True, dim=0)
    assert set(hard.data.sum(0).tolist()) == {1.0} and set(np.unique(hard.data)) <= {0.0, 1.0}
    (hard * chainrule.arange(3.0)).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.data[:5]).sum() > 0


def test_channel_dropout_zeroes_whole_channels():
    chainrule.manual_seed(3)
    out = F.dropout2d(chainrule.ones(4, 50, 2, 3), p=0.4).data
    per_channel = out.reshape(4, 50, -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # a channel is all kept or dropped
    np.testing.assert_allclose(np.unique(out), [0.0, 1 / 0.6], rtol=1e-6)
    assert 0.3 < (per_channel[..., 0] == 0).mean() < 0.5
    layer = nn.Dropout1d(0.5)
    assert layer(chainrule.ones(3, 4)).shape == (3, 4)
    np.testing.assert_array_equal(layer.eval()(chainrule.ones(3, 4)).data, np.ones((3, 4)))
    with pytest.raises(ShapeError, match=r"dropout2d: input must have 3 \(unbatched\) or 4 dims"):
        F.dropout2d(chainrule.ones(2, 3))


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


def test_embedding_max_norm_renormalises_the_rows_it_looks_up():
    table = nn.Embedding(4, 2, max_norm=1.0)
    with chainrule.no_grad():
        table.weight.copy_(chainrule.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, 0.0]]))
    table(chainrule.tensor([0, 1]))
    norms = np.linalg.norm(table.weight.data, axis=1)
    np.testing.assert_allclose(norms[:2], [1.0, 0.5], rtol=1e-6)
    assert norms[2] == 10.0  # not looked up: unchanged


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
