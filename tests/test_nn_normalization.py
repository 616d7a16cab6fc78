"""The normalisation layers and functions (batch, instance, layer, group, RMS and local
response norms): initial state, running statistics in training and evaluation, BatchNorm3d, and
Lua Torch's CrossMapLRN2d. Most of them are also rows of the tables in test_nn_layers.py,
test_nn_functional.py and test_nn_surface.py (with the running-statistics tests that read
those rows)."""

import numpy as np
import pytest
from conftest import TORCH_TOL
from nn_checks import check_first_output as _check

import chainrule
import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.errors import ShapeError

RNG = np.random.default_rng(1234)


def normal(*shape, scale=1.0):
    return RNG.normal(0, scale, shape)


@pytest.mark.parametrize("make", [lambda lib: lib.nn.BatchNorm2d(5),
                                  lambda lib: lib.nn.LayerNorm([2, 3])])  # fmt: skip
def test_norm_init_matches_torch(torch, make):
    ours, theirs = make(chainrule).state_dict(), make(torch).state_dict()
    assert list(ours) == list(theirs)
    for mine, expected in zip(ours.values(), theirs.values()):
        np.testing.assert_array_equal(mine.numpy(), expected.numpy())


def test_batch_norm_eval_without_running_stats_uses_the_batch():
    layer = nn.BatchNorm1d(2, track_running_stats=False).eval()
    out = layer(chainrule.tensor([[1.0, 5.0], [3.0, 7.0]]))
    np.testing.assert_allclose(out.detach().numpy(), [[-1, -1], [1, 1]], atol=1e-4)


def test_batch_norm_eval_does_not_update():
    layer = nn.BatchNorm1d(2).eval()
    layer(chainrule.randn(4, 2))
    np.testing.assert_array_equal(layer.running_mean.numpy(), [0.0, 0.0])
    assert layer.num_batches_tracked.item() == 0


def test_batch_norm_updates_running_stats_like_torch(torch):
    mean, var = np.zeros(3), np.ones(3)
    ours = chainrule.tensor(mean), chainrule.tensor(var)
    theirs = torch.tensor(mean), torch.tensor(var)
    for step in range(3):
        x = normal(5, 3, 2) + step
        F.batch_norm(chainrule.tensor(x), *ours, training=True, momentum=0.3)
        torch.nn.functional.batch_norm(torch.tensor(x), *theirs, training=True, momentum=0.3)
    for mine, expected in zip(ours, theirs):
        np.testing.assert_allclose(mine.numpy(), expected.numpy(), **TORCH_TOL)


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
