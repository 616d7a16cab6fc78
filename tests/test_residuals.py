"""Residuals: a row's node keeps values its forward computed on the way (GELU's Phi(x), layer
norm's mean and deviation), so its backward does not compute them again; a backward on
Tensors, forward mode and the compiler compute them again with ops."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import special
from chainrule.op import Op


def _count_erf(monkeypatch) -> list:
    calls = []
    erf = special.erf

    def counted(x):
        calls.append(np.shape(x))
        return erf(x)

    monkeypatch.setattr(cr.xp, "_erf", counted)
    monkeypatch.setattr(cr.xp, "erf", cr.xp._either("erf", counted))
    return calls


def test_gelu_backward_reuses_the_forwards_erf(monkeypatch):
    calls = _count_erf(monkeypatch)
    x = cr.tensor(np.linspace(-3, 3, 7), requires_grad=True)
    y = cr.gelu(x)
    assert len(calls) == 1
    assert sorted(y.grad_fn.saved) == ["approximate", "cdf", "x"]  # not out
    y.sum().backward()
    assert len(calls) == 1  # the backward computed no erf
    x64 = np.linspace(-3, 3, 7)
    cdf = 0.5 * (1 + special.erf(x64 / np.sqrt(2)))
    slope = cdf + x64 * np.exp(-0.5 * x64 * x64) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(x.grad.numpy(), slope, rtol=1e-14)


def test_no_residuals_are_made_without_a_node(monkeypatch):
    x = cr.tensor([0.5, 1.0])
    assert cr.gelu(x).grad_fn is None
    with cr.no_grad():
        assert cr.gelu(cr.tensor([0.5], requires_grad=True)).grad_fn is None


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_the_output_may_change_in_place_after_the_forward_as_in_pytorch(torch, approximate):
    values = np.linspace(-2, 2, 9)
    x = cr.tensor(values, requires_grad=True)
    y = cr.gelu(x, approximate=approximate)
    y.mul_(0)  # PyTorch's GELU node keeps its input only: this is allowed there too
    (y + x).sum().backward()
    tx = torch.tensor(values, requires_grad=True)
    ty = torch.nn.functional.gelu(tx, approximate=approximate)
    ty.mul_(0)
    (ty + tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_layer_norm_keeps_mean_and_deviation_and_allows_writes_to_its_output(torch):
    rng = np.random.default_rng(0)
    values, g = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    x = cr.tensor(values, requires_grad=True)
    y = cr.nn.functional.layer_norm(x, (6,))
    node = y.grad_fn
    while node.name != "standardize":
        node = node.edges[0][0]
    np.testing.assert_allclose(node.saved["mean"], values.mean(-1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(node.saved["std"], np.sqrt(values.var(-1, keepdims=True) + 1e-5))
    y.add_(1)
    y.backward(cr.tensor(g))
    tx = torch.tensor(values, requires_grad=True)
    ty = torch.nn.functional.layer_norm(tx, (6,))
    ty.add_(1)
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_a_backward_on_tensors_computes_the_residuals_again_and_differentiates_them(torch):
    values = np.linspace(-2, 2, 5)
    x = cr.tensor(values, requires_grad=True)
    (g,) = cr.autograd.grad(cr.gelu(x).sum(), x, create_graph=True)
    g.sum().backward()
    tx = torch.tensor(values, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.nn.functional.gelu(tx).sum(), tx, create_graph=True)
    tg.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_forward_mode_computes_the_residuals_it_needs():
    values = np.linspace(-2, 2, 5)
    out, tangent = cr.func.jvp(cr.gelu, (cr.tensor(values),), (cr.ones(5, dtype=cr.float64),))
    cdf = 0.5 * (1 + special.erf(values / np.sqrt(2)))
    np.testing.assert_allclose(
        tangent.numpy(), cdf + values * np.exp(-(values**2) / 2) / np.sqrt(2 * np.pi)
    )


def test_a_row_gives_residuals_with_the_forward_that_makes_them():
    with pytest.raises(ValueError, match="residuals and forward_saving go together"):
        Op("half", lambda x: x / 2, vjp=(lambda g, h: g,), residuals={"h": lambda x: x})
