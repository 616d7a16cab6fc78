"""Cases for chainrule/ops/arranging.py: block_diag, rot90, the splits, atleast_Nd, take,
put, index_reduce, cartesian_prod, combinations, vander, diagflat, unravel_index,
nonzero_static and sum_to_size."""

import numpy as np
from cases import Case
from hypothesis import strategies as st
from strategies import away_from_zero, distinct, fixed, one, reals, shapes

# Flat positions in a (3, 4) input: distinct (a write that lands twice has no gradient PyTorch
# and finite differences agree on), and with repeats (take adds them up, put accumulates).
DISTINCT_FLAT = np.array([[1, -2, 7], [0, 4, 11]])
REPEATED_FLAT = np.array([[0, 11, -1], [5, 5, 2]])
# Along dim 0 of a (3, 2) input from a (4, 2) source: row 0 gets two slices, rows 1, 2 one.
INDEX0 = np.array([0, 2, 0, 1])
# For amax/amin: the values of x (-3 + 6i/n) and of source (-2.8 + 0.4j...) never tie.
NO_TIES = (distinct(-3, 3), distinct(-2.8, 3.2))


def several(n, min_dims=0, max_dims=2):
    """n shapes of min_dims .. max_dims dims each, drawn independently."""
    return st.tuples(*[shapes(min_dims, max_dims) for _ in range(n)])


#: prod's second derivative is checked away from zero, as scatter_reduce's is.
PROD_DOMAIN = (away_from_zero(0.5, 1.5),)


def index_reduce_case(reduce, include_self=True, domain=None):
    return Case(
        lambda lib, x, s: x.index_reduce(0, lib.tensor(INDEX0), s, reduce,
                                         include_self=include_self),
        fixed((3, 2), (4, 2)), domain=domain or (reals(),), needs_lib=True,
    )  # fmt: skip


def powers(x, exponents):
    """x[:, None] ** exponents in PyTorch: torch.vander's own backward fails in 2.13 (an
    in-place cumprod it saved is changed), so its values and gradients are checked against
    this (pow's gradient is 0 for the exponent 0, also at x = 0)."""
    import torch

    return x[:, None] ** torch.tensor(list(exponents), dtype=x.dtype)


def put_in_place(lib, x, s):
    y = x * 1
    y.put_(lib.tensor(REPEATED_FLAT), s, accumulate=True)
    return y * x


def index_reduce_in_place(lib, x, s):
    y = x * 1
    y[:, 1:].index_reduce_(1, lib.tensor([0, 2, 0]), s, "mean", include_self=False)
    return y


CASES = {
    "block_diag": Case(lambda lib, *ts: lib.block_diag(*ts), several(3), needs_lib=True),
    "rot90": Case(lambda x: x.rot90(), one(2)),
    "rot90[k3_dims]": Case(lambda x: x.rot90(3, (-1, 0)), one(2, 3)),
    "rot90[half_turn]": Case(lambda x: x.rot90(2, (1, 2)), one(3, 3)),
    "rot90[negative]": Case(lambda lib, x: lib.rot90(x, -1, [1, 0]), one(2), needs_lib=True),
    "diagflat": Case(lambda x: x.diagflat(), one(0, 2)),
    "diagflat[offset]": Case(lambda lib, x: lib.diagflat(x, -2), one(0, 2), needs_lib=True),
    "tensor_split": Case(lambda x: x.tensor_split(3, dim=-1), one(1)),
    "tensor_split[indices]": Case(
        lambda lib, x: lib.tensor_split(x, [1, -1]), one(1), needs_lib=True
    ),
    "tensor_split[tensor]": Case(
        lambda lib, x: x.tensor_split(lib.tensor([3, 1]), -1), one(1), needs_lib=True
    ),
    "hsplit": Case(lambda x: x.hsplit(2), fixed((3, 4))),
    "hsplit[vector]": Case(lambda lib, x: lib.hsplit(x, [1, 2]), one(1, 1), needs_lib=True),
    "vsplit": Case(lambda x: x.vsplit([1]), one(2, 3)),
    "dsplit": Case(lambda lib, x: lib.dsplit(x, 2), fixed((2, 1, 4)), needs_lib=True),
    "split_with_sizes": Case(lambda x: x.split_with_sizes([2, 0, 3], 1), fixed((2, 5))),
    "atleast_1d": Case(lambda lib, x: lib.atleast_1d(x), one(0, 2), needs_lib=True),
    "atleast_2d": Case(lambda lib, x, y: lib.atleast_2d(x, y), several(2, 0, 3), needs_lib=True),
    "atleast_3d": Case(lambda lib, x, y: lib.atleast_3d([x, y]), several(2, 0, 3), needs_lib=True),
    "take": Case(lambda lib, x: x.take(lib.tensor(REPEATED_FLAT)), fixed((3, 4)), needs_lib=True),
    "put": Case(
        lambda lib, x, s: x.put(lib.tensor(DISTINCT_FLAT), s), fixed((3, 4), (6,)), needs_lib=True
    ),
    "put[accumulate]": Case(
        lambda lib, x, s: lib.put(x, lib.tensor(REPEATED_FLAT), s, True),
        fixed((3, 4), (2, 3)),
        needs_lib=True,
    ),
    "put[in_place]": Case(put_in_place, fixed((3, 4), (2, 3)), needs_lib=True),
    "index_reduce[prod]": index_reduce_case("prod", domain=PROD_DOMAIN),
    "index_reduce[prod_exclude]": index_reduce_case("prod", False, PROD_DOMAIN),
    "index_reduce[mean]": index_reduce_case("mean"),
    "index_reduce[mean_exclude]": index_reduce_case("mean", False),
    "index_reduce[amax]": index_reduce_case("amax", domain=NO_TIES),
    "index_reduce[amin_exclude]": index_reduce_case("amin", False, NO_TIES),
    "index_reduce[in_place_view]": Case(
        index_reduce_in_place, fixed((2, 4), (2, 3)), needs_lib=True
    ),
    "cartesian_prod": Case(
        lambda lib, x, y: lib.cartesian_prod(x, y), several(2, 1, 1), needs_lib=True
    ),
    "cartesian_prod[three]": Case(
        lambda lib, *xs: lib.cartesian_prod(*xs), several(3, 1, 1), needs_lib=True
    ),
    "combinations": Case(lambda lib, x: lib.combinations(x), one(1, 1), needs_lib=True),
    "combinations[r3_replacement]": Case(
        lambda lib, x: lib.combinations(x, 3, True), one(1, 1, max_side=3), needs_lib=True
    ),
    "vander": Case(
        lambda lib, x: lib.vander(x),
        one(1, 1),
        needs_lib=True,
        torch_fn=lambda x: powers(x, range(len(x) - 1, -1, -1)),
    ),
    "vander[N_increasing]": Case(
        lambda lib, x: lib.vander(x, N=5, increasing=True),
        one(1, 1),
        needs_lib=True,
        torch_fn=lambda x: powers(x, range(5)),
    ),
    "vander[linalg]": Case(lambda lib, x: lib.linalg.vander(x, N=3), one(1, 3), needs_lib=True),
    "unravel_index": Case(
        lambda lib, x: lib.unravel_index((x * 2).long(), (3, 4)),
        domain=(reals(-5.9, 5.9),),
        needs_lib=True,
    ),
    "nonzero_static": Case(lambda x: (x > 0).nonzero_static(size=3)),
    "nonzero_static[fill]": Case(
        lambda lib, x: lib.nonzero_static(x > 1, size=1, fill_value=7), needs_lib=True
    ),
    "sum_to_size": Case(lambda x: x.sum_to_size(3, 1), fixed((2, 3, 4))),
    "sum_to_size[tuple]": Case(lambda x: x.sum_to_size((1, 1, 4)), fixed((2, 3, 4))),
}
