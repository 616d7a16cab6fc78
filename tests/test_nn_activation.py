"""The activations (modules, functional forms and their in-place forms) against PyTorch:
values and gradients in float64, reprs, kinks, random slopes, errors; ``inplace=True`` (and
``relu_``...) writes the result into the input through the engine's in-place writer, so a
non-leaf input, or a view of one, gets PyTorch's values and gradients, and a leaf that requires
grad is refused as in PyTorch. More activations are rows of the tables in test_nn_layers.py,
test_nn_functional.py and test_nn_surface.py."""

import numpy as np
import pytest
from conftest import TORCH_TOL
from nn_checks import check_with_weights as _check

import chainrule
import chainrule as cr
import chainrule.nn.functional as F
from chainrule import func, nn
from chainrule.errors import DomainError, GraphError, ShapeError

RNG = np.random.default_rng(0)


def normal(*shape, scale=1.0):
    return RNG.normal(0, scale, shape)


# Modules, functional forms, random slopes.


def test_activation_modules_match_pytorch_values_gradients_and_reprs(torch):
    x = RNG.normal(0, 3, (2, 3, 4, 5))
    for name, args in [("CELU", (0.5,)), ("Hardshrink", (0.3,)), ("Softshrink", (0.3,)),
                       ("Hardsigmoid", ()), ("Hardswish", ()), ("LogSigmoid", ()),
                       ("Tanhshrink", ()), ("Threshold", (0.1, 20.0)), ("Softmin", (1,)),
                       ("Softmax2d", ()), ("RReLU", (0.1, 0.3))]:  # fmt: skip
        ours, theirs = getattr(nn, name)(*args).eval(), getattr(torch.nn, name)(*args).eval()
        assert repr(ours) == repr(theirs)
        # PyTorch's float64 hardsigmoid backward multiplies by 1/6 rounded to float32.
        _check(torch, ours, theirs, x, rtol=1e-7 if name == "Hardsigmoid" else 1e-10)


def test_inplace_flags_and_reprs_match_pytorch(torch):
    for name, args in [("CELU", (2.0, True)), ("Threshold", (0.1, 20, True)),
                       ("RReLU", (0.1, 0.3, True)), ("Hardsigmoid", (True,))]:  # fmt: skip
        assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    x = cr.tensor([-4.0, -1.0, 2.0])
    assert nn.Hardswish(inplace=True)(x) is x
    np.testing.assert_allclose(x.detach().numpy(), [0.0, -1 / 3, 10 / 6])


@pytest.mark.parametrize(
    "name, args",
    [("relu_", ()), ("elu_", (0.5,)), ("selu_", ()), ("celu_", (0.5,)), ("leaky_relu_", (0.2,)),
     ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.1, -3.0)), ("rrelu_", (0.1, 0.3))],
)  # fmt: skip
def test_inplace_functional_forms_write_into_the_input_like_pytorch(torch, name, args):
    a = RNG.normal(0, 2, (3, 4))
    ours, theirs = cr.tensor(a.copy()), torch.tensor(a.copy())
    out = getattr(F, name)(ours, *args)
    getattr(torch.nn.functional, name)(theirs, *args)
    assert out is ours
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-12)
    # Through a non-leaf the write is recorded: gradients flow as for the out-of-place form.
    _check(torch, lambda x: getattr(F, name)(x * 1.0, *args),
           lambda x: getattr(torch.nn.functional, name)(x * 1.0, *args), a)  # fmt: skip


def test_inplace_forms_refuse_a_leaf_that_requires_grad():
    with pytest.raises(GraphError, match="relu_: a leaf tensor that requires grad"):
        F.relu_(cr.ones(2, requires_grad=True))


def test_activation_edge_gradients_match_pytorch(torch):
    # The kinks themselves: hardshrink/softshrink at ±lambd, hardswish/hardsigmoid at ±3,
    # threshold at the threshold, celu at 0, rrelu (eval) at 0.
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    for name, args in [("hardshrink", ()), ("softshrink", ()), ("hardswish", ()),
                       ("hardsigmoid", ()), ("threshold", (0.5, 0.0)), ("celu", (0.5,)),
                       ("rrelu", ())]:  # fmt: skip
        _check(torch, lambda t, name=name, args=args: getattr(F, name)(t, *args),
               lambda t, name=name, args=args: getattr(torch.nn.functional, name)(t, *args),
               x, rtol=1e-7 if name == "hardsigmoid" else 1e-10)  # fmt: skip


def test_logsigmoid_stays_finite_for_large_inputs(torch):
    _check(torch, F.logsigmoid, torch.nn.functional.logsigmoid, np.array([-800.0, 0.0, 800.0]))


def test_softmin_without_dim_takes_pytorchs_legacy_dim_and_warns(torch):
    a = RNG.normal(size=(2, 3))
    with pytest.warns(UserWarning, match="softmin: implicit dimension"):
        out = F.softmin(cr.tensor(a))
    with pytest.warns(UserWarning):
        expected = torch.nn.functional.softmin(torch.tensor(a))
    np.testing.assert_allclose(out.detach().numpy(), expected.numpy(), rtol=1e-12)


def test_rrelu_training_draws_slopes_in_range_and_differentiates_by_them():
    cr.manual_seed(0)
    x = cr.tensor(-np.ones(2000), requires_grad=True)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -out.detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01
    out.sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), slopes)
    positive = F.rrelu(cr.tensor([2.0]), training=True)
    assert positive.item() == 2.0
    cr.manual_seed(3)
    again = F.rrelu(cr.tensor(-np.ones(5)), training=True)
    cr.manual_seed(3)
    assert np.array_equal(
        again.detach().numpy(), F.rrelu(cr.tensor(-np.ones(5)), training=True).detach().numpy()
    )


def test_module_rrelu_is_random_in_training_and_fixed_in_eval():
    layer = nn.RReLU(0.1, 0.3)
    x = cr.tensor(-np.ones(100))
    assert len(set(layer(x).tolist())) > 1
    assert set(layer.eval()(x).tolist()) == {-0.2}


def test_hardshrink_and_prelu_methods_and_torch_level_functions(torch):
    a, w = RNG.normal(size=(2, 3, 4)), np.array([0.1, 0.2, 0.3])
    _check(torch, lambda x: x.hardshrink(0.7), lambda x: x.hardshrink(0.7), a)
    _check(torch, lambda x, y: x.prelu(y), lambda x, y: x.prelu(y), a, w)
    _check(torch, lambda x, y: cr.prelu(x, y), lambda x, y: torch.prelu(x, y), a, w)
    assert F.prelu is cr.ops.prelu and F.hardshrink is cr.ops.hardshrink


def test_activation_errors_name_the_op_and_the_values():
    with pytest.raises(DomainError, match=r"softshrink: lambd must be non-negative, got -1"):
        F.softshrink(cr.ones(2), -1.0)
    with pytest.raises(DomainError, match=r"celu: alpha must not be 0"):
        F.celu(cr.ones(2), 0.0)
    with pytest.raises(DomainError, match=r"rrelu: lower 0.5 must not exceed upper 0.1"):
        F.rrelu(cr.ones(2), 0.5, 0.1)
    with pytest.raises(ShapeError, match=r"Softmax2d: expected a 3-D .* got shape \(2, 3\)"):
        nn.Softmax2d()(cr.ones(2, 3))
    with pytest.raises(ShapeError, match=r"prelu: weight of shape \(2,\) must have 1 element"):
        cr.ones(2, 3).prelu(cr.ones(2))


def test_gumbel_softmax_samples_and_straight_through_gradient():
    chainrule.manual_seed(1)
    logits = chainrule.tensor([[0.0, 3.0, -1.0]] * 2000, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(-1), 1.0, rtol=1e-6)
    frequencies = np.bincount(soft.detach().numpy().argmax(-1), minlength=3) / 2000
    probabilities = np.exp([0.0, 3.0, -1.0]) / np.exp([0.0, 3.0, -1.0]).sum()
    np.testing.assert_allclose(frequencies, probabilities, atol=0.03)  # argmax ~ Categorical
    hard = F.gumbel_softmax(logits[:5], hard=True, dim=0)
    assert set(hard.detach().numpy().sum(0).tolist()) == {1.0} and set(
        np.unique(hard.detach().numpy())
    ) <= {0.0, 1.0}
    (hard * chainrule.arange(5.0)[:, None]).sum().backward()  # varies along dim 0
    assert logits.grad is not None and np.abs(logits.grad.detach().numpy()[:5]).sum() > 0


# In place.


def test_inplace_activation_writes_into_its_input():
    x = normal(4)
    ours = chainrule.tensor(x, requires_grad=True) * 1.0
    result = F.relu(ours, inplace=True)
    assert result is ours
    np.testing.assert_array_equal(ours.detach().numpy(), np.maximum(x, 0))


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
    values = y.detach().numpy()
    grad = a.grad.numpy()
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
    np.testing.assert_allclose(leaf.detach().numpy(), [np.expm1(-1.0), 0.0, 2.0])
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
    slopes = np.where(x > 0, 1.0, y.detach().numpy() / np.where(x == 0, 1.0, x))
    np.testing.assert_allclose(a.grad.detach().numpy(), slopes, rtol=1e-12)
    assert np.all(
        (a.grad.detach().numpy()[x <= 0] >= 0.1) & (a.grad.detach().numpy()[x <= 0] <= 0.3)
    )


@pytest.mark.parametrize("name", ["elu", "mish", "silu", "leaky_relu", "hardswish"])
def test_inplace_activation_works_under_the_transforms(name):
    x = cr.tensor(np.random.default_rng(5).normal(size=(3, 4)))
    fn = getattr(F, name)

    def in_place(v):
        return fn(v * 1, inplace=True)

    np.testing.assert_allclose(
        func.vmap(in_place)(x).detach().numpy(), fn(x).detach().numpy(), rtol=1e-12
    )
    _, tangent = func.jvp(in_place, (x,), (cr.ones_like(x),))
    np.testing.assert_allclose(
        tangent.detach().numpy(), func.jvp(fn, (x,), (cr.ones_like(x),))[1].detach().numpy()
    )
    hessian = func.hessian(lambda v: in_place(v).sum())(x[0])
    np.testing.assert_allclose(
        hessian.detach().numpy(), func.hessian(lambda v: fn(v).sum())(x[0]).detach().numpy()
    )
