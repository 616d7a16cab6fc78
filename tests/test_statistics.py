"""Statistics, differences and integrals, histograms, windows and binomial beyond the generated
op tests: ties and NaN against PyTorch, dtypes, the edge cases (reductions over a dim of size
0), the sampler's moments and the error messages."""

import math
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import DomainError, DTypeError, ShapeError

NAN = math.nan
METHODS = ["aminmax", "count_nonzero", "nanmean", "nansum", "cov", "corrcoef", "diff",
           "quantile", "nanquantile", "histogram", "unique_consecutive", "renorm"]  # fmt: skip


def both(torch, values, dtype=np.float64, requires_grad=False):
    """The same values as a chainrule and a PyTorch tensor."""
    array = np.array(values, dtype=dtype)
    return (cr.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))  # fmt: skip


def same(ours, theirs, tol=1e-12):
    """Equal values (NaN equal to NaN), shapes and dtypes."""
    expected = theirs.detach().numpy()
    assert ours.shape == expected.shape and ours.dtype == expected.dtype
    np.testing.assert_allclose(ours.detach().numpy(), expected, rtol=tol, atol=tol)


def same_grads(ours, theirs, fn, torch_fn=None):
    """fn's value and the gradient of its sum agree on both libraries."""
    out, expected = fn(ours), (torch_fn or fn)(theirs)
    same(out, expected)
    out.sum().backward()
    expected.sum().backward()
    same(ours.grad, theirs.grad)


def test_every_method_pytorch_has_is_a_tensor_method(torch):
    for name in METHODS:
        assert hasattr(torch.Tensor, name) and hasattr(cr.Tensor, name), name


# aminmax, count_nonzero, nansum, nanmean.


def test_aminmax_shares_the_gradient_between_tied_extremes_as_pytorch(torch):
    ours, theirs = both(torch, [1.0, 3.0, 3.0, 0.0, 0.0], requires_grad=True)
    same_grads(ours, theirs, lambda x: (lambda r: r.min + 2 * r.max)(x.aminmax()))
    result = cr.aminmax(cr.tensor([[1.0, 2.0], [3.0, 0.0]]), keepdim=True)
    assert result.min.shape == (1, 1) and result._fields == ("min", "max")


def test_aminmax_refuses_empty_and_several_dims():
    with pytest.raises(ShapeError, match=r"aminmax: cannot reduce a tensor of shape \(0,\)"):
        cr.aminmax(cr.zeros(0))
    with pytest.raises(DTypeError, match="aminmax: dim must be an int or None"):
        cr.aminmax(cr.zeros(2, 2), dim=(0, 1))


#: Reductions over a dim of size 0, each ``fn(x, dim, keepdim)`` on either library (dim None:
#: every dim; softmax and log_softmax take one dim and no keepdim).
EMPTY_REDUCTIONS = {
    "mean": lambda x, dim, keepdim: x.mean(dim, keepdim=keepdim),
    "nanmean": lambda x, dim, keepdim: x.nanmean(dim, keepdim=keepdim),
    "var": lambda x, dim, keepdim: x.var(dim, keepdim=keepdim),
    "var population": lambda x, dim, keepdim: x.var(dim, keepdim=keepdim, correction=0),
    "std": lambda x, dim, keepdim: x.std(dim, keepdim=keepdim),
    "sum": lambda x, dim, keepdim: x.sum(dim, keepdim=keepdim),
    "logsumexp": lambda x, dim, keepdim: x.logsumexp(dim, keepdim=keepdim),
    "softmax": lambda x, dim, keepdim: x.softmax(dim),
    "log_softmax": lambda x, dim, keepdim: x.log_softmax(dim),
}
EMPTY_SHAPES = [(0,), (2, 0), (0, 3), (2, 0, 3)]


def _empty_dims(name, shape):
    """The dims to reduce ``shape`` over, each holding a dim of size 0."""
    dims = [d for d in (0, -1) if shape[d] == 0] + [(0, -1)] * (len(shape) > 1)
    if name in ("softmax", "log_softmax"):
        return [d for d in dims if isinstance(d, int)]
    return dims + ([None] if name not in ("logsumexp",) else [])


@pytest.mark.parametrize("shape", EMPTY_SHAPES)
@pytest.mark.parametrize("name", list(EMPTY_REDUCTIONS))
def test_reductions_over_an_empty_dim_give_what_pytorch_gives(name, shape, torch):
    fn = EMPTY_REDUCTIONS[name]
    for dim in _empty_dims(name, shape):
        for keepdim in (False, True):
            ours, theirs = both(torch, np.zeros(shape), requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # PyTorch's "degrees of freedom"
                same_grads(ours, theirs, lambda x, dim=dim, keepdim=keepdim: fn(x, dim, keepdim))


@pytest.mark.parametrize(
    "program",
    [lambda x: x.amax(-1), lambda x: x.amin(dim=(0, 1)), lambda x: x.max(1),
     lambda x: x.min(-1, keepdim=True), lambda x: x.argmax(1), lambda x: x.argmin(),
     lambda x: x.amax(), lambda x: x.max()],
)  # fmt: skip
def test_extremes_of_an_empty_dim_are_refused_as_pytorch_refuses_them(program, torch):
    with pytest.raises(Exception) as theirs:
        program(torch.zeros(2, 0))
    with pytest.raises(type(theirs.value), match=r"over an empty dimension") as ours:
        program(cr.zeros(2, 0))
    assert isinstance(ours.value, cr.EmptyReductionError)


def test_count_nonzero_counts_in_int64(torch):
    ours, theirs = both(torch, [[0.0, 1.0, NAN], [0.0, 0.0, 2.0]])
    for dim in (None, 0, (0, 1), -1):
        same(cr.count_nonzero(ours, dim), torch.count_nonzero(theirs, dim))
    assert cr.count_nonzero(cr.tensor([True, False])).dtype == np.int64


def test_nansum_and_nanmean_give_nan_no_gradient(torch):
    values = [[1.0, NAN, 2.0], [NAN, NAN, NAN]]
    for fn in (lambda x: x.nansum(), lambda x: x.nansum(1), lambda x: x.nanmean(1, True)):
        ours, theirs = both(torch, values, requires_grad=True)
        out, expected = fn(ours), fn(theirs)
        same(out, expected)
        g = np.ones(out.shape)
        out.backward(cr.tensor(g))
        expected.backward(torch.tensor(g))
        same(ours.grad, theirs.grad)  # 0 at NaN; NaN where a whole slice is (PyTorch's too)


def test_nansum_of_integers_and_with_a_dtype(torch):
    ours, theirs = both(torch, [1, 2, 3], np.int32)
    same(cr.nansum(ours), torch.nansum(theirs))
    same(cr.nansum(ours, dtype=cr.float64), torch.nansum(theirs, dtype=torch.float64))
    with pytest.raises(DTypeError, match="nanmean: needs a floating-point tensor, got int32"):
        cr.nanmean(ours)


# cov and corrcoef.


def test_cov_with_both_weights_and_its_gradients_match_pytorch(torch):
    x = np.array([[1.0, 2.0, 4.0, 0.5], [0.0, 1.0, 1.0, 3.0]])
    f, a = np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 0.25])
    ours, theirs = both(torch, x, requires_grad=True)
    a_ours, a_theirs = both(torch, a, requires_grad=True)
    out = cr.cov(ours, correction=2, fweights=cr.tensor(f), aweights=a_ours)
    expected = torch.cov(theirs, correction=2, fweights=torch.tensor(f), aweights=a_theirs)
    same(out, expected)
    out.sum().backward()
    expected.sum().backward()
    same(ours.grad, theirs.grad)
    same(a_ours.grad, a_theirs.grad)


def test_cov_shapes_and_too_few_observations(torch):
    ours, theirs = both(torch, [1.0, 2.0, 4.0])
    same(cr.cov(ours), torch.cov(theirs))
    same(cr.cov(ours.reshape(1, 3)), torch.cov(theirs.reshape(1, 3)))
    assert cr.cov(cr.tensor([[1.0, 2.0]]), correction=3).item() == math.inf
    assert cr.cov(cr.tensor([[1, 2], [3, 5]])).dtype == np.float32


def test_cov_refuses_bad_weights_and_shapes():
    x = cr.tensor([[1.0, 2.0]])
    with pytest.raises(ShapeError, match=r"cov: input must have at most 2 dimensions"):
        cr.cov(cr.zeros(2, 2, 2))
    with pytest.raises(DTypeError, match="cov: fweights must have an integer dtype, got float"):
        cr.cov(x, fweights=cr.tensor([1.0, 2.0]))
    with pytest.raises(DomainError, match="cov: fweights must not be negative"):
        cr.cov(x, fweights=cr.tensor([-1, 2]))
    with pytest.raises(ShapeError, match=r"cov: aweights must be a 1-D tensor of one weight"):
        cr.cov(x, aweights=cr.tensor([1.0, 2.0, 3.0]))


def test_corrcoef_matches_pytorch_and_is_one_on_the_diagonal(torch):
    ours, theirs = both(torch, [[1.0, 2.0, 4.0, 0.0], [2.0, 1.0, 0.0, 0.5], [0.0, 1.0, 3.0, 1.0]])
    same(cr.corrcoef(ours), torch.corrcoef(theirs))
    same(ours[0].corrcoef(), theirs[0].corrcoef())


# diff, gradient, trapezoid.


def test_diff_of_bools_orders_and_empty_results(torch):
    ours, theirs = both(torch, [True, False, False, True], np.bool_)
    same(cr.diff(ours), torch.diff(theirs))
    ours, theirs = both(torch, [1.0, 4.0, 9.0])
    for n in (0, 2, 3, 5):
        same(cr.diff(ours, n), torch.diff(theirs, n))


def test_diff_refuses_scalars_negative_orders_and_mismatched_prepends():
    with pytest.raises(ShapeError, match="diff: needs a tensor of at least one dimension"):
        cr.diff(cr.tensor(1.0))
    with pytest.raises(DomainError, match="diff: n .* must be a non-negative int, got -1"):
        cr.diff(cr.zeros(2), -1)
    with pytest.raises(ShapeError, match=r"diff: prepend of shape \(\) must have the input's 1"):
        cr.diff(cr.zeros(2), prepend=cr.tensor(0.0))


def test_gradient_of_integers_is_float_and_matches_numpy():
    (out,) = cr.gradient(cr.tensor([1, 4, 9, 16]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), np.gradient(np.array([1.0, 4.0, 9.0, 16.0])))
    y = np.random.default_rng(0).standard_normal((5, 4))
    coords = np.array([0.0, 0.5, 1.5, 1.75, 3.0])
    ours = cr.gradient(cr.tensor(y), spacing=[cr.tensor(coords), 2.0], edge_order=2)
    for o, e in zip(ours, np.gradient(y, coords, 2.0, edge_order=2)):
        np.testing.assert_allclose(o.numpy(), e, rtol=1e-12)


def test_gradient_refuses_bad_orders_spacings_and_short_dims():
    x = cr.zeros(2, 3)
    with pytest.raises(DomainError, match="gradient: edge_order must be 1 or 2, got 3"):
        cr.gradient(x, edge_order=3)
    with pytest.raises(ShapeError, match="gradient: spacing has 1 entries for 2 dims"):
        cr.gradient(x, spacing=[2.0])
    with pytest.raises(ShapeError, match="gradient: dim 0 of the tensor of shape \\(2, 3\\) has 2"):
        cr.gradient(x, edge_order=2)
    with pytest.raises(ShapeError, match="gradient: coordinates for dim 1 must be 1-D with 3"):
        cr.gradient(x, spacing=[cr.zeros(2)], dim=1)


def test_trapezoid_of_an_empty_dim_and_the_errors(torch):
    ours, theirs = both(torch, np.zeros((0, 3)))
    same(cr.trapezoid(ours, dim=0), torch.trapezoid(theirs, dim=0))
    same(cr.cumulative_trapezoid(ours, dim=0), torch.cumulative_trapezoid(theirs, dim=0))
    with pytest.raises(DTypeError, match="trapezoid: give x .* or dx .*, not both"):
        cr.trapezoid(cr.zeros(3), cr.zeros(3), dx=1.0)
    with pytest.raises(ShapeError, match="trapezoid: x has 2 points but y has 3 samples"):
        cr.trapezoid(cr.zeros(3), cr.zeros(2))
    with pytest.raises(ShapeError, match="cumulative_trapezoid: needs y of at least one dim"):
        cr.cumulative_trapezoid(cr.tensor(1.0))


# quantile and nanquantile.


@pytest.mark.parametrize("mode", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_at_ties_and_nan_matches_pytorch(torch, mode):
    values = [[3.0, 1.0, 3.0, 2.0, 1.0], [0.5, NAN, 2.0, NAN, 1.0], [NAN] * 5]
    q = np.array([0.0, 0.3, 0.5, 0.625, 1.0])
    for fn in ("quantile", "nanquantile"):
        ours, theirs = both(torch, values, requires_grad=True)
        same_grads(
            ours,
            theirs,
            lambda x, fn=fn: getattr(x, fn)(cr.tensor(q), 1, interpolation=mode),
            lambda x, fn=fn: getattr(x, fn)(torch.tensor(q), 1, interpolation=mode),
        )


def test_quantile_refuses_bad_arguments():
    x = cr.tensor([1.0, 2.0])
    with pytest.raises(DomainError, match=r"quantile: q must lie in \[0, 1\], got 1.5"):
        x.quantile(1.5)
    with pytest.raises(ShapeError, match=r"quantile: q must be a number or a 1-D tensor"):
        x.quantile(cr.tensor([[0.5]], dtype=cr.float32))
    with pytest.raises(DTypeError, match="quantile: q .float64. must have the input's dtype"):
        x.quantile(cr.tensor([0.5], dtype=cr.float64))
    with pytest.raises(DTypeError, match="nanquantile: needs a floating-point tensor, got int64"):
        cr.nanquantile(cr.tensor([1, 2]), 0.5)
    with pytest.raises(ShapeError, match=r"quantile: the input of shape \(0,\) is empty"):
        cr.quantile(cr.zeros(0), 0.5)
    with pytest.raises(DomainError, match="quantile: interpolation must be one of linear"):
        x.quantile(0.5, interpolation="cubic")


def test_quantile_runs_batched_under_vmap():
    x = cr.tensor(np.random.default_rng(1).standard_normal((3, 5)))
    ours = cr.func.vmap(lambda row: row.quantile(0.3))(x)
    np.testing.assert_allclose(ours.numpy(), np.quantile(x.numpy(), 0.3, axis=1))


# renorm and unique_consecutive.


def test_renorm_refuses_what_pytorch_refuses():
    with pytest.raises(ShapeError, match=r"renorm: input needs at least 2 dimensions, got \(2,\)"):
        cr.renorm(cr.zeros(2), 2, 0, 1.0)
    with pytest.raises(DomainError, match="renorm: p must be a positive number"):
        cr.renorm(cr.zeros(2, 2), 0, 0, 1.0)
    with pytest.raises(DomainError, match="renorm: maxnorm must be >= 0, got -1"):
        cr.renorm(cr.zeros(2, 2), 2, 0, -1)


def test_unique_consecutive_matches_pytorch(torch):
    ours, theirs = both(torch, [1, 1, 2, 2, 3, 1, 1, 2], np.int64)
    for inverse, counts in ((True, False), (False, True), (True, True)):
        flags = {"return_inverse": inverse, "return_counts": counts}
        out, expected = (
            cr.unique_consecutive(ours, **flags),
            torch.unique_consecutive(theirs, **flags),
        )
        assert len(out) == len(expected)
        for o, e in zip(out, expected):
            same(o, e)
    ours, theirs = both(torch, [[1.0, 1.0], [1.0, 1.0], [2.0, 2.0], [NAN, 0.0], [NAN, 0.0]])
    flags = {"return_inverse": True, "return_counts": True, "dim": 0}
    for o, e in zip(ours.unique_consecutive(**flags), theirs.unique_consecutive(**flags)):
        same(o, e)
    ours, theirs = both(torch, [])
    same(cr.unique_consecutive(ours), torch.unique_consecutive(theirs))


# Histograms.


def test_histogram_edges_and_counts_match_pytorch_at_the_edges(torch):
    cases = [([1.0, 2.0, 1.0, 4.0, 0.0, 3.0], 3), ([1.0, 1.0], 2), ([], 2), ([5.0], 1),
             (np.arange(-5, 6) / 3, 7)]  # fmt: skip
    for values, bins in cases:
        for dtype in (np.float32, np.float64):
            ours, theirs = both(torch, values, dtype)
            out, expected = cr.histogram(ours, bins), torch.histogram(theirs, bins)
            same(out.hist, expected.hist, tol=0)
            # PyTorch's linspace may round an edge differently in the last bit (see _linspace).
            same(out.bin_edges, expected.bin_edges, tol=1e-6 if dtype == np.float32 else 1e-15)
    ours, theirs = both(torch, [0.0, 1.0, 1.5, 2.0, 3.0, 7.0])
    w_ours, w_theirs = both(torch, [1.0, 2.0, 0.5, 1.0, 1.0, 4.0])
    for o, e in zip(
        ours.histogram(4, range=(0.0, 3.0), weight=w_ours, density=True),
        theirs.histogram(4, range=(0.0, 3.0), weight=w_theirs, density=True),
    ):
        same(o, e)


def test_histogramdd_with_edges_and_counts_matches_pytorch(torch):
    points = np.random.default_rng(2).integers(0, 4, (20, 3)).astype(np.float64)
    ours, theirs = both(torch, points)
    edges = [np.array([0.0, 1.0, 3.0]), np.array([-1.0, 2.0, 2.5, 4.0]), np.array([1.0, 3.0])]
    for bins_ours, bins_theirs in [([*map(cr.tensor, edges)], [*map(torch.tensor, edges)]),
                                   ([3, 1, 2], [3, 1, 2])]:  # fmt: skip
        out, expected = cr.histogramdd(ours, bins_ours), torch.histogramdd(theirs, bins_theirs)
        same(out.hist, expected.hist, tol=0)
        for o, e in zip(out.bin_edges, expected.bin_edges):
            same(o, e, tol=1e-15)


def test_histogram_refuses_what_it_cannot_count():
    with pytest.raises(DTypeError, match="histogram: needs a floating-point tensor, got int64"):
        cr.histogram(cr.tensor([1, 2]), 2)
    with pytest.raises(DomainError, match="histogram: the input holds inf or NaN"):
        cr.histogram(cr.tensor([1.0, NAN]), 2)
    with pytest.raises(DomainError, match=r"histogram: the range \[3.0, 1.0\] of dim 0 has min"):
        cr.histogram(cr.tensor([1.0]), 2, range=(3.0, 1.0))
    with pytest.raises(DomainError, match="histogram: bins must be a positive int"):
        cr.histogram(cr.tensor([1.0]), 0)
    with pytest.raises(DomainError, match="histogram: the bin edges of dim 0 must not decrease"):
        cr.histogram(cr.tensor([1.0]), cr.tensor([2.0, 1.0]))
    with pytest.raises(ShapeError, match=r"histogram: weight .float32, shape \(1,\). must have"):
        cr.histogram(cr.tensor([1.0, 2.0]), 2, weight=cr.tensor([1.0]))
    with pytest.raises(ShapeError, match="histogramdd: bins has 1 entries for 2 dims"):
        cr.histogramdd(cr.zeros(3, 2), [2])


# Window functions.

WINDOWS = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows_match_pytorch(torch, name):
    for length in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            out = getattr(cr, name)(length, periodic)
            expected = getattr(torch, name)(length, periodic)
            assert out.dtype == np.float32
            same(out, expected, tol=2e-6)
            out = getattr(cr, name)(length, periodic, dtype=cr.float64, requires_grad=True)
            assert out.requires_grad
            same(out, getattr(torch, name)(length, periodic, dtype=torch.float64), tol=1e-12)


def test_window_parameters_and_errors(torch):
    same(cr.hamming_window(6, False, 0.6, 0.3), torch.hamming_window(6, False, 0.6, 0.3), 1e-6)
    same(cr.kaiser_window(7, True, 3.5), torch.kaiser_window(7, True, 3.5), 1e-6)
    with pytest.raises(DTypeError, match="hann_window: needs a floating-point dtype, got int64"):
        cr.hann_window(3, dtype=cr.int64)
    with pytest.raises(DomainError, match="kaiser_window: window_length must be a non-negative"):
        cr.kaiser_window(-1)


# binomial.


def test_binomial_is_reproducible_and_has_the_right_moments():
    count = cr.full((20000,), 10.0)
    prob = cr.tensor(0.3)
    cr.manual_seed(5)
    first = cr.binomial(count, prob)
    cr.manual_seed(5)
    assert (first == cr.binomial(count, prob)).all()
    g = cr.Generator().manual_seed(7)
    again = cr.binomial(count, prob, generator=cr.Generator().manual_seed(7))
    assert (cr.binomial(count, prob, generator=g) == again).all()
    values = first.numpy()
    assert first.dtype == np.float32 and np.all(values == np.round(values))
    assert abs(values.mean() - 3.0) < 0.05 and abs(values.var() - 2.1) < 0.1
    assert not cr.binomial(cr.ones(2, requires_grad=True), prob).requires_grad


def test_binomial_refuses_what_pytorch_would_garble():
    with pytest.raises(DomainError, match=r"binomial: prob must lie in \[0, 1\]"):
        cr.binomial(cr.tensor([1.0]), cr.tensor([1.5]))
    with pytest.raises(DomainError, match="binomial: count must be non-negative"):
        cr.binomial(cr.tensor([-1.0]), cr.tensor([0.5]))
    with pytest.raises(DTypeError, match="binomial: count and prob must be floating-point"):
        cr.binomial(cr.tensor([1]), cr.tensor([0.5]))
    with pytest.raises(ShapeError, match=r"binomial: count of shape \(2,\) and prob of shape"):
        cr.binomial(cr.ones(2), cr.ones(3) / 2)
