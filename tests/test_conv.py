"""Convolution and pooling (chainrule.ops.conv, chainrule.ops.pooling) against PyTorch in float64:
values and gradients over a grid of arguments, second derivatives, errors. Their modules are
tested in test_nn_conv.py and test_nn_pooling.py."""

import itertools

import numpy as np
import pytest
from conftest import TORCH_TOL

import chainrule
from chainrule import DomainError, DTypeError, ShapeError
from chainrule.ops import conv, pooling

RNG = np.random.default_rng(0)


def _compare(fn, torch_fn, arrays, torch, tol=TORCH_TOL):
    """fn on chainrule tensors and torch_fn on torch tensors: same value, same gradients."""
    ours = [chainrule.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = fn(*ours), torch_fn(*theirs)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), **tol)
    cotangent = RNG.standard_normal(out.shape)
    out.backward(chainrule.tensor(cotangent))
    expected.backward(torch.tensor(cotangent))
    for t, e in zip(ours, theirs):
        np.testing.assert_allclose(t.grad.data, e.grad.numpy(), **tol)


def _conv_grid():
    for stride, padding, dilation, groups, bias in itertools.product(
        (1, 2, (2, 1)), (0, 1, (2, 0), "valid", "same"), (1, 2, (1, 2)), (1, 2), (True, False)
    ):
        if padding == "same" and stride != 1:
            continue
        yield stride, padding, dilation, groups, bias


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize(("stride", "padding", "dilation", "groups", "bias"), list(_conv_grid()))
def test_conv2d_matches_pytorch(stride, padding, dilation, groups, bias, torch):
    arrays = [RNG.standard_normal((2, 4, 7, 6)), RNG.standard_normal((6, 4 // groups, 3, 2))]
    if bias:
        arrays.append(RNG.standard_normal(6))
    options = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    _compare(
        lambda *ts: conv.conv2d(*ts, **options),
        lambda *ts: torch.nn.functional.conv2d(*ts, **options),
        arrays,
        torch,
    )


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize(
    ("stride", "padding", "dilation", "groups"),
    [(1, 0, 1, 1), (2, 1, 1, 2), (3, 2, 2, 1), (1, "same", 2, 2), (1, "same", 1, 1),
     (2, "valid", 3, 4)],
)  # fmt: skip
@pytest.mark.parametrize("batched", [True, False])
def test_conv1d_matches_pytorch(stride, padding, dilation, groups, batched, torch):
    x = RNG.standard_normal((2, 4, 11) if batched else (4, 11))
    arrays = [x, RNG.standard_normal((4, 4 // groups, 2)), RNG.standard_normal(4)]
    options = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    _compare(
        lambda *ts: conv.conv1d(*ts, **options),
        lambda *ts: torch.nn.functional.conv1d(*ts, **options),
        arrays,
        torch,
    )


def test_conv2d_takes_unbatched_input(torch):
    arrays = [RNG.standard_normal((3, 5, 5)), RNG.standard_normal((2, 3, 2, 2))]
    _compare(
        lambda x, w: conv.conv2d(x, w, padding=1), lambda x, w: torch.conv2d(x, w, padding=1),
        arrays, torch,
    )  # fmt: skip
    assert conv.conv2d(chainrule.zeros(3, 5, 5), chainrule.zeros(2, 3, 2, 2)).shape == (2, 4, 4)


def test_conv2d_second_derivatives_match_pytorch(torch):
    x, w, b = (
        RNG.standard_normal((2, 4, 6, 5)),
        RNG.standard_normal((4, 2, 3, 2)),
        RNG.standard_normal(4),
    )
    options = dict(stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    ours = [chainrule.tensor(a, requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = conv.conv2d(*ours, **options)
    expected = torch.nn.functional.conv2d(*theirs, **options)
    # A nonlinear loss, so the second derivative involves the output itself.
    grads = chainrule.autograd.grad((out * out).sum(), ours, create_graph=True)
    expected_grads = torch.autograd.grad((expected * expected).sum(), theirs, create_graph=True)
    vectors = [RNG.standard_normal(a.shape) for a in (x, w, b)]
    total = sum((g * chainrule.tensor(v)).sum() for g, v in zip(grads, vectors))
    expected_total = sum((g * torch.tensor(v)).sum() for g, v in zip(expected_grads, vectors))
    second = chainrule.autograd.grad(total, ours)
    expected_second = torch.autograd.grad(expected_total, theirs)
    for s, e in zip(second, expected_second):
        np.testing.assert_allclose(s.data, e.numpy(), **TORCH_TOL)


def test_conv2d_passes_gradcheck_and_gradgradcheck():
    inputs = [chainrule.tensor(RNG.standard_normal(s), requires_grad=True)
              for s in ((1, 2, 4, 4), (2, 1, 2, 3), (2,))]  # fmt: skip

    def fn(x, w, b):
        return conv.conv2d(x, w, b, stride=(1, 2), padding=(1, 0), groups=2).tanh()

    assert chainrule.gradcheck(fn, inputs, atol=1e-6, rtol=1e-5)
    assert chainrule.gradgradcheck(fn, inputs, atol=1e-6, rtol=1e-5)


def test_pooling_passes_gradgradcheck():
    x = chainrule.tensor(RNG.permutation(50).reshape(2, 5, 5) / 10.0, requires_grad=True)

    def fn(x):
        pooled = pooling.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)
        return (pooled * pooling.avg_pool2d(x, 3, 2, 1, ceil_mode=True)).sin()

    assert chainrule.gradgradcheck(fn, [x], atol=1e-6, rtol=1e-5)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_forward_mode_matches_pytorch_jvp(torch):
    x, w = RNG.standard_normal((1, 2, 5, 5)), RNG.standard_normal((3, 2, 2, 2))
    dx, dw = RNG.standard_normal(x.shape), RNG.standard_normal(w.shape)

    def ours(x, w):
        return pooling.max_pool2d(conv.conv2d(x, w, padding=1), 2, ceil_mode=True)

    def theirs(x, w):
        y = torch.nn.functional.conv2d(x, w, padding=1)
        return torch.nn.functional.max_pool2d(y, 2, ceil_mode=True)

    _, tangent = chainrule.func.jvp(
        ours,
        [chainrule.tensor(x), chainrule.tensor(w)],
        [chainrule.tensor(dx), chainrule.tensor(dw)],
    )
    _, expected = torch.func.jvp(
        theirs, (torch.tensor(x), torch.tensor(w)), (torch.tensor(dx), torch.tensor(dw))
    )
    np.testing.assert_allclose(tangent.data, expected.numpy(), **TORCH_TOL)


# Pooling.


def _pool_grid():
    # kernel, stride, padding, dilation, ceil_mode
    return itertools.product((2, 3, (3, 2)), (None, 1, 2, (2, 1)), (0, 1), (1, 2), (False, True))


@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation", "ceil_mode"), list(_pool_grid())
)
def test_max_pool2d_matches_pytorch(kernel, stride, padding, dilation, ceil_mode, torch):
    x = RNG.standard_normal((2, 3, 7, 6))
    options = dict(stride=stride, padding=padding, dilation=dilation, ceil_mode=ceil_mode)
    _compare(
        lambda x: pooling.max_pool2d(x, kernel, **options),
        lambda x: torch.nn.functional.max_pool2d(x, kernel, **options),
        [x],
        torch,
    )
    _, indices = pooling.max_pool2d(chainrule.tensor(x), kernel, **options, return_indices=True)
    _, expected = torch.nn.functional.max_pool2d(torch.tensor(x), kernel, **options,
                                                 return_indices=True)  # fmt: skip
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices.data, expected.numpy())


def test_max_pool2d_gives_tied_gradient_to_the_first_maximum_as_pytorch(torch):
    # Few distinct values: almost every window has ties, and windows overlap.
    x = RNG.integers(0, 3, (2, 2, 6, 6)).astype(np.float64)
    _compare(
        lambda x: pooling.max_pool2d(x, 3, stride=1, padding=1),
        lambda x: torch.nn.functional.max_pool2d(x, 3, stride=1, padding=1),
        [x],
        torch,
    )
    ones = chainrule.ones(1, 1, 2, 2, requires_grad=True)
    pooling.max_pool2d(ones, 2).backward()
    assert ones.grad.data.ravel().tolist() == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("stride", [None, 1])  # windows that tile the input, and overlapping
def test_max_pool2d_passes_nan_on_with_its_gradient_as_pytorch(stride, torch):
    x = RNG.standard_normal((1, 2, 4, 4))
    x[0, 0, 1, 0] = x[0, 1, 2, 3] = np.nan
    _compare(
        lambda x: pooling.max_pool2d(x, 2, stride),
        lambda x: torch.nn.functional.max_pool2d(x, 2, stride),
        [x],
        torch,
    )


def test_max_pool2d_takes_unbatched_input_and_returns_unbatched_indices(torch):
    x = RNG.standard_normal((3, 5, 4))
    out, indices = pooling.max_pool2d(chainrule.tensor(x), 2, padding=1, return_indices=True)
    expected, expected_indices = torch.nn.functional.max_pool2d(
        torch.tensor(x), 2, padding=1, return_indices=True
    )
    np.testing.assert_array_equal(out.data, expected.numpy())
    np.testing.assert_array_equal(indices.data, expected_indices.numpy())


def test_max_pool2d_pools_integer_tensors(torch):
    x = RNG.integers(-9, 9, (1, 2, 5, 5))
    out = pooling.max_pool2d(chainrule.tensor(x), 2, padding=1)
    expected = torch.nn.functional.max_pool2d(torch.tensor(x), 2, padding=1)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.data, expected.numpy())


def _avg_grid():
    # kernel, stride, padding, ceil_mode, count_include_pad
    return itertools.product(
        (2, 3, (3, 2)), (None, 1, 2, (2, 3)), (0, 1), (False, True), (True, False)
    )


@pytest.mark.parametrize(("kernel", "stride", "padding", "ceil_mode", "count_include_pad"),
                         list(_avg_grid()))  # fmt: skip
def test_avg_pool2d_matches_pytorch(kernel, stride, padding, ceil_mode, count_include_pad, torch):
    options = dict(stride=stride, padding=padding, ceil_mode=ceil_mode,
                   count_include_pad=count_include_pad)  # fmt: skip
    _compare(
        lambda x: pooling.avg_pool2d(x, kernel, **options),
        lambda x: torch.nn.functional.avg_pool2d(x, kernel, **options),
        [RNG.standard_normal((2, 3, 7, 6))],
        torch,
    )


@pytest.mark.parametrize("batched", [True, False])
def test_avg_pool2d_divisor_override_and_unbatched_input_match_pytorch(batched, torch):
    x = RNG.standard_normal((2, 3, 5, 6) if batched else (3, 5, 6))
    options = dict(stride=2, padding=1, ceil_mode=True, divisor_override=5)
    _compare(
        lambda x: pooling.avg_pool2d(x, 3, **options),
        lambda x: torch.nn.functional.avg_pool2d(x, 3, **options),
        [x],
        torch,
    )


@pytest.mark.parametrize("spatial", [1, 2, 3])
def test_avg_pool_takes_a_numpy_int_divisor_override_in_every_rank_as_pytorch(spatial, torch):
    # One implementation serves every rank: the 3-D pool once refused np.int64(3).
    x = RNG.standard_normal((2, 3) + (5,) * spatial)
    name = f"avg_pool{spatial}d"
    ours, theirs = getattr(chainrule.nn.functional, name), getattr(torch.nn.functional, name)
    options = dict(stride=2, padding=1, divisor_override=np.int64(3))
    if spatial == 1:  # PyTorch's 1-D pool has no divisor_override: both refuse the keyword
        with pytest.raises(TypeError, match="divisor_override"):
            theirs(torch.tensor(x), 3, **options)
        with pytest.raises(TypeError, match="divisor_override"):
            ours(chainrule.tensor(x), 3, **options)
        return
    _compare(lambda x: ours(x, 3, **options), lambda x: theirs(x, 3, **options), [x], torch)


@pytest.mark.parametrize("output_size", [1, 3, (2, 5), (None, 2), (4, None), (7, 9), (5, 6)])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_avg_pool2d_matches_pytorch(output_size, batched, torch):
    x = RNG.standard_normal((2, 3, 5, 6) if batched else (3, 5, 6))
    _compare(
        lambda x: pooling.adaptive_avg_pool2d(x, output_size),
        lambda x: torch.nn.functional.adaptive_avg_pool2d(x, output_size),
        [x],
        torch,
    )


@pytest.mark.parametrize(
    ("kernel", "dilation", "padding", "stride"),
    [(2, 1, 0, 1), ((2, 3), (1, 2), 1, (2, 1)), (3, 2, 2, 3), (1, 1, 0, 1)],
)
def test_unfold_and_fold_match_pytorch(kernel, dilation, padding, stride, torch):
    options = dict(dilation=dilation, padding=padding, stride=stride)
    x = RNG.standard_normal((2, 3, 7, 6))
    _compare(
        lambda x: conv.unfold(x, kernel, **options),
        lambda x: torch.nn.functional.unfold(x, kernel, **options),
        [x],
        torch,
    )
    cols = torch.nn.functional.unfold(torch.tensor(x), kernel, **options).numpy()
    _compare(
        lambda c: conv.fold(c, (7, 6), kernel, **options),
        lambda c: torch.nn.functional.fold(c, (7, 6), kernel, **options),
        [cols],
        torch,
    )
    np.testing.assert_allclose(
        conv.fold(chainrule.tensor(cols[0]), (7, 6), kernel, **options).data,
        torch.nn.functional.fold(torch.tensor(cols[0]), (7, 6), kernel, **options).numpy(),
        **TORCH_TOL,
    )


def test_unfold_output_never_shares_memory_with_its_input():
    x = chainrule.ones(1, 2, 3, 3)
    cols = conv.unfold(x, 1)
    cols.data[...] = 5.0
    assert x.data.max() == 1.0


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize(
    "fn",
    [
        lambda x, w: conv.conv2d(x, w, padding="same", groups=2),
        lambda x, w: conv.conv1d(x.reshape(2, 4, -1), w.reshape(4, 2, -1), stride=2, groups=2),
        lambda x, w: pooling.max_pool2d(x, 3, 2, 1, ceil_mode=True) * w.sum(),
        lambda x, w: pooling.avg_pool2d(x, 3, 2, 1, ceil_mode=True) * w.sum(),
        lambda x, w: pooling.adaptive_avg_pool2d(x, (2, 3)) * w.sum(),
    ],
)
def test_float32_stays_float32(fn):
    x = chainrule.tensor(RNG.standard_normal((2, 4, 5, 5)).astype(np.float32), requires_grad=True)
    w = chainrule.tensor(RNG.standard_normal((4, 2, 2, 2)).astype(np.float32), requires_grad=True)
    out = fn(x, w)
    assert out.dtype == np.float32
    out.sum().backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32


# Errors.


def _raises(kind, pattern, fn, *args, **kwargs):
    with pytest.raises(kind, match=pattern):
        fn(*args, **kwargs)


def test_conv_errors_name_the_op_and_the_shapes():
    x, w = chainrule.zeros(1, 3, 5, 5), chainrule.zeros(2, 4, 3, 3)
    _raises(ShapeError, r"conv2d: input has 3 channels but weight \(2, 4, 3, 3\) expects 4 "
            r"\(in_channels/groups=4, groups=1\)", conv.conv2d, x, w)  # fmt: skip
    _raises(ShapeError, r"conv2d: groups=2 does not divide the input's 3 channels",
            conv.conv2d, x, chainrule.zeros(2, 1, 3, 3), groups=2)  # fmt: skip
    _raises(ShapeError, r"conv2d: groups=2 does not divide the 3 out_channels of weight "
            r"\(3, 2, 3, 3\)", conv.conv2d, chainrule.zeros(1, 4, 5, 5),
            chainrule.zeros(3, 2, 3, 3), groups=2)  # fmt: skip
    _raises(ShapeError, r"conv2d: kernel size \(7, 7\) with dilation \(1, 1\) spans \(7, 7\), "
            r"larger than the padded input \(7, 5\) \(input \(5, 5\) plus padding\)",
            conv.conv2d, x, chainrule.zeros(2, 3, 7, 7), padding=(1, 0))  # fmt: skip
    _raises(ShapeError, r"conv1d: kernel size \(3,\) with dilation \(2,\) spans \(5,\)",
            conv.conv1d, chainrule.zeros(1, 2, 4), chainrule.ones(1, 2, 3), dilation=2)  # fmt: skip
    _raises(ShapeError, r"conv2d: input must be \(N, C, H, W\) or unbatched \(C, H, W\), got "
            r"shape \(5, 5\)", conv.conv2d, chainrule.zeros(5, 5), w)  # fmt: skip
    _raises(ShapeError, r"conv1d: weight must have shape \(out_channels, in_channels/groups, "
            r"kL\), got \(2, 4, 3, 3\)", conv.conv1d, chainrule.zeros(1, 3, 5), w)  # fmt: skip
    _raises(ShapeError, r"conv2d: bias must have shape \(2,\), one per out_channel, got \(3,\)",
            conv.conv2d, x, chainrule.zeros(2, 3, 3, 3), chainrule.zeros(3))  # fmt: skip
    _raises(DomainError, r"conv2d: padding='same' needs stride 1, got stride \(2, 2\)",
            conv.conv2d, x, chainrule.zeros(2, 3, 3, 3), stride=2, padding="same")  # fmt: skip
    _raises(DomainError, r"conv2d: padding must be 'valid', 'same', an int or a tuple of 2 ints, "
            r"got 'full'", conv.conv2d, x, chainrule.zeros(2, 3, 3, 3), padding="full")  # fmt: skip
    _raises(DomainError, r"conv2d: stride must be positive, got 0",
            conv.conv2d, x, chainrule.zeros(2, 3, 3, 3), stride=0)  # fmt: skip
    _raises(ShapeError, r"conv2d: dilation must be an int or a tuple of 2 ints, got \(1, 2, 3\)",
            conv.conv2d, x, chainrule.zeros(2, 3, 3, 3), dilation=(1, 2, 3))  # fmt: skip
    _raises(DomainError, r"conv2d: groups must be a positive int, got 0",
            conv.conv2d, x, chainrule.zeros(2, 3, 3, 3), groups=0)  # fmt: skip


def test_pooling_and_fold_errors_name_the_op_and_the_problem():
    x = chainrule.zeros(1, 2, 5, 5)
    _raises(DomainError, r"max_pool2d: padding \(2, 2\) must be at most half of kernel_size "
            r"\(3, 3\)", pooling.max_pool2d, x, 3, padding=2)  # fmt: skip
    _raises(ShapeError, r"max_pool2d: input of size \(5, 5\) is too small for kernel_size "
            r"\(7, 7\).*the output would be \(0, 0\)", pooling.max_pool2d, x, 7)  # fmt: skip
    _raises(ShapeError, r"avg_pool2d: input must be \(N, C, H, W\) or unbatched \(C, H, W\), "
            r"got shape \(5,\)", pooling.avg_pool2d, chainrule.zeros(5), 2)  # fmt: skip
    _raises(DTypeError, r"avg_pool2d: needs a floating-point input, got int64",
            pooling.avg_pool2d, chainrule.tensor(np.zeros((1, 4, 4), np.int64)), 2)  # fmt: skip
    _raises(DomainError, r"avg_pool2d: divisor_override must be a nonzero int, got 0",
            pooling.avg_pool2d, x, 2, divisor_override=0)  # fmt: skip
    _raises(DomainError, r"adaptive_avg_pool2d: output_size must be positive, got \(0, 2\)",
            pooling.adaptive_avg_pool2d, x, (0, 2))  # fmt: skip
    _raises(ShapeError, r"adaptive_avg_pool2d: output_size must be an int or a pair",
            pooling.adaptive_avg_pool2d, x, (1, 2, 3))  # fmt: skip
    _raises(ShapeError, r"fold: input of shape \(1, 6, 4\) does not fit: dim -2 must be a "
            r"multiple of kH\*kW = 4 and dim -1 the number of windows, 2 x 2 = 4",
            conv.fold, chainrule.zeros(1, 6, 4), (3, 3), 2)  # fmt: skip
    _raises(ShapeError, r"unfold: kernel size \(4, 4\) with dilation \(1, 1\) spans \(4, 4\), "
            r"larger than the padded input \(3, 3\)",
            conv.unfold, chainrule.ones(1, 3, 3), 4)  # fmt: skip


def test_an_empty_batch_gives_empty_outputs_and_gradients(torch):
    x = chainrule.zeros(0, 2, 5, 5, requires_grad=True)
    w = chainrule.ones(3, 2, 2, 2, requires_grad=True)
    out = conv.conv2d(x, w, padding=1)
    assert out.shape == tuple(
        torch.conv2d(torch.zeros(0, 2, 5, 5), torch.ones(3, 2, 2, 2), padding=1).shape
    )
    (out.sum() + pooling.max_pool2d(x, 2, padding=1).sum()).backward()
    assert x.grad.shape == (0, 2, 5, 5) and w.grad.data.sum() == 0
