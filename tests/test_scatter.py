"""Scatter, masked and index writes (and their in-place forms), reads by index, diagonals,
windows, triangles, memory layout and joining: the behaviour the generic op properties do
not reach (errors, in-place and view semantics, zeros in prod, integer dtypes, layouts)."""

import warnings

import numpy as np
import pytest

import chainrule
from chainrule import DTypeError, GraphError, OutOfRangeError, ShapeError
from chainrule.errors import DomainError


def _both(torch, program, *arrays, grad=True):
    """program(lib, *tensors) on both libraries: values and gradients of the inputs."""
    results = []
    for lib in (chainrule, torch):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=grad) for a in arrays]
        out = program(lib, *xs)
        if grad:
            out.backward(lib.tensor(np.arange(out.numel(), dtype=float).reshape(out.shape)))
        results.append([out.detach().numpy()] + [x.grad.numpy() for x in xs if grad])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# Values and gradients that the cases' random inputs do not reach.


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize(
    "x, src",
    [
        ([2.0, 3.0, 0.0], [0.0, 4.0, 5.0, 1.0]),  # a zero in src, alone at its position
        ([2.0, 3.0, 1.0], [0.0, 0.0, 5.0, 1.0]),  # two zeros at one position
        ([0.0, 3.0, 0.0], [2.0, 0.0, 5.0, 1.0]),  # zeros in x and in src
    ],
)
def test_scatter_reduce_prod_gradient_is_right_with_zeros(torch, x, src, include_self):
    index = [0, 0, 1, 2]
    _both(torch, lambda lib, a, b: a.scatter_reduce(0, lib.tensor(index), b, "prod",
                                                    include_self=include_self), x, src)  # fmt: skip


@pytest.mark.parametrize("reduce", ["amax", "amin", "mean", "sum"])
def test_scatter_reduce_ties_share_the_gradient_as_in_pytorch(torch, reduce):
    index = [1, 1, 0, 0, 1]
    x, src = [1.0, 5.0, 3.0], [5.0, 4.0, 1.0, 1.0, 5.0]
    for include_self in (True, False):

        def program(lib, a, b, include_self=include_self):
            return a.scatter_reduce(0, lib.tensor(index), b, reduce, include_self=include_self)

        _both(torch, program, x, src)


def test_scatter_reads_only_the_corner_of_a_larger_src():
    x = chainrule.zeros(2, 3, dtype=chainrule.float64, requires_grad=True)
    src = chainrule.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    out = x.scatter(1, chainrule.tensor([[2, 0], [1, 2]]), src)
    assert out.tolist() == [[1.0, 0.0, 0.0], [0.0, 4.0, 5.0]]
    out.backward(chainrule.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    assert src.grad.tolist() == [[3.0, 1.0, 0, 0], [5.0, 6.0, 0, 0], [0, 0, 0, 0]]
    assert x.grad.tolist() == [[0.0, 2.0, 0.0], [4.0, 0.0, 0.0]]


def test_index_put_accumulates_repeated_positions(torch):
    def program(lib, x, v):
        return x.index_put((lib.tensor([0, 1, 0]), lib.tensor([2, 2, 2])), v, accumulate=True)

    _both(torch, program, np.zeros((2, 3)), [1.0, 2.0, 3.0])


def test_integer_inputs_keep_their_dtype(torch):
    for lib in (chainrule, torch):
        x = lib.tensor([[1, 2, 3], [4, 5, 6]])
        i = lib.tensor([[0, 0, 1]])
        outs = [
            x.scatter_reduce(0, i, lib.tensor([[7, 8, 9]]), "mean"),
            x.masked_fill(x > 3, 0),
            x.tril(),
            x.index_fill(1, lib.tensor([1]), -1),
            x.diagonal(),
        ]
        if lib is chainrule:
            ours = outs
        else:
            for a, b in zip(ours, outs):
                assert str(a.dtype) == str(b.dtype).replace("torch.", "")
                assert a.tolist() == b.tolist()


def test_nonzero_and_argwhere_match_pytorch(torch):
    values = [np.array([[0.0, 1.5], [2.0, 0.0]]), np.array(3.0), np.array(0.0), np.zeros((2, 0))]
    for v in values:
        ours, theirs = chainrule.tensor(v), torch.tensor(v)
        assert ours.nonzero().dtype == np.int64
        assert ours.nonzero().tolist() == theirs.nonzero().tolist()
        assert ours.nonzero().shape == tuple(theirs.nonzero().shape)
        assert ours.argwhere().shape == tuple(theirs.argwhere().shape)
        as_tuple = [t.tolist() for t in ours.nonzero(as_tuple=True)]
        assert as_tuple == [t.tolist() for t in theirs.nonzero(as_tuple=True)]


@pytest.mark.parametrize(
    "row, col, offset", [(3, 3, 0), (3, 4, -1), (4, 2, 1), (0, 3, 0), (2, 5, 3)]
)
def test_triangle_indices_match_pytorch(torch, row, col, offset):
    for name in ("tril_indices", "triu_indices"):
        ours = getattr(chainrule, name)(row, col, offset)
        theirs = getattr(torch, name)(row, col, offset)
        assert ours.dtype == np.int64 and ours.shape == tuple(theirs.shape)
        assert ours.tolist() == theirs.tolist()


def test_strides_and_contiguity_match_pytorch(torch):
    for lib in (chainrule, torch):
        x = lib.zeros(2, 3, 4)
        views = [x, x.transpose(0, 2), x[:, ::2], x[0], x.permute(1, 0, 2), x.unsqueeze(1)]
        facts = [
            (v.stride(), v.stride(-1), v.is_contiguous(), v.contiguous().stride()) for v in views
        ]
        if lib is chainrule:
            ours = facts
    assert ours == facts


def test_contiguous_is_the_same_tensor_when_already_contiguous():
    x = chainrule.zeros(2, 3, requires_grad=True)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y is not x and y.is_contiguous() and y.grad_fn.name == "contiguous"


def test_repeat_interleave_of_counts_alone_and_output_size(torch):
    counts = [3, 0, 2]
    assert (chainrule.repeat_interleave(chainrule.tensor(counts)).tolist()
            == torch.repeat_interleave(torch.tensor(counts)).tolist())  # fmt: skip
    x = chainrule.tensor([[1, 2], [3, 4]])
    assert x.repeat_interleave(2, dim=1, output_size=4).tolist() == [[1, 1, 2, 2], [3, 3, 4, 4]]


def test_unfold_of_a_zero_dim_tensor_matches_pytorch(torch):
    assert (
        chainrule.tensor(5.0).unfold(0, 1, 1).tolist() == torch.tensor(5.0).unfold(0, 1, 1).tolist()
    )


def test_meshgrid_takes_a_list_and_matches_pytorch(torch):
    a, b = [1, 2, 3], [4, 5]
    for indexing in ("ij", "xy"):
        ours = chainrule.meshgrid([chainrule.tensor(a), chainrule.tensor(b)], indexing=indexing)
        theirs = torch.meshgrid([torch.tensor(a), torch.tensor(b)], indexing=indexing)
        assert [t.tolist() for t in ours] == [t.tolist() for t in theirs]


# In place: the result is written back through chainrule.inplace (versions, views, leaves).


def test_in_place_writes_bump_the_version_and_record_the_op():
    x = chainrule.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 1
    before = y._version
    y.masked_fill_(y < 0, 0.0)
    assert y._version == before + 1 and y.grad_fn.name == "where"
    y.scatter_add_(0, chainrule.tensor([0, 0]), chainrule.tensor([1.0, 1.0]))
    assert y.tolist() == [3.0, 0.0, 3.0] and y._version == before + 2
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def test_in_place_write_of_a_src_that_requires_grad_is_recorded():
    y = chainrule.zeros(3)
    src = chainrule.tensor([1.0, 2.0], requires_grad=True)
    y.scatter_(0, chainrule.tensor([2, 0]), src)
    assert y.requires_grad and y.tolist() == [2.0, 0.0, 1.0]
    (y * chainrule.tensor([10.0, 20.0, 30.0])).sum().backward()
    assert src.grad.tolist() == [30.0, 10.0]


def test_in_place_write_on_a_leaf_that_requires_grad_is_refused():
    x = chainrule.zeros(3, requires_grad=True)
    with pytest.raises(GraphError, match="index_fill_: a leaf tensor that requires grad"):
        x.index_fill_(0, chainrule.tensor([1]), 2.0)


def test_in_place_write_after_save_makes_backward_refuse():
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * y  # saves y
    y.index_add_(0, chainrule.tensor([0]), chainrule.tensor([1.0]))
    with pytest.raises(GraphError, match="modified in place"):
        z.sum().backward()


def test_writing_into_the_diagonal_view_writes_into_the_base(torch):
    def program(lib, x, w):
        y = x * 1
        d = y.diagonal(1)
        d.mul_(w)
        return y * d.sum()

    _both(torch, program, np.arange(9.0).reshape(3, 3) + 1, [2.0, -1.0])
    z = chainrule.zeros(2, 3)
    z.diagonal().fill_(7.0)
    assert z.tolist() == [[7.0, 0.0, 0.0], [0.0, 7.0, 0.0]] and z._version == 1


def test_unfold_windows_are_views_read_only_where_they_overlap():
    x = chainrule.arange(6.0)
    apart = x.unfold(0, 2, 2)
    apart[1].fill_(0.0)
    assert x.tolist() == [0.0, 1.0, 0.0, 0.0, 4.0, 5.0]
    with pytest.raises(GraphError, match="read-only"):
        x.unfold(0, 3, 1).fill_(0.0)


def test_masked_fill_in_place_keeps_the_shape_of_self():
    with pytest.raises(ShapeError, match=r"masked_fill_: the result has shape \(2, 3\)"):
        chainrule.zeros(3).masked_fill_(chainrule.ones(2, 3).bool(), 1.0)


# Errors name the op, the shapes or dtypes, and what would fit.


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: x.scatter(0, chainrule.tensor([[0.5]]), x), DTypeError,
         r"scatter: index must be an integer tensor, got float32"),
        (lambda x: x.scatter(0, chainrule.tensor([[3]]), x), OutOfRangeError,
         r"scatter: index 3 is out of range for dim 0 with size 2"),
        (lambda x: x.scatter_add(0, chainrule.tensor([0]), x), ShapeError,
         r"scatter_add: index of shape \(1,\) must have as many dimensions as the input of "
         r"shape \(2, 3\)"),
        (lambda x: x.scatter_add(1, chainrule.tensor([[0, 1, 2, 0]]), x), ShapeError,
         r"scatter_add: index of shape \(1, 4\) is larger than src of shape \(2, 3\)"),
        (lambda x: x.scatter(0, chainrule.tensor([[0]]), x, value=1.0), DTypeError,
         r"scatter: give exactly one of src"),
        (lambda x: x.scatter_reduce(0, chainrule.tensor([[0]]), x, "maximum"), DomainError,
         r"scatter_reduce: reduce must be one of \('sum', 'prod', 'mean', 'amax', 'amin'\)"),
        (lambda x: x.index_add(0, chainrule.tensor([0]), chainrule.ones(2, 3)), ShapeError,
         r"index_add: source of shape \(2, 3\) does not fit: .* it must be \(1, 3\)"),
        (lambda x: x.index_select(0, chainrule.tensor([[0]])), ShapeError,
         r"index_select: index must be 0-d or 1-d, got shape \(1, 1\)"),
        (lambda x: x.index_select(1, chainrule.tensor([3])), OutOfRangeError,
         r"index_select: index 3 is out of range for dim 1 with size 3"),
        (lambda x: x.masked_fill(x, 0.0), DTypeError,
         r"masked_fill: mask must be a bool tensor, got float32"),
        (lambda x: x.masked_fill(chainrule.ones(4).bool(), 0.0), ShapeError,
         r"masked_fill: mask of shape \(4,\) does not broadcast with input of shape \(2, 3\)"),
        (lambda x: x.masked_fill(x > 0, chainrule.ones(2)), ShapeError,
         r"masked_fill: value must be a number or a 0-dimensional tensor, got shape \(2,\)"),
        (lambda x: x.masked_scatter(x == 0, chainrule.ones(5)), ShapeError,
         r"masked_scatter: source needs at least 6 elements"),
        (lambda x: x.masked_select(chainrule.ones(2, 2).bool()), ShapeError,
         r"masked_select: mask of shape \(2, 2\) does not broadcast"),
        (lambda x: chainrule.take_along_dim(x, chainrule.tensor([0]), 0), ShapeError,
         r"take_along_dim: input of shape \(2, 3\) and indices of shape \(1,\) must have"),
        (lambda x: x.repeat_interleave(chainrule.tensor([1, 2]), dim=1), ShapeError,
         r"repeat_interleave: repeats must be a non-negative int or one count per element "
         r"\(3 along dim 1\)"),
        (lambda x: chainrule.repeat_interleave(chainrule.tensor([1, -1])), ShapeError,
         r"repeat_interleave: repeats must be non-negative"),
        (lambda x: x.index_put(chainrule.tensor([0]), chainrule.tensor(1.0)), DTypeError,
         r"index_put: indices must be a tuple of tensors, got Tensor"),
        (lambda x: x.index_put((chainrule.tensor([0]),), chainrule.ones(2), accumulate=True),
         ShapeError, r"index_put: cannot accumulate values of shape \(2,\) into input\[indices\] "
         r"of shape \(1, 3\)"),
        (lambda x: x.diagonal(0, 1, -1), ShapeError, r"diagonal: dim1 and dim2 must differ"),
        (lambda x: x[0].diagonal(), ShapeError, r"diagonal: needs at least 2 dimensions"),
        (lambda x: x[0].tril(), ShapeError, r"tril: needs at least 2 dimensions, got shape \(3,\)"),
        (lambda x: x.diag_embed(0, 0, 3), OutOfRangeError, r"diag_embed: dim 3 is out of range"),
        (lambda x: x.unsqueeze(0).diag(), ShapeError, r"diag: expects a 1-D or 2-D tensor"),
        (lambda x: x.unfold(1, 4, 1), ShapeError, r"unfold: size 4 must be in \[0, 3\] \(dim 1\)"),
        (lambda x: x.unfold(1, 2, 0), ShapeError, r"unfold: step must be a positive int"),
        (lambda x: chainrule.meshgrid(x, x), ShapeError,
         r"meshgrid: expects 0-d or 1-D tensors, got shape \(2, 3\)"),
        (lambda x: chainrule.meshgrid(x[0], indexing="yx"), DomainError,
         r"meshgrid: indexing must be 'ij' or 'xy', got 'yx'"),
        (lambda x: chainrule.broadcast_tensors(x, chainrule.ones(4)), ShapeError,
         r"broadcast_shapes: shapes \(2, 3\), \(4,\) do not broadcast together"),
        (lambda x: chainrule.tril_indices(-1, 2), ShapeError,
         r"tril_indices: row must be a non-negative int, got -1"),
    ],
)  # fmt: skip
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(chainrule.zeros(2, 3))


def _index(lib, values, dtype="int64"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


#: Bad arguments to the scatter family (and the index_* writes and gather, which share its
#: checks), each run as ``program(lib)`` on both libraries, with what chainrule's message says.
SCATTER_MISUSES = {
    "unknown reduce": (
        lambda L: L.zeros(3).scatter_reduce(0, _index(L, [0, 1]), L.ones(2), "median"),
        r"scatter_reduce: reduce must be one of \('sum', 'prod', 'mean', 'amax', 'amin'\), "
        r"got 'median'"),
    "reduce not a string": (
        lambda L: L.zeros(3).scatter_reduce(0, _index(L, [0, 1]), L.ones(2), None),
        r"scatter_reduce: reduce must be a string, got NoneType"),
    "include_self not a bool": (
        lambda L: L.zeros(3).scatter_reduce(0, _index(L, [0]), L.ones(1), "sum", include_self=1),
        r"scatter_reduce: include_self must be a bool, got int"),
    "int16 index": (
        lambda L: L.zeros(3).scatter_reduce(0, _index(L, [0, 1], "int16"), L.ones(2), "sum"),
        r"scatter_reduce: index must be an int64 or int32 tensor, got int16"),
    "uint8 index": (
        lambda L: L.zeros(3).scatter_add(0, _index(L, [0, 1], "uint8"), L.ones(2)),
        r"scatter_add: index must be an int64 or int32 tensor, got uint8"),
    "float index": (
        lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0.0, 1.0]), L.ones(2), "amax"),
        r"scatter_reduce: index must be an integer tensor, got float32"),
    "index larger than src": (
        lambda L: L.zeros(3).scatter_reduce(0, _index(L, [0, 1, 2]), L.ones(2), "sum"),
        r"scatter_reduce: index of shape \(3,\) is larger than src of shape \(2,\)"),
    "index larger than input": (
        lambda L: L.zeros(3, 2).scatter_reduce(0, _index(L, [[0, 0, 0]]), L.ones(1, 3), "sum"),
        r"scatter_reduce: index of shape \(1, 3\) is larger than the input of shape \(3, 2\) "
        r"in dim 1"),
    "index with fewer dims": (
        lambda L: L.zeros(3, 2).scatter_reduce(0, _index(L, [0, 1]), L.ones(2), "prod"),
        r"scatter_reduce: index of shape \(2,\) must have as many dimensions as the input of "
        r"shape \(3, 2\)"),
    "dim out of range": (
        lambda L: L.zeros(3).scatter_reduce(1, _index(L, [0, 1]), L.ones(2), "sum"),
        r"scatter_reduce: dim 1 is out of range"),
    "src of another dtype": (
        lambda L: L.zeros(3).scatter_reduce(0, _index(L, [0, 1]), L.ones(2, dtype=L.float64),
                                            "sum"),
        r"scatter_reduce: src must have the input's dtype, got src float64 and input float32"),
    "src of integers": (
        lambda L: L.zeros(3).scatter_add(0, _index(L, [0, 1]), _index(L, [1, 2])),
        r"scatter_add: src must have the input's dtype, got src int64 and input float32"),
    "scatter src of another dtype": (
        lambda L: L.zeros(3).scatter(0, _index(L, [0, 1]), L.ones(2, dtype=L.float64)),
        r"scatter: src must have the input's dtype"),
    "index out of range": (
        lambda L: L.zeros(3).scatter_reduce(0, _index(L, [0, 5]), L.ones(2), "mean"),
        r"scatter_reduce: index 5 is out of range for dim 0 with size 3"),
    "negative index": (
        lambda L: L.zeros(3).scatter_reduce(0, _index(L, [-1, 0]), L.ones(2), "sum",
                                            include_self=False),
        r"scatter_reduce: index -1 is out of range for dim 0 with size 3"),
    "gather int8 index": (
        lambda L: L.zeros(3).gather(0, _index(L, [0], "int8")),
        r"gather: index must be an int64 or int32 tensor, got int8"),
    "index_select int16 index": (
        lambda L: L.zeros(3).index_select(0, _index(L, [0], "int16")),
        r"index_select: index must be an int64 or int32 tensor, got int16"),
    "index_add source of another dtype": (
        lambda L: L.zeros(3).index_add(0, _index(L, [0, 1]), L.ones(2, dtype=L.float64)),
        r"index_add: source must have the input's dtype, got source float64 and input float32"),
    "index_copy int32 index": (
        lambda L: L.zeros(3).index_copy(0, _index(L, [0, 1], "int32"), L.ones(2)),
        r"index_copy: index must be an int64 tensor, got int32"),
    "index_reduce source of another dtype": (
        lambda L: L.zeros(3).index_reduce(0, _index(L, [0, 1]), L.ones(2, dtype=L.float64),
                                          "prod"),
        r"index_reduce: source must have the input's dtype"),
    "index_reduce uint8 index": (
        lambda L: L.zeros(3).index_reduce(0, _index(L, [0, 1], "uint8"), L.ones(2), "amax"),
        r"index_reduce: index must be an int64 or int32 tensor, got uint8"),
    "take_along_dim int32 indices": (
        lambda L: L.take_along_dim(L.zeros(3), _index(L, [0], "int32"), 0),
        r"take_along_dim: index must be an int64 tensor, got int32"),
    "in place, src of another dtype": (
        lambda L: L.zeros(3).scatter_reduce_(0, _index(L, [0]), L.ones(1, dtype=L.float64),
                                             "sum"),
        r"scatter_reduce: src must have the input's dtype"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(SCATTER_MISUSES))
def test_scatter_family_refuses_bad_arguments_as_pytorch_refuses_them(name, torch):
    program, message = SCATTER_MISUSES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "index_reduce() is in beta"
        with pytest.raises(Exception) as theirs:
            program(torch)
    with pytest.raises(type(theirs.value), match=message) as ours:
        program(chainrule)
    assert isinstance(ours.value, chainrule.ChainruleError), ours.value


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin", "max", "min"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_scatter_reduce_takes_what_pytorch_takes(reduce, include_self, index_dtype, torch):
    def program(lib):
        x = lib.tensor([5.0, -1.0, 2.0])
        index = _index(lib, [0, 0, 2, 0], index_dtype)
        src = lib.tensor([1.0, 7.0, -3.0, 2.0])
        return x.scatter_reduce(0, index, src, reduce, include_self=include_self)

    np.testing.assert_array_equal(program(chainrule).numpy(), program(torch).numpy())


def test_every_name_pytorch_has_as_a_method_is_one(torch):
    names = [
        "contiguous", "is_contiguous", "stride", "view_as", "reshape_as", "repeat_interleave",
        "tril", "triu", "diag", "diagonal", "diag_embed", "index_select", "masked_fill",
        "masked_fill_", "masked_select", "masked_scatter", "masked_scatter_", "scatter",
        "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_",
        "index_add", "index_add_", "index_fill", "index_fill_", "index_copy", "index_copy_",
        "index_put", "index_put_", "take_along_dim", "nonzero", "argwhere", "unfold",
    ]  # fmt: skip
    assert all(hasattr(torch.Tensor, n) for n in names)
    assert [n for n in names if not hasattr(chainrule.Tensor, n)] == []
    functions = [
        "tril_indices", "triu_indices", "meshgrid", "broadcast_tensors", "hstack", "vstack",
        "dstack", "column_stack", "concat", "concatenate", "diagonal", "diag", "diag_embed",
        "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill",
        "index_put", "index_select", "masked_fill", "masked_select", "masked_scatter",
        "take_along_dim", "nonzero", "argwhere", "repeat_interleave", "tril", "triu",
    ]  # fmt: skip
    assert all(hasattr(torch, n) for n in functions)
    assert [n for n in functions if not hasattr(chainrule, n)] == []


def test_vmap_over_a_batch_of_indices_runs_per_example():
    x = chainrule.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    index = chainrule.tensor([[2], [0]])
    out = chainrule.func.vmap(lambda xi, ii: xi.scatter(0, ii, chainrule.tensor([9.0])))(x, index)
    assert out.tolist() == [[1.0, 2.0, 9.0], [9.0, 5.0, 6.0]]
