"""Seeded samples are PyTorch's: each distribution of test_distributions' table draws as
torch.distributions draws (the same random calls on the same shapes and dtypes, in the same
order, and PyTorch's own gamma, Poisson, binomial and von Mises samplers rebuilt step by step),
so under one seed ``sample`` and ``rsample`` give bit-identical values, float32 and float64,
and leave the default generator in PyTorch's state. Where the draws then pass through
logarithms, exponentials, tanh, erf or a matrix product (`ROUNDING`), NumPy and BLAS may round
the last bit otherwise than PyTorch's vectorised kernels: the draws and the state are
PyTorch's, the values agree to a few units in the last place."""

import numpy as np
import pytest
from test_distributions import CASES, _params

import chainrule as cr
import chainrule.distributions as crd
from chainrule.rejection_sampling import standard_gamma_values

#: Families whose samples are PyTorch's draws through functions rounded otherwise (see above).
ROUNDING = {
    "continuous_bernoulli", "continuous_bernoulli_logits", "corr_cholesky", "exp_compose",
    "generalized_pareto", "gumbel", "kumaraswamy", "laplace", "lkj_cholesky", "log_normal",
    "logistic_normal", "lowrank_mvn", "mvn_cov", "mvn_precision", "mvn_tril", "pareto",
    "relaxed_bernoulli", "relaxed_one_hot", "reshape_cdf", "sigmoid_power", "stick_breaking",
    "student_t", "tanh_affine", "weibull", "wishart_cov", "wishart_precision", "wishart_tril",
}  # fmt: skip
#: How far those values may be apart; reshape_cdf's goes through chainrule's erf (to ~1e-8).
TOL = {np.float32: {"rtol": 1e-5, "atol": 1e-7}, np.float64: {"rtol": 1e-12, "atol": 1e-14}}


def draws(lib, D, case, dtype, seed):
    """sample((2,)) and, where the family has it, rsample((3,)), after ``manual_seed(seed)``;
    then the generator's state."""
    d = case.build(D, _params(lib, case, dtype))
    lib.manual_seed(seed)
    out = [d.sample((2,)).detach().numpy()]
    if d.has_rsample:
        out.append(d.rsample((3,)).detach().numpy())
    out.append(d.sample().detach().numpy())
    return out, lib.get_rng_state().numpy()


def dtypes(name):
    forced = CASES[name].dtype
    return [forced] if forced != np.float64 else [np.float32, np.float64]


PAIRS = [(name, dtype) for name in sorted(CASES) for dtype in dtypes(name)]


# PyTorch's Wishart warns of a singular sample whenever its (inverted) check passes.
@pytest.mark.filterwarnings("ignore:Singular sample detected")
@pytest.mark.parametrize(("name", "dtype"), PAIRS, ids=[f"{n}-{d.__name__}" for n, d in PAIRS])
def test_samples_under_one_seed_are_pytorchs(torch, name, dtype):
    case = CASES[name]
    ours, our_state = draws(cr, crd, case, dtype, 5)
    theirs, their_state = draws(torch, torch.distributions, case, dtype, 5)
    assert np.array_equal(our_state, their_state)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        if name not in ROUNDING:
            np.testing.assert_array_equal(a, b)
        elif name == "reshape_cdf":
            np.testing.assert_allclose(a, b, rtol=1e-7)
        else:
            np.testing.assert_allclose(a, b, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_rebuilt_samplers_are_pytorchs_over_their_branches(torch, dtype):
    """Gamma below and above 1 (and 0), Dirichlet's float64 gammas, Poisson by
    multiplication and by rejection, binomial by waiting times and by BTRS on either side of
    1/2: each element's draws are PyTorch's, interleaved with a plain draw between."""
    alpha = np.array([0.0, 1e-3, 0.05, 0.3, 0.99, 1.0, 2.5, 7.0, 30.0, 1e4] * 3, dtype)
    rates = np.array([0.0, 0.4, 3.0, 9.99, 10.0, 25.0, 300.0, 1e5] * 3, dtype)
    count = np.array([0, 5, 20, 100, 1000, 37, 3, 60, 1e5, 12] * 3, dtype)
    probs = np.array([0.3, 0.01, 0.2, 0.5, 0.9, 0.73, 0.999, 0.05, 0.4, 1.0] * 3, dtype)
    concentration = alpha[1:10].reshape(3, 3)
    t = torch.tensor
    torch.manual_seed(2)
    theirs = [torch._standard_gamma(t(alpha)), torch.rand(3, dtype=t(alpha).dtype),
              torch._sample_dirichlet(t(concentration)), torch.poisson(t(rates)),
              torch.binomial(t(count), t(probs))]  # fmt: skip
    cr.manual_seed(2)
    dirichlet = crd.Dirichlet(cr.tensor(concentration))
    ours = [standard_gamma_values(alpha, cr.default_generator), cr.rand(3, dtype=dtype).numpy(),
            dirichlet.rsample().detach().numpy(), cr.poisson(cr.tensor(rates)).numpy(),
            cr.binomial(cr.tensor(count), cr.tensor(probs)).numpy()]  # fmt: skip
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b.numpy())
        assert a.dtype == b.numpy().dtype
    assert np.array_equal(cr.get_rng_state().numpy(), torch.get_rng_state().numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_straight_through_and_expanded_families_draw_pytorchs_samples(torch, dtype):
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], dtype)

    def run(lib, D):
        p = lib.tensor(probs)
        lib.manual_seed(9)
        return [
            D.OneHotCategoricalStraightThrough(probs=p).rsample((4,)),
            D.Bernoulli(probs=p).expand((5, 2, 3)).sample((2,)),
            D.Categorical(probs=p).expand((3, 2)).sample(),
            D.Poisson(p * 40).expand((2, 2, 3)).sample(),
        ], lib.get_rng_state().numpy()

    ours, our_state = run(cr, crd)
    theirs, their_state = run(torch, torch.distributions)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert np.array_equal(our_state, their_state)
