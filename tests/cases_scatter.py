"""Cases for chainrule/ops/scattering.py (scatter, the index_* and masked writes, in place
too), for the reads by index in chainrule/ops/indexing.py and selecting.py (index_select,
take_along_dim, masked_select, repeat_interleave, nonzero, nonzero_static) and for flat
indexing, chainrule/ops/flat_indexing.py (take, put, unravel_index)."""

import numpy as np
import torch
from cases import Case
from strategies import away_from_zero, distinct, fixed, one, reals, shapes

# Positions along dim 0 of a (3, 4) input, distinct in each column (scatter's last write
# would otherwise depend on the order of writes).
DISTINCT0 = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])
DISTINCT1 = np.array([[2, 0], [1, 2]])  # along dim 1 of a (2, 3) input, distinct in each row
# Along dim 0 of a (3, 4) input, with repeats: every row receives 0, 1 or 2 values.
REPEATS0 = np.array([[0, 0, 2, 1], [2, 0, 2, 1], [0, 0, 0, 1], [2, 0, 2, 0]])
MASK = np.array([[True, False, True, True], [False, False, True, False], [True] * 4])


def repeated_index(shape, dim):
    """An index along ``dim`` for an input of ``shape``: one more entry than the input has
    there (so positions repeat), and no larger elsewhere."""
    dim = dim % len(shape)
    index_shape = tuple(n + 1 if d == dim else n for d, n in enumerate(shape))
    size = int(np.prod(index_shape))
    return ((np.arange(size) * 7 + 2) % shape[dim]).reshape(index_shape)


def with_source(dim):
    """(input shape, src shape): src one larger than the input along dim."""
    return shapes(min_dims=1).map(
        lambda s: (s, tuple(n + 1 if d == dim % len(s) else n for d, n in enumerate(s)))
    )


def reduce_case(reduce, include_self=True, domain=None):
    return Case(
        lambda lib, x, s: x.scatter_reduce(
            0, lib.tensor(REPEATS0), s, reduce, include_self=include_self
        ),  # fmt: skip
        fixed((3, 4), (4, 4)),
        domain=domain or (reals(),),
        needs_lib=True,
    )


# For amax/amin: the values of x (-3 + 6i/11) and of src (-2.8 + 0.4j) never tie.
NO_TIES = (distinct(-3, 3), distinct(-2.8, 3.2))


def fill_in_place(x):
    y = x * 1
    return y.masked_fill_(x > 0, 0.5)


def scatter_into_row(lib, x, s):
    """scatter_ through a view (a row of x): the base's history is rewritten."""
    y = x * 1
    y[1].scatter_(0, lib.tensor([2, 0]), s)
    return y


def in_place(method, *args, **kwargs):
    """Case body running ``y.<method>(*args)`` in place on a copy y of x, args built by lib."""

    def run(lib, x, s):
        y = x * 1
        built = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        return getattr(y, method)(*built, s, **kwargs) * x

    return run


# Flat positions in a (3, 4) input: distinct (a write that lands twice has no gradient PyTorch
# and finite differences agree on), and with repeats (take adds them up, put accumulates).
DISTINCT_FLAT = np.array([[1, -2, 7], [0, 4, 11]])


REPEATED_FLAT = np.array([[0, 11, -1], [5, 5, 2]])


# Along dim 0 of a (3, 2) input from a (4, 2) source: row 0 gets two slices, rows 1, 2 one.
INDEX0 = np.array([0, 2, 0, 1])


#: prod's second derivative is checked away from zero, as scatter_reduce's is.
PROD_DOMAIN = (away_from_zero(0.5, 1.5),)


def index_reduce_case(reduce, include_self=True, domain=None):
    return Case(
        lambda lib, x, s: x.index_reduce(0, lib.tensor(INDEX0), s, reduce,
                                         include_self=include_self),
        fixed((3, 2), (4, 2)), domain=domain or (reals(),), needs_lib=True,
    )  # fmt: skip


def put_in_place(lib, x, s):
    y = x * 1
    y.put_(lib.tensor(REPEATED_FLAT), s, accumulate=True)
    return y * x


def index_reduce_in_place(lib, x, s):
    y = x * 1
    y[:, 1:].index_reduce_(1, lib.tensor([0, 2, 0]), s, "mean", include_self=False)
    return y


CASES = {
    # scatter and what is composed of it.
    "scatter": Case(
        lambda lib, x, s: x.scatter(0, lib.tensor(DISTINCT0), s),
        fixed((3, 4), (2, 4)),
        needs_lib=True,
    ),  # fmt: skip
    "scatter[larger_src]": Case(
        lambda lib, x, s: x.scatter(1, lib.tensor(DISTINCT1), s),
        fixed((2, 3), (3, 4)),
        needs_lib=True,
        grad_inputs=(0,),  # PyTorch 2.13 fails on src's gradient when src is larger
    ),
    "scatter[value]": Case(
        lambda lib, x: x.scatter(1, lib.tensor(DISTINCT1), 0.5), fixed((2, 3)), needs_lib=True
    ),
    "scatter[index_copy]": Case(
        lambda lib, x, s: x.index_copy(1, lib.tensor([2, 0]), s),
        fixed((3, 3), (3, 2)),
        needs_lib=True,
    ),  # fmt: skip
    "scatter[masked_scatter]": Case(
        lambda lib, x, s: x.masked_scatter(lib.tensor(MASK), s),
        fixed((3, 4), (3, 3)),
        needs_lib=True,
    ),  # fmt: skip
    "scatter[masked_scatter_broadcast]": Case(
        lambda lib, x, s: x.masked_scatter(lib.tensor(MASK[:, :1]), s),
        fixed((4,), (4, 3)),
        needs_lib=True,
    ),  # fmt: skip
    "scatter_add": Case(
        lambda lib, x, s: x.scatter_add(-1, lib.tensor(repeated_index(tuple(x.shape), -1)), s),
        with_source(-1),
        needs_lib=True,
    ),
    "scatter_add[dim0]": Case(
        lambda lib, x, s: x.scatter_add(0, lib.tensor(REPEATS0), s),
        fixed((3, 4), (4, 4)),
        needs_lib=True,
    ),  # fmt: skip
    "scatter_add[index_add]": Case(
        lambda lib, x, s: x.index_add(0, lib.tensor([2, 0, 2]), s, alpha=2),
        fixed((3, 2), (3, 2)),
        needs_lib=True,
    ),
    "scatter_reduce[sum]": reduce_case("sum"),
    "scatter_reduce[sum_exclude]": reduce_case("sum", False),
    "scatter_reduce[mean]": reduce_case("mean"),
    "scatter_reduce[mean_exclude]": reduce_case("mean", False),
    "scatter_reduce[amax]": reduce_case("amax", domain=NO_TIES),
    "scatter_reduce[amax_exclude]": reduce_case("amax", False, NO_TIES),
    "scatter_reduce[amin]": reduce_case("amin", domain=NO_TIES),
    "scatter_reduce[amin_exclude]": reduce_case("amin", False, NO_TIES),
    "scatter_reduce[prod]": reduce_case("prod", domain=(away_from_zero(0.5, 1.5),)),
    "scatter_reduce[prod_exclude]": reduce_case("prod", False, (away_from_zero(0.5, 1.5),)),
    "scatter_reduce[multiply]": Case(
        lambda lib, x, s: x.scatter(0, lib.tensor(REPEATS0), s, reduce="multiply"),
        fixed((3, 4), (4, 4)),
        domain=(away_from_zero(0.5, 1.5),),
        needs_lib=True,
        # PyTorch has no gradient for scatter(reduce=): compare with its scatter_reduce.
        torch_fn=lambda x, s: x.scatter_reduce(0, torch.tensor(REPEATS0), s, "prod"),
    ),
    # In place (composed: their rows are run by the in-place machinery).
    "masked_fill_": Case(fill_in_place, domain=(away_from_zero(),)),
    "scatter_": Case(in_place("scatter_", 0, DISTINCT0), fixed((3, 4), (2, 4)), needs_lib=True),
    "scatter_add_": Case(
        in_place("scatter_add_", 0, REPEATS0), fixed((3, 4), (4, 4)), needs_lib=True
    ),
    "scatter_reduce_": Case(
        lambda lib, x, s: (
            (x * 1).scatter_reduce_(0, lib.tensor(REPEATS0), s, "mean", include_self=False) * x
        ),
        fixed((3, 4), (4, 4)),
        needs_lib=True,
    ),  # fmt: skip
    "index_add_": Case(
        in_place("index_add_", 1, np.array([0, 0])), fixed((2, 3), (2, 2)), needs_lib=True
    ),
    "index_copy_": Case(
        in_place("index_copy_", 0, np.array([1])), fixed((2, 3), (1, 3)), needs_lib=True
    ),
    "index_fill_": Case(
        in_place("index_fill_", 1, np.array([2])), fixed((2, 3), ()), needs_lib=True
    ),  # fmt: skip
    "masked_scatter_": Case(
        in_place("masked_scatter_", MASK), fixed((3, 4), (9,)), needs_lib=True
    ),  # fmt: skip
    "index_put_": Case(
        lambda lib, x, v: (x * 1).index_put_((lib.tensor([0, 0, 1]),), v, accumulate=True),
        fixed((2, 3), (3,)),
        needs_lib=True,
    ),
    "copy_slices[scatter_]": Case(scatter_into_row, fixed((2, 3), (2,)), needs_lib=True),
    # Writes composed of where.
    "where[masked_fill]": Case(lambda x: x.masked_fill(x > 0, 0.5), domain=(away_from_zero(),)),
    "where[masked_fill_tensor]": Case(
        lambda lib, x, v: x.masked_fill(lib.tensor([True, False, True]), v),
        fixed((2, 3), ()),
        needs_lib=True,
    ),
    "where[masked_fill_broadcast]": Case(
        lambda lib, x: x.masked_fill(lib.tensor(MASK), -1.0), fixed((4,)), needs_lib=True
    ),
    "where[index_fill]": Case(
        lambda lib, x: x.index_fill(1, lib.tensor([2, 0]), -1.0),
        fixed((2, 3, 2)),
        needs_lib=True,
    ),  # fmt: skip
    "where[index_fill_tensor]": Case(
        lambda lib, x, v: x.index_fill(0, lib.tensor([1]), v), fixed((3, 2), ()), needs_lib=True
    ),
    # index_put with PyTorch's signature.
    "index_put[indices]": Case(
        lambda lib, x, v: x.index_put((lib.tensor([1, 0]), lib.tensor([2, 2])), v),
        fixed((2, 3), (2,)),
        needs_lib=True,
    ),
    "index_backward[accumulate]": Case(
        lambda lib, x, v: x.index_put((lib.tensor([0, 2, 0]),), v, accumulate=True),
        one(1, 3, min_side=3).map(lambda s: (s[0], s[0][1:])),
        needs_lib=True,
    ),
    "index_backward[accumulate_mask]": Case(
        lambda lib, x, v: x.index_put((lib.tensor(MASK),), v, accumulate=True),
        fixed((3, 4), (1,)),
        needs_lib=True,
    ),
    # Reads by index, composed of the index row.
    "index[index_select]": Case(
        lambda lib, x: x.index_select(-1, lib.tensor([1, 0, 1])),
        one(1, 3, min_side=2),
        needs_lib=True,
    ),  # fmt: skip
    "index[take_along_dim]": Case(
        lambda lib, x: lib.take_along_dim(x, lib.tensor([[0, 2, 2], [1, 1, 0]]), 1),
        fixed((2, 3)),
        needs_lib=True,
    ),
    "index[take_along_dim_broadcast]": Case(
        lambda lib, x: lib.take_along_dim(x, lib.tensor([[[0], [2]]]), -1),
        fixed((3, 1, 4)),
        needs_lib=True,
    ),
    "index[take_along_dim_flat]": Case(
        lambda lib, x: lib.take_along_dim(x, lib.tensor([5, 0, 5])),
        fixed((2, 3)),
        needs_lib=True,
    ),  # fmt: skip
    "index[masked_select]": Case(
        lambda lib, x: x.masked_select(lib.tensor(MASK[:, :3])), fixed((3, 3)), needs_lib=True
    ),
    "index[masked_select_broadcast]": Case(
        lambda lib, x: lib.masked_select(x, lib.tensor(MASK[:2, :, None])),
        fixed((4, 2)),
        needs_lib=True,
    ),  # fmt: skip
    "index[repeat_interleave]": Case(lambda x: x.repeat_interleave(2)),
    "index[repeat_interleave_dim]": Case(
        lambda lib, x: x.repeat_interleave(lib.tensor([0, 2, 1]), dim=0),
        fixed((3, 2)),
        needs_lib=True,
    ),  # fmt: skip
    "nonzero": Case(lambda x: (x > 0).nonzero()),
    "nonzero[argwhere]": Case(lambda x: (x > 0).argwhere()),
    "nonzero[as_tuple]": Case(lambda x: (x > 0).nonzero(as_tuple=True), one(1, 3)),
}


# Flat indexing (chainrule/ops/flat_indexing.py).
CASES.update({
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
    "unravel_index": Case(
        lambda lib, x: lib.unravel_index((x * 2).long(), (3, 4)),
        domain=(reals(-5.9, 5.9),),
        needs_lib=True,
    ),
})  # fmt: skip


# index_reduce (chainrule/ops/scattering.py).
CASES.update({
    "index_reduce[prod]": index_reduce_case("prod", domain=PROD_DOMAIN),
    "index_reduce[prod_exclude]": index_reduce_case("prod", False, PROD_DOMAIN),
    "index_reduce[mean]": index_reduce_case("mean"),
    "index_reduce[mean_exclude]": index_reduce_case("mean", False),
    "index_reduce[amax]": index_reduce_case("amax", domain=NO_TIES),
    "index_reduce[amin_exclude]": index_reduce_case("amin", False, NO_TIES),
    "index_reduce[in_place_view]": Case(
        index_reduce_in_place, fixed((2, 4), (2, 3)), needs_lib=True
    ),
})  # fmt: skip


# nonzero_static (chainrule/ops/selecting.py).
CASES.update({
    "nonzero_static": Case(lambda x: (x > 0).nonzero_static(size=3)),
    "nonzero_static[fill]": Case(
        lambda lib, x: lib.nonzero_static(x > 1, size=1, fill_value=7), needs_lib=True
    ),
})  # fmt: skip
