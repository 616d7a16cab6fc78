"""3-D layers, Lp/fractional pooling, unpooling, grid sampling, local response norms, channel
shuffle, multi_head_attention_forward and the torch.* layer functions: values and gradients
against PyTorch, module reprs, and the error messages."""

import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.errors import DomainError, OutOfRangeError, ShapeError


def _pair(rng, *shape):
    a = rng.standard_normal(shape)
    return cr.tensor(a, requires_grad=True), a


def _check(torch, ours, theirs, arrays, atol=1e-10):
    """ours(*chainrule tensors) and theirs(*torch tensors) agree in value and gradient."""
    xs = [cr.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = ours(*xs), theirs(*ts)
    out = out if isinstance(out, tuple) else (out,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for o, e in zip(out, expected):
        np.testing.assert_allclose(o.data, e.detach().numpy(), atol=atol)
    g = np.random.default_rng(1).standard_normal(out[0].shape)
    out[0].backward(cr.tensor(g))
    expected[0].backward(torch.tensor(g))
    for x, t in zip(xs, ts):
        assert (x.grad is None) == (t.grad is None)
        if x.grad is not None:
            np.testing.assert_allclose(x.grad.data, t.grad.numpy(), atol=atol)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("spatial", [2, 3])
def test_grid_sample_matches_pytorch_with_grid_gradients(torch, mode, padding_mode, align_corners,
                                                         spatial):  # fmt: skip
    rng = np.random.default_rng(spatial)
    image = rng.standard_normal((2, 3, 4, 5) if spatial == 2 else (2, 2, 3, 4, 5))
    grid = rng.uniform(-1.6, 1.6, (2, 3, 4, 2) if spatial == 2 else (2, 2, 3, 2, 3))
    args = (mode, padding_mode, align_corners)
    if mode == "nearest":  # PyTorch gives the grid a zero gradient; chainrule none
        theirs = torch.nn.functional.grid_sample
        _check(torch, lambda x: F.grid_sample(x, cr.tensor(grid), *args),
               lambda x: theirs(x, torch.tensor(grid), *args), [image])  # fmt: skip
    else:
        theirs = torch.nn.functional.grid_sample
        _check(torch, lambda x, g: F.grid_sample(x, g, *args),
               lambda x, g: theirs(x, g, *args), [image, grid])  # fmt: skip


def test_grid_sampler_takes_the_modes_as_numbers(torch):
    rng = np.random.default_rng(0)
    image, grid = rng.standard_normal((1, 2, 3, 3)), rng.uniform(-1, 1, (1, 2, 2, 2))
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == torch.nn.functional.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == torch.nn.functional.GRID_SAMPLE_PADDING_MODES
    ours = cr.grid_sampler_2d(cr.tensor(image), cr.tensor(grid), 0, 2, True)
    theirs = torch.grid_sampler_2d(torch.tensor(image), torch.tensor(grid), 0, 2, True)
    np.testing.assert_allclose(ours.data, theirs.numpy(), atol=1e-12)


def test_grid_sample_errors_name_the_problem():
    image = cr.zeros(1, 1, 3, 3)
    with pytest.raises(ShapeError, match=r"grid_sample: a 4-D input .* needs a grid of shape"):
        F.grid_sample(image, cr.zeros(1, 2, 2, 3))
    with pytest.raises(DomainError, match="bicubic is not supported"):
        F.grid_sample(image, cr.zeros(1, 2, 2, 2), mode="bicubic")
    with pytest.raises(DomainError, match="grid_sampler: interpolation_mode must be in"):
        cr.grid_sampler(image, cr.zeros(1, 2, 2, 2), 5, 0, False)
    with pytest.raises(ShapeError, match=r"affine_grid: theta must have shape \(1, 2, 3\)"):
        F.affine_grid(cr.zeros(1, 3, 4), (1, 1, 2, 2))


@pytest.mark.parametrize("spatial", [2, 3])
def test_fractional_max_pool_matches_pytorch_exactly_in_float32(torch, spatial):
    rng = np.random.default_rng(spatial)
    shape = (2, 3, 9, 11) if spatial == 2 else (2, 3, 7, 9, 8)
    x = rng.standard_normal(shape).astype(np.float32)
    samples = rng.random((2, 3, spatial)).astype(np.float32)
    pool = getattr(F, f"fractional_max_pool{spatial}d")
    theirs_pool = getattr(torch.nn.functional, f"fractional_max_pool{spatial}d")
    out, index = pool(cr.tensor(x), 3, output_ratio=(0.5,) * spatial, return_indices=True,
                      _random_samples=cr.tensor(samples))  # fmt: skip
    expected, expected_index = theirs_pool(torch.tensor(x), 3, output_ratio=(0.5,) * spatial,
                                           return_indices=True,
                                           _random_samples=torch.tensor(samples))  # fmt: skip
    np.testing.assert_array_equal(out.data, expected.numpy())
    np.testing.assert_array_equal(index.data, expected_index.numpy())
    assert index.dtype == np.int64


def test_fractional_max_pool_layer_draws_its_own_offsets():
    cr.manual_seed(0)
    layer = nn.FractionalMaxPool2d(2, output_size=(3, 3), return_indices=True)
    out, index = layer(cr.randn(2, 4, 7, 7))
    assert out.shape == index.shape == (2, 4, 3, 3)
    with pytest.raises(DomainError, match="exactly one of output_size and output_ratio"):
        nn.FractionalMaxPool3d(2)
    with pytest.raises(ShapeError, match=r"_random_samples must have shape \(1, 1, 2\)"):
        F.fractional_max_pool2d(cr.zeros(1, 1, 4, 4), 2, 2, _random_samples=cr.zeros(1, 1, 3))


@pytest.mark.parametrize("spatial", [1, 2, 3])
def test_max_unpool_inverts_max_pool_with_a_given_output_size(torch, spatial):
    rng = np.random.default_rng(spatial)
    x = rng.permutation(2 * 3 * 5**spatial).reshape((2, 3) + (5,) * spatial).astype(float)
    pool, unpool = f"max_pool{spatial}d", f"max_unpool{spatial}d"

    def run(lib, f, t):
        values, index = getattr(f, pool)(t, 2, stride=2, return_indices=True)
        return getattr(f, unpool)(values, index, 2, output_size=t.shape[-spatial:])

    _check(torch, lambda t: run(cr, F, t), lambda t: run(torch, torch.nn.functional, t), [x])
    layer = getattr(nn, f"MaxUnpool{spatial}d")(2)
    assert repr(layer) == repr(getattr(torch.nn, f"MaxUnpool{spatial}d")(2))


def test_max_unpool_refuses_indices_outside_the_output():
    with pytest.raises(OutOfRangeError, match=r"max_unpool2d: index 9 is out of range for an "
                                              r"output of size \(2, 2\)"):  # fmt: skip
        F.max_unpool2d(cr.ones(1, 1, 1, 1), cr.tensor([[[[9]]]]), 2)
    with pytest.raises(ShapeError, match="max_unpool1d: indices of shape"):
        F.max_unpool1d(cr.ones(1, 1, 2), cr.tensor([[[0]]]), 2)


def test_with_indices_forms_match_pytorch(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 5, 4))
    for name, args in [("max_pool1d_with_indices", (3, 2, 1)), ("max_pool2d_with_indices", (2,)),
                       ("max_pool3d_with_indices", (2, 1, 1)),
                       ("adaptive_max_pool1d_with_indices", (3,)),
                       ("adaptive_max_pool2d_with_indices", ((2, 3),)),
                       ("adaptive_max_pool3d_with_indices", ((2, 3, 1),))]:  # fmt: skip
        dims = int(name.split("pool")[1][0])
        data = x.reshape(2, 3, -1)[..., :30] if dims == 1 else x if dims == 3 else x[..., 0]
        out, index = getattr(F, name)(cr.tensor(data), *args)
        expected, expected_index = getattr(torch.nn.functional, name)(torch.tensor(data), *args)
        np.testing.assert_array_equal(out.data, expected.numpy())
        np.testing.assert_array_equal(index.data, expected_index.numpy())
    out, index = cr.max_pool1d_with_indices(cr.tensor(x[0, 0]), 2)
    np.testing.assert_array_equal(index.data, torch.max_pool1d_with_indices(
        torch.tensor(x[0, 0]), 2)[1].numpy())  # fmt: skip


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


def test_batch_norm_3d_trains_running_statistics_as_pytorch(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2, 2, 3, 2))
    ours, theirs = nn.BatchNorm3d(2, momentum=None), torch.nn.BatchNorm3d(2, momentum=None).double()
    assert repr(ours) == repr(theirs)
    for _ in range(2):
        _check(torch, ours, theirs, [x])
    np.testing.assert_allclose(ours.running_var.data, theirs.running_var.numpy(), atol=1e-12)
    with pytest.raises(ShapeError, match="BatchNorm3d: expected 5D input"):
        ours(cr.zeros(2, 2, 3, 3))


def test_conv_transpose3d_layer_matches_pytorch(torch):
    rng = np.random.default_rng(0)
    theirs = torch.nn.ConvTranspose3d(4, 6, (2, 3, 1), stride=(2, 1, 3), padding=(1, 1, 0),
                                      output_padding=(1, 0, 2), groups=2, dilation=(1, 2, 1),
                                      dtype=torch.float64)  # fmt: skip
    ours = nn.ConvTranspose3d(4, 6, (2, 3, 1), stride=(2, 1, 3), padding=(1, 1, 0),
                              output_padding=(1, 0, 2), groups=2, dilation=(1, 2, 1),
                              dtype=cr.float64)  # fmt: skip
    ours.load_state_dict({k: cr.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    assert repr(ours) == repr(theirs)
    _check(torch, ours, theirs, [rng.standard_normal((2, 4, 3, 4, 2))])
    out = ours(cr.zeros(4, 3, 4, 2, dtype=cr.float64), output_size=(5, 6, 5))
    assert out.shape == tuple(theirs(torch.zeros(4, 3, 4, 2, dtype=torch.float64),
                                     output_size=(5, 6, 5)).shape)  # fmt: skip


def test_fold_and_unfold_layers_match_pytorch(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 6))
    unfold = (nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
              torch.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)))  # fmt: skip
    assert repr(unfold[0]) == repr(unfold[1])
    _check(torch, *unfold, [x])
    columns = unfold[1](torch.tensor(x)).numpy()
    fold = (nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
            torch.nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)))  # fmt: skip
    assert repr(fold[0]) == repr(fold[1])
    _check(torch, *fold, [columns])


def test_cross_map_lrn2d_values_match_pytorch(torch):
    # PyTorch's own backward for this layer fails on batches (a narrow past the end), so the
    # values are compared here and the gradient checked against finite differences.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 7, 2, 3))
    for size in (1, 2, 3, 4, 5):
        ours, theirs = (
            nn.CrossMapLRN2d(size, 0.1, 0.6, 2.0),
            torch.nn.CrossMapLRN2d(size, 0.1, 0.6, 2.0),
        )
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(cr.tensor(x)).data, theirs(torch.tensor(x)).numpy(),
                                   atol=1e-12)  # fmt: skip
    small = cr.tensor(x[:1, :4, :1, :2], requires_grad=True)
    assert cr.gradcheck(nn.CrossMapLRN2d(3, 0.1, 0.6, 2.0), (small,))


def test_local_response_norm_and_channel_shuffle_refuse_bad_inputs():
    with pytest.raises(ShapeError, match="local_response_norm: input must have 3 or more dims"):
        F.local_response_norm(cr.zeros(2, 3), 2)
    with pytest.raises(ShapeError, match=r"channel_shuffle: .* C divisible by groups=4"):
        cr.channel_shuffle(cr.zeros(1, 6, 2), 4)
    with pytest.raises(DomainError, match="channel_shuffle: groups must be a positive int"):
        cr.channel_shuffle(cr.zeros(1, 6, 2), 0)


def test_pool3d_errors_name_the_op_and_sizes():
    with pytest.raises(ShapeError, match=r"max_pool3d: input must be \(N, C, D, H, W\)"):
        F.max_pool3d(cr.zeros(2, 3), 2)
    with pytest.raises(DomainError, match="avg_pool3d: padding .* at most half of kernel_size"):
        F.avg_pool3d(cr.zeros(1, 1, 4, 4, 4), 2, padding=2)
    with pytest.raises(ShapeError, match="adaptive_avg_pool3d: output_size must be an int or 3"):
        F.adaptive_avg_pool3d(cr.zeros(1, 1, 4, 4, 4), (2, 2))
    with pytest.raises(DomainError, match="lp_pool2d: norm_type must be a nonzero number"):
        F.lp_pool2d(cr.ones(1, 2, 2), 0, 2)


def _attention(lib, f, options, q, k, v, in_w, in_b, bias_k, bias_v, out_w, out_b):
    """multi_head_attention_forward of lib with 2 heads; ``options`` holds the masks (arrays),
    flags, and whether to use bias_k/bias_v ("bias")."""
    options = dict(options)
    use_bias = options.pop("bias", False)
    zero_attn = options.pop("add_zero_attn", False)
    extra = {key: lib.tensor(value) if isinstance(value, np.ndarray) else value
             for key, value in options.items()}  # fmt: skip
    return f.multi_head_attention_forward(
        q, k, v, q.shape[-1], 2, in_w, in_b, bias_k if use_bias else None,
        bias_v if use_bias else None, zero_attn, 0.0, out_w, out_b, **extra,
    )  # fmt: skip


def test_multi_head_attention_forward_matches_pytorch(torch):
    rng = np.random.default_rng(0)
    e, length, source, n = 6, 3, 4, 2
    arrays = [rng.standard_normal(shape) for shape in [
        (length, n, e), (source, n, e), (source, n, e), (3 * e, e), (3 * e,), (1, 1, e),
        (1, 1, e), (e, e), (e,)]]  # fmt: skip
    padding = np.array([[False, False, True, False], [False, False, False, True]])
    mask = np.triu(np.ones((length, source), bool), 2)
    theirs = torch.nn.functional
    for options in [{}, {"add_zero_attn": True, "key_padding_mask": padding},
                    {"attn_mask": mask, "average_attn_weights": False, "bias": True}]:  # fmt: skip
        _check(torch, lambda *xs, o=options: _attention(cr, F, o, *xs),
               lambda *xs, o=options: _attention(torch, theirs, o, *xs), arrays)  # fmt: skip


def test_torch_layer_functions_take_pytorchs_positional_order(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2, 4))
    w, b = rng.standard_normal(2), rng.standard_normal(2)
    for name, ours_args, their_args in [
        ("batch_norm", (True, 0.1, 1e-5, False), (True, 0.1, 1e-5, False)),
        ("instance_norm", (True, 0.1, 1e-5, False), (True, 0.1, 1e-5, False)),
    ]:  # fmt: skip
        ours = getattr(cr, name)(cr.tensor(x), cr.tensor(w), cr.tensor(b), None, None, *ours_args)
        theirs = getattr(torch, name)(torch.tensor(x), torch.tensor(w), torch.tensor(b), None,
                                      None, *their_args)  # fmt: skip
        np.testing.assert_allclose(ours.data, theirs.numpy(), atol=1e-12)
    expected = torch.layer_norm(torch.tensor(x), [4]).numpy()
    np.testing.assert_allclose(cr.layer_norm(cr.tensor(x), [4]).data, expected, atol=1e-12)
    np.testing.assert_allclose(cr.group_norm(cr.tensor(x), 2, cr.tensor(w)).data,
                               torch.group_norm(torch.tensor(x), 2, torch.tensor(w)).numpy(),
                               atol=1e-12)  # fmt: skip
    table = rng.standard_normal((5, 3))
    index = np.array([[0, 4], [4, 2]])
    expected = torch.embedding(torch.tensor(table), torch.tensor(index)).numpy()
    np.testing.assert_array_equal(cr.embedding(cr.tensor(table), cr.tensor(index)).data, expected)
    for name in ("rms_norm", "bilinear", "pixel_shuffle", "pixel_unshuffle", "conv_transpose3d",
                 "max_pool3d", "channel_shuffle", "grid_sampler_3d"):  # fmt: skip
        assert callable(getattr(cr, name)), name


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
