"""Cases for chainrule/ops/statistics.py, calculus.py and histograms.py (window functions
and binomial samples take no tensor to differentiate: tests/test_statistics.py checks them).

NaN enters through ``where(x > x[..., :1] + OFFSET, nan, x)``: never the first element of a
slice (so nanmean and nanquantile have a value to keep), and the offset is a number
hypothesis does not favour, so no finite difference step crosses the mask. Order statistics
draw distinct elements (at a tie the gradient's index is left open).
"""

import math

from cases import Case
from hypothesis import strategies as st
from strategies import distinct, one, positive, reals

DISTINCT = (distinct(),)
OFFSET = 0.4321
nan = math.nan


def with_nan(lib, x):
    """x with NaN where it exceeds its slice's first element by more than OFFSET."""
    return lib.where(x > x[..., :1] + OFFSET, nan, x)


def columns(min_rows=1, min_cols=2):
    """(V, N) observations of V variables, and (N,) weights."""
    sizes = st.tuples(st.integers(min_rows, 3), st.integers(min_cols, 5))
    return sizes.map(lambda s: ((s[0], s[1]), (s[1],)))


def samples(min_samples=2):
    """(N, M) samples along dim 0 and (N,) sample points."""
    sizes = st.tuples(st.integers(min_samples, 5), st.integers(1, 3))
    return sizes.map(lambda s: ((s[0], s[1]), (s[0],)))


def points(d=2):
    """(N, D) points and (N,) weights."""
    return st.integers(1, 6).map(lambda n: ((n, d), (n,)))


def increasing(c):
    """Strictly increasing coordinates from positive steps."""
    return c.cumsum(0)


def spread(r):
    """A histogram's tuple as a flat tuple of tensors (hist, *bin_edges)."""
    return (r.hist, *r.bin_edges) if isinstance(r.bin_edges, tuple) else (r.hist, r.bin_edges)


CASES = {
    "aminmax": Case(lambda x: x.aminmax(), domain=DISTINCT),
    "aminmax[dim]": Case(lambda x: x.aminmax(dim=0), one(1), DISTINCT),
    "aminmax[keepdim]": Case(lambda x: x.aminmax(dim=-1, keepdim=True), one(1), DISTINCT),
    "count_nonzero": Case(lambda x: x.round().count_nonzero()),
    "count_nonzero[dim]": Case(lambda x: x.round().count_nonzero(-1), one(1)),
    "count_nonzero[tuple]": Case(lambda x: x.round().count_nonzero((0, -1)), one(2)),
    "nansum": Case(lambda lib, x: with_nan(lib, x).nansum(), one(1), needs_lib=True),
    "nansum[dim]": Case(lambda lib, x: with_nan(lib, x).nansum(-1, keepdim=True), one(1),
                        needs_lib=True),
    "nansum[no_nan]": Case(lambda x: x.nansum()),
    "nanmean": Case(lambda lib, x: with_nan(lib, x).nanmean(), one(1), needs_lib=True),
    "nanmean[dim]": Case(lambda lib, x: with_nan(lib, x).nanmean(-1), one(2), needs_lib=True),
    "cov": Case(lambda x: x.cov(), one(1, 2, min_side=2)),
    "cov[correction0]": Case(lambda x: x.cov(correction=0), one(2, 2)),
    "cov[weights]": Case(
        lambda lib, x, a: lib.cov(x, fweights=lib.arange(x.shape[-1]) % 3 + 1, aweights=a),
        columns(), (reals(), positive()), needs_lib=True),
    "cov[fweights]": Case(lambda lib, x: x.cov(fweights=lib.arange(x.shape[-1]) % 2 + 1),
                          one(2, 2, min_side=2), needs_lib=True),
    "corrcoef": Case(lambda x: x.corrcoef(), columns(1, 3).map(lambda s: s[:1]), DISTINCT),
    "corrcoef[vector]": Case(lambda x: x.corrcoef(), one(1, 1, min_side=2), DISTINCT),
    "diff": Case(lambda x: x.diff(), one(1)),
    "diff[n2_dim0]": Case(lambda x: x.diff(2, 0), one(1)),
    "diff[prepend_append]": Case(lambda x, y: x.diff(dim=-1, prepend=y, append=y),
                                 one(1).map(lambda s: s * 2)),
    "gradient": Case(lambda lib, x: lib.gradient(x), one(1, 3, min_side=2), needs_lib=True),
    "gradient[spacing_edge2]": Case(
        lambda lib, x: lib.gradient(x, spacing=[2.0, 0.5], dim=[1, 0], edge_order=2),
        one(2, 2, min_side=3), needs_lib=True),
    "gradient[coordinates]": Case(
        lambda lib, x, c: lib.gradient(x, spacing=[increasing(c)], dim=0), samples(),
        (reals(), positive()), needs_lib=True),
    "gradient[coordinates_edge2]": Case(
        lambda lib, x, c: lib.gradient(x, spacing=[increasing(c)], dim=0, edge_order=2),
        samples(3), (reals(), positive()), needs_lib=True),
    "trapezoid": Case(lambda lib, y: lib.trapezoid(y), one(1), needs_lib=True),
    "trapezoid[x]": Case(lambda lib, y, x: lib.trapezoid(y, x, dim=0), samples(1),
                         needs_lib=True),
    "trapezoid[x_broadcast]": Case(lambda lib, y, x: lib.trapezoid(y, x),
                                   one(2, 2).map(lambda s: (s[0], (1, s[0][-1]))),
                                   needs_lib=True),
    "trapezoid[dx]": Case(lambda lib, y: lib.trapezoid(y, dx=0.5, dim=0), one(1),
                          needs_lib=True),
    "trapz": Case(lambda lib, y, x: lib.trapz(y, x, dim=0), samples(1), needs_lib=True),
    "trapz[dx]": Case(lambda lib, y: lib.trapz(y, dx=2.0), one(1), needs_lib=True),
    "cumulative_trapezoid": Case(lambda lib, y: lib.cumulative_trapezoid(y), one(1),
                                 needs_lib=True),
    "cumulative_trapezoid[x]": Case(lambda lib, y, x: lib.cumulative_trapezoid(y, x, dim=0),
                                    samples(), needs_lib=True),
    "cumulative_trapezoid[dx]": Case(lambda lib, y: lib.cumulative_trapezoid(y, dx=0.5),
                                     one(1), needs_lib=True),
    "quantile": Case(lambda x: x.quantile(0.3), domain=DISTINCT),
    "quantile[q_tensor_keepdim]": Case(
        lambda lib, x: x.quantile(lib.tensor([0.0, 0.25, 1.0], dtype=x.dtype), 0, True),
        one(1), DISTINCT, needs_lib=True),
    "quantile[q_tensor_all_keepdim]": Case(
        lambda lib, x: x.quantile(lib.tensor([0.6, 0.1], dtype=x.dtype), keepdim=True),
        one(1), DISTINCT, needs_lib=True),
    "quantile[lower]": Case(lambda x: x.quantile(0.4, -1, interpolation="lower"), one(1),
                            DISTINCT),
    "quantile[higher]": Case(lambda x: x.quantile(0.4, 0, interpolation="higher"), one(1),
                             DISTINCT),
    "quantile[nearest]": Case(lambda x: x.quantile(0.5, -1, True, interpolation="nearest"),
                              one(1), DISTINCT),
    "quantile[midpoint]": Case(lambda x: x.quantile(0.7, 1, interpolation="midpoint"), one(2),
                               DISTINCT),
    "quantile[scalar]": Case(lambda x: x.quantile(0.5, 0, keepdim=True), one(0, 0)),
    "nanquantile": Case(lambda lib, x: with_nan(lib, x).nanquantile(0.4, -1), one(1),
                        DISTINCT, needs_lib=True),
    "nanquantile[all]": Case(lambda x: x.nanquantile(0.7), domain=DISTINCT),
    "nanquantile[nearest]": Case(
        lambda lib, x: with_nan(lib, x).nanquantile(0.5, -1, interpolation="nearest"),
        one(1), DISTINCT, needs_lib=True),
    "histogram": Case(lambda x: tuple(x.histogram(3))),
    "histogram_edges": Case(lambda x: x.histogram(5).bin_edges, one(1)),
    "histogram[range]": Case(lambda x: tuple(x.histogram(4, range=(-1.0, 2.0))), one(1)),
    "histogram[edges_weight_density]": Case(
        lambda lib, x, w: tuple(lib.histogram(
            x, lib.tensor([-2.0, -0.5, 0.0, 1.5, 3.0], dtype=x.dtype), weight=w, density=True)),
        one(1).map(lambda s: s * 2), (reals(), positive()), needs_lib=True),
    "histogramdd": Case(lambda lib, x: spread(lib.histogramdd(x, [2, 3])),
                        points().map(lambda s: s[:1]),
                        needs_lib=True),
    "histogramdd[range_weight]": Case(
        lambda lib, x, w: spread(lib.histogramdd(x, 2, range=[-1.0, 1.0, 0.0, 2.0], weight=w,
                                                 density=True)),
        points(), (reals(), positive()), needs_lib=True),
}  # fmt: skip


# Counting without edges (chainrule/ops/histograms.py).
CASES.update({
    "bincount": Case(lambda x: x.long().bincount(), one(1, 1), (reals(0.0, 6.0),)),
    "bincount[weights]": Case(lambda x: x.long().bincount(x, minlength=8), one(1, 1),
                              (reals(0.0, 6.0),)),
    "histc": Case(lambda x: x.histc(5)),
    "histc[range]": Case(lambda x: x.histc(4, -1, 2)),
})  # fmt: skip


# var_mean and std_mean.
CASES.update({
    "var_mean": Case(lambda lib, x: lib.var_mean(x, -1), one(1, min_side=2), needs_lib=True),
    "std_mean": Case(lambda lib, x: lib.std_mean(x, (0, 1), correction=0, keepdim=True),
                     one(2), DISTINCT, needs_lib=True),
})  # fmt: skip
