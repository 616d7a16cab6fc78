"""Seeded samples are PyTorch's: each distribution of test_distributions' table draws as
torch.distributions draws (the same random calls on the same shapes and dtypes, in the same
order), so under one seed ``sample`` and ``rsample`` give bit-identical values, float32 and
float64, and leave the default generator in PyTorch's state. Where the draws then pass through
logarithms, exponentials, tanh, erf or a matrix product (`ROUNDING`), NumPy and BLAS round the
last bit where PyTorch's vectorised kernels may round it otherwise: the draws and the state are
PyTorch's, the values agree to a few units in the last place. The families built on PyTorch's
gamma, Poisson and binomial samplers (C++ algorithms chainrule does not rebuild;
docs/guides/differences.md) draw NumPy's numbers seeded from the stream: the same seed gives
the same samples, not PyTorch's."""

import numpy as np
import pytest
from test_distributions import CASES, _params

import chainrule as cr
import chainrule.distributions as crd

#: Families whose samples come from a sampler chainrule does not rebuild.
NOT_PYTORCHS = {
    "gamma", "beta", "dirichlet", "chi2", "student_t", "fisher_snedecor", "inverse_gamma",
    "poisson", "binomial", "binomial_counts", "negative_binomial", "lkj_cholesky",
    "wishart_cov", "wishart_tril", "wishart_precision",
}  # fmt: skip

#: Families whose samples are PyTorch's draws through functions rounded otherwise (see above).
ROUNDING = {
    "continuous_bernoulli", "continuous_bernoulli_logits", "corr_cholesky", "exp_compose",
    "generalized_pareto", "gumbel", "kumaraswamy", "laplace", "log_normal", "logistic_normal",
    "lowrank_mvn", "mvn_cov", "mvn_precision", "mvn_tril", "pareto", "relaxed_bernoulli",
    "relaxed_one_hot", "reshape_cdf", "sigmoid_power", "stick_breaking", "tanh_affine", "weibull",
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


@pytest.mark.parametrize(("name", "dtype"), PAIRS, ids=[f"{n}-{d.__name__}" for n, d in PAIRS])
def test_samples_under_one_seed_are_pytorchs(torch, name, dtype):
    case = CASES[name]
    ours, our_state = draws(cr, crd, case, dtype, 5)
    if name in NOT_PYTORCHS:
        again, again_state = draws(cr, crd, case, dtype, 5)
        assert all(np.array_equal(a, b) for a, b in zip(ours, again))
        assert np.array_equal(our_state, again_state)
        assert all(a.dtype == dtype for a in ours if a.dtype.kind == "f")
        return
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
