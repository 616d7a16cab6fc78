"""Cases for chainrule/ops/sorting.py.

Ops whose gradient goes to one index draw distinct elements (at a tie the op has a kink and
PyTorch's index is left open); the index rows also take ties where PyTorch's choice is fixed
(stable sorts, mode).
"""

from cases import Case
from hypothesis import strategies as st
from strategies import distinct, one, reals

#: Few values, so ties are common.
FEW = st.sampled_from([-1.0, 0.0, 0.5, 2.0])
DISTINCT = (distinct(),)
APART = (reals(-3.0, -1.0), reals(1.0, 3.0))  # x1 - x2 <= -2: never a zero distance


def rows(n_rows=None):
    """(a, n) and (a, m) shapes: a sorted row of n per row of m values (a 1-D row if None)."""
    sizes = st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4))
    if n_rows is None:
        return sizes.map(lambda s: ((s[1],), (s[0], s[2])))
    return sizes.map(lambda s: ((s[0], s[1]), (s[0], s[2])))


def points(batch=()):
    """(P, M) and (R, M) shapes, with batch dims in front of the first."""
    sizes = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
    return sizes.map(lambda s: ((*batch, s[0], s[2]), (s[1], s[2])))


CASES = {
    "sort": Case(lambda x: x.sort(), one(1), DISTINCT),
    "sort[descending_dim0]": Case(lambda x: x.sort(0, descending=True), one(1), DISTINCT),
    "sort[scalar]": Case(lambda x: x.sort(), one(0, 0), DISTINCT),
    "argsort": Case(lambda x: x.argsort(0), one(1), DISTINCT),
    "argsort[stable_ties]": Case(lambda x: x.argsort(dim=-1, descending=True, stable=True),
                                 one(1), (FEW,)),
    "topk": Case(lambda x: x.topk(2), one(1, min_side=2), DISTINCT),
    "topk[smallest_dim0]": Case(lambda x: x.topk(1, 0, largest=False), one(1), DISTINCT),
    "kthvalue": Case(lambda x: x.kthvalue(1), one(1), DISTINCT),
    "kthvalue[keepdim]": Case(lambda x: x.kthvalue(2, 0, keepdim=True), one(1, min_side=2),
                              DISTINCT),
    "median": Case(lambda x: x.median(), domain=DISTINCT),
    "median[dim]": Case(lambda x: x.median(-1), one(1), DISTINCT),
    "median[keepdim]": Case(lambda x: x.median(0, keepdim=True), one(1), DISTINCT),
    "median_indices": Case(lambda x: x.median(0).indices, one(1), DISTINCT),
    "nanmedian": Case(lambda x: x.nanmedian(-1), one(1), DISTINCT),
    "nanmedian[all]": Case(lambda x: x.nanmedian(), domain=DISTINCT),
    # Distinct elements are each once: the mode is the smallest.
    "mode": Case(lambda x: x.mode(), one(1), DISTINCT),
    "mode[keepdim]": Case(lambda x: x.mode(0, keepdim=True), one(1), DISTINCT),
    "mode_indices": Case(lambda x: x.mode(-1).indices, one(1), (FEW,)),
    "unique": Case(lambda x: x.unique(return_inverse=True, return_counts=True), domain=(FEW,)),
    "unique[dim]": Case(lambda x: x.unique(dim=0), one(2), (st.sampled_from([0.0, 1.0]),)),
    "searchsorted": Case(lambda lib, s, v: lib.searchsorted(s.sort().values, v), rows(),
                         needs_lib=True),
    "searchsorted[rows_right]": Case(
        lambda lib, s, v: lib.searchsorted(s.sort().values, v, right=True), rows(2),
        (FEW,), needs_lib=True),
    "searchsorted[bucketize]": Case(
        lambda lib, s, v: lib.bucketize(v, s.sort().values, right=True), rows(), (FEW,),
        needs_lib=True),
}  # fmt: skip


# msort.
CASES.update({
    "msort": Case(lambda x: x.msort(), one(min_dims=1), (distinct(),)),
})  # fmt: skip


# unique_consecutive.
CASES.update({
    "unique_consecutive": Case(
        lambda x: x.unique_consecutive(return_inverse=True, return_counts=True), domain=(FEW,)),
    "unique_consecutive[dim]": Case(lambda x: x.unique_consecutive(dim=0), one(2), (FEW,)),
})  # fmt: skip
