"""The engine's short cuts give PyTorch's values and gradients: pow by multiplication, sqrt
and division for small whole and half exponents; linear and matmul as one matrix product over
the folded leading dims; embedding and indexing backward summed by sorted rows."""

import numpy as np
import pytest

import chainrule
from chainrule.ops import elementwise

EXPONENTS = [2, 2.0, 3, 3.0, 0.5, -0.5, -1, -1.0, -2, -2.0]
# PyTorch computes these without pow, so its numbers are these bit for bit (its 0.5 and the
# gradient of -2, x ** -3, run pow, which is within an ulp).
BIT_FOR_BIT = {2, 3, -0.5, -1, -2}


def _bases(dtype) -> np.ndarray:
    """Zeros of both signs, negative and positive bases, tiny and huge ones, inf."""
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1.0, -1.0, 1e-30, -3.5, 2.0, 1e30, np.inf, -np.inf]
    return np.concatenate([special, rng.standard_normal(90) * 3]).astype(dtype)


def _both_pow(torch, x: np.ndarray, exponent):
    """(value, gradient) of x ** exponent in chainrule and in PyTorch, g = 1."""
    ours = chainrule.tensor(x, requires_grad=True)
    out = chainrule.pow(ours, exponent)
    out.backward(chainrule.ones_like(out))
    theirs = torch.tensor(x, requires_grad=True)
    t_out = torch.pow(theirs, exponent)
    t_out.backward(torch.ones_like(t_out))
    return (out.detach().numpy(), ours.grad.numpy()), (
        t_out.detach().numpy(),
        theirs.grad.numpy(),
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_pow_short_cuts_agree_with_pytorch(torch, dtype, exponent):
    x = _bases(dtype)
    with np.errstate(all="ignore"):
        (value, grad), (t_value, t_grad) = _both_pow(torch, x, exponent)
    assert value.dtype == grad.dtype == dtype
    nan_same = np.isnan(value) == np.isnan(t_value)
    assert nan_same.all()
    if exponent in BIT_FOR_BIT:
        assert np.array_equal(value, t_value, equal_nan=True)
    else:
        np.testing.assert_allclose(value, t_value, rtol=2 * np.finfo(dtype).eps, atol=0)
    if exponent - 1 in BIT_FOR_BIT or exponent - 1 == 1:
        assert np.array_equal(grad, t_grad, equal_nan=True)
    else:
        np.testing.assert_allclose(grad, t_grad, rtol=4 * np.finfo(dtype).eps, atol=0)
    if exponent == 0.5:  # -0.0 ** 0.5 is +0.0, as pow's, not sqrt's -0.0
        assert x[1] == 0 and np.signbit(x[1]) and not np.signbit(value[1])


@pytest.mark.parametrize("exponent", [2, 3.0, 0.5, -1, -2.0])
def test_pow_short_cuts_on_a_non_contiguous_input_and_out(exponent):
    base = np.abs(np.random.default_rng(1).standard_normal((6, 8))).astype(np.float32) + 0.5
    view = base[::2, ::-3]
    expected = np.power(view.astype(np.float64), exponent)
    got = chainrule.tensor(view) ** exponent
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    assert got.dtype == chainrule.float32
    # The forward writes into a given array, even the base's own (a compiled memory plan).
    x = view.copy()
    elementwise._power(x, exponent, out=x)
    np.testing.assert_allclose(x, expected, rtol=1e-6)


def test_pow_leaves_integer_and_tensor_exponents_to_numpy():
    ints = chainrule.tensor([1, 2, 3])
    assert (ints**2).tolist() == [1, 4, 9] and (ints**2).dtype == chainrule.int64
    x = chainrule.tensor([4.0, 9.0])
    assert (x ** chainrule.tensor([0.5, 0.5])).tolist() == [2.0, 3.0]


def test_pow_second_derivative_through_the_short_cut(torch):
    x = np.array([-1.5, 0.5, 2.0])
    for exponent in (3.0, -2, 0.5):
        ours = chainrule.tensor(np.abs(x) if exponent == 0.5 else x, requires_grad=True)
        (g,) = chainrule.autograd.grad(ours.pow(exponent).sum(), ours, create_graph=True)
        (gg,) = chainrule.autograd.grad(g.sum(), ours)
        theirs = torch.tensor(ours.detach().numpy(), requires_grad=True)
        (t_g,) = torch.autograd.grad(theirs.pow(exponent).sum(), theirs, create_graph=True)
        (t_gg,) = torch.autograd.grad(t_g.sum(), theirs)
        np.testing.assert_allclose(gg.numpy(), t_gg.numpy(), rtol=1e-12)
