"""Hypothesis strategies for the op tests: shapes, broadcastable shapes, arrays in a domain."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    """Array shapes with the given number of dimensions and sizes."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)  # fmt: skip


def one(min_dims=0, max_dims=3, min_side=1, max_side=4):
    """A tuple holding one shape."""
    return shapes(min_dims, max_dims, min_side, max_side).map(lambda s: (s,))


def broadcastable(n=2, min_dims=0, max_dims=3):
    """n shapes that broadcast together (some stretched along size-1 or missing dims)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=4
    ).map(lambda result: result.input_shapes)


def same(n=2, min_dims=0, max_dims=3):
    """n equal shapes."""
    return shapes(min_dims, max_dims).map(lambda s: (s,) * n)


def fixed(*shape_tuple):
    """Always the given shapes."""
    return st.just(tuple(shape_tuple))


def reals(lo=-3.0, hi=3.0):
    """Elements in [lo, hi], without subnormals: a product that underflows to 0 makes PyTorch's
    prod gradient (out / x) 0 where the true one is not."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False, width=64)


def positive(lo=0.2, hi=4.0):
    """Elements in [lo, hi] with lo > 0."""
    return reals(lo, hi)


def away_from_zero(lo=0.1, hi=3.0):
    """Elements with lo <= |x| <= hi: keeps finite differences off kinks and poles."""
    return st.one_of(reals(lo, hi), reals(-hi, -lo))


def distinct(lo=-3.0, hi=3.0):
    """Marker for inputs whose elements must differ pairwise (max, sort-like ops)."""
    return ("distinct", lo, hi)


def array(shape, elements):
    """A float64 array of ``shape`` drawn from ``elements`` (or a distinct() marker)."""
    if isinstance(elements, tuple) and elements[0] == "distinct":
        _, lo, hi = elements
        size = int(np.prod(shape))
        # Evenly spread, shuffled values: ties and near-ties cannot occur.
        return st.permutations(np.linspace(lo, hi, max(size, 1)).tolist()).map(
            lambda values: np.array(values[:size], dtype=np.float64).reshape(shape)
        )
    return hnp.arrays(np.float64, shape, elements=elements)
