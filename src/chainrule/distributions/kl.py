"""`kl_divergence(p, q)` and `register_kl`, the table of closed-form KL divergences it
dispatches on by the two distributions' types (the most specific registered pair wins)."""

from __future__ import annotations

import math

from .. import linalg, ops
from .._tensor import Tensor
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import euler_constant, sum_rightmost

_KL_REGISTRY: dict = {}
_KL_MEMO: dict = {}


def register_kl(type_p: type, type_q: type):
    """A decorator registering ``fn(p, q)`` as KL(p || q) for instances of the two types.

    >>> class Point(Normal): pass
    >>> @register_kl(Point, Point)
    ... def _kl_point_point(p, q):
    ...     return (p.loc - q.loc).abs()
    """
    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"register_kl: expected Distribution subclasses, got {t!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMO.clear()
        return fn

    return decorator


def _dispatch(type_p: type, type_q: type):
    """The registered function for the nearest pair of ancestors (by total MRO distance)."""
    best, best_rank = None, None
    for i, super_p in enumerate(type_p.__mro__):
        for j, super_q in enumerate(type_q.__mro__):
            fn = _KL_REGISTRY.get((super_p, super_q))
            if fn is not None and (best_rank is None or (i + j, i) < best_rank):
                best, best_rank = fn, (i + j, i)
    return best


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], one value per distribution in the batch.

    Raises NotImplementedError for a pair with no registered formula.

    >>> import chainrule as cr
    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
    tensor(0.5000)
    """
    key = (type(p), type(q))
    if key not in _KL_MEMO:
        _KL_MEMO[key] = _dispatch(*key)
    fn = _KL_MEMO[key]
    if fn is None:
        raise NotImplementedError(
            f"kl_divergence: no formula for {type(p).__name__} and {type(q).__name__}; "
            "register one with register_kl"
        )
    return fn(p, q)


def _infinite_where(mask: Tensor, value: Tensor) -> Tensor:
    return ops.where(mask, math.inf, value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - ops.log(var_ratio))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (ops.softplus(-q.logits) - ops.softplus(-p.logits))
    t1 = ops.where(p.probs == 0, 0.0, _infinite_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (ops.softplus(q.logits) - ops.softplus(p.logits))
    t2 = ops.where(p.probs == 1, 0.0, _infinite_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _infinite_where((q.probs == 0).expand(t.shape), t)
    t = ops.where((p.probs == 0).expand(t.shape), 0.0, t)  # 0 log 0 = 0
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    total_p = p.concentration1 + p.concentration0
    total_q = q.concentration1 + q.concentration0
    t1 = ops.lgamma(q.concentration1) + ops.lgamma(q.concentration0) + ops.lgamma(total_p)
    t2 = ops.lgamma(p.concentration1) + ops.lgamma(p.concentration0) + ops.lgamma(total_q)
    t3 = (p.concentration1 - q.concentration1) * ops.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ops.digamma(p.concentration0)
    t5 = (total_q - total_p) * ops.digamma(total_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * ops.log(p.rate / q.rate)
    t2 = ops.lgamma(q.concentration) - ops.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ops.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    total_p = p.concentration.sum(-1)
    total_q = q.concentration.sum(-1)
    t1 = ops.lgamma(total_p) - ops.lgamma(total_q)
    t2 = (ops.lgamma(p.concentration) - ops.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = ops.digamma(p.concentration) - ops.digamma(total_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            f"kl_divergence: MultivariateNormals of event shapes {tuple(p.event_shape)} and "
            f"{tuple(q.event_shape)} have no KL divergence"
        )
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_log_det_ratio = q._half_log_det() - p._half_log_det()
    n = p.event_shape[0]
    batch = ops.broadcast_shapes(tuple(p_tril.shape[:-2]), tuple(q_tril.shape[:-2]))
    p_tril = p_tril.expand(tuple(batch) + (n, n))
    q_tril = q_tril.expand(tuple(batch) + (n, n))
    # tr(Sigma_q^{-1} Sigma_p) = |L_q^{-1} L_p|_F^2
    trace = (linalg.solve_triangular(q_tril, p_tril, upper=False) ** 2).sum((-2, -1))
    distance = batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_log_det_ratio + 0.5 * (trace + distance - n)


def _full(d):
    """A LowRankMultivariateNormal as the MultivariateNormal it is."""
    return d._full if isinstance(d, LowRankMultivariateNormal) else d


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank(p, q):
    return _kl_multivariatenormal_multivariatenormal(_full(p), _full(q))


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ops.log((q.high - q.low) / (p.high - p.low))
    return _infinite_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - ops.log(ratio)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return (
        -ops.log(scale_ratio) + distance / q.scale + scale_ratio * ops.exp(-distance / p.scale) - 1
    )


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (ops.log(p.rate) - ops.log(q.rate)) - (p.rate - q.rate)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak and Nielsen (2019): log(((s_p + s_q)^2 + (m_p - m_q)^2) / (4 s_p s_q)).
    spread = (p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2
    return ops.log(spread) - ops.log(4 * p.scale * q.scale)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    tail = ops.exp(ops.lgamma(1 + ratio) - shift)
    return -ops.log(ratio) + shift + ratio * euler_constant + tail - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - ops.log1p(-q.probs) / p.probs - q.logits


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if (p.total_count._array < q.total_count._array).any():
        raise NotImplementedError(
            "kl_divergence: Binomials where q has more trials than p (q.total_count > "
            "p.total_count) have no formula here"
        )
    per_trial = p.probs * (p.logits - q.logits) + ops.log1p(-p.probs) - ops.log1p(-q.probs)
    return _infinite_where(p.total_count > q.total_count, p.total_count * per_trial)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * ops.log(p.scale / q.scale) - ops.log(alpha_ratio) + alpha_ratio - 1
    return _infinite_where(p.scale < q.scale, result)  # p puts mass where q has none


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            "kl_divergence: Independent distributions reinterpreting different numbers of dims"
        )
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError(
            "kl_divergence: TransformedDistributions with different transforms or events"
        )
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)


__all__ = ["kl_divergence", "register_kl"]
