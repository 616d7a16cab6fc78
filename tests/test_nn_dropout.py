"""The dropouts (modules and functional forms): masks and moments (the numbers come from
chainrule's generator, so they are checked by their statistics and against PyTorch's
formulas), train and eval modes, and ``inplace=True``: an in-place call is checked against the
out-of-place call drawing the same mask (same seed), and the gradient against the mask and
scale. ``torch.dropout``'s own signature is tested in test_nn_toplevel.py."""

import numpy as np
import pytest

import chainrule
import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.errors import GraphError, ShapeError

RNG = np.random.default_rng(0)


# Masks and moments.


def test_dropout_statistics_and_scaling():
    chainrule.manual_seed(0)
    x = chainrule.ones(200_000, dtype=chainrule.float64)
    out = F.dropout(x, p=0.3).numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.005
    np.testing.assert_allclose(out[kept], 1 / 0.7)
    assert abs(out.mean() - 1.0) < 0.01  # inverted scaling keeps the expectation


def test_dropout_is_deterministic_under_manual_seed():
    x = chainrule.randn(50, 20)
    chainrule.manual_seed(7)
    first = F.dropout(x, 0.5).numpy().copy()
    chainrule.manual_seed(7)
    second = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, F.dropout(x, 0.5).numpy())


def test_dropout_gradient_uses_the_mask():
    chainrule.manual_seed(3)
    x = chainrule.tensor(np.ones((10, 10)), requires_grad=True)
    out = F.dropout(x, 0.4)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())


def test_dropout_edges():
    x = chainrule.ones(4)
    assert F.dropout(x, 0.5, training=False) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros(4))


def test_channel_dropout_zeroes_whole_channels():
    chainrule.manual_seed(3)
    out = F.dropout2d(chainrule.ones(4, 50, 2, 3), p=0.4).detach().numpy()
    per_channel = out.reshape(4, 50, -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # a channel is all kept or dropped
    np.testing.assert_allclose(np.unique(out), [0.0, 1 / 0.6], rtol=1e-6)
    assert 0.3 < (per_channel[..., 0] == 0).mean() < 0.5
    layer = nn.Dropout1d(0.5)
    assert layer(chainrule.ones(3, 4)).shape == (3, 4)
    np.testing.assert_array_equal(
        layer.eval()(chainrule.ones(3, 4)).detach().numpy(), np.ones((3, 4))
    )
    with pytest.raises(ShapeError, match=r"dropout2d: input must have 3 \(unbatched\) or 4 dims"):
        F.dropout2d(chainrule.ones(2, 3))


def test_dropout3d_zeroes_whole_channels_and_scales_the_rest():
    cr.manual_seed(0)
    out = F.dropout3d(cr.ones(4, 50, 2, 2, 2), p=0.3).detach().numpy()
    per_channel = out.reshape(4, 50, -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # one value per channel
    np.testing.assert_allclose(np.unique(out), [0.0, 1 / 0.7], rtol=1e-6)
    assert 0.2 < (per_channel[..., 0] == 0).mean() < 0.4
    assert F.dropout3d(cr.ones(3, 2, 2, 2), training=False).shape == (3, 2, 2, 2)
    with pytest.raises(ShapeError, match=r"dropout3d: input must have 4 .* or 5 dims"):
        F.dropout3d(cr.ones(2, 3))


def test_alpha_dropout_keeps_zero_mean_and_unit_variance_like_pytorch(torch):
    cr.manual_seed(0)
    torch.manual_seed(0)
    a = RNG.normal(size=200_000)
    ours = F.alpha_dropout(cr.tensor(a), 0.2, training=True).detach().numpy()
    theirs = torch.nn.functional.alpha_dropout(torch.tensor(a), 0.2, training=True).numpy()
    for sample in (ours, theirs):
        assert abs(sample.mean()) < 0.01 and abs(sample.var() - 1) < 0.02
    # The dropped value and the affine map are PyTorch's: compare their sets on a constant.
    ones_ours = set(np.round(F.alpha_dropout(cr.ones(5000, dtype=cr.float64), 0.2, True).numpy(),
                             10))  # fmt: skip
    ones_theirs = set(np.round(torch.nn.functional.alpha_dropout(
        torch.ones(5000, dtype=torch.float64), 0.2, True).numpy(), 10))  # fmt: skip
    assert ones_ours == ones_theirs
    assert F.alpha_dropout(cr.tensor(a), 0.2) is not None  # training defaults to False
    assert np.array_equal(F.alpha_dropout(cr.tensor(a), 0.2).detach().numpy(), a)


def test_feature_alpha_dropout_drops_whole_channels_and_modules_follow_training_mode():
    cr.manual_seed(1)
    out = F.feature_alpha_dropout(cr.ones(8, 16, 5), 0.5, training=True).detach().numpy()
    assert np.all(out.min(-1) == out.max(-1)) and len(np.unique(out)) == 2
    for layer in (nn.AlphaDropout(0.5), nn.FeatureAlphaDropout(0.5), nn.Dropout3d(0.5)):
        x = cr.ones(2, 4, 2, 2, 2)
        assert not np.array_equal(layer(x).detach().numpy(), x.detach().numpy())
        assert np.array_equal(layer.eval()(x).detach().numpy(), x.detach().numpy())
    assert repr(nn.AlphaDropout(0.2)) == "AlphaDropout(p=0.2, inplace=False)"


def test_dropout_module_train_and_eval():
    layer = nn.Dropout(0.25)
    x = chainrule.ones(100_000, dtype=chainrule.float64)
    chainrule.manual_seed(0)
    out = layer(x).numpy()
    assert abs((out == 0).mean() - 0.25) < 0.01
    np.testing.assert_allclose(out[out != 0], 1 / 0.75)
    assert layer.eval()(x) is x


# In place: the mask is random, so an in-place call is checked against the out-of-place call
# drawing the same mask (same seed), and the gradient against the mask and scale.

DROPOUTS = {
    "dropout": (6, 5), "dropout1d": (3, 8, 3), "dropout2d": (3, 8, 3, 3),
    "dropout3d": (3, 8, 2, 2, 2), "alpha_dropout": (6, 5), "feature_alpha_dropout": (3, 8, 3),
}  # fmt: skip


def _dropout(name, shape, inplace, view, p=0.4):
    """Dropout of y = a * 1 (or of its rows 1:); the values of y afterwards (or, out of place,
    of y with the dropped result in place of those rows) and the gradient of a."""
    cr.manual_seed(3)
    rng = np.random.default_rng(1)
    a, w = cr.tensor(rng.uniform(1, 2, shape), requires_grad=True), rng.normal(size=shape)
    y = a * 1
    target = y[1:] if view else y
    out = getattr(F, name)(target, p, True, inplace)
    assert (out is target) == inplace
    result = y if inplace else cr.cat([y[:1], out]) if view else out
    (result * cr.tensor(w)).sum().backward()
    return result.detach().numpy().copy(), a.grad.detach().numpy(), w


@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("name", sorted(DROPOUTS))
def test_inplace_dropout_equals_out_of_place_with_the_same_mask(name, view):
    values, grad, w = _dropout(name, DROPOUTS[name], True, view)
    expected_values, expected_grad, _ = _dropout(name, DROPOUTS[name], False, view)
    np.testing.assert_allclose(values, expected_values, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-12)
    if name.startswith("dropout"):  # gradient = mask * 1 / (1 - p), the inputs being nonzero
        rows = slice(1, None) if view else slice(None)
        kept = values[rows] != 0
        assert 0 < kept.mean() < 1
        np.testing.assert_allclose(grad[rows], w[rows] * kept / 0.6, rtol=1e-12)
    if view:  # the row outside the view passes unchanged
        np.testing.assert_allclose(grad[0], w[0], rtol=1e-12)


@pytest.mark.parametrize("name", sorted(DROPOUTS))
def test_inplace_dropout_on_a_leaf_is_refused_while_training(torch, name):
    shape = DROPOUTS[name]
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(torch.nn.functional, name)(torch.ones(shape, requires_grad=True), 0.5, True, True)
    with pytest.raises(GraphError, match=rf"{name}_: a leaf tensor that requires grad"):
        getattr(F, name)(cr.ones(shape, requires_grad=True), 0.5, True, True)
    leaf = cr.ones(shape, requires_grad=True)  # outside training the input passes, as PyTorch
    assert getattr(F, name)(leaf, 0.5, False, True) is leaf


def test_inplace_dropout_module_writes_into_its_input():
    cr.manual_seed(0)
    a = cr.ones(50, requires_grad=True)
    y = a * 1
    out = nn.Dropout(0.5, inplace=True)(y)
    assert out is y and y._version == 1
    y.sum().backward()
    np.testing.assert_array_equal(
        a.grad.detach().numpy(), y.detach().numpy()
    )  # kept: 2 with gradient 2; dropped: 0


def test_inplace_dropout_with_p_one_zeroes_the_input():
    y = cr.ones(2, 3, requires_grad=True) * 1
    assert F.dropout(y, 1.0, True, True) is y
    np.testing.assert_array_equal(y.detach().numpy(), np.zeros((2, 3)))
