"""The one-row losses over classes (`cross_entropy`, `nll_loss` from class indices) and the
in-place logsumexp: values and gradients against PyTorch for every reduction, weights, ignored
targets, K-dim and 1-D inputs, float32 and float64, non-contiguous logits; second derivatives
and forward mode through the rows; the checks on bad targets still in place."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.errors import DTypeError, OutOfRangeError, ShapeError

RNG = np.random.default_rng(35)

VARIANTS = [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"ignore_index": 2},
    {"ignore_index": 2, "reduction": "none"},
    {"weight": "w"},
    {"weight": "w", "ignore_index": 1, "reduction": "sum"},
]


def _pair(torch, shape, classes, dtype, transposed=False):
    """Leaf logits, the logits given to the loss (a transposed view when ``transposed``) and
    targets, on both libraries."""
    x = RNG.standard_normal(shape[::-1] if transposed else shape).astype(dtype)
    t = RNG.integers(0, classes, size=shape[:1] + shape[2:] if len(shape) > 1 else ())
    if len(shape) == 1:  # one target: class 0, never the ignored one (all ignored: nan)
        t = np.zeros((), np.int64)
    mine, theirs = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    return mine, theirs, cr.tensor(t), torch.tensor(t)


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("options", VARIANTS)
@pytest.mark.parametrize(
    "shape,transposed", [((6, 5), False), ((6, 5), True), ((3, 4, 2, 3), False), ((4,), False)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_class_losses_match_pytorch(torch, name, options, shape, transposed, dtype):
    classes = shape[1] if len(shape) > 1 else shape[0]
    x, tx, t, tt = _pair(torch, shape, classes, dtype, transposed)
    options = dict(options)
    mine_options, their_options = dict(options), dict(options)
    if options.get("weight"):
        w = RNG.uniform(0.5, 2.0, classes).astype(dtype)
        mine_options["weight"], their_options["weight"] = cr.tensor(w), torch.tensor(w)
    given, their_given = (x.T, tx.T) if transposed else (x, tx)
    out = getattr(F, name)(given, t, **mine_options)
    expected = getattr(torch.nn.functional, name)(their_given, tt, **their_options)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert out.dtype == cr.tensor(np.zeros(1, dtype)).dtype
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    g = RNG.standard_normal(tuple(expected.shape)).astype(dtype)
    out.backward(cr.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


def test_cross_entropy_and_nll_loss_are_one_node_each():
    x = cr.randn(4, 3, requires_grad=True)
    for loss in (F.cross_entropy, F.nll_loss):
        node = loss(x, cr.tensor([0, 2, 1, 1])).grad_fn
        # The leaf x itself, straight from the loss's node (weight and scale get no gradient).
        assert node.edges[0] is x and node.edges[1:] == (None, None)


@pytest.mark.parametrize("options", [{}, {"reduction": "none"}, {"ignore_index": 0}])
@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
def test_second_derivatives_and_forward_mode_through_the_rows(name, options):
    x = cr.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    t = cr.tensor([1, 0, 3])
    loss = getattr(F, name)
    assert cr.autograd.gradcheck(lambda x: loss(x, t, **options), (x,))
    assert cr.autograd.gradgradcheck(lambda x: loss(x, t, **options), (x,))
    v = cr.tensor(RNG.standard_normal((3, 4)))
    _, tangent = cr.func.jvp(lambda x: loss(x, t, **options), (x.detach(),), (v,))
    _, pullback = cr.func.vjp(lambda x: loss(x, t, **options), x.detach())
    u = cr.ones_like(tangent)
    (back,) = pullback(u)
    np.testing.assert_allclose(float((tangent * u).sum()), float((back * v).sum()), rtol=1e-10)


def test_label_smoothing_and_probability_targets_still_work(torch):
    x, tx, t, tt = _pair(torch, (5, 4), 4, np.float64)
    for mine, theirs in [
        (
            F.cross_entropy(x, t, label_smoothing=0.2),
            torch.nn.functional.cross_entropy(tx, tt, label_smoothing=0.2),
        ),
        (
            F.cross_entropy(x, x.detach().softmax(1)),
            torch.nn.functional.cross_entropy(tx, tx.detach().softmax(1)),
        ),
    ]:
        np.testing.assert_allclose(mine.item(), theirs.item(), rtol=1e-12)


def test_bad_targets_keep_their_errors():
    x = cr.randn(3, 4)
    with pytest.raises(OutOfRangeError, match="cross_entropy: target 4 is out of range"):
        F.cross_entropy(x, cr.tensor([0, 4, 1]))
    with pytest.raises(OutOfRangeError, match="nll_loss: target -1 is out of range"):
        F.nll_loss(x, cr.tensor([0, -1, 1]))
    with pytest.raises(ShapeError, match="expected target shape"):
        F.cross_entropy(x, cr.tensor([0, 1]))
    with pytest.raises(DTypeError, match="class-index targets must be integers"):
        F.nll_loss(x, cr.tensor([0.0, 1.0, 1.0]))


def test_every_target_ignored_gives_nan_as_pytorch(torch):
    x, tx, _, _ = _pair(torch, (2, 3), 3, np.float32)
    mine = F.cross_entropy(x, cr.tensor([1, 1]), ignore_index=1)
    theirs = torch.nn.functional.cross_entropy(tx, torch.tensor([1, 1]), ignore_index=1)
    assert np.isnan(mine.item()) and np.isnan(theirs.item())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logsumexp_and_log_softmax_in_place_keep_pytorchs_values(torch, dtype):
    x = RNG.standard_normal((5, 7)).astype(dtype)
    x[0, :] = -np.inf
    x[1, 2] = np.inf
    x[2, 3] = np.nan
    for dim in (0, 1, (0, 1)):
        np.testing.assert_allclose(
            cr.tensor(x).logsumexp(dim).numpy(),
            torch.tensor(x).logsumexp(dim).numpy(),
            rtol=1e-6,
        )
    y = x[3:].T  # non-contiguous, finite
    np.testing.assert_allclose(
        cr.tensor(y).log_softmax(1).numpy(), torch.tensor(y).log_softmax(1).numpy(), rtol=1e-6
    )
    assert cr.tensor(np.float64(2.0)).logsumexp(0).item() == 2.0
