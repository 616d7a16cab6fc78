"""The activations, dropouts and losses of nn (modules, functional forms, torch.* re-exports)
against PyTorch: values and gradients in float64, reductions, edge cases, errors; the random
ones by their masks and moments."""

import re

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn as nn
import chainrule.nn.functional as F
from chainrule.errors import DomainError, DTypeError, GraphError, OutOfRangeError, ShapeError

RNG = np.random.default_rng(0)


def _pair(torch, *arrays, grad=None):
    """Each array as a chainrule and a torch tensor (float ones requiring grad by default)."""
    ours, theirs = [], []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        needs = a.dtype.kind == "f" if grad is None else i in grad
        ours.append(cr.tensor(a, requires_grad=needs))
        theirs.append(torch.tensor(a, requires_grad=needs))
    return ours, theirs


def _check(torch, ours_fn, theirs_fn, *arrays, grad=None, rtol=1e-10, atol=1e-12):
    """Values, and the gradients of sum(out * w) for a fixed random w, agree."""
    ours, theirs = _pair(torch, *arrays, grad=grad)
    out, expected = ours_fn(*ours), theirs_fn(*theirs)
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=rtol, atol=atol)
    weights = np.random.default_rng(1).uniform(0.5, 1.5, np.shape(out.data))
    (out * cr.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        if b.requires_grad:
            np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=rtol, atol=atol)


# Activations: modules, in-place forms, random slopes.


def test_activation_modules_match_pytorch_values_gradients_and_reprs(torch):
    x = RNG.normal(0, 3, (2, 3, 4, 5))
    for name, args in [("CELU", (0.5,)), ("Hardshrink", (0.3,)), ("Softshrink", (0.3,)),
                       ("Hardsigmoid", ()), ("Hardswish", ()), ("LogSigmoid", ()),
                       ("Tanhshrink", ()), ("Threshold", (0.1, 20.0)), ("Softmin", (1,)),
                       ("Softmax2d", ()), ("RReLU", (0.1, 0.3))]:  # fmt: skip
        ours, theirs = getattr(nn, name)(*args).eval(), getattr(torch.nn, name)(*args).eval()
        assert repr(ours) == repr(theirs)
        # PyTorch's float64 hardsigmoid backward multiplies by 1/6 rounded to float32.
        _check(torch, ours, theirs, x, rtol=1e-7 if name == "Hardsigmoid" else 1e-10)


def test_inplace_flags_and_reprs_match_pytorch(torch):
    for name, args in [("CELU", (2.0, True)), ("Threshold", (0.1, 20, True)),
                       ("RReLU", (0.1, 0.3, True)), ("Hardsigmoid", (True,))]:  # fmt: skip
        assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    x = cr.tensor([-4.0, -1.0, 2.0])
    assert nn.Hardswish(inplace=True)(x) is x
    np.testing.assert_allclose(x.data, [0.0, -1 / 3, 10 / 6])


@pytest.mark.parametrize(
    "name, args",
    [("relu_", ()), ("elu_", (0.5,)), ("selu_", ()), ("celu_", (0.5,)), ("leaky_relu_", (0.2,)),
     ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.1, -3.0)), ("rrelu_", (0.1, 0.3))],
)  # fmt: skip
def test_inplace_functional_forms_write_into_the_input_like_pytorch(torch, name, args):
    a = RNG.normal(0, 2, (3, 4))
    ours, theirs = cr.tensor(a.copy()), torch.tensor(a.copy())
    out = getattr(F, name)(ours, *args)
    getattr(torch.nn.functional, name)(theirs, *args)
    assert out is ours
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-12)
    # Through a non-leaf the write is recorded: gradients flow as for the out-of-place form.
    _check(torch, lambda x: getattr(F, name)(x * 1.0, *args),
           lambda x: getattr(torch.nn.functional, name)(x * 1.0, *args), a)  # fmt: skip


def test_inplace_forms_refuse_a_leaf_that_requires_grad():
    with pytest.raises(GraphError, match="relu_: a leaf tensor that requires grad"):
        F.relu_(cr.ones(2, requires_grad=True))


def test_torch_level_in_place_forms_match_pytorch(torch):
    a = RNG.normal(size=5)
    for name, args in [("celu_", (0.5,)), ("selu_", ()), ("threshold_", (0.0, 7.0))]:
        ours, theirs = cr.tensor(a.copy()), torch.tensor(a.copy())
        getattr(cr, name)(ours, *args)
        getattr(torch, name)(theirs, *args)
        np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-12)


def test_activation_edge_gradients_match_pytorch(torch):
    # The kinks themselves: hardshrink/softshrink at ±lambd, hardswish/hardsigmoid at ±3,
    # threshold at the threshold, celu at 0, rrelu (eval) at 0.
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    for name, args in [("hardshrink", ()), ("softshrink", ()), ("hardswish", ()),
                       ("hardsigmoid", ()), ("threshold", (0.5, 0.0)), ("celu", (0.5,)),
                       ("rrelu", ())]:  # fmt: skip
        _check(torch, lambda t, name=name, args=args: getattr(F, name)(t, *args),
               lambda t, name=name, args=args: getattr(torch.nn.functional, name)(t, *args),
               x, rtol=1e-7 if name == "hardsigmoid" else 1e-10)  # fmt: skip


def test_logsigmoid_stays_finite_for_large_inputs(torch):
    _check(torch, F.logsigmoid, torch.nn.functional.logsigmoid, np.array([-800.0, 0.0, 800.0]))


def test_softmin_without_dim_takes_pytorchs_legacy_dim_and_warns(torch):
    a = RNG.normal(size=(2, 3))
    with pytest.warns(UserWarning, match="softmin: implicit dimension"):
        out = F.softmin(cr.tensor(a))
    with pytest.warns(UserWarning):
        expected = torch.nn.functional.softmin(torch.tensor(a))
    np.testing.assert_allclose(out.data, expected.numpy(), rtol=1e-12)


def test_rrelu_training_draws_slopes_in_range_and_differentiates_by_them():
    cr.manual_seed(0)
    x = cr.tensor(-np.ones(2000), requires_grad=True)
    out = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -out.data
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01
    out.sum().backward()
    np.testing.assert_allclose(x.grad.data, slopes)
    positive = F.rrelu(cr.tensor([2.0]), training=True)
    assert positive.item() == 2.0
    cr.manual_seed(3)
    again = F.rrelu(cr.tensor(-np.ones(5)), training=True)
    cr.manual_seed(3)
    assert np.array_equal(again.data, F.rrelu(cr.tensor(-np.ones(5)), training=True).data)


def test_module_rrelu_is_random_in_training_and_fixed_in_eval():
    layer = nn.RReLU(0.1, 0.3)
    x = cr.tensor(-np.ones(100))
    assert len(set(layer(x).tolist())) > 1
    assert set(layer.eval()(x).tolist()) == {-0.2}


def test_hardshrink_and_prelu_methods_and_torch_level_functions(torch):
    a, w = RNG.normal(size=(2, 3, 4)), np.array([0.1, 0.2, 0.3])
    _check(torch, lambda x: x.hardshrink(0.7), lambda x: x.hardshrink(0.7), a)
    _check(torch, lambda x, y: x.prelu(y), lambda x, y: x.prelu(y), a, w)
    _check(torch, lambda x, y: cr.prelu(x, y), lambda x, y: torch.prelu(x, y), a, w)
    assert F.prelu is cr.ops.prelu and F.hardshrink is cr.ops.hardshrink


def test_activation_errors_name_the_op_and_the_values():
    with pytest.raises(DomainError, match=r"softshrink: lambd must be non-negative, got -1"):
        F.softshrink(cr.ones(2), -1.0)
    with pytest.raises(DomainError, match=r"celu: alpha must not be 0"):
        F.celu(cr.ones(2), 0.0)
    with pytest.raises(DomainError, match=r"rrelu: lower 0.5 must not exceed upper 0.1"):
        F.rrelu(cr.ones(2), 0.5, 0.1)
    with pytest.raises(ShapeError, match=r"Softmax2d: expected a 3-D .* got shape \(2, 3\)"):
        nn.Softmax2d()(cr.ones(2, 3))
    with pytest.raises(ShapeError, match=r"prelu: weight of shape \(2,\) must have 1 element"):
        cr.ones(2, 3).prelu(cr.ones(2))


# Dropouts: masks and moments (the numbers come from chainrule's generator).


def test_dropout3d_zeroes_whole_channels_and_scales_the_rest():
    cr.manual_seed(0)
    out = F.dropout3d(cr.ones(4, 50, 2, 2, 2), p=0.3).data
    per_channel = out.reshape(4, 50, -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # one value per channel
    np.testing.assert_allclose(np.unique(out), [0.0, 1 / 0.7], rtol=1e-6)
    assert 0.2 < (per_channel[..., 0] == 0).mean() < 0.4
    assert F.dropout3d(cr.ones(3, 2, 2, 2), training=False).shape == (3, 2, 2, 2)
    with pytest.raises(ShapeError, match=r"dropout3d: input must have 4 .* or 5 dims"):
        F.dropout3d(cr.ones(2, 3))


def test_alpha_dropout_keeps_zero_mean_and_unit_variance_like_pytorch(torch):
    cr.manual_seed(0)
    torch.manual_seed(0)
    a = RNG.normal(size=200_000)
    ours = F.alpha_dropout(cr.tensor(a), 0.2, training=True).data
    theirs = torch.nn.functional.alpha_dropout(torch.tensor(a), 0.2, training=True).numpy()
    for sample in (ours, theirs):
        assert abs(sample.mean()) < 0.01 and abs(sample.var() - 1) < 0.02
    # The dropped value and the affine map are PyTorch's: compare their sets on a constant.
    ones_ours = set(np.round(F.alpha_dropout(cr.ones(5000, dtype=cr.float64), 0.2, True).data,
                             10))  # fmt: skip
    ones_theirs = set(np.round(torch.nn.functional.alpha_dropout(
        torch.ones(5000, dtype=torch.float64), 0.2, True).numpy(), 10))  # fmt: skip
    assert ones_ours == ones_theirs
    assert F.alpha_dropout(cr.tensor(a), 0.2) is not None  # training defaults to False
    assert np.array_equal(F.alpha_dropout(cr.tensor(a), 0.2).data, a)


def test_feature_alpha_dropout_drops_whole_channels_and_modules_follow_training_mode():
    cr.manual_seed(1)
    out = F.feature_alpha_dropout(cr.ones(8, 16, 5), 0.5, training=True).data
    assert np.all(out.min(-1) == out.max(-1)) and len(np.unique(out)) == 2
    for layer in (nn.AlphaDropout(0.5), nn.FeatureAlphaDropout(0.5), nn.Dropout3d(0.5)):
        x = cr.ones(2, 4, 2, 2, 2)
        assert not np.array_equal(layer(x).data, x.data)
        assert np.array_equal(layer.eval()(x).data, x.data)
    assert repr(nn.AlphaDropout(0.2)) == "AlphaDropout(p=0.2, inplace=False)"


def test_torch_level_dropouts_take_input_p_train(torch):
    cr.manual_seed(0)
    x = cr.ones(20, 30)
    assert np.array_equal(cr.dropout(x, 0.5, False).data, x.data)
    assert set(np.unique(cr.dropout(x, 0.5, True).data)) == {0.0, 2.0}
    channels = cr.feature_dropout(x.reshape(20, 30, 1), 0.5, True).data
    assert np.all(channels.min(-1) == channels.max(-1))
    assert np.array_equal(cr.alpha_dropout(x, 0.5, False).data, x.data)
    assert np.array_equal(cr.feature_alpha_dropout(x, 0.5, False).data, x.data)
    with pytest.raises(ShapeError, match="feature_dropout: feature dropout needs at least 2"):
        cr.feature_dropout(cr.ones(3), 0.5, True)


# Losses against PyTorch.


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_and_likelihood_losses_match_pytorch(torch, reduction):
    x, y = RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5))
    signs = np.where(RNG.normal(size=(4, 5)) > 0, 1.0, -1.0)
    counts = RNG.integers(0, 5, (4, 5)).astype(np.float64)
    labels = RNG.integers(0, 5, 4)
    multi = np.array([[3, 0, -1, 1, 2], [1, -1, 4, 4, 4], [0, 1, 2, 3, 4], [-1, 0, 0, 0, 0]])
    weight = RNG.uniform(0.5, 2, 5)
    r = {"reduction": reduction}
    tf = torch.nn.functional
    cases = [
        (lambda a: F.hinge_embedding_loss(a, cr.tensor(signs), 0.7, **r),
         lambda a: tf.hinge_embedding_loss(a, torch.tensor(signs), 0.7, **r), (x,)),
        (lambda a: F.soft_margin_loss(a, cr.tensor(signs), **r),
         lambda a: tf.soft_margin_loss(a, torch.tensor(signs), **r), (x,)),
        (lambda a, b: F.multilabel_soft_margin_loss(a, b, cr.tensor(weight), **r),
         lambda a, b: tf.multilabel_soft_margin_loss(a, b, torch.tensor(weight), **r),
         (x, (y > 0) * 1.0)),
        (lambda a: F.multi_margin_loss(a, cr.tensor(labels), **r),
         lambda a: tf.multi_margin_loss(a, torch.tensor(labels), **r), (x,)),
        (lambda a: F.multi_margin_loss(a, cr.tensor(labels), 2, 0.5, cr.tensor(weight), **r),
         lambda a: tf.multi_margin_loss(a, torch.tensor(labels), 2, 0.5, torch.tensor(weight),
                                        **r), (x,)),
        (lambda a: F.multilabel_margin_loss(a, cr.tensor(multi), **r),
         lambda a: tf.multilabel_margin_loss(a, torch.tensor(multi), **r), (x,)),
        (lambda a, v: F.gaussian_nll_loss(a, cr.tensor(y), v, **r),
         lambda a, v: tf.gaussian_nll_loss(a, torch.tensor(y), v, **r), (x, np.exp(y))),
        (lambda a, v: F.gaussian_nll_loss(a, cr.tensor(y), v, full=True, eps=0.5, **r),
         lambda a, v: tf.gaussian_nll_loss(a, torch.tensor(y), v, full=True, eps=0.5, **r),
         (x, np.exp(y[:, :1]))),
        (lambda a, v: F.gaussian_nll_loss(a, cr.tensor(y), v, **r),
         lambda a, v: tf.gaussian_nll_loss(a, torch.tensor(y), v, **r), (x, np.exp(y[:, 0]))),
        (lambda a, t: F.poisson_nll_loss(a, t, **r),
         lambda a, t: tf.poisson_nll_loss(a, t, **r), (x, counts)),
        # Only the input's gradient: PyTorch's for the target is nan where the target is 0
        # (Stirling's term is masked after log(0)); chainrule's is finite there.
        (lambda a: F.poisson_nll_loss(a, cr.tensor(counts), log_input=False, full=True, **r),
         lambda a: tf.poisson_nll_loss(a, torch.tensor(counts), log_input=False, full=True,
                                       **r), (np.exp(x),)),
    ]  # fmt: skip
    for ours, theirs, arrays in cases:
        _check(torch, ours, theirs, *arrays)


def test_unbatched_class_losses_match_pytorch(torch):
    x = RNG.normal(size=5)
    tf = torch.nn.functional
    _check(torch, lambda a: F.multi_margin_loss(a, cr.tensor(2)),
           lambda a: tf.multi_margin_loss(a, torch.tensor(2)), x)  # fmt: skip
    target = np.array([4, 1, -1, 0, 0])
    _check(torch, lambda a: F.multilabel_margin_loss(a, cr.tensor(target), reduction="none"),
           lambda a: tf.multilabel_margin_loss(a, torch.tensor(target), reduction="none"),
           x)  # fmt: skip


def test_triplet_margin_with_distance_loss_matches_pytorch(torch):
    a, p, n = (RNG.normal(size=(6, 3)) for _ in range(3))
    tf = torch.nn.functional

    def l1(lib):
        return lambda u, v: (u - v).abs().sum(-1)

    for kwargs in ({}, {"margin": 0.3, "swap": True, "reduction": "sum"}):
        for ours, theirs in ((None, None), (l1(cr), l1(torch))):
            _check(torch, lambda *t, k=kwargs, d=ours: F.triplet_margin_with_distance_loss(
                       *t, distance_function=d, **k),
                   lambda *t, k=kwargs, d=theirs: tf.triplet_margin_with_distance_loss(
                       *t, distance_function=d, **k), a, p, n)  # fmt: skip
    module = nn.TripletMarginWithDistanceLoss(margin=0.3)
    assert isinstance(module.distance_function, nn.PairwiseDistance)


def test_loss_modules_match_their_functions_and_pytorchs_reprs(torch):
    x, t = cr.tensor(RNG.normal(size=(3, 4))), cr.tensor([1, 0, 3])
    assert nn.MultiMarginLoss(p=2, margin=0.5)(x, t).item() == pytest.approx(
        F.multi_margin_loss(x, t, 2, 0.5).item())  # fmt: skip
    assert nn.PoissonNLLLoss(log_input=False)(x.abs(), x.abs()).item() == pytest.approx(
        F.poisson_nll_loss(x.abs(), x.abs(), log_input=False).item())  # fmt: skip
    assert nn.GaussianNLLLoss(eps=0.1)(x, x, cr.ones(3, 4)).item() == pytest.approx(0.0)
    assert nn.HingeEmbeddingLoss(reduce=False)(x, cr.ones(3, 4)).shape == (3, 4)
    assert nn.SoftMarginLoss(size_average=False)(x, cr.ones(3, 4)).shape == ()
    weight = cr.ones(4)
    assert nn.MultiLabelSoftMarginLoss(weight).state_dict()["weight"] is not None
    names = ["GaussianNLLLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SoftMarginLoss",
             "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss",
             "CTCLoss"]  # fmt: skip
    for name in names:
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())


def test_nll_loss_2d_is_the_deprecated_nll_loss(torch):
    with pytest.warns(FutureWarning, match="NLLLoss2d is deprecated"):
        loss = nn.NLLLoss2d(ignore_index=1, reduce=False)
    assert isinstance(loss, nn.NLLLoss) and loss.reduction == "none"
    logp = cr.tensor(RNG.normal(size=(2, 3, 2, 2))).log_softmax(1)
    target = cr.tensor(RNG.integers(0, 3, (2, 2, 2)))
    np.testing.assert_allclose(
        loss(logp, target).data, F.nll_loss(logp, target, ignore_index=1, reduction="none").data
    )


def test_loss_errors_name_the_op_and_the_values():
    x = cr.ones(2, 3)
    with pytest.raises(DomainError, match="multi_margin_loss: p must be 1 or 2, got 3"):
        F.multi_margin_loss(x, cr.tensor([0, 1]), p=3)
    with pytest.raises(OutOfRangeError, match="multi_margin_loss: target 3 is out of range"):
        F.multi_margin_loss(x, cr.tensor([0, 3]))
    with pytest.raises(DTypeError, match="multi_margin_loss: target must hold class indices"):
        F.multi_margin_loss(x, cr.tensor([0.0, 1.0]))
    with pytest.raises(ShapeError, match=r"multilabel_margin_loss: input of shape \(2, 3\)"):
        F.multilabel_margin_loss(x, cr.tensor([0, 1]))
    with pytest.raises(OutOfRangeError, match="multilabel_margin_loss: target 5 is out of"):
        F.multilabel_margin_loss(x, cr.tensor([[5, -1, 0], [0, -1, 9]]))
    with pytest.raises(DomainError, match="gaussian_nll_loss: var has negative entries"):
        F.gaussian_nll_loss(x, x, -cr.ones(2, 3))
    with pytest.raises(ShapeError, match=r"gaussian_nll_loss: var of shape \(3,\) does not"):
        F.gaussian_nll_loss(x, x, cr.ones(3))
    with pytest.raises(DomainError, match="triplet_margin_with_distance_loss: margin must be"):
        F.triplet_margin_with_distance_loss(x, x, x, margin=0.0)
    with pytest.raises(ShapeError, match="same number of dims, got 2, 2 and 1"):
        F.triplet_margin_with_distance_loss(x, x, cr.ones(3))
    with pytest.raises(DomainError, match="soft_margin_loss: reduction must be"):
        F.soft_margin_loss(x, x, reduction="avg")
    with pytest.raises(DomainError, match="AdaptiveLogSoftmaxWithLoss: cutoffs"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])


# CTC.


def _ctc_case(torch, blank=0, reduction="mean", zero_infinity=False, concatenated=False):
    T, N, C = 7, 4, 5
    logits = RNG.normal(size=(T, N, C))
    labels = [c for c in range(C) if c != blank]
    targets = RNG.choice(labels, size=(N, 4))
    targets[1, 1] = targets[1, 0]  # a repeat needs a blank between
    input_lengths, target_lengths = [7, 6, 2, 5], [4, 3, 3, 0]  # sequence 2 cannot fit
    if concatenated:
        targets = np.concatenate([row[:n] for row, n in zip(targets, target_lengths)])
    kwargs = {"blank": blank, "reduction": reduction, "zero_infinity": zero_infinity}
    _check(torch,
           lambda x: F.ctc_loss(F.log_softmax(x, 2), cr.tensor(targets), input_lengths,
                                target_lengths, **kwargs),
           lambda x: torch.nn.functional.ctc_loss(
               torch.log_softmax(x, 2), torch.tensor(targets), input_lengths, target_lengths,
               **kwargs),
           logits, rtol=1e-9, atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_ctc_loss_and_its_gradient_match_pytorch(torch, reduction):
    # With an impossible target the loss is inf unless zero_infinity; PyTorch's gradient is
    # then nan or huge, so the reductions over it are compared with zero_infinity.
    _ctc_case(torch, reduction=reduction, zero_infinity=True)
    _ctc_case(torch, blank=3, reduction=reduction, zero_infinity=True, concatenated=True)


def test_ctc_loss_of_an_impossible_target_is_inf_per_sequence(torch):
    logp = cr.tensor(RNG.normal(size=(3, 2, 3))).log_softmax(2)
    loss = F.ctc_loss(logp, cr.tensor([[1, 1], [1, 2]]), [2, 2], [2, 2], reduction="none")
    expected = torch.nn.functional.ctc_loss(torch.tensor(logp.data), torch.tensor([[1, 1], [1, 2]]),
                                            [2, 2], [2, 2], reduction="none")  # fmt: skip
    np.testing.assert_allclose(loss.data, expected.numpy(), rtol=1e-12)
    assert loss.data[0] == np.inf


def test_ctc_loss_unbatched_and_module_and_torch_level_agree(torch):
    logits = RNG.normal(size=(5, 4))
    target = np.array([1, 2, 2])
    _check(torch, lambda x: F.ctc_loss(x.log_softmax(1), cr.tensor(target), 5, 3),
           lambda x: torch.nn.functional.ctc_loss(x.log_softmax(1), torch.tensor(target),
                                                  torch.tensor(5), torch.tensor(3)),
           logits)  # fmt: skip
    logp = cr.tensor(logits).log_softmax(1).unsqueeze(1)
    by_module = nn.CTCLoss(reduction="sum")(logp, cr.tensor([target]), [5], [3])
    assert by_module.item() == pytest.approx(cr.ctc_loss(logp, cr.tensor([target]), [5], [3],
                                                         reduction=2).item())  # fmt: skip


def test_ctc_loss_errors_name_the_problem():
    logp = cr.zeros(4, 2, 3)
    with pytest.raises(OutOfRangeError, match=r"ctc_loss: input_lengths \[5, 4\] must lie in"):
        F.ctc_loss(logp, cr.tensor([[1], [1]]), [5, 4], [1, 1])
    with pytest.raises(OutOfRangeError, match="ctc_loss: target label 7 is out of range"):
        F.ctc_loss(logp, cr.tensor([[1], [7]]), [4, 4], [1, 1])
    with pytest.raises(OutOfRangeError, match="ctc_loss: blank 3 is out of range for 3"):
        F.ctc_loss(logp, cr.tensor([[1], [1]]), [4, 4], [1, 1], blank=3)
    with pytest.raises(DTypeError, match="ctc_loss: targets must be class indices"):
        F.ctc_loss(logp, cr.tensor([[1.0], [1.0]]), [4, 4], [1, 1])
    with pytest.raises(ShapeError, match=r"ctc_loss: log_probs must be \(T, N, C\)"):
        F.ctc_loss(cr.zeros(4), cr.tensor([1]), [4], [1])


# AdaptiveLogSoftmaxWithLoss.


def test_adaptive_log_softmax_matches_pytorch_after_copying_its_state(torch):
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0,
                                                 head_bias=True).double()  # fmt: skip
    ours = nn.AdaptiveLogSoftmaxWithLoss(
        16, 20, [4, 10, 15], div_value=2.0, head_bias=True, dtype=cr.float64
    )
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    ours.load_state_dict({k: cr.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})  # fmt: skip
    x = RNG.normal(size=(9, 16))
    target = np.array([0, 3, 4, 9, 10, 14, 15, 19, 2])
    a, b = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = ours(a, cr.tensor(target)), theirs(b, torch.tensor(target))
    np.testing.assert_allclose(out.output.data, expected.output.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(out.loss.data, expected.loss.detach().numpy(), rtol=1e-10)
    out.loss.backward()
    expected.loss.backward()
    np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=1e-9, atol=1e-12)
    grads = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(grads[name].grad.data, p.grad.numpy(), rtol=1e-9, atol=1e-12)
    full = ours.log_prob(cr.tensor(x)).data
    np.testing.assert_allclose(full, theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.exp(full).sum(1), 1.0)
    predicted = ours.predict(cr.tensor(x))
    assert predicted.dtype == cr.int64
    assert predicted.tolist() == theirs.predict(torch.tensor(x)).tolist()
    assert predicted.tolist() == full.argmax(1).tolist()
    single = ours(cr.tensor(x[0]), cr.tensor(target[0]))
    assert single.output.shape == () and single.output.item() == pytest.approx(out.output[0].item())


def test_adaptive_log_softmax_rejects_bad_targets():
    asm = nn.AdaptiveLogSoftmaxWithLoss(4, 6, [3])
    with pytest.raises(OutOfRangeError, match=re.escape("target values must lie in [0, 5]")):
        asm(cr.zeros(2, 4), cr.tensor([0, 6]))
    with pytest.raises(ShapeError, match=r"input of shape \(2, 4\) and target of shape \(3,\)"):
        asm(cr.zeros(2, 4), cr.tensor([0, 1, 2]))


# torch.* re-exports with torch's own signatures.


def test_torch_level_functions_match_pytorchs_signatures_and_values(torch):
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    t = np.where(RNG.normal(size=3) > 0, 1, -1)
    ones = np.ones((3, 4))
    cases = [
        ("celu", (x,), {"alpha": 0.5}), ("selu", (x,), {}), ("threshold", (x, 0.2, -1.0), {}),
        ("rrelu", (x, 0.1, 0.2), {}), ("hardshrink", (x, 0.3), {}),
        ("binary_cross_entropy_with_logits", (x, (y > 0) * 1.0), {"reduction": 2}),
        ("binary_cross_entropy_with_logits", (x, (y > 0) * 1.0, None, ones * 2.0), {}),
        ("cosine_embedding_loss", (x, y, t, 0.1, 0), {}),
        ("hinge_embedding_loss", (x, np.sign(y), 0.5, 2), {}),
        ("kl_div", (x, np.abs(y)), {"reduction": 0}), ("kl_div", (x, y, 2), {"log_target": True}),
        ("margin_ranking_loss", (x[0], y[0], np.sign(y[1]), 0.2, 2), {}),
        ("poisson_nll_loss", (x, np.abs(y), True, False, 1e-8, 1), {}),
        ("triplet_margin_loss", (x, y, ones, 1.0, 2.0, 1e-6, True, 0), {}),
        ("cosine_similarity", (x, y), {"dim": 0}), ("pairwise_distance", (x, y, 3.0), {}),
        ("pdist", (x,), {}), ("pdist", (x, 1.0), {}),
        # Left out, the reduction is 0 ('none') at top level, as PyTorch 2.13 does.
        ("kl_div", (x, np.abs(y)), {}), ("hinge_embedding_loss", (x, np.sign(y)), {}),
        ("binary_cross_entropy_with_logits", (x, (y > 0) * 1.0), {}),
        ("triplet_margin_loss", (x, y, ones), {}), ("cosine_embedding_loss", (x, y, t), {}),
        ("margin_ranking_loss", (x[0], y[0], np.sign(y[1])), {}),
    ]  # fmt: skip
    for name, args, kwargs in cases:
        ours_args = [cr.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        theirs_args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        out = getattr(cr, name)(*ours_args, **kwargs)
        expected = getattr(torch, name)(*theirs_args, **kwargs)
        np.testing.assert_allclose(out.data, expected.numpy(), rtol=1e-10, err_msg=name)
    with pytest.raises(DomainError, match=r"kl_div: reduction must be an int here"):
        cr.kl_div(cr.tensor(x), cr.tensor(y), "mean")


def test_pdist_gradient_matches_pytorch_including_repeated_rows(torch):
    x = RNG.normal(size=(5, 3))
    x[3] = x[1]
    for p in (2.0, 1.0, 3.0):
        _check(torch, lambda a, p=p: F.pdist(a, p),
               lambda a, p=p: torch.nn.functional.pdist(a, p), x)  # fmt: skip
