"""Under one seed, samples of torch.distributions' families are PyTorch's and leave the default
generator where PyTorch's is. Most are bit for bit; where PyTorch then takes a float32 or
float64 transcendental (log1p, exp, tan...) with its vectorised kernels, or a matrix product
with its BLAS, they agree to the last bits."""

import warnings

import numpy as np
import pytest

import chainrule as cr


def _t(lib, values, dtype):
    return lib.tensor(np.asarray(values, dtype=dtype))


EXACT = {
    "Normal": lambda L, d, t: d.Normal(t([0.0, 1.0, 2.0]), t([1.0, 2.0, 0.5])),
    "Bernoulli": lambda L, d, t: d.Bernoulli(t([0.2, 0.7, 0.5])),
    "Bernoulli logits": lambda L, d, t: d.Bernoulli(logits=t([0.2, -0.7, 1.5])),
    "Categorical": lambda L, d, t: d.Categorical(t([0.1, 0.2, 0.7])),
    "Categorical batch": lambda L, d, t: d.Categorical(logits=t([[0.1, 0.2, 0.7], [1, 2, 3]])),
    "OneHotCategorical": lambda L, d, t: d.OneHotCategorical(t([0.1, 0.2, 0.7])),
    "Multinomial": lambda L, d, t: d.Multinomial(10, t([0.1, 0.2, 0.7])),
    "Exponential": lambda L, d, t: d.Exponential(t([0.5, 2.0])),
    "Uniform": lambda L, d, t: d.Uniform(t([0.0, 1.0]), t([1.0, 3.0])),
    "Cauchy": lambda L, d, t: d.Cauchy(t([0.0, 1.0]), t([1.0, 3.0])),
    "HalfCauchy": lambda L, d, t: d.HalfCauchy(t([1.0, 2.0])),
    "HalfNormal": lambda L, d, t: d.HalfNormal(t([1.0, 2.0])),
    "Geometric": lambda L, d, t: d.Geometric(t([0.2, 0.7])),
    "Gamma": lambda L, d, t: d.Gamma(t([0.5, 2.0]), t([1.0, 3.0])),
    "Chi2": lambda L, d, t: d.Chi2(t([1.5, 4.0])),
    "Beta": lambda L, d, t: d.Beta(t([0.5, 2.0]), t([1.0, 3.0])),
    "Dirichlet": lambda L, d, t: d.Dirichlet(t([0.5, 2.0, 1.0])),
    "StudentT": lambda L, d, t: d.StudentT(t([3.0, 10.0])),
    "FisherSnedecor": lambda L, d, t: d.FisherSnedecor(t([3.0, 5.0]), t([4.0, 6.0])),
    "Poisson": lambda L, d, t: d.Poisson(t([0.5, 20.0])),
    "Binomial": lambda L, d, t: d.Binomial(10, t([0.2, 0.7])),
    "NegativeBinomial": lambda L, d, t: d.NegativeBinomial(5, t([0.2, 0.7])),
    "VonMises": lambda L, d, t: d.VonMises(t([0.0, 1.0]), t([1.0, 3.0])),
    "MixtureSameFamily": lambda L, d, t: d.MixtureSameFamily(
        d.Categorical(t([0.3, 0.7])), d.Normal(t([0.0, 5.0]), t([1.0, 1.0]))),
}  # fmt: skip

CLOSE = {
    "Laplace": lambda L, d, t: d.Laplace(t([0.0, 1.0]), t([1.0, 3.0])),
    "Gumbel": lambda L, d, t: d.Gumbel(t([0.0, 1.0]), t([1.0, 3.0])),
    "LogNormal": lambda L, d, t: d.LogNormal(t([0.0, 1.0]), t([1.0, 0.3])),
    "Weibull": lambda L, d, t: d.Weibull(t([1.0, 2.0]), t([1.0, 3.0])),
    "Pareto": lambda L, d, t: d.Pareto(t([1.0, 2.0]), t([1.0, 3.0])),
    "Kumaraswamy": lambda L, d, t: d.Kumaraswamy(t([1.0, 2.0]), t([1.0, 3.0])),
    "InverseGamma": lambda L, d, t: d.InverseGamma(t([2.0, 3.0]), t([1.0, 2.0])),
    "RelaxedBernoulli": lambda L, d, t: d.RelaxedBernoulli(t(0.5), t([0.2, 0.7])),
    "RelaxedOneHotCategorical": lambda L, d, t: d.RelaxedOneHotCategorical(
        t(0.5), t([0.2, 0.3, 0.5])),
    "ContinuousBernoulli": lambda L, d, t: d.ContinuousBernoulli(t([0.2, 0.7])),
    "GeneralizedPareto": lambda L, d, t: d.GeneralizedPareto(t([0, 1]), t([1, 2]), t([0.1, 0.2])),
    "LogisticNormal": lambda L, d, t: d.LogisticNormal(t([0.0, 1.0]), t([1.0, 2.0])),
    "MultivariateNormal": lambda L, d, t: d.MultivariateNormal(t([0, 1]), t([[2, 0.5], [0.5, 1]])),
    "LowRankMultivariateNormal": lambda L, d, t: d.LowRankMultivariateNormal(
        t([0.0, 1.0]), t([[1.0], [0.5]]), t([1.0, 2.0])),
    "LKJCholesky": lambda L, d, t: d.LKJCholesky(3, t(0.5)),
    "Wishart": lambda L, d, t: d.Wishart(t(4.0), t([[2.0, 0.5], [0.5, 1.0]])),
}  # fmt: skip


def _draw(lib, make, dtype, kind):
    lib.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's Wishart warns on every sample
        dist = make(lib, lib.distributions, lambda v: _t(lib, v, dtype))
        if kind == "rsample" and not dist.has_rsample:
            return None, None
        out = getattr(dist, kind)((4, 5))
    return out.detach().numpy(), lib.get_rng_state().numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", [*EXACT, *CLOSE])
def test_samples_are_pytorchs(torch, name, dtype):
    make = EXACT.get(name) or CLOSE[name]
    for kind in ("sample", "rsample"):
        ours, our_state = _draw(cr, make, dtype, kind)
        theirs, their_state = _draw(torch, make, dtype, kind)
        if theirs is None:
            continue
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        if name in EXACT:
            assert np.array_equal(ours, theirs), (name, kind)
        else:
            rtol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol)
        assert np.array_equal(our_state, their_state), (name, kind)
