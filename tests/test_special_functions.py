"""Special functions and integer/float-bits helpers at their edges, against PyTorch and exact
values: poles of the gamma family, sinc at 0, xlogy(0, 0), logit at 0 and 1, igamma's
edges and missing a-gradient, frexp of 0/inf/nan, isin under vmap, and each error message.
(tests/cases_transcendental.py runs the generic properties on every row.)"""

import math

import numpy as np
import pytest

import chainrule as cr
from chainrule import special
from chainrule.errors import DomainError, DTypeError, GraphError

INF, NAN = math.inf, math.nan
EDGES = [0.0, -0.0, -1.0, -2.0, -2.5, 1.0, 2.0, INF, -INF, NAN, 1e-300, 1e-8, 1e5, 1e305]


def f64(values):
    return cr.tensor(values, dtype=cr.float64)


def assert_matches(ours, theirs, rtol=1e-12, atol=0.0):
    np.testing.assert_allclose(np.asarray(ours.data), theirs.detach().numpy(), rtol=rtol,
                               atol=atol, equal_nan=True)  # fmt: skip


# The gamma family.


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_lgamma_and_digamma_match_pytorch_at_poles_infinities_and_extremes(name, torch):
    assert_matches(
        getattr(cr, name)(f64(EDGES)),
        getattr(torch, name)(torch.tensor(EDGES, dtype=torch.float64)),
    )


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_lgamma_and_digamma_agree_with_pytorch_to_1e_12_over_a_wide_range(name, torch):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-30, 30, 4000), 10 ** rng.uniform(-8, 300, 1000)])
    x = x[np.abs(x - np.round(x)) > 1e-3]  # near the negative poles both lose digits
    ours, theirs = (
        getattr(cr, name)(f64(x)).numpy(),
        getattr(torch, name)(torch.tensor(x, dtype=torch.float64)),
    )
    # digamma has a root near 1.4616, where only the absolute error is small (PyTorch's too)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_polygamma_of_order_two_and_up_matches_pytorch_including_poles(torch):
    x = [0.0, -1.0, -2.5, 0.5, 1.0, 3.7, 40.0, 1e-3]
    for n in (2, 3, 5):
        assert_matches(
            cr.polygamma(n, f64(x)),
            torch.polygamma(n, torch.tensor(x, dtype=torch.float64)),
            rtol=1e-11,
        )


def test_trigamma_is_exact_where_pytorch_is_off_by_5e_10():
    values = cr.polygamma(1, f64([1.0, 0.5, 2.0])).numpy()
    exact = [math.pi**2 / 6, math.pi**2 / 2, math.pi**2 / 6 - 1]
    np.testing.assert_allclose(values, exact, rtol=1e-15)
    assert np.isinf(cr.polygamma(1, f64([0.0, -3.0])).numpy()).all()  # PyTorch: 6.6e32 at -3


def test_lgamma_is_accurate_next_to_its_zeros_at_1_and_2():
    # lgamma(1 + e) ~ -euler_gamma e and lgamma(2 + e) ~ (1 - euler_gamma) e
    e = 1e-9
    values = cr.lgamma(f64([1 + e, 2 + e])).numpy()
    np.testing.assert_allclose(values, [-0.5772156649015329 * e, 0.4227843350984671 * e],
                               rtol=1e-6)  # fmt: skip


def test_lgamma_differentiates_three_times_into_polygamma_like_pytorch(torch):
    x = f64([0.7, 2.5, -1.5]).requires_grad_()
    tx = torch.tensor([0.7, 2.5, -1.5], dtype=torch.float64, requires_grad=True)
    ours, theirs = cr.lgamma(x).sum(), torch.lgamma(tx).sum()
    for _ in range(3):
        (ours,) = cr.autograd.grad(ours, x, create_graph=True)
        (theirs,) = torch.autograd.grad(theirs, tx, create_graph=True)
        assert_matches(ours, theirs, rtol=1e-8)  # PyTorch's trigamma: 5e-10
        ours, theirs = ours.sum(), theirs.sum()


def test_integer_inputs_give_float32_as_in_pytorch():
    x = cr.tensor([1, 2, 3])
    for out in (x.lgamma(), x.digamma(), cr.polygamma(2, x), x.i0(), x.sinc(), x.logit()):
        assert out.dtype == cr.float32


def test_polygamma_and_mvlgamma_refuse_bad_orders_and_domains():
    x = cr.tensor([2.5, 3.0])
    with pytest.raises(DomainError, match=r"polygamma: n must be >= 0 .* got -1"):
        cr.polygamma(-1, x)
    with pytest.raises(DTypeError, match="polygamma: n must be an int, got float 1.5"):
        cr.polygamma(1.5, x)
    with pytest.raises(DomainError, match="mvlgamma: p has to be greater than or equal to 1"):
        x.mvlgamma(0)
    with pytest.raises(RuntimeError, match=r"greater than \(p - 1\) / 2 = 1.0 for p = 3, got"):
        cr.mvlgamma(cr.tensor([0.5, 2.0]), 3)


def test_mvlgamma_matches_pytorch(torch):
    x = [1.6, 2.5, 7.0]
    for p in (1, 2, 4):
        assert_matches(
            cr.mvlgamma(f64(x), p), torch.mvlgamma(torch.tensor(x, dtype=torch.float64), p)
        )


# Bessel functions and the incomplete gammas.


def test_i0_and_i1_match_pytorch_from_0_to_overflow(torch):
    x = np.concatenate([np.linspace(-30, 30, 601), [-700.0, 705.0, INF, NAN]])
    assert_matches(cr.i0(f64(x)), torch.i0(torch.tensor(x, dtype=torch.float64)), rtol=1e-13)
    theirs = torch.special.i1(torch.tensor(x, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(special.i1(x), theirs, rtol=3e-15, equal_nan=True)


def test_i0_gradient_is_i1_and_its_second_derivative_is_finite_at_0(torch):
    x = f64([0.0, 1e-300, 0.5, -4.0, 25.0]).requires_grad_()
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    (g,) = cr.autograd.grad(x.i0().sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(tx.i0().sum(), tx, create_graph=True)
    assert_matches(g, tg, rtol=1e-14)
    (gg,) = cr.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy()[:2], [0.5, 0.5])  # i1'(0) = 1/2


def test_igamma_and_igammac_match_pytorch_at_the_edges(torch):
    a = [0.0, 0.0, 0.0, 1.0, 1.0, -1.0, 2.0, INF, 2.0, INF, NAN, 1.0, 2.0]
    x = [0.0, 1.0, INF, 0.0, INF, 1.0, -1.0, 1.0, NAN, INF, 1.0, 1e-300, 1e-300]
    for name in ("igamma", "igammac"):
        ours = getattr(cr, name)(f64(a), f64(x))
        assert_matches(
            ours,
            getattr(torch, name)(
                torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64)
            ),
        )


def test_igamma_matches_pytorch_where_pytorch_is_accurate(torch):
    rng = np.random.default_rng(1)
    a, x = rng.uniform(0.05, 10, 3000), rng.uniform(0, 25, 3000)
    p, q = cr.igamma(f64(a), f64(x)), cr.igammac(f64(a), f64(x))
    ta, tx = torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64)
    assert_matches(p, torch.igamma(ta, tx), rtol=1e-11, atol=1e-15)
    assert_matches(q, torch.igammac(ta, tx), rtol=1e-11, atol=1e-15)
    np.testing.assert_allclose(p.numpy() + q.numpy(), 1.0, rtol=1e-15)


def test_igamma_has_no_gradient_for_a_as_in_pytorch():
    a = cr.tensor([1.0, 2.0], requires_grad=True)
    out = cr.igamma(a, cr.tensor([1.0, 3.0]))
    with pytest.raises(GraphError, match=r"igamma: the derivative with respect to input \(a\)"):
        out.sum().backward()
    with pytest.raises(RuntimeError, match="igammac: .* not implemented"):
        cr.func.jvp(lambda a: cr.igammac(a, cr.tensor(1.0)), (cr.tensor(1.0),), (cr.tensor(1.0),))


# sinc, logit, xlogy, logaddexp2, float_power.


def test_sinc_is_1_at_0_with_gradient_0_as_in_pytorch(torch):
    values = [0.0, -0.0, 1.0, -0.5, 2.5, 1e-20, INF]
    x, tx = (
        f64(values).requires_grad_(),
        torch.tensor(values, requires_grad=True, dtype=torch.float64),
    )
    out, tout = x.sinc(), tx.sinc()
    assert_matches(out, tout, atol=1e-16)
    (g,), (tg,) = cr.autograd.grad(out.sum(), x), torch.autograd.grad(tout.sum(), tx)
    assert_matches(g, tg, atol=1e-16)
    assert g.numpy()[0] == 0.0


@pytest.mark.parametrize("eps", [None, 0.1])
def test_logit_at_0_1_and_outside_with_and_without_eps(eps, torch):
    values = [0.0, 1.0, 0.5, -0.1, 1.1, 0.05, 0.95]
    x, tx = (
        f64(values).requires_grad_(),
        torch.tensor(values, requires_grad=True, dtype=torch.float64),
    )
    out, tout = x.logit(eps), tx.logit(eps)
    assert_matches(out, tout)
    (g,), (tg,) = cr.autograd.grad(out.sum(), x), torch.autograd.grad(tout.sum(), tx)
    assert_matches(g, tg)


def test_xlogy_is_0_where_x_is_0_and_gradients_match_pytorch_there(torch):
    xs, ys = [0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 1.5], [0.0, NAN, INF, -1.0, 0.0, -1.0, 3.0]
    x, y = f64(xs).requires_grad_(), f64(ys).requires_grad_()
    tx, ty = (
        torch.tensor(xs, requires_grad=True, dtype=torch.float64),
        torch.tensor(ys, requires_grad=True, dtype=torch.float64),
    )
    out, tout = cr.xlogy(x, y), torch.xlogy(tx, ty)
    assert_matches(out, tout)
    assert out.tolist()[0] == 0.0 and math.isnan(out.tolist()[1])
    grads = cr.autograd.grad(out.sum(), (x, y))
    for g, tg in zip(grads, torch.autograd.grad(tout.sum(), (tx, ty))):
        assert_matches(g, tg)


def test_xlogy_and_float_power_take_numbers_but_need_one_tensor(torch):
    assert_matches(
        cr.xlogy(2.0, f64([3.0])), torch.xlogy(2.0, torch.tensor([3.0], dtype=torch.float64))
    )
    assert_matches(
        cr.xlogy(f64([3.0]), 2.0), torch.xlogy(torch.tensor([3.0], dtype=torch.float64), 2.0)
    )
    with pytest.raises(DTypeError, match="xlogy: expected a tensor for input or other"):
        cr.xlogy(2.0, 3.0)
    with pytest.raises(DTypeError, match="float_power: expected a tensor"):
        cr.float_power(2, 3)


def test_logaddexp2_is_finite_far_out_and_exact_at_infinities(torch):
    xs, ys = [1000.0, -1000.0, INF, -INF, 3.0], [1000.0, -1001.0, INF, -INF, -INF]
    assert_matches(
        cr.logaddexp2(f64(xs), f64(ys)),
        torch.logaddexp2(
            torch.tensor(xs, dtype=torch.float64), torch.tensor(ys, dtype=torch.float64)
        ),
    )


def test_float_power_computes_in_float64_and_returns_float32_gradients(torch):
    x = cr.tensor([1.5, 2.0], requires_grad=True)  # float32
    out = x.float_power(cr.tensor([2, 3]))
    assert out.dtype == cr.float64
    assert_matches(out, torch.tensor([1.5, 2.0]).float_power(torch.tensor([2, 3])))
    out.sum().backward()
    assert x.grad.dtype == cr.float32
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])
    assert cr.float_power(2, cr.tensor([1, 2])).dtype == cr.float64


# Integers and float bits.


def test_gcd_and_lcm_of_negatives_and_zeros_match_pytorch(torch):
    a, b = [-4, 0, 0, 12, 7], [6, 0, -5, 18, -7]
    for name in ("gcd", "lcm"):
        ours = getattr(cr, name)(cr.tensor(a), cr.tensor(b))
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        assert ours.dtype == cr.int64 and ours.tolist() == theirs.tolist()
    with pytest.raises(DTypeError, match="gcd: takes integer tensors, got float32 and float32"):
        cr.gcd(cr.tensor([1.0]), cr.tensor([2.0]))
    with pytest.raises(DTypeError, match="lcm: takes integer tensors, got bool"):
        cr.tensor([True]).lcm(cr.tensor([True]))


def test_frexp_of_0_inf_nan_and_subnormals_matches_pytorch_with_gradient(torch):
    values = [0.0, -0.0, 1.0, 8.5, -3.0, INF, NAN, 5e-324, 0.7]
    x, tx = (
        f64(values).requires_grad_(),
        torch.tensor(values, requires_grad=True, dtype=torch.float64),
    )
    (mantissa, exponent), theirs = x.frexp(), tx.frexp()
    assert_matches(mantissa, theirs.mantissa)
    assert exponent.dtype == cr.int32 and exponent.tolist() == theirs.exponent.tolist()
    assert cr.frexp(x).mantissa is not None and not exponent.requires_grad
    (g,), (tg,) = (cr.autograd.grad(mantissa.sum(), x),
                   torch.autograd.grad(theirs.mantissa.sum(), tx))  # fmt: skip
    assert_matches(g, tg)
    with pytest.raises(DTypeError, match="frexp: takes floating-point tensors, got int64"):
        cr.frexp(cr.tensor([1, 2]))


def test_ldexp_dtypes_and_gradients_follow_pytorch(torch):
    pairs = [([1, 2], [3, -1]), ([1.0, 0.75], [3, -1]), ([1.5], [2.5])]
    for x, e in pairs:
        ours, theirs = (
            cr.ldexp(cr.tensor(x), cr.tensor(e)),
            torch.ldexp(torch.tensor(x), torch.tensor(e)),
        )
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
        assert_matches(ours, theirs, rtol=1e-6)
    x, e = f64([1.5]).requires_grad_(), f64([2.5]).requires_grad_()
    tx, te = (
        torch.tensor([1.5], dtype=torch.float64, requires_grad=True),
        torch.tensor([2.5], dtype=torch.float64, requires_grad=True),
    )
    for g, tg in zip(
        cr.autograd.grad(cr.ldexp(x, e), (x, e)), torch.autograd.grad(torch.ldexp(tx, te), (tx, te))
    ):
        assert_matches(g, tg)
    assert cr.ldexp(cr.tensor([3.0]), 2).tolist() == [12.0]


def test_nextafter_steps_one_ulp_in_its_dtype_and_refuses_integers(torch):
    x, toward = cr.tensor([1.0, 2.0, 0.0]), cr.tensor([3.0, 0.0, -1.0])
    out = cr.nextafter(x, toward)
    assert out.dtype == cr.float32
    assert_matches(
        out, torch.nextafter(torch.tensor([1.0, 2.0, 0.0]), torch.tensor([3.0, 0.0, -1.0]))
    )
    with pytest.raises(DTypeError, match="nextafter: takes floating-point tensors"):
        cr.nextafter(cr.tensor([1]), cr.tensor([2]))


def test_signbit_and_isreal_give_bool_tensors(torch):
    values = [-0.0, 0.0, -1.0, 2.0, -INF, NAN]
    assert cr.tensor(values).signbit().tolist() == torch.tensor(values).signbit().tolist()
    assert cr.tensor([-1, 2]).signbit().tolist() == [True, False]
    out = cr.tensor([[1.0, NAN]]).isreal()
    assert out.dtype == cr.bool and out.tolist() == [[True, True]]


def test_isin_takes_numbers_invert_and_mixed_dtypes_like_pytorch(torch):
    calls = [
        lambda lib: lib.isin(lib.tensor([1, 2, 3]), lib.tensor([2, 5])),
        lambda lib: lib.isin(lib.tensor([1, 2, 3]), 2),
        lambda lib: lib.isin(2, lib.tensor([1, 2])),
        lambda lib: lib.isin(lib.tensor([[1.0, 2.0]]), lib.tensor([2, 5]), invert=True),
        lambda lib: lib.isin(lib.tensor([3, 1]), lib.tensor([1, 3]), assume_unique=True),
    ]
    for call in calls:
        ours, theirs = call(cr), call(torch)
        assert ours.dtype == cr.bool and ours.tolist() == theirs.tolist()
    with pytest.raises(DTypeError, match="isin: expected a tensor for elements or test_elements"):
        cr.isin(1, 2)


def test_isin_under_vmap_tests_each_example_against_its_own_elements():
    elements = cr.tensor([[1, 2, 3], [1, 2, 3]])
    tests = cr.tensor([[1, 9], [3, 2]])
    out = cr.func.vmap(lambda e, t: cr.isin(e, t, invert=True))(elements, tests)
    assert out.tolist() == [[False, True, True], [True, False, False]]
    out = cr.func.vmap(lambda t: cr.isin(cr.tensor([1, 2, 3]), t))(tests)
    assert out.tolist() == [[True, False, False], [False, True, True]]


def test_single_precision_erf_is_correctly_rounded_and_keeps_its_dtype():
    """float32 and float16 take the fitted rational function (tools/fit_erf.py): within half
    a unit in the last place of math.erf over the whole line, signs of zero and infinities
    kept, nan passed through."""
    import math

    from chainrule.special import erf

    x = np.r_[np.linspace(-7, 7, 200_001), [np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-38]]
    x = x.astype(np.float32)
    got = erf(x)
    assert got.dtype == np.float32
    exact = np.array([math.erf(float(v)) for v in x])
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(got - exact) / ulp) <= 0.55
    assert np.signbit(got[x == 0]).tolist() == [False, True]
    assert np.isnan(erf(np.float32([np.nan]))).all()
    half = erf(x.astype(np.float16))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, exact.astype(np.float16), rtol=1e-3, atol=1e-4)
