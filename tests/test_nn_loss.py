"""The losses (modules and functional forms) against PyTorch: the margin and likelihood
losses by reduction, unbatched class losses, the loss modules' options and reprs, CTC (values,
gradients, impossible targets), and the error messages. The common losses are rows of the
tables in test_nn_layers.py, test_nn_functional.py and test_nn_surface.py;
linear_cross_entropy is in test_nn_loss_linear_cross_entropy.py."""

import math

import numpy as np
import pytest
from nn_checks import check_with_weights as _check

import chainrule
import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.errors import DomainError, DTypeError, OutOfRangeError, ShapeError

RNG = np.random.default_rng(0)


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
        loss(logp, target).detach().numpy(),
        F.nll_loss(logp, target, ignore_index=1, reduction="none").detach().numpy(),
    )


def test_loss_modules_keep_class_weights_as_buffers():
    loss = nn.CrossEntropyLoss(weight=chainrule.ones(3))
    assert list(loss.state_dict()) == ["weight"]
    assert list(loss.parameters()) == []


def test_all_ignored_mean_is_nan(torch):
    target = np.array([-100, -100])
    ours = F.cross_entropy(chainrule.zeros(2, 3), chainrule.tensor(target))
    theirs = torch.nn.functional.cross_entropy(torch.zeros(2, 3), torch.tensor(target))
    assert math.isnan(ours.item()) and math.isnan(theirs.item())


# Errors.


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


def test_cross_entropy_shape_mismatch():
    with pytest.raises(ShapeError, match=r"cross_entropy: input has shape \(4, 3\) but target "
                                         r"has shape \(5,\)"):  # fmt: skip
        F.cross_entropy(chainrule.zeros(4, 3), chainrule.tensor([0, 1, 2, 0, 1]))


def test_cross_entropy_probability_shape_mismatch():
    with pytest.raises(ShapeError, match=r"cross_entropy: input has shape \(4, 3\) but target "
                                         r"has shape \(4, 2\)"):  # fmt: skip
        F.cross_entropy(chainrule.zeros(4, 3), chainrule.zeros(4, 2))


def test_target_out_of_range_names_the_value():
    with pytest.raises(OutOfRangeError, match=r"cross_entropy: target 7 is out of range for 3 "
                                          r"classes"):  # fmt: skip
        F.cross_entropy(chainrule.zeros(2, 3), chainrule.tensor([0, 7]))
    with pytest.raises(OutOfRangeError, match=r"nll_loss: target -1 is out of range"):
        F.nll_loss(chainrule.zeros(2, 3), chainrule.tensor([-1, 0]))


def test_integer_targets_needed_for_indices():
    with pytest.raises(DTypeError, match=r"nll_loss: class-index targets must be integers"):
        F.nll_loss(chainrule.zeros(2, 3), chainrule.tensor([0.0, 1.0]))


@pytest.mark.parametrize(
    "call",
    [
        lambda: F.cross_entropy(chainrule.zeros(2, 3), chainrule.tensor([0, 1]),
                                reduction="avg"),
        lambda: F.mse_loss(chainrule.zeros(2), chainrule.zeros(2), reduction="avg"),
        lambda: F.binary_cross_entropy(chainrule.zeros(2), chainrule.zeros(2), reduction="avg"),
    ],
)  # fmt: skip
def test_reduction_must_be_known(call):
    with pytest.raises(DomainError, match=r"reduction must be 'none', 'mean' or 'sum', got 'avg'"):
        call()


def test_regression_loss_warns_when_broadcasting():
    with pytest.warns(UserWarning, match=r"mse_loss: target shape \(3, 1\) differs"):
        F.mse_loss(chainrule.zeros(3), chainrule.zeros(3, 1))
    with pytest.raises(ShapeError, match=r"l1_loss: input has shape \(3,\) but target has "
                                         r"shape \(4,\), which do not broadcast"):  # fmt: skip
        F.l1_loss(chainrule.zeros(3), chainrule.zeros(4))


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
    expected = torch.nn.functional.ctc_loss(torch.from_numpy(logp.numpy()),
                                            torch.tensor([[1, 1], [1, 2]]),
                                            [2, 2], [2, 2], reduction="none")  # fmt: skip
    np.testing.assert_allclose(loss.detach().numpy(), expected.numpy(), rtol=1e-12)
    assert loss.detach().numpy()[0] == np.inf


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
