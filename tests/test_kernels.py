"""chainrule.kernels: each fast path gives NumPy's result (to the last bit where the
arithmetic is the same, to float rounding where the sums are added in another order), and
everything else goes to NumPy unchanged."""

import numpy as np
import pytest

from chainrule import kernels


def _array(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, axis",
    [
        ((512, 64), 1), ((512, 64), -1), ((16, 32, 64), (2,)), ((16, 4, 32, 32), (2, 3)),
        ((16, 32, 64), (0, 1)), ((512, 65), 0), ((16, 32, 64), (-3, -2)), ((8, 4096), 1),
    ],
)  # fmt: skip
@pytest.mark.parametrize("keepdims", [False, True])
def test_add_reduce_sums_as_numpy_does(dtype, shape, axis, keepdims):
    x = _array(shape, dtype)
    got = kernels.add_reduce(x, axis, keepdims)
    want = np.add.reduce(x, axis=axis, keepdims=keepdims)
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(x).max())


def test_add_reduce_takes_the_blas_product_for_short_rows():
    x = _array((512, 64))
    ones = np.ones(64, np.float32)
    assert np.array_equal(kernels.add_reduce(x, 1), x @ ones)  # the path, pinned
    assert np.array_equal(kernels.add_reduce(x, 0), ones.repeat(8) @ x)


@pytest.mark.parametrize(
    "x, axis",
    [
        (_array((64, 64))[:, ::2], 1),  # not C-ordered
        (_array((20, 10)), 1),  # small
        (_array((512, 64)).astype(np.float16), 1),
        (np.arange(4096).reshape(64, 64), 1),  # integers
        (_array((16, 32, 64)), (0, 2)),  # neither leading nor trailing
        (_array((16, 32, 64)), None),
        (_array((4, 8192)), 1),  # rows longer than LONGEST_SUMMED_ROW
    ],
)
def test_add_reduce_leaves_the_rest_to_numpy(x, axis):
    got = kernels.add_reduce(x, axis, True)
    want = np.add.reduce(x, axis=axis, keepdims=True)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_add_reduce_keeps_numpys_errors_and_pytorchs_signed_zero():
    x = np.full((512, 64), -0.0, np.float32)
    assert not np.signbit(kernels.add_reduce(x, 1)).any()  # as torch.sum: +0.0
    x[3, 5], x[7, 1], x[9, 2] = np.nan, np.inf, -np.inf
    got = kernels.add_reduce(x, 1)
    assert np.isnan(got[3]) and got[7] == np.inf and got[9] == -np.inf
    with pytest.raises(np.exceptions.AxisError):
        kernels.add_reduce(x, 2)


@pytest.mark.parametrize("shape", [(2048, 32), (512, 65), (16, 4, 32, 32), (512, 256), (3, 5)])
def test_max_reduce_is_numpys_maximum_exactly(shape):
    x = _array(shape)
    x.reshape(-1)[::7] = -np.inf
    x.reshape(-1)[5] = np.nan
    for axis in (-1, (x.ndim - 1,), 0):
        got = kernels.max_reduce(x, axis, keepdims=True)
        want = np.maximum.reduce(x, axis=axis, keepdims=True)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)  # nan where nan, the same bits elsewhere


def test_add_at_adds_repeated_rows_as_numpy_does():
    rng = np.random.default_rng(1)
    cases = [
        ((65,), (16, 32)),
        ((10,), (4096,)),
        ((50,), (3,)),
        ((7,), (0,)),
        ((512, 65), (512, 1)),
    ]
    for sizes, index_shape in cases:
        index = tuple(rng.integers(-n, n, index_shape) for n in sizes)
        values = rng.standard_normal(index_shape + (8, 3))
        got, want = np.ones(sizes + (8, 3)), np.ones(sizes + (8, 3))
        kernels.add_at(got, index, values)
        np.add.at(want, index, values)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_add_at_in_rounds_with_long_runs_among_short_ones():
    # Mostly distinct rows (the rounds), a few repeated past RUN_ROUNDS (their rest summed).
    rng = np.random.default_rng(2)
    index = np.concatenate([rng.permutation(2000)[:900], np.repeat([3, 17, 1999], 40)])
    rng.shuffle(index)
    for dtype, signed in ((np.float32, index.astype(np.int32)), (np.float64, index - 2000)):
        values = rng.standard_normal((index.size, 16)).astype(dtype)
        got, want = np.ones((2000, 16), dtype), np.ones((2000, 16), dtype)
        kernels.add_at(got, (signed,), values)  # int32 indices, and negative ones
        np.add.at(want, (index,), values)
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-13)
    assert np.unique(index).size * kernels.SHORT_RUNS > index.size  # short runs on average


def test_add_at_leaves_other_indices_and_errors_to_numpy():
    out = np.zeros((5, 3))
    kernels.add_at(out, (slice(None), np.array([0, 0, 2])), np.ones((5, 3)))
    assert out[:, 0].tolist() == [2.0] * 5 and out[:, 2].tolist() == [1.0] * 5
    kernels.add_at(out, (np.array([1, 1]),), 1.0)  # values broadcast
    assert out[1].tolist() == [4.0, 2.0, 3.0]
    wide = np.zeros((5, 4, 16))
    for bad in (5, -6):  # enough values for the sorted path, one index out of range
        index = np.zeros(300, np.int64)
        index[7] = bad
        with pytest.raises(IndexError):
            kernels.add_at(wide, (index,), np.ones((300, 4, 16)))
    second = np.zeros(300, np.int64)
    second[3] = 4
    with pytest.raises(IndexError):  # out of range in the second axis: never another row
        kernels.add_at(wide, (np.zeros(300, np.int64), second), np.ones((300, 16)))
    assert not wide.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_shifted_is_numpys_exp_exactly(dtype):
    # A masked attention row shifted by its maximum: -inf, underflows to 0 and to subnormals,
    # among ordinary values; and inf and nan, which it leaves to NumPy.
    rng = np.random.default_rng(5)
    special = [-np.inf, -1e30, -800.0, -746.0, -745.2, -745.14, -745.13, -745.1, -740.0,
               -709.0, -708.5, -708.0, -707.9, -1.0, -0.0, 0.0, np.inf, np.nan]  # fmt: skip
    x = np.concatenate([np.repeat(special, 300), rng.uniform(-50, 0, 4000)]).astype(dtype)
    rng.shuffle(x)
    got = kernels.exp_shifted(x.copy())
    np.testing.assert_array_equal(got, np.exp(x))
    assert got.dtype == dtype
