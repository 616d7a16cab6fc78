"""The fast forms of convolution, batch norm and global average pooling against PyTorch: stride-1
convolutions through unfold's wide columns, 1x1 kernels without im2col, batch norm as a
per-channel scale and shift, adaptive average pooling to one element as a mean. Values and
gradients in float32 and float64, non-contiguous inputs, second derivatives."""

import numpy as np
import pytest

import chainrule
import chainrule.nn.functional as F
from chainrule.ops import conv

RNG = np.random.default_rng(35)
F64 = {"atol": 1e-10, "rtol": 1e-9}
F32 = {"atol": 2e-5, "rtol": 2e-4}
# PyTorch warns that its own 'same' padding of an even kernel copies the input.
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


def _compare(fn, torch_fn, arrays, torch, tol):
    """fn and torch_fn on the same arrays: the same value (and dtype), the same gradients."""
    ours = [chainrule.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = fn(*ours), torch_fn(*theirs)
    assert out.shape == tuple(expected.shape)
    assert out.dtype == arrays[0].dtype
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **tol)
    cotangent = RNG.standard_normal(out.shape).astype(arrays[0].dtype)
    out.backward(chainrule.tensor(cotangent))
    expected.backward(torch.tensor(cotangent))
    for t, e in zip(ours, theirs):
        assert t.grad.dtype == t.dtype
        np.testing.assert_allclose(t.grad.numpy(), e.grad.numpy(), **tol)


def _arrays(dtype, *shapes):
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


CONVS = [  # (input, weight, keywords): stride 1 (wide columns), 1x1 kernels, strided, groups
    ((4, 6, 9, 7), (5, 6, 3, 3), {"padding": 1}),
    ((4, 6, 9, 7), (5, 6, 3, 2), {"padding": (2, 0), "dilation": (1, 2)}),
    ((2, 4, 6, 6), (4, 2, 3, 3), {"padding": "same", "groups": 2}),
    ((2, 4, 6, 5), (3, 4, 2, 2), {"padding": "same"}),  # an odd extra row and column after
    ((3, 4, 5, 5), (6, 4, 1, 1), {}),
    ((3, 4, 7, 6), (6, 4, 1, 1), {"stride": 2}),
    ((3, 4, 5, 5), (6, 4, 1, 1), {"padding": 1}),
    ((3, 4, 5, 5), (4, 2, 1, 1), {"stride": (1, 2), "groups": 2}),
    ((3, 4, 9, 8), (5, 4, 3, 3), {"stride": 2, "padding": 1}),
    ((1, 2, 3, 3), (2, 2, 3, 3), {}),  # one window
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("x_shape, w_shape, keywords", CONVS)
def test_conv2d_matches_pytorch(x_shape, w_shape, keywords, bias, dtype, torch):
    shapes = [x_shape, w_shape] + ([(w_shape[0],)] if bias else [])
    tol = F64 if dtype == np.float64 else F32
    _compare(
        lambda *a: F.conv2d(*a, **keywords),
        lambda *a: torch.nn.functional.conv2d(*a, **keywords),
        _arrays(dtype, *shapes),
        torch,
        tol,
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "keywords", [{"padding": 2}, {"padding": "same", "dilation": 2}, {}, {"stride": 3}]
)
def test_conv1d_matches_pytorch(keywords, dtype, torch):
    tol = F64 if dtype == np.float64 else F32
    _compare(
        lambda x, w, b: F.conv1d(x, w, b, **keywords),
        lambda x, w, b: torch.nn.functional.conv1d(x, w, b, **keywords),
        _arrays(dtype, (3, 4, 11), (5, 4, 3), (5,)),
        torch,
        tol,
    )


def test_conv2d_of_non_contiguous_input_and_weight(torch):
    x = RNG.standard_normal((6, 3, 8, 5)).transpose(1, 0, 3, 2)  # (3, 6, 5, 8), strided
    w = RNG.standard_normal((3, 6, 4, 3))[:, :, ::2]  # (3, 6, 2, 3), strided
    for keywords in ({"padding": 1}, {"stride": 2}):
        _compare(
            lambda a, b, k=keywords: F.conv2d(a, b, **k),
            lambda a, b, k=keywords: torch.nn.functional.conv2d(a, b, **k),
            [x, w],
            torch,
            F64,
        )
    w1 = RNG.standard_normal((4, 6, 2, 1))[:, :, :1]  # a 1x1 kernel, strided
    _compare(
        lambda a, b: F.conv2d(a, b, stride=(2, 1)),
        lambda a, b: torch.nn.functional.conv2d(a, b, stride=(2, 1)),
        [x, w1],
        torch,
        F64,
    )


def test_unbatched_conv2d_with_wide_columns(torch):
    x, w = _arrays(np.float64, (2, 5, 4), (3, 2, 3, 3))
    _compare(
        lambda a, b: F.conv2d(a, b, padding=1),
        lambda a, b: torch.nn.functional.conv2d(a, b, padding=1),
        [x, w],
        torch,
        F64,
    )


@pytest.mark.parametrize("keywords", [{"padding": 1, "dilation": (2, 1)}, {"stride": 2}, {}])
def test_conv2d_second_derivatives(keywords):
    x, w, b = (chainrule.tensor(a, requires_grad=True) for a in _arrays(np.float64,
               (2, 2, 5, 4), (3, 2, 3, 3) if keywords else (3, 2, 1, 1), (3,)))  # fmt: skip
    fn = lambda x, w, b: F.conv2d(x, w, b, **keywords)  # noqa: E731
    assert chainrule.gradcheck(fn, [x, w, b], atol=1e-6, rtol=1e-5)
    assert chainrule.gradgradcheck(fn, [x, w, b], atol=1e-6, rtol=1e-5)


def test_wide_unfold_and_fold_are_adjoint():
    """<unfold(x), c> == <x, fold(c)> for the wide columns, with padding and dilation."""
    params = dict(kernel_size=(2, 3), dilation=(2, 1), padding=((1, 0), (2, 1)), stride=(1, 1))
    x = RNG.standard_normal((2, 3, 6, 5))
    cols = conv._unfold(x, wide=True, **params)
    assert cols.shape == (2, 3 * 6, (6 + 1 - 2) * (5 + 3))
    c = RNG.standard_normal(cols.shape)
    folded = conv._fold(c, output_size=(6, 5), wide=True, **params)
    np.testing.assert_allclose(np.vdot(cols, c), np.vdot(x, folded), rtol=1e-12)


def test_conv2d_errors_unchanged():
    x, w = chainrule.zeros(1, 4, 5, 5), chainrule.zeros(2, 4, 3, 3)
    with pytest.raises(chainrule.ShapeError, match="conv2d"):
        F.conv2d(x, chainrule.zeros(2, 3, 3, 3), padding=1)
    with pytest.raises(chainrule.DTypeError, match="conv2d"):
        F.conv2d(x, w.double(), padding=1)
    with pytest.raises(chainrule.ShapeError, match="conv2d"):
        F.conv2d(chainrule.zeros(1, 4, 2, 2), w)
    with pytest.raises(chainrule.DomainError, match="conv2d"):
        F.conv2d(x, chainrule.zeros(2, 4, 1, 1), stride=0)


# Batch norm.


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(6, 3, 4, 5), (5, 4), (4, 2, 7)])
def test_batch_norm_training_matches_pytorch(shape, affine, dtype, torch):
    tol = F64 if dtype == np.float64 else F32
    c = shape[1]
    x = (RNG.standard_normal(shape) * 3 + 2).astype(dtype)
    params = _arrays(dtype, (c,), (c,)) if affine else []
    stats = [RNG.standard_normal(c).astype(dtype), RNG.uniform(0.5, 2, c).astype(dtype)]
    ours = [chainrule.tensor(s.copy()) for s in stats]
    theirs = [torch.tensor(s.copy()) for s in stats]
    _compare(
        lambda x, *wb: F.batch_norm(x, *ours, *(wb or (None, None)), True, 0.3, 1e-3),
        lambda x, *wb: torch.nn.functional.batch_norm(
            x, *theirs, *(wb or (None, None)), True, 0.3, 1e-3
        ),
        [x, *params],
        torch,
        tol,
    )
    for mine, expected in zip(ours, theirs):
        assert mine.dtype == expected.numpy().dtype
        np.testing.assert_allclose(mine.numpy(), expected.numpy(), **tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batch_norm_eval_matches_pytorch(dtype, torch):
    tol = F64 if dtype == np.float64 else F32
    stats = [RNG.standard_normal(3).astype(dtype), RNG.uniform(0.5, 2, 3).astype(dtype)]
    _compare(
        lambda x, w, b: F.batch_norm(x, *map(chainrule.tensor, stats), w, b),
        lambda x, w, b: torch.nn.functional.batch_norm(x, *map(torch.tensor, stats), w, b),
        _arrays(dtype, (4, 3, 5, 2), (3,), (3,)),
        torch,
        tol,
    )


def test_batch_norm_non_contiguous_input_and_second_derivatives(torch):
    x = RNG.standard_normal((5, 6, 3, 4)).transpose(0, 3, 2, 1)  # (5, 4, 3, 6), strided
    _compare(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        lambda x, w, b: torch.nn.functional.batch_norm(x, None, None, w, b, training=True),
        [x, *_arrays(np.float64, (4,), (4,))],
        torch,
        F64,
    )
    inputs = [chainrule.tensor(a, requires_grad=True) for a in
              _arrays(np.float64, (4, 2, 3), (2,), (2,))]  # fmt: skip
    fn = lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)  # noqa: E731
    assert chainrule.gradcheck(fn, inputs, atol=1e-6, rtol=1e-5)
    assert chainrule.gradgradcheck(fn, inputs, atol=1e-6, rtol=1e-5)


# Global average pooling.


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "name, shape, size",
    [
        ("adaptive_avg_pool2d", (4, 3, 5, 6), 1),
        ("adaptive_avg_pool2d", (3, 5, 6), (1, 1)),
        ("adaptive_avg_pool1d", (4, 3, 7), 1),
        ("adaptive_avg_pool3d", (2, 3, 4, 5, 2), 1),
        ("adaptive_avg_pool2d", (4, 3, 5, 6), (1, None)),  # not every size 1: the matmuls
    ],
)
def test_global_average_pooling_matches_pytorch(name, shape, size, dtype, torch):
    tol = F64 if dtype == np.float64 else F32
    _compare(
        lambda x: getattr(F, name)(x, size),
        lambda x: getattr(torch.nn.functional, name)(x, size),
        _arrays(dtype, shape),
        torch,
        tol,
    )


def test_global_average_pooling_non_contiguous_and_second_derivatives(torch):
    x = RNG.standard_normal((3, 6, 5, 4)).transpose(0, 3, 1, 2)
    _compare(
        lambda x: F.adaptive_avg_pool2d(x, 1),
        lambda x: torch.nn.functional.adaptive_avg_pool2d(x, 1),
        [x],
        torch,
        F64,
    )
    x = chainrule.tensor(RNG.standard_normal((2, 3, 4, 4)), requires_grad=True)
    fn = lambda x: F.adaptive_avg_pool2d(x, 1) ** 2  # noqa: E731
    assert chainrule.gradcheck(fn, [x], atol=1e-6, rtol=1e-5)
    assert chainrule.gradgradcheck(fn, [x], atol=1e-6, rtol=1e-5)
    with pytest.raises(chainrule.DTypeError, match="adaptive_avg_pool2d"):
        F.adaptive_avg_pool2d(chainrule.zeros(1, 2, 3, 3, dtype=chainrule.int64), 1)


# Average pooling over windows that tile the input.


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "name, shape, args, keywords",
    [
        ("avg_pool2d", (3, 4, 6, 8), (2,), {}),
        ("avg_pool2d", (3, 4, 7, 9), ((2, 3),), {}),  # rows and columns left over
        ("avg_pool2d", (4, 7, 9), (2,), {"ceil_mode": True}),  # partial windows: unfold
        ("avg_pool2d", (3, 4, 6, 8), (2,), {"divisor_override": 3}),
        ("avg_pool2d", (3, 4, 6, 8), (2, 2, 1), {"count_include_pad": False}),
        ("avg_pool1d", (3, 4, 9), (3,), {}),
    ],
)
def test_tiled_average_pooling_matches_pytorch(name, shape, args, keywords, dtype, torch):
    tol = F64 if dtype == np.float64 else F32
    _compare(
        lambda x: getattr(F, name)(x, *args, **keywords),
        lambda x: getattr(torch.nn.functional, name)(x, *args, **keywords),
        _arrays(dtype, shape),
        torch,
        tol,
    )


def test_tiled_average_pooling_non_contiguous_and_second_derivatives(torch):
    x = RNG.standard_normal((3, 6, 4, 8)).transpose(0, 2, 3, 1)
    _compare(
        lambda x: F.avg_pool2d(x, 2),
        lambda x: torch.nn.functional.avg_pool2d(x, 2),
        [x],
        torch,
        F64,
    )
    x = chainrule.tensor(RNG.standard_normal((2, 2, 4, 6)), requires_grad=True)
    fn = lambda x: F.avg_pool2d(x, (2, 3)) ** 2  # noqa: E731
    assert chainrule.gradcheck(fn, [x], atol=1e-6, rtol=1e-5)
    assert chainrule.gradgradcheck(fn, [x], atol=1e-6, rtol=1e-5)


def test_wide_convolution_under_vmap_and_forward_mode(torch):
    """The wide unfold and fold rows batch (vmap) and push tangents (jvp): vmap over a batch of
    batches is one convolution of them all; conv2d is bilinear, so its JVP is
    conv2d(dx, w) + conv2d(x, dw)."""
    x, w, dx, dw = _arrays(np.float64, (3, 2, 2, 5, 4), (3, 2, 3, 3), (2, 2, 5, 4), (3, 2, 3, 3))
    keywords = {"padding": (0, 2), "dilation": (1, 2)}

    def conv2d(a, b):
        return torch.nn.functional.conv2d(torch.tensor(a), torch.tensor(b), **keywords)

    mapped = chainrule.func.vmap(lambda a: F.conv2d(a, chainrule.tensor(w), **keywords))
    expected = conv2d(x.reshape(6, 2, 5, 4), w).numpy()
    np.testing.assert_allclose(
        mapped(chainrule.tensor(x)).numpy(), expected.reshape(3, 2, *expected.shape[1:]), **F64
    )
    out, tangent = chainrule.func.jvp(
        lambda a, b: F.conv2d(a, b, **keywords),
        [chainrule.tensor(x[0]), chainrule.tensor(w)],
        [chainrule.tensor(dx), chainrule.tensor(dw)],
    )
    np.testing.assert_allclose(out.numpy(), conv2d(x[0], w).numpy(), **F64)
    expected_tangent = conv2d(dx, w).numpy() + conv2d(x[0], dw).numpy()
    np.testing.assert_allclose(tangent.numpy(), expected_tangent, **F64)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "args, keywords",
    [((3, 2, 1), {}), ((2,), {}), ((3, 1), {"dilation": 2}), ((2, 2), {"ceil_mode": True})],
)
def test_max_pooling_matches_pytorch(args, keywords, dtype, torch):
    x = RNG.standard_normal((3, 6, 9, 7)).transpose(0, 1, 3, 2).astype(dtype)  # strided
    _compare(
        lambda a: F.max_pool2d(a, *args, **keywords),
        lambda a: torch.nn.functional.max_pool2d(a, *args, **keywords),
        [x],
        torch,
        F64 if dtype == np.float64 else F32,
    )
