"""chainrule.distributions against torch.distributions: one table of families, each built
by one lambda for both libraries, compared on log_prob, entropy, moments, cdf/icdf, shapes,
expand and the gradients of all of them; KL pairs likewise; then rsample's gradients, the
statistics of samples, validation errors and Independent."""

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from conftest import FD_TOL, TORCH_TOL

import chainrule as cr
import chainrule.distributions as crd

RNG = np.random.default_rng(0)
POS = RNG.uniform(0.5, 2.0, (3,))
POS2 = RNG.uniform(0.5, 2.0, (3,))
REAL = RNG.normal(size=(3,))
PROBS = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
LOGITS = RNG.normal(size=(2, 3))
A = RNG.normal(size=(2, 3, 3))
COV = A @ A.transpose(0, 2, 1) + np.eye(3)
TRIL = np.linalg.cholesky(COV)
VEC = RNG.normal(size=(2, 3))


@dataclass
class Case:
    """A family built by ``build(D, p)`` (D the distributions module, p the parameters as
    tensors of the library) and a value in its support; ``cdf`` values in (0, 1) for icdf."""

    build: object
    params: dict
    value: np.ndarray
    cdf: bool = False
    icdf: bool = False
    grad_free: tuple = field(default_factory=tuple)  # parameters no gradient is asked of
    tol: dict = field(default_factory=lambda: TORCH_TOL)
    differs: tuple = ()  # quantities where PyTorch is wrong (differences.md), tested apart
    dtype: type = np.float64  # the dtype of the comparison with PyTorch


CASES = {
    "normal": Case(lambda D, p: D.Normal(p["loc"], p["scale"]), {"loc": REAL, "scale": POS},
                   RNG.normal(size=(2, 3)), cdf=True, icdf=True),
    "normal_number": Case(lambda D, p: D.Normal(p["loc"], 2.0), {"loc": REAL}, REAL + 0.3,
                          cdf=True),
    "uniform": Case(lambda D, p: D.Uniform(p["low"], p["low"] + p["width"]),
                    {"low": REAL, "width": POS}, REAL + 0.4 * POS, cdf=True, icdf=True),
    "laplace": Case(lambda D, p: D.Laplace(p["loc"], p["scale"]), {"loc": REAL, "scale": POS},
                    RNG.normal(size=(2, 3)), cdf=True, icdf=True),
    "exponential": Case(lambda D, p: D.Exponential(p["rate"]), {"rate": POS}, POS2, cdf=True,
                        icdf=True),
    "gamma": Case(lambda D, p: D.Gamma(p["concentration"], p["rate"]),
                  {"concentration": POS, "rate": POS2}, POS2 * 0.7),
    "beta": Case(lambda D, p: D.Beta(p["a"], p["b"]), {"a": POS, "b": POS2},
                 np.array([0.2, 0.5, 0.9])),
    "dirichlet": Case(lambda D, p: D.Dirichlet(p["c"]), {"c": np.abs(LOGITS) + 0.5}, PROBS),
    "poisson": Case(lambda D, p: D.Poisson(p["rate"]), {"rate": POS * 3},
                    np.array([[0.0, 2.0, 5.0], [1.0, 1.0, 3.0]])),
    "bernoulli_probs": Case(lambda D, p: D.Bernoulli(probs=p["p"]), {"p": PROBS},
                            np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])),
    "bernoulli_logits": Case(lambda D, p: D.Bernoulli(logits=p["l"]), {"l": LOGITS},
                             np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])),
    "categorical_probs": Case(lambda D, p: D.Categorical(probs=p["p"]), {"p": PROBS * 3},
                              np.array([[2, 0], [1, 1]])),
    "categorical_logits": Case(lambda D, p: D.Categorical(logits=p["l"]), {"l": LOGITS},
                               np.array([0, 2])),
    "one_hot": Case(lambda D, p: D.OneHotCategorical(logits=p["l"]), {"l": LOGITS},
                    np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])),
    "mvn_cov": Case(lambda D, p: D.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
                    {"loc": VEC, "cov": COV}, RNG.normal(size=(4, 2, 3))),
    "mvn_precision": Case(
        lambda D, p: D.MultivariateNormal(p["loc"][0], precision_matrix=p["cov"]),
        {"loc": VEC, "cov": COV}, RNG.normal(size=(3,))),
    "mvn_tril": Case(lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
                     {"loc": VEC, "tril": TRIL}, RNG.normal(size=(2, 3))),
    "independent": Case(lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
                        {"loc": VEC, "scale": np.abs(VEC) + 0.5}, RNG.normal(size=(2, 3))),
    "log_normal": Case(lambda D, p: D.LogNormal(p["loc"], p["scale"]),
                       {"loc": REAL, "scale": POS}, POS2, cdf=True, icdf=True),
    "gumbel": Case(lambda D, p: D.Gumbel(p["loc"], p["scale"]), {"loc": REAL, "scale": POS},
                   RNG.normal(size=(2, 3))),
    "relaxed_bernoulli": Case(lambda D, p: D.RelaxedBernoulli(p["t"], logits=p["l"]),
                              {"t": np.array(0.7), "l": LOGITS}, PROBS),
    "relaxed_one_hot": Case(lambda D, p: D.RelaxedOneHotCategorical(p["t"], probs=p["p"]),
                            {"t": np.array(0.5), "p": PROBS}, PROBS[::-1].copy()),
    "tanh_affine": Case(
        lambda D, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]),
            [D.TanhTransform(), D.AffineTransform(p["shift"], 2.0)]),
        {"loc": REAL, "scale": POS, "shift": REAL}, REAL + 0.5, cdf=True, icdf=True),
    "sigmoid_power": Case(
        lambda D, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]), [D.SigmoidTransform(), D.PowerTransform(2.0)]),
        {"loc": REAL, "scale": POS}, np.array([0.2, 0.5, 0.7])),
    "exp_compose": Case(
        lambda D, p: D.TransformedDistribution(
            D.Uniform(p["low"], p["low"] + 1.0),
            D.ComposeTransform([D.ExpTransform(), D.AffineTransform(1.0, p["scale"])])),
        {"low": REAL, "scale": POS}, 1 + POS * np.exp(REAL + 0.5)),
    "cauchy": Case(lambda D, p: D.Cauchy(p["loc"], p["scale"]), {"loc": REAL, "scale": POS},
                   RNG.normal(size=(2, 3)), cdf=True, icdf=True),
    "half_normal": Case(lambda D, p: D.HalfNormal(p["scale"]), {"scale": POS}, POS2, cdf=True,
                        icdf=True),
    "half_cauchy": Case(lambda D, p: D.HalfCauchy(p["scale"]), {"scale": POS}, POS2, cdf=True,
                        icdf=True),
    "chi2": Case(lambda D, p: D.Chi2(p["df"]), {"df": POS * 3}, POS2),
    "student_t": Case(lambda D, p: D.StudentT(p["df"], p["loc"], p["scale"]),
                      {"df": POS * 2, "loc": REAL, "scale": POS2}, RNG.normal(size=(2, 3))),
    "fisher_snedecor": Case(lambda D, p: D.FisherSnedecor(p["a"], p["b"]),
                            {"a": POS * 4, "b": POS2 * 5}, POS),
    "geometric": Case(lambda D, p: D.Geometric(p["p"]), {"p": PROBS[0]},
                      np.array([0.0, 3.0, 1.0])),
    "binomial": Case(lambda D, p: D.Binomial(5, logits=p["l"]), {"l": LOGITS},
                     np.array([[0.0, 3.0, 5.0], [1.0, 2.0, 4.0]])),
    "binomial_counts": Case(lambda D, p: D.Binomial(p["n"], probs=p["p"]),
                            {"n": np.array([[3.0, 4.0, 5.0]]), "p": PROBS},
                            np.array([[0.0, 3.0, 5.0], [1.0, 2.0, 4.0]]), grad_free=("n",)),
    "negative_binomial": Case(lambda D, p: D.NegativeBinomial(p["r"], logits=p["l"]),
                              {"r": POS * 2, "l": LOGITS}, np.array([0.0, 2.0, 7.0]),
                              grad_free=("r",)),
    "multinomial": Case(lambda D, p: D.Multinomial(4, logits=p["l"]), {"l": LOGITS},
                        np.array([[1.0, 3.0, 0.0], [2.0, 1.0, 1.0]]),
                        # PyTorch's entropy takes lgamma(n + 1) in float32 (2.5e-8 off).
                        tol={"rtol": 1e-7, "atol": 1e-7}),
    "pareto": Case(lambda D, p: D.Pareto(p["scale"], p["alpha"]), {"scale": POS, "alpha": POS2 * 3},
                   POS * 1.5, cdf=True),
    "weibull": Case(lambda D, p: D.Weibull(p["scale"], p["c"]), {"scale": POS, "c": POS2 + 1},
                    POS * 1.5, cdf=True),
    "inverse_gamma": Case(lambda D, p: D.InverseGamma(p["c"], p["rate"]),
                          {"c": POS * 3, "rate": POS2}, POS),
    "mixture": Case(lambda D, p: D.MixtureSameFamily(
                        D.Categorical(logits=p["l"]), D.Normal(p["loc"], p["scale"])),
                    {"l": LOGITS, "loc": VEC, "scale": np.abs(VEC) + 0.5}, REAL[:2], cdf=True),
    "mixture_mvn": Case(lambda D, p: D.MixtureSameFamily(
                            D.Categorical(logits=p["l"][0]),
                            D.Independent(D.Normal(p["loc"].T, p["scale"].T), 1)),
                        {"l": LOGITS, "loc": VEC, "scale": np.abs(VEC) + 0.5}, VEC[:, :2].T),
    "generalized_pareto": Case(
        lambda D, p: D.GeneralizedPareto(p["loc"], p["scale"], p["xi"]),
        {"loc": REAL, "scale": POS, "xi": np.array([0.3, 0.0, -0.2])}, REAL + 0.5 * POS, cdf=True,
        icdf=True,
        # PyTorch's compares the concentration with a float32 zero: float64 raises there.
        dtype=np.float32, tol={"rtol": 2e-5, "atol": 2e-6}),
    "von_mises": Case(lambda D, p: D.VonMises(p["loc"], p["k"]), {"loc": REAL, "k": POS * 3},
                      RNG.uniform(-3, 3, (2, 3)),
                      # PyTorch's log I0 and I1 are fitted approximations, good to ~1e-7.
                      tol={"rtol": 1e-6, "atol": 1e-7}),
    "continuous_bernoulli": Case(lambda D, p: D.ContinuousBernoulli(p["p"]),
                                 {"p": np.array([[0.2, 0.4995, 0.9], [0.5, 0.7, 0.05]])},
                                 PROBS, cdf=True, icdf=True),
    "continuous_bernoulli_logits": Case(lambda D, p: D.ContinuousBernoulli(logits=p["l"]),
                                        {"l": LOGITS}, PROBS, cdf=True, icdf=True),
    "lkj_cholesky": Case(lambda D, p: D.LKJCholesky(3, p["eta"]), {"eta": POS},
                         np.linalg.cholesky(np.array([[1, 0.3, -0.2], [0.3, 1, 0.4],
                                                      [-0.2, 0.4, 1]]))),
    "corr_cholesky": Case(
        lambda D, p: D.TransformedDistribution(
            D.Independent(D.Normal(p["loc"], p["scale"]), 1), D.CorrCholeskyTransform()),
        {"loc": REAL, "scale": POS},
        np.linalg.cholesky(np.array([[1, 0.3, -0.2], [0.3, 1, 0.4], [-0.2, 0.4, 1]]))),
    "wishart_cov": Case(lambda D, p: D.Wishart(p["df"], covariance_matrix=p["cov"]),
                        {"df": np.array([4.0, 6.5]), "cov": COV}, COV[::-1] * 3),
    "wishart_tril": Case(lambda D, p: D.Wishart(p["df"], scale_tril=p["tril"][0]),
                         {"df": np.array([4.0, 6.5]), "tril": TRIL}, COV * 2),
    "wishart_precision": Case(lambda D, p: D.Wishart(p["df"][0], precision_matrix=p["cov"]),
                              {"df": np.array([4.0, 6.5]), "cov": COV}, COV),
    "lowrank_mvn": Case(
        lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["w"], p["d"]),
        {"loc": VEC, "w": A[:, :, :2], "d": POS}, RNG.normal(size=(4, 2, 3))),
    "logistic_normal": Case(lambda D, p: D.LogisticNormal(p["loc"], p["scale"]),
                            {"loc": VEC[:, :2], "scale": np.abs(VEC[:, :2]) + 0.5}, PROBS),
    "kumaraswamy": Case(lambda D, p: D.Kumaraswamy(p["a"], p["b"]), {"a": POS + 1, "b": POS2 + 1},
                        np.array([0.2, 0.5, 0.9]), differs=("mode",)),
    "stick_breaking": Case(
        lambda D, p: D.TransformedDistribution(
            D.Independent(D.Normal(p["loc"], p["scale"]), 1), D.StickBreakingTransform()),
        {"loc": VEC[:, :2], "scale": np.abs(VEC[:, :2]) + 0.5}, PROBS),
    "reshape_cdf": Case(
        lambda D, p: D.TransformedDistribution(
            D.Independent(D.Normal(p["loc"], p["scale"]), 1),
            [D.ReshapeTransform((3,), (3, 1)),
             D.IndependentTransform(D.CumulativeDistributionTransform(D.Normal(0.0, 2.0)), 2)]),
        {"loc": REAL, "scale": POS}, PROBS[..., None]),
}  # fmt: skip

#: Gradients that pass through polygamma(1, x) (Dirichlet's entropy and KL) agree to ~3e-10:
#: chainrule's trigamma and PyTorch's differ in the tenth digit.
GRAD_TOL = {"atol": 1e-9, "rtol": 1e-8}
MOMENTS = ("mean", "variance", "stddev", "mode")


def _params(lib, case, dtype):
    """The case's parameters as tensors of ``lib`` (torch or chainrule) requiring grad."""
    return {
        name: lib.tensor(array.astype(dtype), requires_grad=name not in case.grad_free)
        for name, array in case.params.items()
    }


def _tensor(lib, array, dtype):
    return lib.tensor(array.astype(dtype) if array.dtype.kind == "f" else array)


def _np(t):
    return t.detach().numpy()


def _outcome(fn):
    """fn()'s result, or the exception class it raised (NotImplementedError: no such method)."""
    try:
        return fn()
    except NotImplementedError:
        return NotImplementedError


def _evaluations(lib, D, case, dtype):
    """Every quantity of the case (by name), and the parameters to differentiate by."""
    p = _params(lib, case, dtype)
    d = case.build(D, p)
    value = _tensor(lib, case.value, dtype)
    out = {"log_prob": d.log_prob(value), "entropy": _outcome(d.entropy)}
    for name in MOMENTS:
        out[name] = _outcome(lambda name=name: getattr(d, name))
    if case.cdf:
        out["cdf"] = d.cdf(value)
    if case.icdf:
        out["icdf"] = d.icdf(lib.tensor(np.array([0.1, 0.5, 0.8]).astype(dtype)))
    return d, out, p


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_pytorch(torch, name):
    case = CASES[name]
    ours, mine, cr_params = _evaluations(cr, crd, case, case.dtype)
    theirs, expected, torch_params = _evaluations(torch, torch.distributions, case, case.dtype)
    grad_tol = GRAD_TOL if case.tol is TORCH_TOL else case.tol
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    for key, want in expected.items():
        got = mine[key]
        if key in case.differs:
            continue
        if want is NotImplementedError:
            assert got is NotImplementedError, key
            continue
        assert got is not NotImplementedError, key
        np.testing.assert_allclose(_np(got), _np(want), err_msg=key, **case.tol)
        if not (want.requires_grad and torch.isfinite(want).all()):
            continue
        weights = np.linspace(0.5, 1.5, want.numel()).reshape(tuple(want.shape))
        for params, result, lib in ((cr_params, got, cr), (torch_params, want, torch)):
            for t in params.values():
                t.grad = None
            (result * lib.tensor(weights)).sum().backward(retain_graph=True)
        for param in case.params:
            g_mine, g_want = cr_params[param].grad, torch_params[param].grad
            assert (g_mine is None) == (g_want is None), (key, param)
            if g_want is not None:
                g_mine, g_want = _np(g_mine), _np(g_want)
                if param == "tril":  # a Cholesky factor's upper triangle is never read (but
                    g_mine, g_want = np.tril(g_mine), np.tril(g_want)  # torch's solve grads it)
                np.testing.assert_allclose(
                    g_mine, g_want, err_msg=f"d {key} / d {param}", **grad_tol
                )


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_stays_float32_and_agrees(torch, name):
    case = CASES[name]
    ours, mine, _ = _evaluations(cr, crd, case, np.float32)
    theirs, expected, _ = _evaluations(torch, torch.distributions, case, np.float32)
    assert str(ours.sample((2,)).dtype) == str(theirs.sample((2,)).dtype).removeprefix("torch.")
    if theirs.has_rsample:
        assert str(ours.rsample().dtype) == str(theirs.rsample().dtype).removeprefix("torch.")
    for key, want in expected.items():
        if want is NotImplementedError or key in case.differs:
            continue
        got = mine[key]
        assert str(got.dtype) == str(want.dtype).removeprefix("torch."), key
        np.testing.assert_allclose(_np(got), _np(want), rtol=2e-5, atol=2e-5, err_msg=key)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_shapes_and_expand_match_pytorch(torch, name):
    case = CASES[name]
    ours = case.build(crd, _params(cr, case, case.dtype))
    theirs = case.build(torch.distributions, _params(torch, case, case.dtype))
    assert ours.sample((4, 2)).shape == tuple(theirs.sample((4, 2)).shape)
    assert ours.sample().shape == tuple(theirs.sample().shape)
    if ours.has_rsample:
        assert ours.rsample((5,)).shape == tuple(theirs.rsample((5,)).shape)
    batch = (4,) + tuple(theirs.batch_shape)
    ours_big, theirs_big = ours.expand(batch), theirs.expand(batch)
    assert ours_big.batch_shape == tuple(theirs_big.batch_shape)
    assert ours_big.event_shape == tuple(theirs_big.event_shape)
    value = theirs_big.sample()
    np.testing.assert_allclose(
        _np(ours_big.log_prob(cr.tensor(value.numpy()))),
        _np(theirs_big.log_prob(value)),
        **case.tol,
    )
    assert ours_big.sample((3,)).shape == (3,) + batch + tuple(theirs.event_shape)
    cr.manual_seed(7)
    first = _np(ours.sample((2,)))
    cr.manual_seed(7)
    np.testing.assert_array_equal(_np(ours.sample((2,))), first)  # the default generator's draws


KL_PAIRS = {
    "normal": (lambda D, p: D.Normal(p["a"], p["s"]), lambda D, p: D.Normal(p["b"], p["t"])),
    "laplace": (lambda D, p: D.Laplace(p["a"], p["s"]), lambda D, p: D.Laplace(p["b"], p["t"])),
    "exponential": (lambda D, p: D.Exponential(p["s"]), lambda D, p: D.Exponential(p["t"])),
    "gamma": (lambda D, p: D.Gamma(p["s"], p["t"]), lambda D, p: D.Gamma(p["t"], p["s"])),
    "beta": (lambda D, p: D.Beta(p["s"], p["t"]), lambda D, p: D.Beta(p["t"], p["t"] * 2)),
    "poisson": (lambda D, p: D.Poisson(p["s"]), lambda D, p: D.Poisson(p["t"])),
    "uniform": (lambda D, p: D.Uniform(p["a"], p["a"] + p["s"]),
                lambda D, p: D.Uniform(p["a"] - 1, p["a"] + p["s"] + p["t"])),
    "uniform_outside": (lambda D, p: D.Uniform(p["a"], p["a"] + p["s"]),
                        lambda D, p: D.Uniform(p["a"] + 0.1, p["a"] + p["s"])),
    "bernoulli": (lambda D, p: D.Bernoulli(logits=p["a"]), lambda D, p: D.Bernoulli(logits=p["b"])),
    "categorical": (lambda D, p: D.Categorical(logits=p["l"]),
                    lambda D, p: D.Categorical(probs=p["q"])),
    "one_hot": (lambda D, p: D.OneHotCategorical(logits=p["l"]),
                lambda D, p: D.OneHotCategorical(logits=p["l"] * 2)),
    "dirichlet": (lambda D, p: D.Dirichlet(p["q"] * 3), lambda D, p: D.Dirichlet(p["l"].exp())),
    "mvn": (lambda D, p: D.MultivariateNormal(p["v"], scale_tril=p["tril"]),
            lambda D, p: D.MultivariateNormal(p["v"][0] * 2, covariance_matrix=p["cov"])),
    "independent": (lambda D, p: D.Independent(D.Normal(p["l"], 1.0), 1),
                    lambda D, p: D.Independent(D.Normal(p["q"], 2.0), 1)),
    "log_normal": (lambda D, p: D.LogNormal(p["a"], p["s"]),
                   lambda D, p: D.LogNormal(p["b"], p["t"])),
    "half_normal": (lambda D, p: D.HalfNormal(p["s"]), lambda D, p: D.HalfNormal(p["t"])),
    "cauchy": (lambda D, p: D.Cauchy(p["a"], p["s"]), lambda D, p: D.Cauchy(p["b"], p["t"])),
    "gumbel": (lambda D, p: D.Gumbel(p["a"], p["s"]), lambda D, p: D.Gumbel(p["b"], p["t"])),
    "geometric": (lambda D, p: D.Geometric(p["q"][0]), lambda D, p: D.Geometric(p["q"][1])),
    "binomial": (lambda D, p: D.Binomial(4, logits=p["a"]), lambda D, p: D.Binomial(4, p["q"][0])),
    "pareto": (lambda D, p: D.Pareto(p["s"] + 1, p["t"]), lambda D, p: D.Pareto(p["s"], p["s"])),
    "pareto_outside": (lambda D, p: D.Pareto(p["s"], p["t"]),
                       lambda D, p: D.Pareto(p["s"] + 1, p["s"])),
    "chi2": (lambda D, p: D.Chi2(p["s"]), lambda D, p: D.Chi2(p["t"])),
    "lowrank_mvn": (lambda D, p: D.LowRankMultivariateNormal(p["v"], p["tril"][..., :2], p["s"]),
                    lambda D, p: D.MultivariateNormal(p["v"][0] * 2, covariance_matrix=p["cov"])),
    "mvn_lowrank": (lambda D, p: D.MultivariateNormal(p["v"], scale_tril=p["tril"]),
                    lambda D, p: D.LowRankMultivariateNormal(p["v"], p["cov"][..., :1], p["t"])),
}  # fmt: skip
KL_PARAMS = {"a": REAL, "b": REAL[::-1].copy(), "s": POS, "t": POS2, "l": LOGITS,
             "q": PROBS, "v": VEC, "tril": TRIL, "cov": COV}  # fmt: skip


@pytest.mark.parametrize("name", sorted(KL_PAIRS))
def test_kl_divergence_and_its_gradients_match_pytorch(torch, name):
    build_p, build_q = KL_PAIRS[name]
    results = []
    for lib, D in ((cr, crd), (torch, torch.distributions)):
        params = {k: lib.tensor(v, requires_grad=True) for k, v in KL_PARAMS.items()}
        kl = D.kl_divergence(build_p(D, params), build_q(D, params))
        finite = bool(np.isfinite(_np(kl)).all())
        if finite:
            kl.sum().backward()
        results.append((kl, params, finite))
    (mine, cr_params, finite), (want, torch_params, _) = results
    np.testing.assert_allclose(_np(mine), _np(want), **TORCH_TOL)
    if finite:
        for key in KL_PARAMS:
            g_mine, g_want = cr_params[key].grad, torch_params[key].grad
            assert (g_mine is None) == (g_want is None), key
            if g_want is not None:
                np.testing.assert_allclose(_np(g_mine), _np(g_want), err_msg=key, **GRAD_TOL)


def test_kl_divergence_without_a_formula_raises_not_implemented(torch):
    for lib, D in ((cr, crd), (torch, torch.distributions)):
        with pytest.raises(NotImplementedError):
            D.kl_divergence(D.Categorical(logits=lib.zeros(2)), D.Normal(0.0, 1.0))


def test_register_kl_picks_the_most_specific_pair():
    class Narrow(crd.Normal):
        pass

    @crd.register_kl(Narrow, crd.Normal)
    def _kl_narrow(p, q):
        return p.loc * 0 + 7

    assert crd.kl_divergence(Narrow(0.0, 1.0), crd.Normal(0.0, 1.0)).item() == 7
    assert crd.kl_divergence(crd.Normal(0.0, 1.0), Narrow(0.0, 1.0)).item() == 0


RSAMPLED = {
    "normal": lambda D, p: D.Normal(p["loc"], p["scale"]),
    "uniform": lambda D, p: D.Uniform(p["loc"], p["loc"] + p["scale"]),
    "laplace": lambda D, p: D.Laplace(p["loc"], p["scale"]),
    "exponential": lambda D, p: D.Exponential(p["scale"]),
    "mvn": lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
    "lowrank_mvn": lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["tril"][:, :2], p["scale"]),
    "log_normal": lambda D, p: D.LogNormal(p["loc"], p["scale"]),
    "gumbel": lambda D, p: D.Gumbel(p["loc"], p["scale"]),
    "relaxed_bernoulli": lambda D, p: D.RelaxedBernoulli(p["scale"], logits=p["loc"]),
    "relaxed_one_hot": lambda D, p: D.RelaxedOneHotCategorical(p["scale"][0], logits=p["loc"]),
    "tanh": lambda D, p: D.TransformedDistribution(
        D.Normal(p["loc"], p["scale"]), [D.TanhTransform(cache_size=1)]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RSAMPLED))
def test_rsample_gradient_matches_central_differences_with_a_fixed_generator(name):
    """The gradient of a reparameterised sample is the derivative of the sample, drawn with
    the same noise, with respect to the parameters."""
    arrays = {"loc": REAL, "scale": POS, "tril": TRIL[0]}
    weights = cr.tensor(np.linspace(0.5, 1.5, 12).reshape(4, 3))

    def draw(values):
        cr.manual_seed(3)
        params = {k: cr.tensor(v) for k, v in values.items()}
        d = RSAMPLED[name](crd, params)
        x = d.rsample((4,))
        return (x * weights).sum() + d.log_prob(x).sum(), params

    params = {k: cr.tensor(v, requires_grad=True) for k, v in arrays.items()}
    cr.manual_seed(3)
    d = RSAMPLED[name](crd, params)
    assert d.has_rsample
    x = d.rsample((4,))
    ((x * weights).sum() + d.log_prob(x).sum()).backward()
    for key, array in arrays.items():
        if params[key].grad is None:
            continue
        numeric = np.zeros_like(array)
        for i in np.ndindex(array.shape):
            if key == "tril" and i[0] < i[1]:
                continue  # scale_tril stays lower-triangular
            step = np.zeros_like(array)
            step[i] = 1e-6
            up = draw({**arrays, key: array + step})[0].item()
            down = draw({**arrays, key: array - step})[0].item()
            numeric[i] = (up - down) / 2e-6
        analytic = _np(params[key].grad)
        if key == "tril":
            analytic = np.tril(analytic)
        np.testing.assert_allclose(analytic, numeric, err_msg=key, **FD_TOL)


def test_rsample_of_normal_is_loc_plus_scale_times_the_generators_noise():
    loc, scale = cr.tensor(REAL), cr.tensor(POS)
    cr.manual_seed(5)
    x = crd.Normal(loc, scale).rsample((2,))
    cr.manual_seed(5)
    eps = cr.randn(2, 3, dtype=cr.float64)
    np.testing.assert_allclose(_np(x), _np(loc + scale * eps), **TORCH_TOL)


def test_gamma_rsample_gradient_is_pytorchs_implicit_reparameterisation(torch):
    """The same formula; PyTorch's fitted approximations of dP/dalpha err by up to 1e-4
    (chainrule's central difference by 1e-9, against mpmath: differences.md)."""
    cr.manual_seed(11)
    alpha = cr.tensor(np.array([0.3, 1.0, 2.5, 9.0]), requires_grad=True)
    x = crd.Gamma(alpha, 1.0).rsample()
    x.sum().backward()
    want = torch._standard_gamma_grad(torch.tensor(_np(alpha)), torch.tensor(_np(x)))
    np.testing.assert_allclose(_np(alpha.grad), want.numpy(), rtol=1e-3)


@pytest.mark.parametrize(
    "build, mean_of",
    [
        (lambda a, b: crd.Gamma(a, b), lambda a, b: a / b),
        (lambda a, b: crd.Beta(a, b), lambda a, b: a / (a + b)),
        (lambda a, b: crd.Dirichlet(cr.stack([a, b])), lambda a, b: a / (a + b)),
    ],
)
def test_implicit_reparameterisation_is_unbiased(build, mean_of):
    """The average gradient of samples is the gradient of the mean."""
    cr.manual_seed(0)
    a = cr.tensor(1.7, dtype=cr.float64, requires_grad=True)
    b = cr.tensor(0.8, dtype=cr.float64, requires_grad=True)
    x = build(a, b).rsample((4000,))
    x.reshape(4000, -1)[:, 0].mean().backward()
    a_ref = cr.tensor(1.7, dtype=cr.float64, requires_grad=True)
    b_ref = cr.tensor(0.8, dtype=cr.float64, requires_grad=True)
    mean_of(a_ref, b_ref).backward()
    np.testing.assert_allclose(_np(a.grad), _np(a_ref.grad), rtol=0.1, atol=0.01)
    np.testing.assert_allclose(_np(b.grad), _np(b_ref.grad), rtol=0.1, atol=0.01)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_means_are_near_the_mean(name):
    case = CASES[name]
    cr.manual_seed(1)
    d = case.build(crd, {k: cr.tensor(v) for k, v in case.params.items()})
    n = 4000
    x = _np(d.sample((n,)))
    try:
        mean, std = _np(d.mean), _np(d.stddev)
    except NotImplementedError:
        return  # the relaxed ones have no moments in PyTorch either
    if isinstance(d, crd.Categorical):  # no mean: compare frequencies with probabilities
        frequencies = (x[..., None] == np.arange(d.probs.shape[-1])).mean(0)
        np.testing.assert_allclose(frequencies, _np(d.probs), atol=0.04)
        return
    if isinstance(d, crd.VonMises):  # angles: the circular mean is loc
        circular = np.arctan2(np.sin(x).mean(0), np.cos(x).mean(0))
        np.testing.assert_allclose(np.angle(np.exp(1j * (circular - mean))), 0, atol=0.1)
        return
    std = np.broadcast_to(std, mean.shape)
    finite = np.isfinite(mean) & np.isfinite(std)  # Cauchy has no mean, F no variance
    assert finite.any() or name.endswith("cauchy")
    error = np.abs(x.mean(0) - mean)[finite]
    assert (error < 5 * std[finite] / math.sqrt(n) + 1e-3).all()


@pytest.mark.parametrize(
    "build",
    [
        lambda D, t: D.Normal(t([0.0]), t([-1.0])),
        lambda D, t: D.Bernoulli(probs=t([1.5])),
        lambda D, t: D.Categorical(probs=t([-0.1, 1.1])),
        lambda D, t: D.Uniform(t([1.0]), t([0.0])),
        lambda D, t: D.Dirichlet(t([1.0, 0.0])),
        lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 2], [2, 1]])),
        lambda D, t: D.Exponential(t([1.0])).log_prob(t([-1.0])),
        lambda D, t: D.Beta(t([1.0]), t([1.0])).log_prob(t([1.5])),
        lambda D, t: D.Categorical(logits=t([0.0, 1.0])).log_prob(t([3.0])),
        lambda D, t: D.Normal(t([0.0, 1.0]), 1.0).log_prob(t([0.0, 1.0, 2.0])),
        lambda D, t: D.Normal(t([0.0]), 1.0).log_prob([0.0]),
    ],
)
def test_invalid_arguments_and_values_raise_value_error_as_in_pytorch(torch, build):
    with pytest.raises(ValueError):
        build(torch.distributions, lambda v: torch.tensor(v))
    with pytest.raises(ValueError, match=r"(parameter \w+ .*constraint)|value"):
        build(crd, lambda v: cr.tensor(v))


def test_validation_can_be_switched_off():
    assert crd.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    crd.Distribution.set_default_validate_args(False)
    try:
        assert crd.Exponential(1.0).log_prob(cr.tensor(-1.0)).item() == -1.0 * -1 + 0
    finally:
        crd.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Normal: parameter scale"):
        crd.Normal(0.0, -1.0)


def test_independent_moves_batch_dims_into_the_event(torch):
    loc = np.arange(24.0).reshape(2, 3, 4) / 10
    d = crd.Independent(crd.Normal(cr.tensor(loc), 1.0), 2)
    t = torch.distributions.Independent(torch.distributions.Normal(torch.tensor(loc), 1.0), 2)
    assert d.batch_shape == (2,) and d.event_shape == (3, 4)
    value = np.zeros((5, 2, 3, 4))
    np.testing.assert_allclose(
        _np(d.log_prob(cr.tensor(value))), _np(t.log_prob(torch.tensor(value))), **TORCH_TOL
    )
    assert d.log_prob(cr.tensor(value)).shape == (5, 2)
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        crd.Independent(crd.Normal(cr.tensor(loc), 1.0), 4)


def test_enumerate_support_matches_pytorch(torch):
    for build in (lambda D, t: D.Bernoulli(t([0.3, 0.6])),
                  lambda D, t: D.Categorical(t([[0.3, 0.7], [0.5, 0.5]])),
                  lambda D, t: D.OneHotCategorical(t([0.2, 0.3, 0.5]))):  # fmt: skip
        for expand in (True, False):
            got = build(crd, cr.tensor).enumerate_support(expand)
            want = build(torch.distributions, torch.tensor).enumerate_support(expand)
            np.testing.assert_array_equal(_np(got), _np(want))


def test_constraints_check_as_pytorchs(torch):
    value = np.array([[0.2, 0.8], [-0.1, 1.1], [0.5, 0.5]])
    for name in ("real", "positive", "nonnegative", "unit_interval", "simplex", "boolean",
                 "nonnegative_integer", "real_vector", "one_hot"):  # fmt: skip
        got = getattr(crd.constraints, name).check(cr.tensor(value))
        want = getattr(torch.distributions.constraints, name).check(torch.tensor(value))
        np.testing.assert_array_equal(_np(got), _np(want), err_msg=name)
    # PyTorch's positive_definite answers only the symmetry check when one matrix of the batch
    # is not symmetric; chainrule's checks each matrix, so they are compared on symmetric ones.
    for name, matrices in (("positive_definite", np.stack([COV[0], -COV[1]])),
                           ("lower_cholesky", np.stack([COV[0], -COV[1], TRIL[0]])),
                           ("lower_triangular", np.stack([COV[0], TRIL[0]])),
                           ("symmetric", np.stack([COV[0], TRIL[0]])),
                           ("corr_cholesky", np.stack([TRIL[0], TRIL[0] / np.linalg.norm(
                               TRIL[0], axis=-1, keepdims=True)]))):  # fmt: skip
        got = getattr(crd.constraints, name).check(cr.tensor(matrices))
        want = getattr(torch.distributions.constraints, name).check(torch.tensor(matrices))
        np.testing.assert_array_equal(_np(got), _np(want), err_msg=name)
    for build in (lambda c: c.interval(0.0, 1.0), lambda c: c.greater_than(0.5),
                  lambda c: c.integer_interval(0, 1), lambda c: c.half_open_interval(0, 1),
                  lambda c: c.independent(c.positive, 1)):  # fmt: skip
        got = build(crd.constraints).check(cr.tensor(value))
        want = build(torch.distributions.constraints).check(torch.tensor(value))
        np.testing.assert_array_equal(_np(got), _np(want))


def test_transforms_invert_and_cache():
    x = cr.tensor(REAL)
    compose = crd.ComposeTransform([crd.ExpTransform(), crd.AffineTransform(0.5, 2.0)])
    for t in (crd.ExpTransform(), crd.SigmoidTransform(), crd.TanhTransform(),
              crd.AffineTransform(1.0, -2.0), crd.PowerTransform(3.0), crd.SoftplusTransform(),
              compose):  # fmt: skip
        x_in = x.abs() + 0.1 if isinstance(t, crd.PowerTransform) else x
        np.testing.assert_allclose(_np(t.inv(t(x_in))), _np(x_in), rtol=1e-9, err_msg=repr(t))
    cached = crd.TanhTransform(cache_size=1)
    big = cr.tensor([30.0])
    assert cached.inv(cached(big)) is big  # atanh(tanh(30)) would be inf
    assert crd.identity_transform(x) is x
    assert (
        crd.ExpTransform() == crd.ExpTransform()
        and crd.ExpTransform().inv.inv == crd.ExpTransform()
    )


@pytest.mark.parametrize(
    "constraint",
    [
        lambda c: c.real, lambda c: c.positive, lambda c: c.nonnegative,
        lambda c: c.greater_than(1.5), lambda c: c.less_than(-1.0), lambda c: c.unit_interval,
        lambda c: c.interval(-2.0, 3.0), lambda c: c.simplex,
        lambda c: c.independent(c.positive, 1),
    ],
)  # fmt: skip
def test_biject_to_and_transform_to_match_pytorch(torch, constraint):
    x = np.concatenate([TRIL[0], REAL[None]])[:3]
    for registry in ("biject_to", "transform_to"):
        ours = getattr(crd, registry)(constraint(crd.constraints))
        theirs = getattr(torch.distributions, registry)(constraint(torch.distributions.constraints))
        x_ours, x_theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
        np.testing.assert_allclose(_np(y_ours), _np(y_theirs), **TORCH_TOL)
        assert constraint(crd.constraints).check(y_ours)._array.all()
        y_ours.sum().backward()
        y_theirs.sum().backward()
        np.testing.assert_allclose(_np(x_ours.grad), _np(x_theirs.grad), **TORCH_TOL)
        if theirs.bijective:
            np.testing.assert_allclose(_np(ours.inv(y_ours)), x, rtol=1e-7, atol=1e-9)
            try:
                want = theirs.log_abs_det_jacobian(x_theirs, y_theirs)
            except NotImplementedError:
                continue
            got = ours.log_abs_det_jacobian(x_ours, y_ours)
            np.testing.assert_allclose(_np(got), _np(want), **TORCH_TOL)


def test_kumaraswamy_mode_is_where_the_density_peaks():
    """PyTorch's Kumaraswamy.mode is nan whenever concentration0 > 1 (log1p(-b)); the mode is
    ((a - 1) / (a b - 1)) ** (1 / a) for a, b >= 1."""
    d = crd.Kumaraswamy(cr.tensor(POS + 1), cr.tensor(POS2 + 1))
    mode = d.mode
    at = _np(d.log_prob(mode))
    for step in (-1e-4, 1e-4):
        assert (_np(d.log_prob(mode + step)) < at).all()
    assert np.isnan(_np(crd.Kumaraswamy(cr.tensor(0.5), cr.tensor(2.0)).mode))


def test_stack_and_cat_transforms_match_pytorch(torch):
    x = np.array([[0.3, -0.2, 0.5], [1.0, 0.4, -0.7]])
    for D, lib in ((crd, cr), (torch.distributions, torch)):
        stack = D.StackTransform([D.ExpTransform(), D.SigmoidTransform(), D.TanhTransform()], -1)
        cat = D.CatTransform([D.AffineTransform(1.0, 2.0), D.ExpTransform()], 0, [1, 1])
        t = lib.tensor(x)
        ys = (stack(t), cat(t))
        dets = (stack.log_abs_det_jacobian(t, ys[0]), cat.log_abs_det_jacobian(t, ys[1]))
        inverses = (stack.inv(ys[0]), cat.inv(ys[1]))
        if lib is cr:
            mine = [_np(v) for v in ys + dets + inverses]
        else:
            for got, want in zip(mine, ys + dets + inverses):
                np.testing.assert_allclose(got, _np(want), **TORCH_TOL)


@pytest.mark.parametrize("constraint", ["lower_cholesky", "positive_definite"])
def test_transform_to_matrices_matches_pytorch_and_biject_to_has_none(torch, constraint):
    x = np.concatenate([TRIL[0], REAL[None]])[:3]
    ours = crd.transform_to(getattr(crd.constraints, constraint))(cr.tensor(x))
    theirs = torch.distributions.transform_to(getattr(torch.distributions.constraints, constraint))
    np.testing.assert_allclose(_np(ours), _np(theirs(torch.tensor(x))), **TORCH_TOL)
    with pytest.raises(NotImplementedError):
        torch.distributions.biject_to(getattr(torch.distributions.constraints, constraint))
    with pytest.raises(NotImplementedError, match="biject_to: no transform"):
        crd.biject_to(getattr(crd.constraints, constraint))


def test_repr_names_the_parameters():
    assert repr(crd.Normal(0.0, 1.0)).startswith("Normal(loc: ")
    assert "scale" in repr(crd.Normal(cr.zeros(2), cr.ones(2)))
