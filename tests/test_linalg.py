"""matmul, dot, outer, einsum, erf and gelu beyond the generic op properties (test_ops.py):
error messages, erf's accuracy, einsum's subscript rules, and known derivative values."""

import math

import numpy as np
import pytest

import chainrule as cr
from chainrule import DomainError, ShapeError
from chainrule.special import erf


def _t(*shape, seed=0):
    """A float64 tensor of standard normal values that requires grad."""
    values = np.random.default_rng(seed).standard_normal(shape)
    return cr.tensor(values, requires_grad=True)


# erf on arrays.


def test_erf_matches_math_erf_to_a_few_ulps_over_the_real_line():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.uniform(-7, 7, 20_000),
        rng.standard_normal(5_000) * 0.3,
        np.geomspace(1e-300, 30, 2_000),
        -np.geomspace(1e-300, 30, 2_000),
        np.linspace(0.46, 0.48, 201),  # where Cody's first and second intervals meet
        np.linspace(3.99, 4.01, 201),  # second and third
        [0.46875, 4.0, 5.9, 6.0, 26.5, 1e10, 1e308, 5e-324, -5e-324],
    ])  # fmt: skip
    expected = np.array([math.erf(v) for v in x])
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        np.testing.assert_allclose(erf(x), expected, rtol=1e-15, atol=0)


def test_erf_of_zeros_infinities_and_nan():
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        out = erf(np.array([0.0, -0.0, np.inf, -np.inf, np.nan]))
    assert out[:4].tolist() == [0.0, 0.0, 1.0, -1.0]
    assert not np.signbit(out[0]) and np.signbit(out[1])
    assert np.isnan(out[4])


def test_erf_keeps_float32_and_promotes_integers():
    x32 = np.linspace(-4, 4, 101, dtype=np.float32)
    out = erf(x32)
    assert out.dtype == np.float32
    expected = [math.erf(v) for v in x32.astype(np.float64)]
    np.testing.assert_allclose(out, expected, rtol=1e-7, atol=1e-7)
    ints = erf(np.array([0, 1, -2]))
    assert ints.dtype == np.float64
    np.testing.assert_allclose(ints, [0.0, math.erf(1), math.erf(-2)], rtol=1e-15)


# erf and gelu on tensors.


def test_erf_second_derivative_is_minus_2x_times_the_first():
    values = np.array([-1.5, 0.0, 0.7, 2.0])
    x = cr.tensor(values, requires_grad=True)
    (first,) = cr.autograd.grad(cr.erf(x).sum(), x, create_graph=True)
    (second,) = cr.autograd.grad(first.sum(), x)
    slope = 2 / math.sqrt(math.pi) * np.exp(-(values**2))
    np.testing.assert_allclose(first.detach().numpy(), slope, rtol=1e-14)
    np.testing.assert_allclose(
        second.detach().numpy(), -2 * values * slope, rtol=1e-14, atol=1e-300
    )


def test_gelu_values_and_derivatives_from_the_normal_distribution():
    values = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])
    x = cr.tensor(values, requires_grad=True)
    y = cr.gelu(x)
    cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in values])
    pdf = np.exp(-(values**2) / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(y.detach().numpy(), values * cdf, rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(y.detach().numpy()[4], 0.8413447460685429, rtol=1e-15)
    (first,) = cr.autograd.grad(y.sum(), x, create_graph=True)
    (second,) = cr.autograd.grad(first.sum(), x)
    np.testing.assert_allclose(first.detach().numpy(), cdf + values * pdf, rtol=1e-14)
    np.testing.assert_allclose(
        second.detach().numpy(), pdf * (2 - values**2), rtol=1e-13, atol=1e-300
    )


def test_gelu_tanh_is_close_to_exact_but_not_equal():
    x = cr.tensor(np.linspace(-3, 3, 13))
    gap = np.abs(cr.gelu(x, "tanh").detach().numpy() - cr.gelu(x).detach().numpy())
    assert 1e-5 < gap.max() < 1e-3


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(DomainError, match=r"gelu: approximate must be 'none' or 'tanh', got 'x'"):
        cr.gelu(cr.ones(2), approximate="x")


# matmul, dot, outer.


@pytest.mark.parametrize(
    ("x_shape", "y_shape", "message"),
    [
        ((3, 4), (5, 2), r"matmul: shapes \(3, 4\) and \(5, 2\) do not align: 4 \(last dim of a\) "
                         r"!= 5 \(second-last of b\)"),
        ((3, 4), (5,), r"matmul: shapes \(3, 4\) and \(5,\) do not align: 4 \(last dim of a\) "
                       r"!= 5 \(length of b\)"),
        ((), (3,), r"matmul: shapes \(\) and \(3,\): a 0-d operand has no dimension"),
        ((3,), (), r"matmul: shapes \(3,\) and \(\): a 0-d operand"),
        ((2, 3, 4), (3, 4, 5), r"matmul: shapes \(2, 3, 4\) and \(3, 4, 5\) do not align: batch "
                               r"dims \(2,\) and \(3,\) do not broadcast"),
    ],
)  # fmt: skip
def test_matmul_names_the_shapes_that_do_not_fit(x_shape, y_shape, message):
    with pytest.raises(ShapeError, match=message):
        cr.zeros(*x_shape) @ cr.zeros(*y_shape)


def test_matmul_of_two_vectors_is_their_inner_product_with_swapped_gradients():
    x = cr.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = cr.tensor(np.array([3.0, 4.0]), requires_grad=True)
    out = x @ y
    assert out.shape == () and out.item() == 11.0
    out.backward()
    assert x.grad.tolist() == [3.0, 4.0] and y.grad.tolist() == [1.0, 2.0]


def test_vector_times_batch_sums_the_gradient_over_the_batch():
    x, y = _t(3), _t(2, 3, 4, seed=1)
    (x @ y).sum().backward()
    np.testing.assert_allclose(
        x.grad.detach().numpy(), y.detach().numpy().sum(axis=(0, 2)), rtol=1e-14
    )
    np.testing.assert_allclose(
        y.grad.detach().numpy(), np.broadcast_to(x.detach().numpy()[:, None], (2, 3, 4))
    )


def test_array_at_tensor_uses_the_reflected_matmul():
    a = np.arange(6.0).reshape(2, 3)
    y = _t(3, 4)
    out = a @ y
    assert isinstance(out, cr.Tensor)
    out.sum().backward()
    np.testing.assert_allclose(y.grad.detach().numpy(), np.repeat(a.sum(0)[:, None], 4, axis=1))


def test_dot_and_outer_give_known_values():
    x, y = cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0, 5.0])
    assert cr.dot(x, x).item() == 5.0
    assert cr.outer(x, y).tolist() == [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]


def test_dot_and_outer_need_vectors():
    with pytest.raises(ShapeError, match=r"dot: expects two 1-D tensors, got shapes \(2, 2\)"):
        cr.dot(cr.ones(2, 2), cr.ones(2))
    with pytest.raises(ShapeError, match=r"dot: shapes \(2,\) and \(3,\) differ in length"):
        cr.dot(cr.ones(2), cr.ones(3))
    with pytest.raises(ShapeError, match=r"outer: expects two 1-D tensors, got shapes \(2,\) and "):
        cr.outer(cr.ones(2), cr.ones(()))


# einsum.


def test_einsum_implicit_output_sorts_letters_uppercase_first_like_numpy():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    for equation in ("ba,aC", "Ba,aC", "ij,jk", "...i,ij"):
        assert cr.einsum(equation, a, b).shape == np.einsum(equation, a, b).shape


def test_einsum_sums_ellipsis_dims_left_out_of_the_output_as_pytorch_does():
    x = _t(2, 3, 4)
    out = cr.einsum("...i->i", x)
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy().sum(axis=(0, 1)))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), np.ones((2, 3, 4)))


def test_einsum_gradient_of_a_triple_diagonal_lives_on_that_diagonal():
    x = _t(3, 3, 3)
    cr.einsum("iii->i", x).backward(cr.tensor(np.array([1.0, 2.0, 3.0])))
    expected = np.zeros((3, 3, 3))
    expected[[0, 1, 2], [0, 1, 2], [0, 1, 2]] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(x.grad.detach().numpy(), expected)


def test_einsum_with_many_operands_and_a_list_matches_the_product():
    xs = [_t(2, 3, seed=0), _t(3, 3, seed=1), _t(3, 4, seed=2), _t(4, 2, seed=3)]
    out = cr.einsum("ij,jk,kl,lm->im", xs)
    np.testing.assert_allclose(
        out.detach().numpy(),
        xs[0].detach().numpy()
        @ xs[1].detach().numpy()
        @ xs[2].detach().numpy()
        @ xs[3].detach().numpy(),
    )
    assert cr.gradcheck(lambda *ts: cr.einsum("ij,jk,kl,lm->im", *ts), xs, atol=1e-7)
    assert cr.gradgradcheck(lambda *ts: cr.einsum("ij,jk,kl,lm->im", *ts), xs, atol=1e-7)


def test_einsum_takes_arrays_beside_tensors_and_differentiates_only_tensors():
    a = np.arange(6.0).reshape(2, 3)
    x = _t(3)
    out = cr.einsum("ij,j->i", a, x)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), a.sum(0))


@pytest.mark.parametrize(
    ("equation", "shapes", "message"),
    [
        ("ij,jk->ik", [(2, 3)], r"einsum: equation 'ij,jk->ik' has 2 operand terms but 1 "),
        ("i#->i", [(2, 3)], r"einsum: unexpected '#' in equation 'i#->i'"),
        ("ij->i,j", [(2, 3)], r"einsum: unexpected ',' in equation"),
        ("i..j->i", [(2, 3)], r"einsum: '.' must appear as one '...' per term"),
        ("ijk->i", [(2, 3)], r"einsum: operand 0 has shape \(2, 3\) but its subscripts 'ijk' "
                             r"name 3 dimensions"),
        ("i->i", [(2, 3)], r"einsum: operand 0 has shape \(2, 3\) but its subscripts 'i' name 1"),
        ("ij,jk", [(2, 3), (4, 5)], r"einsum: subscript 'j' has size 3 in operand 0 but 4 in "
                                    r"operand 1 \(shapes \(2, 3\) and \(4, 5\)\)"),
        ("...i,...i", [(2, 3), (4, 3)], r"einsum: dims under '...' have size 2 in operand 0 "
                                        r"but 4 in operand 1"),
        ("ii->i", [(2, 3)], r"einsum: subscript 'i' repeats in operand 0 \(shape \(2, 3\)\) "
                            r"with different sizes 2 and 3"),
        ("ij->ii", [(2, 2)], r"einsum: output subscript 'i' appears more than once"),
        ("ij->k", [(2, 2)], r"einsum: output subscript 'k' does not appear in any operand"),
        ("ij", [], r"einsum: 'ij' was given no operands"),
    ],
)  # fmt: skip
def test_einsum_explains_equations_that_do_not_fit(equation, shapes, message):
    with pytest.raises(ShapeError, match=message):
        cr.einsum(equation, *[cr.ones(*s) for s in shapes])
