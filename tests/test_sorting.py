"""Scans, sorting and statistics beyond the generated op tests: dtypes, ties and NaN against
PyTorch, zeros in cumprod, zero distances in cdist, the counting ops and the error messages."""

import math

import numpy as np
import pytest

import chainrule as cr
from chainrule import DomainError, DTypeError, OutOfRangeError, ShapeError

NAN = math.nan


def both(torch, values, dtype=np.float64, requires_grad=False):
    """The same values as a chainrule and a PyTorch tensor."""
    array = np.array(values, dtype=dtype)
    return (cr.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))  # fmt: skip


def same(ours, theirs):
    """Equal values (NaN equal to NaN), shapes and dtypes."""
    expected = theirs.detach().numpy()
    assert ours.shape == expected.shape and ours.dtype == expected.dtype
    np.testing.assert_allclose(ours.detach().numpy(), expected, rtol=1e-12, atol=1e-12)


# Scans.


def test_cumsum_adds_integers_in_int64_and_casts_to_dtype_first(torch):
    for dtype in (np.int32, np.bool_, np.uint8):
        ours, theirs = both(torch, [1, 0, 1], dtype)
        same(ours.cumsum(0), theirs.cumsum(0))
        same(cr.cumprod(ours, 0), torch.cumprod(theirs, 0))
    x = cr.tensor([1.5, 2.5], requires_grad=True)
    out = x.cumsum(0, dtype=cr.float64)
    assert out.dtype == np.float64
    out.sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [2.0, 1.0]


def test_cumprod_gradient_is_exact_at_one_zero_and_at_several(torch):
    for values in ([2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 5.0], [1.5, -2.0, 0.0, 0.0]):
        ours, theirs = both(torch, values, requires_grad=True)
        g = [0.5, -1.0, 2.0, 1.5]
        ours.cumprod(0).backward(cr.tensor(np.array(g)))
        theirs.cumprod(0).backward(torch.tensor(g, dtype=torch.float64))
        same(ours.grad, theirs.grad)
    x = cr.tensor(np.array([[0.0, 2.0, 0.0, 3.0], [1.0, 0.0, 2.0, -1.0]]), requires_grad=True)
    assert cr.gradgradcheck(lambda t: t.cumprod(1), [x])


def test_logcumsumexp_stays_finite_and_rejects_integers(torch):
    ours, theirs = both(torch, [-1000.0, 1000.0, 1000.0, -5.0], requires_grad=True)
    same(ours.logcumsumexp(0), theirs.logcumsumexp(0))
    g = np.array([1.0, -2.0, 0.5, 3.0])
    ours.logcumsumexp(0).backward(cr.tensor(g))
    theirs.logcumsumexp(0).backward(torch.tensor(g))
    same(ours.grad, theirs.grad)
    with pytest.raises(DTypeError, match="logcumsumexp: needs a floating-point tensor, got int64"):
        cr.logcumsumexp(cr.tensor([1, 2]), 0)


def test_cummax_and_cummin_take_the_later_index_at_ties_and_keep_nan(torch):
    for values in ([1.0, 3.0, 3.0, 2.0, 3.0], [1.0, NAN, 3.0, NAN, 5.0], [2.0, 2.0, 1.0, 1.0]):
        ours, theirs = both(torch, values)
        for name in ("cummax", "cummin"):
            mine, expected = getattr(ours, name)(0), getattr(theirs, name)(0)
            same(mine.values, expected.values)
            same(mine.indices, expected.indices)


def test_cummax_gradient_goes_to_each_running_maximum(torch):
    ours, theirs = both(torch, [[1.0, 3.0, 2.0], [4.0, 1.0, 5.0]], requires_grad=True)
    ours.cummax(1).values.sum().backward()
    theirs.cummax(1).values.sum().backward()
    same(ours.grad, theirs.grad)
    assert ours.grad.tolist() == [[1.0, 2.0, 0.0], [2.0, 0.0, 1.0]]


def test_a_scan_checks_its_dim():
    with pytest.raises(OutOfRangeError, match=r"cumsum: dim 2 is out of range \[-2, 1\]"):
        cr.cumsum(cr.ones(2, 3), 2)
    assert cr.cumsum(cr.tensor(2.0), 0).tolist() == 2.0


# Sorting.


def test_sort_puts_nan_last_ascending_and_first_descending(torch):
    ours, theirs = both(torch, [2.0, NAN, -1.0, NAN, 0.5])
    for descending in (False, True):
        mine = ours.sort(descending=descending)
        expected = theirs.sort(descending=descending, stable=True)
        same(mine.values, expected.values)
        same(mine.indices, expected.indices)


def test_stable_sort_keeps_ties_in_order_and_sends_their_gradient_back(torch):
    ours, theirs = both(torch, [[1.0, 3.0, 1.0, 3.0, 2.0]] * 2, requires_grad=True)
    g = np.arange(10.0).reshape(2, 5)
    for descending in (False, True):
        ours.grad = None
        theirs.grad = None
        mine = ours.sort(1, descending, stable=True)
        expected = theirs.sort(dim=1, descending=descending, stable=True)
        same(mine.indices, expected.indices)
        mine.values.backward(cr.tensor(g))
        expected.values.backward(torch.tensor(g))
        same(ours.grad, theirs.grad)
        same(cr.argsort(ours, 1, descending), expected.indices)


def test_changing_returned_indices_in_place_makes_backward_refuse():
    x = cr.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, indices = x.sort()
    indices += 1
    with pytest.raises(cr.GraphError, match="sort: a tensor saved for backward was modified"):
        values.sum().backward()


def test_topk_and_kthvalue_pick_by_rank(torch):
    ours, theirs = both(torch, [[4.0, 1.0, 3.0, 9.0], [0.0, 2.0, -1.0, 5.0]], requires_grad=True)
    for mine, expected in [
        (ours.topk(2), theirs.topk(2)),
        (ours.topk(3, 1, largest=False, sorted=False), theirs.topk(3, 1, largest=False)),
        (ours.topk(0), theirs.topk(0)),
        (ours.kthvalue(2, 0, keepdim=True), theirs.kthvalue(2, 0, keepdim=True)),
    ]:
        same(mine.values, expected.values)
        same(mine.indices, expected.indices)
    ours.topk(2).values.sum().backward()
    assert ours.grad.tolist() == [[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]]
    with pytest.raises(OutOfRangeError, match=r"topk: k=5 is out of range \[0, 4\] for dim 1"):
        ours.topk(5)
    with pytest.raises(OutOfRangeError, match=r"kthvalue: k=0 is out of range \[1, 2\]"):
        ours.kthvalue(0, 0)
    with pytest.raises(DTypeError, match="topk: k must be an int, got 1.5"):
        ours.topk(1.5)


def test_median_is_the_lower_median_and_nan_wins_unless_ignored(torch):
    cases = [[4.0, 1.0, 3.0, 2.0], [1.0, NAN, 3.0, NAN, 5.0], [NAN, NAN], [7.0]]
    for values in cases:
        ours, theirs = both(torch, values)
        same(ours.median(), theirs.median())
        same(ours.nanmedian(), theirs.nanmedian())
        for name in ("median", "nanmedian"):
            mine, expected = getattr(ours, name)(0), getattr(theirs, name)(0)
            same(mine.values, expected.values)
            same(mine.indices, expected.indices)


def test_median_gradient_goes_to_the_returned_index(torch):
    ours, theirs = both(torch, [[3.0, 1.0, 2.0], [5.0, 6.0, 4.0]], requires_grad=True)
    ours.median().backward()
    theirs.median().backward()
    same(ours.grad, theirs.grad)
    with pytest.raises(ShapeError, match=r"median: dim 0 of the tensor of shape \(0,\) is empty"):
        cr.median(cr.zeros(0))


def test_mode_takes_the_smallest_most_frequent_value_at_its_last_place(torch):
    rng = np.random.default_rng(0)
    for _ in range(5):
        values = rng.integers(0, 4, size=(3, 7)).astype(np.float64)
        ours, theirs = both(torch, values)
        for dim in (0, 1):
            mine, expected = ours.mode(dim), theirs.mode(dim)
            same(mine.values, expected.values)
            same(mine.indices, expected.indices)


def test_a_0d_tensor_sorts_as_itself(torch):
    ours, theirs = both(torch, 2.5, requires_grad=True)
    for mine, expected in [(ours.sort(), theirs.sort()), (ours.mode(), theirs.mode()),
                           (ours.kthvalue(1), theirs.kthvalue(1))]:  # fmt: skip
        same(mine.values, expected.values)
        same(mine.indices, expected.indices)


# Counting.


def test_unique_gives_inverse_and_counts_as_pytorch_and_no_gradient(torch):
    ours, theirs = both(torch, [[3.0, 1.0], [3.0, 2.0]], requires_grad=True)
    mine = ours.unique(return_inverse=True, return_counts=True)
    expected = torch.unique(theirs, return_inverse=True, return_counts=True)
    for m, e in zip(mine, expected):
        same(m, e)
    assert not mine[0].requires_grad
    ours, theirs = both(torch, [[1, 2], [1, 2], [0, 5]], np.int64)
    for m, e in zip(
        ours.unique(dim=0, return_inverse=True), theirs.unique(dim=0, return_inverse=True)
    ):
        same(m, e)
    same(ours.unique(), theirs.unique())


def test_bincount_counts_and_sums_weights_in_pytorchs_dtypes(torch):
    ours, theirs = both(torch, [0, 2, 2, 5], np.int64)
    same(ours.bincount(), theirs.bincount())
    same(ours.bincount(minlength=8), theirs.bincount(minlength=8))
    for dtype in (np.float32, np.float64, np.int64):
        w_ours, w_theirs = both(
            torch, [0.5, 1.0, 2.0, 3.0] if dtype != np.int64 else [1, 2, 3, 4], dtype
        )
        same(ours.bincount(w_ours), theirs.bincount(w_theirs))
    with pytest.raises(
        DTypeError,
        match=r"bincount: needs a 1-D tensor of non-negative integers, got shape \(2, 2\) int64",
    ):
        cr.bincount(cr.tensor([[1, 2], [3, 4]]))
    with pytest.raises(DomainError, match="bincount: values must be non-negative, got -1"):
        cr.bincount(cr.tensor([1, -1]))
    with pytest.raises(ShapeError, match=r"bincount: weights of shape \(3,\) must match"):
        cr.bincount(cr.tensor([1, 2]), cr.tensor([1.0, 2.0, 3.0]))


def test_histc_matches_pytorch_at_edges_and_for_one_value(torch):
    for values, options in [
        ([1.0, 2.0, 3.0, 4.0, -1.0], dict(bins=3, min=1, max=3)),
        ([1.0, 1.0, 1.0], dict(bins=4)),
        ([0.0, 0.25, 0.5, 0.75, 1.0], dict(bins=4)),
        ([], dict(bins=2, min=0, max=1)),
    ]:
        for dtype in (np.float32, np.float64):
            ours, theirs = both(torch, values, dtype)
            same(ours.histc(**options), theirs.histc(**options))
    with pytest.raises(DomainError, match="histc: bins must be a positive int, got 0"):
        cr.histc(cr.ones(2), bins=0)
    with pytest.raises(DomainError, match="histc: min 2 must not be larger than max 1"):
        cr.histc(cr.ones(2), min=2, max=1)
    with pytest.raises(DTypeError, match="histc: needs a floating-point tensor, got int64"):
        cr.histc(cr.tensor([1, 2]))
    with pytest.raises(DomainError, match="histc: x holds inf or NaN"):
        cr.histc(cr.tensor([1.0, NAN]))


def test_searchsorted_and_bucketize_agree_with_pytorch(torch):
    seq_ours, seq_theirs = both(torch, [1.0, 2.0, 2.0, 3.0])
    v_ours, v_theirs = both(torch, [[2.0, 0.5], [3.5, 3.0]])
    for options in (dict(), dict(right=True), dict(side="right"), dict(side="left")):
        same(cr.searchsorted(seq_ours, v_ours, **options),
             torch.searchsorted(seq_theirs, v_theirs, **options))  # fmt: skip
    same(cr.searchsorted(seq_ours, 2.5), torch.searchsorted(seq_theirs, 2.5))
    same(cr.searchsorted(seq_ours, v_ours, out_int32=True),
         torch.searchsorted(seq_theirs, v_theirs, out_int32=True))  # fmt: skip
    rows_ours, rows_theirs = both(torch, [[1.0, 2.0, 3.0], [0.0, 5.0, 6.0]])
    same(cr.searchsorted(rows_ours, v_ours), torch.searchsorted(rows_theirs, v_theirs))
    for right in (False, True):
        same(cr.bucketize(v_ours, seq_ours, right=right),
             torch.bucketize(v_theirs, seq_theirs, right=right))  # fmt: skip
    with pytest.raises(DomainError, match="searchsorted: side='left' and right=True contradict"):
        cr.searchsorted(seq_ours, v_ours, right=True, side="left")
    with pytest.raises(
        ShapeError, match=r"searchsorted: values of shape \(3,\) must have the leading dims"
    ):
        cr.searchsorted(rows_ours, cr.ones(3))
    with pytest.raises(ShapeError, match=r"bucketize: boundaries must be 1-D, got shape \(2, 3\)"):
        cr.bucketize(v_ours, rows_ours)


# Statistics and distances.


def test_var_mean_and_std_mean_return_both_as_pytorch(torch):
    ours, theirs = both(torch, [[1.0, 2.0, 4.0], [0.0, 3.0, 3.0]])
    for mine, expected in [(cr.var_mean(ours), torch.var_mean(theirs)),
                           (cr.std_mean(ours, 1, correction=0, keepdim=True),
                            torch.std_mean(theirs, 1, correction=0, keepdim=True))]:  # fmt: skip
        assert isinstance(mine, tuple) and len(mine) == 2
        same(mine[0], expected[0])
        same(mine[1], expected[1])


def test_dist_counts_for_p_0_and_shares_inf_ties_as_pytorch(torch):
    x_ours, x_theirs = both(torch, [1.0, 2.0, 3.0], requires_grad=True)
    y_ours, y_theirs = both(torch, [0.0, 1.0, 3.0])
    same(x_ours.dist(y_ours, 0), torch.dist(x_theirs, y_theirs, 0))
    ours, theirs = cr.dist(x_ours, y_ours, math.inf), torch.dist(x_theirs, y_theirs, math.inf)
    same(ours, theirs)
    ours.backward()
    theirs.backward()
    same(x_ours.grad, x_theirs.grad)
    same(cr.dist(x_ours, y_ours, -math.inf), torch.dist(x_theirs, y_theirs, -math.inf))
    with pytest.raises(DomainError, match="dist: p must be >= 0, inf or -inf, got -1"):
        cr.dist(x_ours, y_ours, -1)
    with pytest.raises(DomainError, match="cdist: p must be >= 0 or inf, got -inf"):
        cr.cdist(x_ours[None], y_ours[None], -math.inf)


def test_cdist_gradient_is_zero_at_zero_distance_and_whole_at_inf_ties(torch):
    x_ours, x_theirs = both(torch, [[1.0, 2.0], [0.0, 0.0]], requires_grad=True)
    y_ours, y_theirs = both(torch, [[1.0, 2.0], [0.0, 1.0], [2.0, 3.0]])
    for p in (2.0, 1.0, 3.0, math.inf, 0.0):
        x_ours.grad = None
        x_theirs.grad = None
        ours, theirs = cr.cdist(x_ours, y_ours, p), torch.cdist(x_theirs, y_theirs, p)
        same(ours, theirs)
        if p:
            ours.sum().backward()
            theirs.sum().backward()
            same(x_ours.grad, x_theirs.grad)


def test_cdist_broadcasts_batch_dims_and_checks_shapes(torch):
    rng = np.random.default_rng(0)
    x_ours, x_theirs = both(torch, rng.standard_normal((2, 3, 4)))
    y_ours, y_theirs = both(torch, rng.standard_normal((1, 5, 4)))
    same(cr.cdist(x_ours, y_ours), torch.cdist(x_theirs, y_theirs))
    with pytest.raises(
        ShapeError,
        match=r"cdist: needs x1 \(..., P, M\) and x2 \(..., R, M\) with the same M, got "
        r"shapes \(2, 3, 4\) and \(5, 3\)",
    ):
        cr.cdist(x_ours, cr.ones(5, 3))


def test_every_family_method_is_a_tensor_method_as_in_pytorch(torch):
    names = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "sort", "argsort", "topk",
             "kthvalue", "median", "nanmedian", "mode", "unique", "bincount", "histc",
             "dist"]  # fmt: skip
    for name in names:
        assert hasattr(torch.Tensor, name) and getattr(cr.Tensor, name).__doc__, name
    for name in ("searchsorted", "bucketize", "var_mean", "std_mean", "cdist"):
        assert not hasattr(torch.Tensor, name) and not hasattr(cr.Tensor, name), name


def test_sort_runs_batched_under_vmap():
    x = cr.tensor(np.array([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]]))
    out = cr.func.vmap(lambda row: row.sort(descending=True).values)(x)
    assert out.tolist() == [[3.0, 2.0, 1.0], [5.0, 0.0, -1.0]]
    medians = cr.func.vmap(lambda row: row.median())(x)
    assert medians.tolist() == [2.0, 0.0]
