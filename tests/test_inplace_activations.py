"""Activations and dropouts with ``inplace=True`` (and ``relu_``...): the result is written into
the input by the engine's in-place writer, so a non-leaf input, or a view of one, gets
PyTorch's values and gradients, and a leaf that requires grad is refused as in PyTorch."""

import numpy as np
import pytest
from conftest import TORCH_TOL

import chainrule as cr
import chainrule.nn as nn
import chainrule.nn.functional as F
from chainrule import func
from chainrule.errors import GraphError

#: name -> positional arguments after the input (rrelu outside training is deterministic).
ACTIVATIONS = {
    "relu": (), "leaky_relu": (0.1,), "silu": (), "elu": (1.3,), "selu": (), "mish": (),
    "hardtanh": (-1.5, 2.0), "relu6": (), "celu": (1.5,), "hardsigmoid": (), "hardswish": (),
    "threshold": (0.5, -2.0), "rrelu": (0.1, 0.3, False),
}  # fmt: skip
#: name -> keyword arguments of the module with inplace=True.
MODULES = {
    "ReLU": {}, "LeakyReLU": {"negative_slope": 0.2}, "SiLU": {}, "ELU": {"alpha": 0.7},
    "SELU": {}, "Mish": {}, "Hardtanh": {"min_val": -0.5, "max_val": 1.0}, "ReLU6": {},
    "CELU": {"alpha": 2.0}, "Hardsigmoid": {}, "Hardswish": {},
    "Threshold": {"threshold": 0.1, "value": 3.0}, "RReLU": {"lower": 0.2, "upper": 0.4},
}  # fmt: skip
UNDERSCORED = {
    "relu_": (), "elu_": (0.5,), "selu_": (), "celu_": (0.5,), "leaky_relu_": (0.3,),
    "hardtanh_": (-0.5, 0.5), "threshold_": (0.0, 1.0), "rrelu_": (0.2, 0.4),
}  # fmt: skip


def _inputs():
    rng = np.random.default_rng(7)
    # Spread over the activations' kinks (hardswish at ±3, hardtanh's bounds), away from them.
    return rng.uniform(-5, 5, (3, 4)), rng.normal(size=(3, 4))


def _run(lib, functional, fn, view: bool):
    """a -> y = 2a, ``fn`` applied in place to y (or to its rows 1:), then backward of
    sum(y * y * w): the values of y and the gradient of a, as arrays."""
    a_np, w_np = _inputs()
    a = lib.tensor(a_np, requires_grad=True)
    y = a * 2
    target = y[1:] if view else y
    out = fn(functional, target)
    assert out is target
    (y * y * lib.tensor(w_np)).sum().backward()
    values = y.detach().numpy() if lib is not cr else y.data
    grad = a.grad.numpy() if lib is not cr else a.grad.data
    return values, grad


def _assert_same(torch, functional, fn, view: bool, rtol: float = TORCH_TOL["rtol"]):
    ours = _run(cr, F, fn, view)
    theirs = _run(torch, functional, fn, view)
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, reference, atol=TORCH_TOL["atol"], rtol=rtol)


def _rtol(name: str) -> float:
    # PyTorch's float64 hardsigmoid backward multiplies by 1/6 rounded to float32.
    return 1e-7 if name.lower() == "hardsigmoid" else TORCH_TOL["rtol"]


@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_inplace_activation_matches_pytorch(torch, name, view):
    args = ACTIVATIONS[name]
    _assert_same(
        torch,
        torch.nn.functional,
        lambda functional, x: getattr(functional, name)(x, *args, inplace=True),
        view,
        _rtol(name),
    )


@pytest.mark.parametrize("name", sorted(UNDERSCORED))
def test_underscored_activation_matches_pytorch(torch, name):
    args = UNDERSCORED[name]
    _assert_same(
        torch, torch.nn.functional, lambda functional, x: getattr(functional, name)(x, *args), True
    )


@pytest.mark.parametrize("name", sorted(MODULES))
def test_inplace_module_matches_pytorch(torch, name):
    kwargs = MODULES[name]

    def apply(functional, x):
        library = nn if functional is F else torch.nn
        return getattr(library, name)(**kwargs, inplace=True).eval()(x)

    _assert_same(torch, torch.nn.functional, apply, False, _rtol(name))


def test_two_inplace_activations_in_a_row_match_pytorch(torch):
    def apply(functional, x):
        functional.silu(x, inplace=True)
        return functional.elu(x, 0.5, inplace=True)

    _assert_same(torch, torch.nn.functional, apply, True)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_inplace_activation_on_a_leaf_is_refused(torch, name):
    args = ACTIVATIONS[name]
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(torch.nn.functional, name)(torch.ones(2, requires_grad=True), *args, inplace=True)
    with pytest.raises(GraphError, match=rf"{name}_: a leaf tensor that requires grad"):
        getattr(F, name)(cr.ones(2, requires_grad=True), *args, inplace=True)


def test_inplace_activation_on_a_view_of_a_leaf_is_refused():
    leaf = cr.ones(2, 3, requires_grad=True)
    with pytest.raises(GraphError, match="elu_: this tensor is a view of a leaf"):
        F.elu(leaf[0], inplace=True)


def test_inplace_activation_on_a_leaf_under_no_grad_writes_it():
    leaf = cr.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    with cr.no_grad():
        out = F.elu(leaf, inplace=True)
    assert out is leaf
    np.testing.assert_allclose(leaf.data, [np.expm1(-1.0), 0.0, 2.0])
    assert leaf.grad_fn is None and leaf._version == 1


def test_inplace_activation_bumps_the_version_and_keeps_the_dtype():
    y = cr.tensor([-1.0, 2.0], dtype=cr.float32, requires_grad=True) * 1
    F.mish(y, inplace=True)
    assert y._version == 1 and y.dtype == cr.float32
    assert y.grad_fn is not None


def test_rrelu_training_inplace_gradient_is_the_drawn_slope():
    a = cr.tensor(np.linspace(-3, 3, 12), requires_grad=True)
    y = a * 1
    F.rrelu(y, 0.1, 0.3, training=True, inplace=True)
    y.sum().backward()
    x = np.linspace(-3, 3, 12)
    slopes = np.where(x > 0, 1.0, y.data / np.where(x == 0, 1.0, x))
    np.testing.assert_allclose(a.grad.data, slopes, rtol=1e-12)
    assert np.all((a.grad.data[x <= 0] >= 0.1) & (a.grad.data[x <= 0] <= 0.3))


# Dropouts: the mask is random, so an in-place call is checked against the out-of-place call
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
    return result.data.copy(), a.grad.data, w


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
    np.testing.assert_array_equal(a.grad.data, y.data)  # kept: 2 with gradient 2; dropped: 0


def test_inplace_dropout_with_p_one_zeroes_the_input():
    y = cr.ones(2, 3, requires_grad=True) * 1
    assert F.dropout(y, 1.0, True, True) is y
    np.testing.assert_array_equal(y.data, np.zeros((2, 3)))


@pytest.mark.parametrize("name", ["elu", "mish", "silu", "leaky_relu", "hardswish"])
def test_inplace_activation_works_under_the_transforms(name):
    x = cr.tensor(np.random.default_rng(5).normal(size=(3, 4)))
    fn = getattr(F, name)

    def in_place(v):
        return fn(v * 1, inplace=True)

    np.testing.assert_allclose(func.vmap(in_place)(x).data, fn(x).data, rtol=1e-12)
    _, tangent = func.jvp(in_place, (x,), (cr.ones_like(x),))
    np.testing.assert_allclose(tangent.data, func.jvp(fn, (x,), (cr.ones_like(x),))[1].data)
    hessian = func.hessian(lambda v: in_place(v).sum())(x[0])
    np.testing.assert_allclose(hessian.data, func.hessian(lambda v: fn(v).sum())(x[0]).data)
