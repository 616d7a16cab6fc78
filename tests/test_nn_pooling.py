"""The pooling modules against PyTorch, fractional max pooling, unpooling, the
``*_with_indices`` forms and the 3-D pooling errors. The 2-D pooling rows themselves
(chainrule.ops.pooling) are tested in test_conv.py; more pooling layers are rows of the tables in
test_nn_surface.py."""

import numpy as np
import pytest
from nn_checks import check_first_output as _check
from nn_checks import compare_with_cotangent as _compare

import chainrule
import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.errors import DomainError, OutOfRangeError, ShapeError

RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("MaxPool2d", (2,), {}),
        ("MaxPool2d", (3,), dict(stride=2, padding=1, dilation=(1, 2), ceil_mode=True)),
        ("AvgPool2d", (2,), {}),
        ("AvgPool2d", ((3, 2),), dict(stride=1, padding=1, count_include_pad=False)),
        ("AvgPool2d", (3,), dict(stride=2, ceil_mode=True, divisor_override=4)),
        ("AdaptiveAvgPool2d", ((None, 3),), {}),
        ("AdaptiveAvgPool2d", (2,), {}),
    ],
)
def test_pooling_modules_match_pytorch(name, args, kwargs, torch):
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    _compare(ours, theirs, [RNG.standard_normal((2, 3, 7, 6))], torch)


def test_max_pool2d_module_returns_indices(torch):
    x = RNG.standard_normal((1, 2, 4, 4))
    _, indices = nn.MaxPool2d(2, return_indices=True)(chainrule.tensor(x))
    _, expected = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(indices.data, expected.numpy())


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


def test_pool3d_errors_name_the_op_and_sizes():
    with pytest.raises(ShapeError, match=r"max_pool3d: input must be \(N, C, D, H, W\)"):
        F.max_pool3d(cr.zeros(2, 3), 2)
    with pytest.raises(DomainError, match="avg_pool3d: padding .* at most half of kernel_size"):
        F.avg_pool3d(cr.zeros(1, 1, 4, 4, 4), 2, padding=2)
    with pytest.raises(ShapeError, match="adaptive_avg_pool3d: output_size must be an int or 3"):
        F.adaptive_avg_pool3d(cr.zeros(1, 1, 4, 4, 4), (2, 2))
    with pytest.raises(DomainError, match="lp_pool2d: norm_type must be a nonzero number"):
        F.lp_pool2d(cr.ones(1, 2, 2), 0, 2)
