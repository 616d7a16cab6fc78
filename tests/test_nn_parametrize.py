"""chainrule.nn.utils.parametrize and .parametrizations against PyTorch's: the same weights in
both libraries give the same parametrized values, state-dict keys, gradients with respect to
the originals, assignments through right_inverse, removals and SGD steps."""

import numpy as np
import pytest

import chainrule
from chainrule import nn
from chainrule.nn.utils import parametrizations, parametrize

RNG = np.random.default_rng(34)


def _symmetric(base):
    """The same parametrization class in either library: a symmetric matrix from its upper
    triangle, with a right_inverse."""

    class Symmetric(base.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

        def right_inverse(self, a):
            return a.triu()

    return Symmetric()


def _scale(base, factor):
    class Scale(base.nn.Module):
        def forward(self, x):
            return x * factor

        def right_inverse(self, y):
            return y / factor

    return Scale()


def _pair(torch, make, parametrize_both):
    """A float64 torch module and ours, parametrized the same way, with torch's state."""
    theirs = parametrize_both(torch, make(torch).double())
    ours = parametrize_both(chainrule, make(chainrule).double())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _check_same(ours, theirs, x, names):
    """Same output and the same gradients of the named parameters."""
    out_ours, out_theirs = ours(chainrule.tensor(x)), theirs(theirs_input(x))
    np.testing.assert_allclose(out_ours.detach().numpy(), out_theirs.detach().numpy(), rtol=1e-10)
    (out_ours**2).sum().backward()
    (out_theirs**2).sum().backward()
    mine, ref = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(mine) == list(ref)
    for name in names:
        np.testing.assert_allclose(mine[name].grad.numpy(), ref[name].grad.numpy(), rtol=1e-9)


def theirs_input(x):
    import torch

    return torch.tensor(x)


def _linear(base, n=4, m=4):
    return lambda lib: lib.nn.Linear(n, m)


def test_register_gives_pytorchs_values_keys_and_gradients(torch):
    def both(lib, module):
        return lib.nn.utils.parametrize.register_parametrization(module, "weight", _symmetric(lib))

    ours, theirs = _pair(torch, _linear(None), both)
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(ours) is nn.Linear
    assert parametrize.is_parametrized(ours) and parametrize.is_parametrized(ours, "weight")
    assert not parametrize.is_parametrized(ours, "bias")
    assert not parametrize.is_parametrized(nn.Linear(2, 2))
    w = ours.weight.detach().numpy()
    np.testing.assert_array_equal(w, w.T)
    _check_same(ours, theirs, RNG.normal(size=(5, 4)), ["parametrizations.weight.original"])


def test_assignment_goes_through_right_inverse_and_keeps_the_parameter(torch):
    def both(lib, module):
        return lib.nn.utils.parametrize.register_parametrization(module, "weight", _symmetric(lib))

    ours, theirs = _pair(torch, _linear(None), both)
    original = ours.parametrizations.weight.original
    value = RNG.normal(size=(4, 4))
    ours.weight = chainrule.tensor(value)
    theirs.weight = torch.tensor(value)
    assert ours.parametrizations.weight.original is original
    np.testing.assert_allclose(
        original.detach().numpy(), theirs.parametrizations.weight.original.detach().numpy()
    )
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    ours.weight = nn.Parameter(chainrule.tensor(value))  # a Parameter too is inverted
    assert ours.parametrizations.weight.original is original
    assert list(ours.state_dict()) == ["bias", "parametrizations.weight.original"]


def test_chained_parametrizations_and_sgd_step(torch):
    def both(lib, module):
        register = lib.nn.utils.parametrize.register_parametrization
        register(module, "weight", _symmetric(lib))
        return register(module, "weight", _scale(lib, 3.0))

    ours, theirs = _pair(torch, _linear(None), both)
    assert len(ours.parametrizations.weight) == 2
    x = RNG.normal(size=(3, 4))
    _check_same(ours, theirs, x, ["bias", "parametrizations.weight.original"])
    chainrule.optim.SGD(ours.parameters(), lr=0.1).step()
    torch.optim.SGD(theirs.parameters(), lr=0.1).step()
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    ours.weight = chainrule.tensor(np.eye(4) * 6)  # inverted last first: Scale, then Symmetric
    original = ours.parametrizations.weight.original.detach().numpy()
    np.testing.assert_allclose(original, np.eye(4) * 2)


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations(torch, leave_parametrized):
    def both(lib, module):
        return lib.nn.utils.parametrize.register_parametrization(module, "weight", _symmetric(lib))

    ours, theirs = _pair(torch, _linear(None), both)
    original = ours.parametrizations.weight.original
    for lib, module in ((parametrize, ours), (torch.nn.utils.parametrize, theirs)):
        lib.remove_parametrizations(module, "weight", leave_parametrized=leave_parametrized)
    assert type(ours) is nn.Linear and ours.weight is original
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    assert not hasattr(ours, "parametrizations")
    with pytest.raises(ValueError, match="no parametrization"):
        parametrize.remove_parametrizations(ours, "weight")


def test_checks_shape_and_names():
    class Halve(nn.Module):
        def forward(self, x):
            return x[:1]

    with pytest.raises(ValueError, match="shape"):
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", Halve())
    layer = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Halve(), unsafe=True)
    assert layer.weight.shape == (1, 2)
    with pytest.raises(chainrule.errors.DomainError, match="no parameter"):
        parametrize.register_parametrization(nn.Linear(2, 2), "kernel", Halve())


def test_cached_and_transfer():
    layer = parametrize.register_parametrization(nn.Linear(3, 3), "weight", _symmetric(chainrule))
    with parametrize.cached():
        with parametrize.cached():
            first = layer.weight
        assert layer.weight is first
    assert layer.weight is not first
    other = parametrize.transfer_parametrizations_and_params(layer, nn.Linear(3, 3))
    assert other.parametrizations.weight.original is layer.parametrizations.weight.original
    np.testing.assert_array_equal(other.weight.detach().numpy(), layer.weight.detach().numpy())


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_pytorch(torch, dim):
    def both(lib, module):
        return lib.nn.utils.parametrizations.weight_norm(module, dim=dim)

    ours, theirs = _pair(torch, lambda lib: lib.nn.Conv1d(2, 3, 2), both)
    names = ["parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert [n for n, _ in ours.named_parameters()] == ["bias", *names]
    _check_same(ours, theirs, RNG.normal(size=(2, 2, 5)), names)


@pytest.mark.parametrize("training", [True, False])
def test_spectral_norm_matches_pytorch(torch, training):
    def both(lib, module):
        return lib.nn.utils.parametrizations.spectral_norm(module, n_power_iterations=2)

    ours, theirs = _pair(torch, lambda lib: lib.nn.ConvTranspose1d(3, 2, 2), both)
    ours.train(training), theirs.train(training)
    _check_same(ours, theirs, RNG.normal(size=(1, 3, 4)), ["parametrizations.weight.original"])
    for key, value in theirs.state_dict().items():  # the power iteration's buffers too
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), rtol=1e-10)
    sigma = np.linalg.svd(theirs.parametrizations.weight.original.detach().numpy()[:, :, 0].T)[1]
    # A weight whose largest singular value stands well apart (3 against 1): the power
    # iterations at registration find it to many digits, whatever vector they start from.
    rng = np.random.default_rng(7)
    u, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    v, _ = np.linalg.qr(rng.normal(size=(5, 4)))
    linear = nn.Linear(5, 4).double()
    linear.weight.data = chainrule.tensor(u @ np.diag([3.0, 1.0, 0.5, 0.2]) @ v.T)
    layer = parametrizations.spectral_norm(linear)
    singular = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)
    assert singular[0] == pytest.approx(1.0, rel=1e-9) and sigma[0] > 0


@pytest.mark.parametrize(
    "shape, orthogonal_map, trivial",
    [
        ((4, 4), None, True),
        ((4, 4), "cayley", True),
        ((4, 4), "householder", True),
        ((5, 3), None, False),
        ((3, 5), "householder", False),
    ],
)
def test_orthogonal_matches_pytorch(torch, shape, orthogonal_map, trivial):
    def both(lib, module):
        return lib.nn.utils.parametrizations.orthogonal(
            module, orthogonal_map=orthogonal_map, use_trivialization=trivial
        )

    ours, theirs = _pair(torch, lambda lib: lib.nn.Linear(shape[1], shape[0]), both)
    w = ours.weight.detach().numpy()
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-12)
    _check_same(ours, theirs, RNG.normal(size=(2, shape[1])), ["parametrizations.weight.original"])


def test_orthogonal_starts_from_the_weight_as_pytorch(torch):
    weight = RNG.normal(size=(4, 4))
    ours, theirs = nn.Linear(4, 4).double(), torch.nn.Linear(4, 4).double()
    ours.weight = nn.Parameter(chainrule.tensor(weight))
    theirs.weight = torch.nn.Parameter(torch.tensor(weight))
    parametrizations.orthogonal(ours)
    torch.nn.utils.parametrizations.orthogonal(theirs)
    np.testing.assert_allclose(
        ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-12
    )
    with pytest.raises(ValueError, match="orthogonal_map"):
        parametrizations.orthogonal(nn.Linear(2, 2), orthogonal_map="qr")
