"""The fast paths of small activations and reductions: erf by one matrix product (float32 and
float64), gelu's in-place forward and slope, leaky_relu by maximum/minimum, log_softmax as
(x - max) - log(sum), max(x, dim) values picked at their indices, argmax. Values and gradients
against PyTorch, float32 and float64, contiguous and not; second derivatives by gradcheck;
special values (inf, nan, -inf rows, signed zeros) as before."""

import math

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.special import erf, erfc

RNG = np.random.default_rng(35)
DTYPES = [np.float32, np.float64]
TOL = {np.float32: {"rtol": 2e-6, "atol": 2e-6}, np.float64: {"rtol": 1e-12, "atol": 1e-12}}


def _inputs(torch, dtype, transposed, scale=2.0):
    """Leaf tensors (one a transposed view when ``transposed``) of a (6, 10) input."""
    x = (RNG.standard_normal((10, 6) if transposed else (6, 10)) * scale).astype(dtype)
    mine, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    if transposed:
        return mine, theirs, mine.t(), theirs.t()
    return mine, theirs, mine, theirs


ACTIVATIONS = {
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "leaky_relu_0": lambda F, x: F.leaky_relu(x, 0.0),
    "leaky_relu_steep": lambda F, x: F.leaky_relu(x, 3.0),
    "leaky_relu_negative": lambda F, x: F.leaky_relu(x, -0.5),
    "softmax": lambda F, x: F.softmax(x, -1),
    "softmax_0": lambda F, x: F.softmax(x, 0),
    "log_softmax": lambda F, x: F.log_softmax(x, -1),
    "log_softmax_0": lambda F, x: F.log_softmax(x, 0),
    "max_values": lambda F, x: x.max(1)[0],
    "max_values_keepdim": lambda F, x: x.max(-1, keepdim=True)[0],
    "max_values_0": lambda F, x: x.max(0)[0],
    "min_values": lambda F, x: x.min(1)[0],
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_values_and_gradients_match_pytorch(torch, name, transposed, dtype):
    f = ACTIVATIONS[name]
    x, tx, xin, txin = _inputs(torch, dtype, transposed)
    out, expected = f(F, xin), f(torch.nn.functional, txin)
    assert out.dtype == getattr(cr, np.dtype(dtype).name)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **TOL[dtype])
    g = RNG.standard_normal(tuple(expected.shape)).astype(dtype)
    (out * cr.tensor(g)).sum().backward()
    (expected * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_second_derivatives_by_gradcheck(name):
    f = ACTIVATIONS[name]
    x = cr.tensor(RNG.standard_normal((3, 5)) * 2, requires_grad=True)
    assert cr.autograd.gradgradcheck(lambda t: f(F, t), (x,))


def test_max_and_argmax_indices_match_pytorch(torch):
    x = RNG.standard_normal((5, 7)).astype(np.float32)
    x[1, 3] = x[1, 5] = 9.0  # a tie: the first index
    x[2, 4] = np.nan  # nan is the maximum
    for dim in (0, 1, -1):
        values, indices = cr.tensor(x).max(dim)
        expected = torch.tensor(x).max(dim)
        np.testing.assert_array_equal(values.numpy(), expected.values.numpy())
        np.testing.assert_array_equal(indices.numpy(), expected.indices.numpy())
        assert indices.dtype == cr.int64
        got = cr.tensor(x).argmax(dim)
        np.testing.assert_array_equal(got.numpy(), torch.tensor(x).argmax(dim).numpy())
    assert cr.tensor(x).argmax().item() == torch.tensor(x).argmax().item()


def test_softmax_special_rows_match_pytorch(torch):
    inf = np.inf
    x = np.array([[0.0, -inf, 1.0], [-inf, -inf, -inf], [inf, 0.0, 1.0], [np.nan, 0.0, 1.0],
                  [1000.0, -1000.0, 0.0]])  # fmt: skip
    rows = {"softmax": x, "log_softmax": x[[0, 1, 3, 4]]}  # log_softmax: +inf row below
    for name, rows_x in rows.items():
        got = getattr(F, name)(cr.tensor(rows_x), -1).numpy()
        expected = getattr(torch.nn.functional, name)(torch.tensor(rows_x), -1).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-15, atol=0)  # infs and nans alike
    # A row holding +inf: x - logsumexp(x), as before (PyTorch gives nan for the whole row).
    np.testing.assert_array_equal(F.log_softmax(cr.tensor(x[2]), -1).numpy(), [np.nan, -inf, -inf])
    empty = cr.tensor(np.zeros((2, 0)))
    assert F.log_softmax(empty, -1).shape == (2, 0)


def test_leaky_relu_special_values_match_pytorch(torch):
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3.0, -3.0], np.float32)
    for slope in (0.2, 0.0, 1.0, 3.0, -0.5):
        got = F.leaky_relu(cr.tensor(x), slope).numpy()
        expected = torch.nn.functional.leaky_relu(torch.tensor(x), slope).numpy()
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


def test_erf_float64_and_erfc_hold_their_precision_over_the_line():
    x = np.r_[np.linspace(-8, 8, 4001), [0.46875, -0.46875, 4.0, -4.0, 1e-300, 30.0]]
    exact = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), exact, rtol=1e-15, atol=0)
    np.testing.assert_allclose(erfc(x), [math.erfc(v) for v in x], rtol=2e-15, atol=0)
    inner = x[np.abs(x) <= 4]  # no tail beyond 4: the branch without a gather
    np.testing.assert_allclose(erf(inner), [math.erf(v) for v in inner], rtol=1e-15, atol=0)
    assert erf(np.zeros((0,))).shape == (0,) and erf(np.float32(0.5)).dtype == np.float32


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_float32_matches_pytorch_to_its_rounding(torch, approximate):
    x = np.linspace(-6, 6, 2001, dtype=np.float32)
    got = F.gelu(cr.tensor(x), approximate=approximate).numpy()
    expected = torch.nn.functional.gelu(torch.tensor(x), approximate=approximate).numpy()
    assert got.dtype == np.float32
    # 1 + erf cancels for x < -3: both libraries' float32 roundings differ by up to 1e-6 there.
    np.testing.assert_allclose(got, expected, rtol=4e-7, atol=1.2e-6)
    zero = F.gelu(cr.tensor(np.float32(0.5)), approximate=approximate)  # a 0-d input
    assert zero.item() == pytest.approx(float(torch.nn.functional.gelu(torch.tensor(0.5))), 1e-3)
