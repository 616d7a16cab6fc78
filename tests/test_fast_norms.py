"""The normalisation and binary cross-entropy rows through their functions: batch norm in
training (statistics computed once, running statistics updated in place), layer norm with its
weight and bias, binary_cross_entropy and its logits form. Values, gradients and running
statistics against PyTorch, float32 and float64, contiguous and not; second derivatives by
gradgradcheck; the paths that stay composed (pos_weight, running statistics that require
grad, a broadcast weight) as before. tests/test_compile_nn.py replays BatchNorm layers."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F

RNG = np.random.default_rng(35)
DTYPES = [np.float32, np.float64]
TOL = {np.float32: {"rtol": 2e-5, "atol": 2e-5}, np.float64: {"rtol": 1e-10, "atol": 1e-10}}


def _pair(torch, array, grad=True):
    """The same array as a chainrule and a PyTorch leaf."""
    return cr.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad)


def _close(mine, theirs, dtype):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), **TOL[dtype])


def _backward(out, lib):
    """Backward from sum(out * fixed weights), the same weights on both libraries."""
    weights = (
        np.cos(np.arange(out.numel())).reshape(tuple(out.shape)).astype(out.detach().numpy().dtype)
    )
    (out * lib.tensor(weights)).sum().backward()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(8, 4, 5, 3), (6, 3, 7), (5, 2)])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_matches_pytorch(torch, dtype, shape, transposed, affine):
    array = (RNG.standard_normal(shape) * 2 + 1).astype(dtype)
    if transposed:  # the same values, as a view with other strides
        array = np.ascontiguousarray(np.swapaxes(array, 0, -1)).swapaxes(0, -1)
    x, tx = _pair(torch, array)
    channels = shape[1]
    w, tw = _pair(torch, RNG.standard_normal(channels).astype(dtype))
    b, tb = _pair(torch, RNG.standard_normal(channels).astype(dtype))
    mean, tmean = (
        cr.tensor(np.full(channels, 0.5, dtype)),
        torch.full((channels,), 0.5).to(getattr(torch, np.dtype(dtype).name)),
    )
    var, tvar = cr.tensor(np.full(channels, 2.0, dtype)), tmean * 0 + 2.0
    args = (w, b) if affine else (None, None)
    targs = (tw, tb) if affine else (None, None)
    out = F.batch_norm(x, mean, var, *args, training=True, momentum=0.3)
    theirs = torch.nn.functional.batch_norm(tx, tmean, tvar, *targs, training=True, momentum=0.3)
    _close(out, theirs, dtype)
    _close(mean, tmean, dtype)
    _close(var, tvar, dtype)
    _backward(out, cr), _backward(theirs, torch)
    _close(x.grad, tx.grad, dtype)
    if affine:
        _close(w.grad, tw.grad, dtype)
        _close(b.grad, tb.grad, dtype)
    assert out.dtype == x.dtype and x.grad.dtype == x.dtype


def test_batch_norm_training_second_derivatives_and_forward_mode():
    x = cr.tensor(RNG.standard_normal((4, 3, 2)), requires_grad=True)
    w = cr.tensor(RNG.standard_normal(3), requires_grad=True)
    b = cr.tensor(RNG.standard_normal(3), requires_grad=True)

    def fn(x, w, b):
        return F.batch_norm(x, None, None, w, b, training=True)

    assert cr.autograd.gradcheck(fn, (x, w, b))
    assert cr.autograd.gradgradcheck(fn, (x, w, b))
    tangents = tuple(cr.tensor(RNG.standard_normal(t.shape)) for t in (x, w, b))
    _, tangent = cr.func.jvp(fn, (x.detach(), w.detach(), b.detach()), tangents)
    u = RNG.standard_normal((4, 3, 2))
    _, pullback = cr.func.vjp(fn, x.detach(), w.detach(), b.detach())
    cotangents = pullback(cr.tensor(u))
    expected = sum(float((c * t).sum()) for c, t in zip(cotangents, tangents))
    assert float((tangent * cr.tensor(u)).sum()) == pytest.approx(expected, rel=1e-10)


def test_batch_norm_keeps_its_errors(torch):
    with pytest.raises(cr.errors.DomainError, match="more than 1 value per channel"):
        F.batch_norm(cr.ones(1, 3), cr.zeros(3), cr.ones(3), training=True)
    with pytest.raises(cr.errors.ShapeError, match="running_mean has shape"):
        F.batch_norm(cr.ones(4, 3), cr.zeros(2), cr.ones(3), training=True)
    with pytest.raises(cr.errors.DomainError, match="needed when training=False"):
        F.batch_norm(cr.ones(4, 3), None, cr.ones(3), training=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_eval_matches_pytorch(torch, dtype, transposed, affine):
    array = RNG.standard_normal((5, 3, 4, 2)).astype(dtype)
    if transposed:
        array = np.ascontiguousarray(np.swapaxes(array, 0, 2)).swapaxes(0, 2)
    x, tx = _pair(torch, array)
    w, tw = _pair(torch, RNG.standard_normal(3).astype(dtype))
    b, tb = _pair(torch, RNG.standard_normal(3).astype(dtype))
    mean, var = RNG.standard_normal(3).astype(dtype), RNG.uniform(0.5, 2, 3).astype(dtype)
    args, targs = ((w, b), (tw, tb)) if affine else ((None, None), (None, None))
    out = F.batch_norm(x, cr.tensor(mean), cr.tensor(var), *args, training=False)
    theirs = torch.nn.functional.batch_norm(tx, torch.tensor(mean), torch.tensor(var), *targs)
    _close(out, theirs, dtype)
    _backward(out, cr), _backward(theirs, torch)
    for mine, ref in zip((x, *args), (tx, *targs)):
        if mine is not None:
            _close(mine.grad, ref.grad, dtype)


def test_batch_norm_eval_second_derivatives_and_statistics_that_require_grad():
    x = cr.tensor(RNG.standard_normal((4, 3, 2)), requires_grad=True)
    w = cr.tensor(RNG.standard_normal(3), requires_grad=True)
    b = cr.tensor(RNG.standard_normal(3), requires_grad=True)
    mean, var = cr.tensor(RNG.standard_normal(3)), cr.tensor(RNG.uniform(0.5, 2, 3))

    def fn(x, w, b):
        return F.batch_norm(x, mean, var, w, b, training=False)

    assert cr.autograd.gradgradcheck(fn, (x, w, b))
    # Statistics that require grad take the composed ops, which give them gradients.
    mean.requires_grad_(), var.requires_grad_()
    assert cr.autograd.gradcheck(
        lambda m, v: F.batch_norm(x.detach(), m, v, w.detach(), b.detach()), (mean, var)
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", ["both", "weight", "bias"])
@pytest.mark.parametrize("transposed", [False, True])
def test_layer_norm_with_weight_or_bias_matches_pytorch(torch, dtype, which, transposed):
    array = RNG.standard_normal((5, 4, 6)).astype(dtype)
    if transposed:
        array = np.ascontiguousarray(array.swapaxes(0, 1)).swapaxes(0, 1)
    x, tx = _pair(torch, array)
    w, tw = _pair(torch, RNG.standard_normal((4, 6)).astype(dtype))
    b, tb = _pair(torch, RNG.standard_normal((4, 6)).astype(dtype))
    args = {"both": (w, b), "weight": (w, None), "bias": (None, b)}[which]
    targs = {"both": (tw, tb), "weight": (tw, None), "bias": (None, tb)}[which]
    out = F.layer_norm(x, (4, 6), *args)
    theirs = torch.nn.functional.layer_norm(tx, (4, 6), *targs)
    _close(out, theirs, dtype)
    _backward(out, cr), _backward(theirs, torch)
    for mine, ref in zip((x, *args), (tx, *targs)):
        if mine is not None:
            _close(mine.grad, ref.grad, dtype)


def test_layer_norm_second_derivatives_and_a_broadcast_weight():
    x = cr.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    w = cr.tensor(RNG.standard_normal(4), requires_grad=True)
    b = cr.tensor(RNG.standard_normal(4), requires_grad=True)
    assert cr.autograd.gradgradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), (x, w, b))
    # A weight of another shape than normalized_shape broadcasts as before (no row).
    wide = cr.tensor(RNG.standard_normal((3, 4)))
    expected = F.layer_norm(x, (4,)) * wide
    np.testing.assert_array_equal(F.layer_norm(x, (4,), wide).detach().numpy(),
                                  expected.detach().numpy())  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropies_match_pytorch(torch, dtype, reduction, weighted):
    probabilities = RNG.uniform(0.02, 0.98, (7, 5)).astype(dtype)
    logits = (RNG.standard_normal((5, 7)) * 4).astype(dtype).T  # a transposed view
    target = RNG.uniform(0, 1, (7, 5)).astype(dtype)
    weight = RNG.uniform(0.5, 2, (7, 5)).astype(dtype) if weighted else None
    for name, array in (("binary_cross_entropy", probabilities),
                        ("binary_cross_entropy_with_logits", logits)):  # fmt: skip
        x, tx = _pair(torch, array)
        t, tt = _pair(torch, target)
        extra = {} if weight is None else {"weight": cr.tensor(weight)}
        textra = {} if weight is None else {"weight": torch.tensor(weight)}
        out = getattr(F, name)(x, t, reduction=reduction, **extra)
        theirs = getattr(torch.nn.functional, name)(tx, tt, reduction=reduction, **textra)
        _close(out, theirs, dtype)
        _backward(out.reshape(-1), cr), _backward(theirs.reshape(-1), torch)
        _close(x.grad, tx.grad, dtype)
        _close(t.grad, tt.grad, dtype)


def test_binary_cross_entropy_at_the_clamp_and_with_pos_weight(torch):
    x = cr.tensor([0.0, 1.0, 0.5], requires_grad=True)
    t = cr.tensor([0.25, 0.75, 1.0])
    loss = F.binary_cross_entropy(x, t, reduction="none")
    theirs = torch.nn.functional.binary_cross_entropy(
        torch.tensor([0.0, 1.0, 0.5]), torch.tensor([0.25, 0.75, 1.0]), reduction="none"
    )
    np.testing.assert_allclose(loss.detach().numpy(), theirs.numpy(), rtol=1e-6)
    loss.sum().backward()
    # Where a log's clamp acts its term has no slope: the other term's alone remains.
    np.testing.assert_allclose(x.grad.numpy(), [0.75, -0.75, -2.0], rtol=1e-6)
    with pytest.raises(cr.errors.DomainError, match="must lie in"):
        F.binary_cross_entropy(cr.tensor([1.5]), cr.tensor([1.0]))
    z, tz = _pair(torch, RNG.standard_normal((4, 3)))
    target, pos = RNG.uniform(0, 1, (4, 3)), RNG.uniform(0.5, 3, 3)
    out = F.binary_cross_entropy_with_logits(z, cr.tensor(target), pos_weight=cr.tensor(pos))
    theirs = torch.nn.functional.binary_cross_entropy_with_logits(
        tz, torch.tensor(target), pos_weight=torch.tensor(pos)
    )
    _close(out, theirs, np.float64)
    big = cr.tensor([-1000.0, 1000.0])
    np.testing.assert_allclose(
        F.binary_cross_entropy_with_logits(big, cr.tensor([1.0, 0.0]), reduction="none").numpy(),
        [1000.0, 1000.0],
    )
