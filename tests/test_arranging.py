"""Arranging elements: rotations, at least n dims and sums to a size (chainrule/ops/shape.py),
splits and combinations (ops/joining.py), flat indexing (ops/flat_indexing.py), index_reduce
(ops/scattering.py), nonzero_static (ops/selecting.py) and the structured matrices
(chainrule/linalg/structured.py): what the generic op properties do not reach: edge shapes,
index dtypes, in-place writes, vmap, and the error messages."""

import numpy as np
import pytest

import chainrule
from chainrule import DomainError, DTypeError, GraphError, OutOfRangeError, ShapeError


def _shapes(pieces):
    return [tuple(p.shape) for p in pieces]


def _same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# Edge shapes and dtypes, against PyTorch.


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.block_diag(),
        lambda m: m.block_diag(m.zeros(0, 2), m.ones(1, 1)),
        lambda m: m.block_diag(m.tensor([1, 2]), m.tensor([[3]])),
        lambda m: m.combinations(m.tensor([1.0, 2.0, 3.0]), r=0),
        lambda m: m.combinations(m.tensor([1.0, 2.0]), r=3),
        lambda m: m.combinations(m.zeros(0)),
        lambda m: m.vander(m.tensor([1.0, 2.0]), N=0),
        lambda m: m.vander(m.tensor([1, 2, 3], dtype=m.int32)),
        lambda m: m.vander(m.tensor([True, False]), N=3, increasing=True),
        lambda m: m.linalg.vander(m.tensor([[1, 2], [3, 4]])),
        lambda m: m.diagflat(m.tensor(5.0)),
        lambda m: m.diagflat(m.zeros(2, 2), 1),
        lambda m: m.nonzero_static(m.tensor([[1.0, 0.0], [0.0, 2.0]]), size=4),
        lambda m: m.nonzero_static(m.tensor(3.0), size=2),
        lambda m: m.nonzero_static(m.zeros(3), size=0),
        lambda m: m.tensor([0, 3, 0, 4]).nonzero_static(size=1, fill_value=9),
        lambda m: m.arange(6).reshape(2, 3).take(m.tensor([[-1, 0], [2, 2]])),
        lambda m: m.arange(6).reshape(2, 3).sum_to_size(()),
        lambda m: m.arange(6.0).reshape(2, 3).sum_to_size(m.Size([2, 1])),
        lambda m: m.cartesian_prod(m.tensor([1, 2]), m.tensor([3, 4]), m.tensor([5])),
        lambda m: m.cartesian_prod(m.tensor([1, 2])),
        lambda m: m.rot90(m.arange(24).reshape(2, 3, 4), 5, (2, 0)),
        lambda m: m.rot90(m.arange(6).reshape(2, 3), 0),
    ],
)
def test_edge_shapes_and_dtypes_match_pytorch(torch, call):
    _same(call(chainrule), call(torch))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.tensor_split(m.arange(7), [5, 2, 9]),
        lambda m: m.tensor_split(m.arange(7), [-2, 3]),
        lambda m: m.tensor_split(m.arange(7), m.tensor(3)),
        lambda m: m.tensor_split(m.arange(7), m.tensor([1, 3])),
        lambda m: m.tensor_split(m.arange(2), 5),
        lambda m: m.arange(12).reshape(3, 4).tensor_split((1,), dim=-1),
        lambda m: m.hsplit(m.arange(6), [2]),
        lambda m: m.hsplit(m.arange(12).reshape(2, 6), 3),
        lambda m: m.vsplit(m.arange(12).reshape(4, 3), 2),
        lambda m: m.dsplit(m.arange(12).reshape(1, 2, 6), [1, 4]),
        lambda m: m.split_with_sizes(m.arange(10).reshape(2, 5), [1, 0, 4], dim=1),
        lambda m: m.unravel_index(m.tensor([4, 5, -1]), (2, 3)),
        lambda m: m.unravel_index(m.tensor([[4, 1]]), m.Size([2, 3])),
        lambda m: m.unravel_index(m.tensor(3), 6),
        lambda m: m.atleast_1d(m.tensor(1.0), m.zeros(2, 2)),
        lambda m: m.atleast_2d([m.tensor(1.0)]),
        lambda m: m.atleast_3d((m.zeros(2), m.zeros(2, 3), m.zeros(1, 2, 3, 4))),
    ],
)
def test_pieces_match_pytorch(torch, call):
    ours, theirs = call(chainrule), call(torch)
    assert isinstance(ours, tuple) and len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        _same(o, t)


def test_unravel_index_of_an_empty_shape_is_an_empty_tuple(torch):
    assert chainrule.unravel_index(chainrule.tensor([0]), ()) == ()
    assert torch.unravel_index(torch.tensor([0]), ()) == ()


def test_atleast_nd_returns_a_tensor_for_one_and_a_tuple_for_several():
    x = chainrule.tensor([1.0, 2.0])
    assert chainrule.atleast_1d(x) is x
    assert chainrule.atleast_2d(x).shape == (1, 2)
    assert chainrule.atleast_1d() == ()
    assert _shapes(chainrule.atleast_3d(x, x)) == [(1, 2, 1), (1, 2, 1)]


def test_splits_are_views_of_the_input():
    x = chainrule.zeros(2, 6)
    left, _ = x.hsplit(2)
    left[0, 0] = 5.0
    assert x[0, 0].item() == 5.0


# Gradients that the generic cases do not reach, against PyTorch.


def _grads(torch, program, *arrays):
    """program(lib, *tensors) on both libraries: values and input gradients, compared."""
    results = []
    for lib in (chainrule, torch):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = program(lib, *xs)
        out.backward(lib.tensor(np.arange(out.numel(), dtype=float).reshape(out.shape) + 1))
        results.append([out.detach().numpy()] + [x.grad.numpy() for x in xs])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_put_without_accumulate_sends_each_source_element_its_gradient_as_pytorch(torch):
    # Position 1 is written twice: both source elements get the gradient there (PyTorch's
    # rule), and the last write wins the value.
    _grads(torch, lambda m, x, s: x.put(m.tensor([1, 1, -1]), s), np.arange(6.0), [7.0, 8.0, 9.0])


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_values_and_gradients_match_pytorch_with_ties(torch, reduce, include_self):
    x = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    src = [[2.0, 2.0], [7.0, 1.0], [3.0, 3.0], [2.0, 0.5]]  # ties with x and each other

    def program(m, a, b):
        return a.index_reduce(0, m.tensor([0, 2, 0, 1]), b, reduce, include_self=include_self)

    _grads(torch, program, x, src)


def test_index_reduce_along_a_later_dim_matches_pytorch(torch):
    x, src = np.arange(1.0, 13.0).reshape(2, 3, 2), np.arange(2.0, 10.0).reshape(2, 2, 2)
    _grads(torch, lambda m, a, b: a.index_reduce(1, m.tensor([2, 0]), b, "prod"), x, src)


def test_vander_gradient_at_zero_is_the_derivative_of_the_powers():
    x = chainrule.tensor([0.0, 2.0], dtype=chainrule.float64, requires_grad=True)
    chainrule.vander(x, N=4).sum().backward()
    # d/dx (x^3 + x^2 + x + 1) = 3x^2 + 2x + 1
    assert x.grad.tolist() == [1.0, 17.0]


# In place.


def test_put_and_index_reduce_in_place_write_into_the_tensor(torch):
    for m in (chainrule, torch):
        y = m.zeros(2, 3)
        assert y.put_(m.tensor([0, 5]), m.tensor([1.0, 2.0])) is y
        y.put_(m.tensor([0, 0]), m.tensor([1.0, 1.0]), accumulate=True)
        y.index_reduce_(1, m.tensor([1, 1]), m.tensor([[4.0, 6.0], [1.0, 2.0]]), "mean",
                        include_self=False)  # fmt: skip
        if m is chainrule:
            ours = y.numpy()
    np.testing.assert_array_equal(ours, y.numpy())


def test_put_in_place_on_a_leaf_that_requires_grad_is_refused():
    x = chainrule.zeros(3, requires_grad=True)
    with pytest.raises(chainrule.GraphError, match="put_: a leaf tensor"):
        x.put_(chainrule.tensor([0]), chainrule.tensor([1.0]))


# vmap: the composed functions batch through their rows, the index rows by their own rules.


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.take(chainrule.tensor([[3, 0], [-1, 1]])),
        lambda x: x.put(chainrule.tensor([2, 0]), x[:2] * 10),
        lambda x: x.rot90(1, (0, 1)) if x.ndim > 1 else x.diagflat(1),
        lambda x: chainrule.combinations(x, 2),
        lambda x: chainrule.vander(x),
        lambda x: chainrule.cartesian_prod(x, x),
        lambda x: chainrule.block_diag(x, x[:2]),
        lambda x: chainrule.stack(chainrule.unravel_index((x * 2).long(), (3, 4))),
        lambda x: (x > 0).nonzero_static(size=3, fill_value=-5),
        lambda x: x.tensor_split(2)[1],
    ],
)
def test_vmap_runs_once_and_matches_the_loop(fn):
    batch = chainrule.tensor([[1.5, -2.0, 0.0, 3.0], [0.5, 2.0, -1.0, -3.5]])
    calls = []

    def counted(x):
        calls.append(1)
        return fn(x)

    out = chainrule.func.vmap(counted)(batch)
    assert len(calls) == 1
    expected = np.stack([fn(row).numpy() for row in batch])
    np.testing.assert_array_equal(out.numpy(), expected)


# Errors, each naming the op and what is wrong.


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda m: m.block_diag(m.zeros(2, 2, 2)),
            ShapeError,
            r"block_diag: tensors must have at most 2 dimensions, got shape \(2, 2, 2\) at "
            r"position 0",
        ),
        (lambda m: m.block_diag([1.0]), DTypeError, r"block_diag: expects tensors, got list"),
        (lambda m: m.rot90(m.zeros(2, 2), 1, (0,)), ShapeError, r"rot90: dims must name 2"),
        (
            lambda m: m.rot90(m.zeros(2, 2), 1, (1, -1)),
            ShapeError,
            r"rot90: dims must be two different dimensions, got \(1, -1\)",
        ),
        (
            lambda m: m.rot90(m.zeros(3)),
            ShapeError,
            r"rot90: input must have at least 2 dimensions, got shape \(3,\)",
        ),
        (lambda m: m.rot90(m.zeros(2, 2), 1, (0, 2)), OutOfRangeError, r"rot90: dim 2 is out"),
        (
            lambda m: m.tensor_split(m.zeros(3), 0),
            ShapeError,
            r"tensor_split: the number of sections must be positive, got 0",
        ),
        (
            lambda m: m.tensor_split(m.tensor(1.0), 1),
            ShapeError,
            r"tensor_split: cannot split a zero-dimensional tensor",
        ),
        (
            lambda m: m.tensor_split(m.zeros(3), m.zeros(2, 2, dtype=m.int64)),
            ShapeError,
            r"tensor_split: a tensor of indices or sections must be 0-d or 1-D, got shape \(2, 2\)",
        ),
        (
            lambda m: m.tensor_split(m.zeros(3), m.tensor([1.0])),
            DTypeError,
            r"tensor_split: index must be an integer tensor, got float32",
        ),
        (
            lambda m: m.hsplit(m.zeros(2, 5), 3),
            ShapeError,
            r"hsplit: dim 1 of size 5 does not split into 3 equal sections",
        ),
        (
            lambda m: m.vsplit(m.zeros(5), 1),
            ShapeError,
            r"vsplit: needs a tensor with at least 2 dimension\(s\), got shape \(5,\)",
        ),
        (
            lambda m: m.dsplit(m.zeros(5, 2), 1),
            ShapeError,
            r"dsplit: needs a tensor with at least 3 dimension\(s\), got shape \(5, 2\)",
        ),
        (
            lambda m: m.split_with_sizes(m.zeros(5), [2, 2]),
            ShapeError,
            r"split_with_sizes: split_sizes \(2, 2\) add up to 4, but dim 0 of input \(5,\) has "
            r"size 5",
        ),
        (lambda m: m.atleast_1d(1.0), DTypeError, r"atleast_1d: expects tensors, got float"),
        (
            lambda m: m.take(m.zeros(2, 3), m.tensor([6])),
            OutOfRangeError,
            r"take: index 6 is out of range for a tensor of 6 elements",
        ),
        (lambda m: m.take(m.zeros(2, 3), m.tensor([-7])), OutOfRangeError, r"take: index -7"),
        (
            lambda m: m.take(m.zeros(3), m.tensor([1.0])),
            DTypeError,
            r"take: index must be an integer tensor, got float32",
        ),
        (
            lambda m: m.put(m.zeros(3), m.tensor([0, 1]), m.ones(3)),
            ShapeError,
            r"put: source of shape \(3,\) has 3 elements, index has 2",
        ),
        (
            lambda m: m.put(m.zeros(3), m.tensor([0]), m.tensor([1])),
            DTypeError,
            r"put: source \(int64\) must have input's dtype \(float32\)",
        ),
        (
            lambda m: m.put(m.zeros(3), m.tensor([0]), 1.0),
            DTypeError,
            r"put: source must be a tensor, got float",
        ),
        (
            lambda m: m.index_reduce(m.zeros(3), 0, m.tensor([0]), m.ones(1), "sum"),
            DomainError,
            r"index_reduce: reduce must be one of \('prod', 'mean', 'amax', 'amin'\), got 'sum'",
        ),
        (
            lambda m: m.index_reduce(m.zeros(3, 2), 0, m.tensor([0]), m.ones(2, 2), "prod"),
            ShapeError,
            r"index_reduce: source of shape \(2, 2\) does not fit",
        ),
        (
            lambda m: m.index_reduce(m.zeros(3), 0, m.tensor([3]), m.ones(1), "prod"),
            OutOfRangeError,
            r"index_reduce: index 3 is out of range for dim 0 with size 3",
        ),
        (lambda m: m.cartesian_prod(), ShapeError, r"cartesian_prod: expects at least one"),
        (
            lambda m: m.cartesian_prod(m.zeros(2, 2)),
            ShapeError,
            r"cartesian_prod: expects 1-D tensors, got shape \(2, 2\) at position 0",
        ),
        (
            lambda m: m.cartesian_prod(m.tensor([1]), m.tensor([1.0])),
            DTypeError,
            r"cartesian_prod: the tensors must share one dtype, got float32, int64",
        ),
        (
            lambda m: m.combinations(m.zeros(2, 2)),
            ShapeError,
            r"combinations: expects 1-D tensors, got shape \(2, 2\)",
        ),
        (
            lambda m: m.combinations(m.zeros(2), r=-1),
            DomainError,
            r"combinations: r must be a non-negative int, got -1",
        ),
        (lambda m: m.vander(m.zeros(2, 2)), ShapeError, r"vander: expects 1-D tensors"),
        (lambda m: m.vander(m.zeros(2), N=-1), DomainError, r"vander: N must be a non-negative"),
        (
            lambda m: m.linalg.vander(m.tensor(1.0)),
            ShapeError,
            r"linalg.vander: x must have at least 1 dimension",
        ),
        (
            lambda m: m.linalg.vander(m.zeros(1)),
            DomainError,
            r"linalg.vander: N must be an int greater than 1, got 1",
        ),
        (
            lambda m: m.unravel_index(m.tensor([6]), (2, 3)),
            OutOfRangeError,
            r"unravel_index: index 6 is out of range for shape \(2, 3\) \(6 elements\)",
        ),
        (
            lambda m: m.unravel_index(m.tensor([-7]), (2, 3)),
            OutOfRangeError,
            r"unravel_index: index -7",
        ),
        (
            lambda m: m.unravel_index(m.tensor([1.0]), (2, 3)),
            DTypeError,
            r"unravel_index: indices must be an integer tensor, got float32",
        ),
        (
            lambda m: m.unravel_index(m.tensor([1]), (2, -3)),
            ShapeError,
            r"unravel_index: shape must be non-negative integers, got \(2, -3\)",
        ),
        (
            lambda m: m.nonzero_static(m.zeros(2), size=-1),
            DomainError,
            r"nonzero_static: size must be a non-negative int, got -1",
        ),
        (
            lambda m: m.zeros(2, 3).sum_to_size(1, 1, 3),
            ShapeError,
            r"sum_to_size: size \(1, 1, 3\) does not broadcast to the tensor's shape \(2, 3\)",
        ),
        (lambda m: m.zeros(2, 3).sum_to_size(2, 2), ShapeError, r"sum_to_size: size \(2, 2\)"),
    ],
)
def test_bad_arguments_give_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(chainrule)


def test_slice_inverse_is_left_out_as_an_internal_of_pytorch_export(torch):
    # torch.slice_inverse is documented in native_functions.yaml as a helper for PT2's
    # fake-ification of views, "not to show up in eager mode": chainrule has no such view.
    assert hasattr(torch, "slice_inverse")
    assert not hasattr(chainrule, "slice_inverse")


def test_scatter_reduce_prod_refuses_the_second_derivative_it_cannot_give():
    """Two zeros of src reducing into one position: the first derivative is right (0 for
    both), the second would be silently 0 instead of the product of the rest; PyTorch
    refuses it, and so does chainrule."""
    x = chainrule.tensor([2.0, 3.0], requires_grad=True)
    src = chainrule.tensor([0.0, 0.0, 1.5], requires_grad=True)
    out = x.scatter_reduce(0, chainrule.tensor([0, 0, 1]), src, "prod")
    (first,) = chainrule.autograd.grad(out.sum(), src, retain_graph=True)
    assert first.tolist() == [0.0, 0.0, 3.0]
    with pytest.raises(GraphError, match="second derivative for src is not supported"):
        chainrule.autograd.grad(out.sum(), src, create_graph=True)
