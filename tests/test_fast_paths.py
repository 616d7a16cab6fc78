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


def _linear_both(torch, x: np.ndarray, weight: np.ndarray, bias, view):
    """(output, input grad, weight grad, bias grad) of F.linear(view(x), weight, bias) with a
    fixed upstream gradient, in chainrule and in PyTorch."""
    results = []
    for lib, F in ((chainrule, chainrule.nn.functional), (torch, torch.nn.functional)):
        leaves = [lib.tensor(a, requires_grad=True) for a in (x, weight)]
        b = None if bias is None else lib.tensor(bias, requires_grad=True)
        out = F.linear(view(leaves[0]), leaves[1], b)
        g = np.cos(np.arange(out.numel())).reshape(tuple(out.shape)).astype(x.dtype)
        out.backward(lib.tensor(g))
        grads = [t.grad.numpy() for t in leaves] + ([] if b is None else [b.grad.numpy()])
        results.append([out.detach().numpy(), *grads])
    return results


VIEWS = {
    "as is": lambda t: t,
    "transposed leading dims": lambda t: t.transpose(0, 1),
    "every other feature": lambda t: t[..., ::2],
    "feature-major": lambda t: t.transpose(-1, -2).transpose(-1, -2).flip(-1),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 5, 12), (2, 3, 4, 12)])
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_on_3d_and_4d_inputs_agrees_with_pytorch(torch, dtype, shape, view, with_bias):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(dtype)
    features = shape[-1] // 2 if view == "every other feature" else shape[-1]
    weight = rng.standard_normal((7, features)).astype(dtype)
    bias = rng.standard_normal(7).astype(dtype) if with_bias else None
    ours, theirs = _linear_both(torch, x, weight, bias, VIEWS[view])
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(ours, theirs):
        assert a.dtype == dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance)


def test_linear_on_a_folded_input_is_one_matrix_product(monkeypatch):
    """The product over (batch, tokens) is one 2-D product, forward and for each gradient."""
    from chainrule.linalg import products

    shapes = []
    real = np.matmul

    def spy(a, b, *args, **kwargs):
        shapes.append((np.ndim(a), np.ndim(b)))
        return real(a, b, *args, **kwargs)

    monkeypatch.setattr(products.np, "matmul", spy)
    layer = chainrule.nn.Linear(6, 4)
    x = chainrule.randn(2, 3, 5, 6, requires_grad=True)
    layer(x).sum().backward()
    layer(x.detach())  # matmul_add with out=: writes the folded product into its own rows
    assert x.grad.shape == (2, 3, 5, 6) and layer.weight.grad.shape == (4, 6)
    assert all(dims == (2, 2) for dims in shapes)


def test_matmul_copies_only_operands_blas_cannot_read():
    from chainrule.linalg.products import _blas_operand

    a = np.arange(24.0).reshape(4, 6)
    assert _blas_operand(a) is a
    for readable in (a.T, a[:, :3], a[1:3], a[:, :3].T):
        assert np.shares_memory(_blas_operand(readable), a)
    for unreadable in (a[:, ::2], a[::-1], np.broadcast_to(a[:1], (4, 6))):
        copy = _blas_operand(unreadable)
        assert copy.flags.c_contiguous and np.array_equal(copy, unreadable)
    stack = np.ones((3, 4, 5)).swapaxes(-1, -2)  # column-major matrices: BLAS reads them
    assert _blas_operand(stack) is stack
    assert _blas_operand(stack, stacked=True).flags.c_contiguous  # small: copied, faster
    x = chainrule.from_numpy(a[:, ::2]).requires_grad_()  # shares the strided array
    y = chainrule.from_numpy(np.arange(12.0).reshape(3, 4)[:, ::-1])
    out = x @ y
    out.sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), a[:, ::2] @ y.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((4, 4)) @ y.numpy().T)


def test_matmul_jvp_over_a_folded_stack(torch):
    rng = np.random.default_rng(4)
    x, dx = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 3, 5))
    w, dw = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    _, tangent = chainrule.func.jvp(
        lambda a, b: a @ b,
        (chainrule.tensor(x), chainrule.tensor(w)),
        (chainrule.tensor(dx), chainrule.tensor(dw)),
    )
    _, t_tangent = torch.func.jvp(
        lambda a, b: a @ b, (torch.tensor(x), torch.tensor(w)), (torch.tensor(dx), torch.tensor(dw))
    )
    np.testing.assert_allclose(tangent.numpy(), t_tangent.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_scores_with_a_transposed_stack_agree_with_pytorch(torch, dtype):
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 3, 8, 4)).astype(dtype) for _ in range(3))
    results = []
    for lib in (chainrule, torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        scores = leaves[0] @ leaves[1].transpose(-2, -1)
        out = scores.softmax(-1) @ leaves[2]
        out.backward(lib.ones_like(out))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in leaves])
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(*results):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=tolerance, atol=tolerance)
