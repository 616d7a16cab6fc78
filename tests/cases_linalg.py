"""Cases for chainrule/ops/linalg.py: matmul in every form NumPy accepts, dot, outer, einsum."""

from cases import Case
from hypothesis import strategies as st
from strategies import broadcastable, fixed

from chainrule.ops import linalg

sizes = st.integers(1, 4)


def _matmul_pair(drawn):
    (x_batch, y_batch), m, k, n, (x_is_vector, y_is_vector) = drawn
    x = (k,) if x_is_vector else (*x_batch, m, k)
    y = (k,) if y_is_vector else (*y_batch, k, n)
    return x, y


def matmul_shapes(batched=False, vectors=False):
    """Shapes matmul accepts: a (..., m, k) or (k,), b (..., k, n) or (k,); batches broadcast."""
    batches = broadcastable(2, max_dims=2) if batched else st.just(((), ()))
    kinds = (
        st.sampled_from([(True, False), (False, True), (True, True)])
        if vectors
        else st.just((False, False))
    )
    return st.tuples(batches, sizes, sizes, sizes, kinds).map(_matmul_pair)


def from_sizes(*templates):
    """Shapes built from shared sizes: ("ij", "jk") gives (i, j) and (j, k) for drawn i, j, k.

    A "." in a template stands for the broadcastable batch dims drawn for that operand.
    """
    letters = sorted({c for t in templates for c in t if c != "."})
    batches = broadcastable(len(templates), max_dims=2)

    def build(drawn):
        values, batch_shapes = drawn
        size = dict(zip(letters, values))
        return tuple(
            tuple(d for c in t for d in (batch if c == "." else (size[c],)))
            for t, batch in zip(templates, batch_shapes)
        )

    return st.tuples(st.tuples(*[sizes] * len(letters)), batches).map(build)


def einsum_case(equation, *templates, **options):
    """A case running einsum(equation, ...) on both libraries."""
    return Case(
        lambda lib, *xs: lib.einsum(equation, *xs),
        from_sizes(*templates),
        needs_lib=True,
        **options,
    )


CASES = {
    "matmul": Case(lambda x, y: x @ y, matmul_shapes()),
    "matmul[batched]": Case(lambda x, y: x.matmul(y), matmul_shapes(batched=True)),
    "matmul[vector]": Case(lambda x, y: x @ y, matmul_shapes(batched=True, vectors=True)),
    "matmul[self]": Case(lambda x: x @ x.mT, matmul_shapes().map(lambda s: s[:1])),
    "matmul_add": Case(
        lambda x, y, z: linalg.matmul_add_row(x, y, z),
        from_sizes("bij", "jk", "bik"),
        torch_fn=lambda x, y, z: x @ y + z,
    ),
    "matmul_add[broadcast]": Case(
        lambda x, y, z: linalg.matmul_add_row(x, y, z),
        from_sizes("ij", "bjk", "ik"),
        torch_fn=lambda x, y, z: x @ y + z,
    ),
    "dot": Case(lambda x, y: x.dot(y), from_sizes("i", "i")),
    "outer": Case(lambda x, y: x.outer(y), from_sizes("i", "j")),
    "einsum": einsum_case("ij,jk->ik", "ij", "jk"),
    "einsum[implicit]": einsum_case("ij,kj", "ij", "kj"),
    "einsum[trace]": einsum_case("ii->", "ii"),
    "einsum[diagonal]": einsum_case("ii->i", "ii"),
    "einsum[diagonal_product]": einsum_case("iij,ij->ji", "iij", "ij"),
    "einsum[summed_out]": einsum_case("ijk->j", "ijk"),
    "einsum[ellipsis]": einsum_case("...ij,...jk->...ik", ".ij", ".jk"),
    "einsum[ellipsis_implicit]": einsum_case("...i,i", ".i", "i"),
    "einsum[three]": einsum_case("ij,jk,kl->il", "ij", "jk", "kl"),
    "einsum[batch_outer]": einsum_case("bi,bj->bij", "bi", "bj"),
    "einsum[broadcast_summed]": Case(  # j is 1 in x, broadcast against y's 4, summed out
        lambda lib, x, y: lib.einsum("ij,j->i", x, y), fixed((3, 1), (4,)), needs_lib=True
    ),
    "einsum[bilinear]": Case(
        lambda lib, x, a: lib.einsum("i,ij,j->", x, a, x), from_sizes("i", "ii"), needs_lib=True
    ),
}


def _threes(shapes):
    """The shapes with their last dim set to 3 (the cross product's)."""
    return tuple(s[:-1] + (3,) for s in shapes)


def _same_rank_threes(shapes):
    """Broadcastable shapes padded to one number of dims (cross needs it), last dim 3."""
    ndim = max(len(s) for s in shapes)
    return _threes(tuple((1,) * (ndim - len(s)) + s for s in shapes))


def product_case(call, *templates, **options):
    """A case running call(lib, ...) on shapes built from shared sizes (`from_sizes`)."""
    return Case(call, from_sizes(*templates), needs_lib=True, **options)


# Products of fixed ranks and their scaled sums, tensordot, inner, kron, cross (composed).
CASES.update({
    "mm": Case(lambda x, y: x.mm(y), from_sizes("ij", "jk")),
    "mm[function]": product_case(lambda lib, x, y: lib.mm(x, y), "ij", "jk"),
    "bmm": Case(lambda x, y: x.bmm(y), from_sizes("bij", "bjk")),
    "mv": Case(lambda x, y: x.mv(y), from_sizes("ij", "j")),
    "addmm": product_case(lambda lib, z, x, y: lib.addmm(z, x, y), "k", "ij", "jk"),
    "addmm[scaled]": Case(lambda z, x, y: z.addmm(x, y, beta=0.5, alpha=-2),
                          from_sizes("ik", "ij", "jk")),
    "addmm[beta0]": product_case(lambda lib, z, x, y: lib.addmm(z, x, y, beta=0), "ik", "ij",
                                 "jk"),
    "baddbmm": product_case(lambda lib, z, x, y: lib.baddbmm(z, x, y, alpha=2), "ik", "bij",
                            "bjk"),
    "addmv": product_case(lambda lib, z, x, y: lib.addmv(z, x, y, beta=2), "i", "ij", "j"),
    "addmv[method]": Case(lambda z, x, y: z.addmv(x, y), from_sizes("i", "ij", "j")),
    "tensordot": product_case(lambda lib, x, y: lib.tensordot(x, y), "ijk", "jkl"),
    "tensordot[pairs]": product_case(
        lambda lib, x, y: lib.tensordot(x, y, dims=([0, 2], [1, 0])), "ijk", "kil"
    ),
    "tensordot[outer]": product_case(lambda lib, x, y: lib.tensordot(x, y, 0), "ij", "k"),
    "inner": Case(lambda x, y: x.inner(y), from_sizes(".ij", "kj")),
    "inner[scalar]": product_case(lambda lib, x, y: lib.inner(x, y), "", "ij"),
    "kron": Case(lambda x, y: x.kron(y), from_sizes("ij", "kjl")),
    "kron[vectors]": product_case(lambda lib, x, y: lib.kron(x, y), "i", "j"),
    "cross": Case(lambda x, y: x.cross(y, dim=-1), from_sizes("ki", "ki").map(_threes)),
    "cross[first_dim]": Case(lambda lib, x, y: lib.cross(x.mT, y.mT, dim=0),
                             from_sizes("ij", "ij").map(_threes), needs_lib=True),
    "linalg_cross": Case(lambda lib, x, y: lib.linalg.cross(x, y),
                         broadcastable(2, 1).map(_same_rank_threes), needs_lib=True),
})  # fmt: skip
