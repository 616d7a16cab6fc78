"""Optimizers and learning-rate schedulers against PyTorch: same model, same data, same numbers."""

import math

import numpy as np
import pytest

import chainrule
from chainrule import nn, optim
from chainrule.errors import DomainError, DTypeError, ShapeError
from chainrule.optim import lr_scheduler

# One tiny MLP, the same for both libraries: tanh(x @ W1 + b1) @ W2 + b2, mean squared error.
_RNG = np.random.default_rng(0)
INIT = [_RNG.normal(0, 0.5, (4, 8)), _RNG.normal(0, 0.1, 8), _RNG.normal(0, 0.5, (8, 2)),
        _RNG.normal(0, 0.1, 2)]  # fmt: skip
X = _RNG.normal(size=(16, 4))
Y = _RNG.normal(size=(16, 2))


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    pred = (x @ w1 + b1).tanh() @ w2 + b2
    return ((pred - y) ** 2).mean()


def chainrule_params(dtype=np.float64):
    return [nn.Parameter(chainrule.tensor(w.astype(dtype))) for w in INIT]


def torch_params(torch, dtype=None):
    dtype = dtype or torch.float64
    return [torch.tensor(w, dtype=dtype, requires_grad=True) for w in INIT]


def groups_of(params, grouped):
    """The params as one list, or as two groups with different learning rates."""
    if not grouped:
        return params
    return [{"params": params[:2], "lr": 0.003}, {"params": params[2:]}]


def train(params, optimizer, x, y, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        mlp_loss(params, x, y).backward()
        optimizer.step()


CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.002, "momentum": 0.5, "maximize": True}),  # ascent: chaotic at larger lr
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.02, "betas": (0.8, 0.99), "amsgrad": True}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.05, "eps": 1e-6}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.3, "amsgrad": True}),
    ("RMSprop", {"lr": 0.005}),
    ("RMSprop", {"lr": 0.005, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.005, "centered": True}),
    (
        "RMSprop",
        {"lr": 0.002, "alpha": 0.9, "centered": True, "momentum": 0.5, "weight_decay": 0.01},
    ),  # fmt: skip
    ("Adagrad", {"lr": 0.1}),
    (
        "Adagrad",
        {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.01, "initial_accumulator_value": 0.1},
    ),  # fmt: skip
]


@pytest.mark.parametrize("grouped", [False, True], ids=["one_group", "two_groups"])
@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=[f"{n}-{o}" for n, o in CONFIGS])
def test_optimizer_matches_pytorch_over_100_steps(torch, name, options, grouped):
    ours = chainrule_params()
    train(ours, getattr(optim, name)(groups_of(ours, grouped), **options),
          chainrule.tensor(X), chainrule.tensor(Y), 100)  # fmt: skip
    theirs = torch_params(torch)
    train(theirs, getattr(torch.optim, name)(groups_of(theirs, grouped), **options),
          torch.tensor(X), torch.tensor(Y), 100)  # fmt: skip
    for mine, reference, initial in zip(ours, theirs, INIT):
        assert mine.dtype == np.float64
        np.testing.assert_allclose(mine.data, reference.detach().numpy(), rtol=0, atol=1e-6)
        assert not np.allclose(mine.data, initial)  # it did train


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_float32_parameters_stay_float32_and_track_pytorch(torch, name):
    options = {"lr": 0.01, "momentum": 0.9} if name in ("SGD", "RMSprop") else {"lr": 0.01}
    ours = chainrule_params(np.float32)
    train(
        ours,
        getattr(optim, name)(ours, **options),
        chainrule.tensor(X.astype(np.float32)),
        chainrule.tensor(Y.astype(np.float32)),
        20,
    )
    theirs = torch_params(torch, torch.float32)
    train(
        theirs,
        getattr(torch.optim, name)(theirs, **options),
        torch.tensor(X, dtype=torch.float32),
        torch.tensor(Y, dtype=torch.float32),
        20,
    )
    optimizer = getattr(optim, name)(ours, **options)
    for mine, reference in zip(ours, theirs):
        assert mine.dtype == np.float32
        np.testing.assert_allclose(mine.data, reference.detach().numpy(), atol=1e-4)
    assert all(v.dtype == np.float32 for s in optimizer.state.values() for v in s.values()
               if isinstance(v, chainrule.Tensor))  # fmt: skip


STATE_CONFIGS = [
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.005, "momentum": 0.9, "centered": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
]


@pytest.mark.parametrize(("name", "options"), STATE_CONFIGS, ids=[n for n, _ in STATE_CONFIGS])
def test_state_dict_round_trip_resumes_exactly(name, options):
    x, y = chainrule.tensor(X), chainrule.tensor(Y)
    straight = chainrule_params()
    train(straight, getattr(optim, name)(groups_of(straight, True), **options), x, y, 30)

    first = chainrule_params()
    optimizer = getattr(optim, name)(groups_of(first, True), **options)
    train(first, optimizer, x, y, 10)
    saved = optimizer.state_dict()
    resumed = [nn.Parameter(chainrule.tensor(p.detach().numpy().copy())) for p in first]
    fresh = getattr(optim, name)(groups_of(resumed, True), **options)
    fresh.load_state_dict(saved)
    train(first, optimizer, x, y, 5)  # the original goes on: the loaded state must be a copy
    train(resumed, fresh, x, y, 20)
    for a, b in zip(straight, resumed):
        np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize(("name", "options"), STATE_CONFIGS, ids=[n for n, _ in STATE_CONFIGS])
def test_state_dict_has_pytorch_layout(torch, name, options):
    ours, theirs = chainrule_params(), torch_params(torch)
    optimizer = getattr(optim, name)(groups_of(ours, True), **options)
    reference = getattr(torch.optim, name)(groups_of(theirs, True), **options)
    train(ours, optimizer, chainrule.tensor(X), chainrule.tensor(Y), 2)
    train(theirs, reference, torch.tensor(X), torch.tensor(Y), 2)
    mine, expected = optimizer.state_dict(), reference.state_dict()
    assert list(mine["state"]) == list(expected["state"]) == [0, 1, 2, 3]
    assert set(mine["state"][0]) == set(expected["state"][0])
    assert [g["params"] for g in mine["param_groups"]] == [[0, 1], [2, 3]]
    for group, torch_group in zip(mine["param_groups"], expected["param_groups"]):
        assert set(group) <= set(torch_group)
        assert all(group[k] == torch_group[k] for k in group if k != "params")
    if "step" in expected["state"][2]:  # SGD keeps no step count
        assert mine["state"][2]["step"] == 2


def test_parameters_without_grad_are_skipped():
    used, unused = nn.Parameter(chainrule.ones(2)), nn.Parameter(chainrule.ones(2))
    optimizer = optim.Adam([used, unused], lr=0.1)
    (used * used).sum().backward()
    optimizer.step()
    assert unused.data.tolist() == [1.0, 1.0] and unused not in optimizer.state
    assert used.data.tolist() != [1.0, 1.0]


def test_step_runs_the_closure_with_grad_enabled_and_returns_its_loss():
    w = nn.Parameter(chainrule.tensor([2.0]))
    optimizer = optim.SGD([w], lr=0.25)

    def closure():
        optimizer.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with chainrule.no_grad():
        loss = optimizer.step(closure)
    assert loss.item() == 4.0 and w.data.tolist() == [1.0]


def test_zero_grad_sets_none_or_zeros():
    w = nn.Parameter(chainrule.ones(3))
    optimizer = optim.SGD([w], lr=0.1)
    (w * 2).sum().backward()
    optimizer.zero_grad(set_to_none=False)
    assert w.grad.data.tolist() == [0.0, 0.0, 0.0]
    optimizer.zero_grad()
    assert w.grad is None


def test_step_counts_as_an_in_place_change():
    w = nn.Parameter(chainrule.ones(2))
    optimizer = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    before = w._version
    optimizer.step()
    assert w._version == before + 1


def test_add_param_group_fills_defaults():
    a, b = nn.Parameter(chainrule.ones(1)), nn.Parameter(chainrule.ones(1))
    optimizer = optim.Adam([a], lr=0.5, betas=(0.8, 0.9))
    optimizer.add_param_group({"params": b, "lr": 0.1})
    assert optimizer.param_groups[1]["betas"] == (0.8, 0.9)
    assert optimizer.param_groups[1]["lr"] == 0.1 and optimizer.param_groups[1]["params"] == [b]


def test_repr_lists_groups_and_hyperparameters():
    optimizer = optim.SGD([nn.Parameter(chainrule.ones(1))], lr=0.5)
    text = repr(optimizer)
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.5" in text


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda p: optim.SGD(p, lr=-1.0), DomainError, r"SGD: invalid lr -1\.0"),
        (lambda p: optim.SGD(p, lr=0.1, nesterov=True), DomainError, "Nesterov momentum needs"),
        (lambda p: optim.Adam(p, betas=(1.0, 0.9)), DomainError, r"Adam: invalid betas"),
        (lambda p: optim.RMSprop(p, alpha=-0.5), DomainError, "RMSprop: invalid alpha"),
        (lambda p: optim.Adagrad(p, lr_decay=-1), DomainError, "Adagrad: invalid lr_decay"),
        (lambda p: optim.SGD([], lr=0.1), DomainError, "empty parameter list"),
        (lambda p: optim.SGD(p[0], lr=0.1), DTypeError, "got a single Tensor"),
        (lambda p: optim.SGD(set(p), lr=0.1), DTypeError, "not a set"),
        (lambda p: optim.SGD([p[0], p[0]], lr=0.1), DomainError, "same tensor twice"),
        (lambda p: optim.SGD([{"params": p}, {"params": p[:1]}]), DomainError, "more than one"),
        (lambda p: optim.SGD([p[0] * 2]), DomainError, "not a leaf"),
        (lambda p: optim.SGD([np.ones(2)]), DTypeError, "is a ndarray, not a Tensor"),
    ],
)
def test_bad_arguments_raise_clear_errors(make, error, message):
    params = [nn.Parameter(chainrule.ones(2)), nn.Parameter(chainrule.ones(3))]
    with pytest.raises(error, match=message):
        make(params)


def test_load_state_dict_checks_before_changing_anything():
    params = chainrule_params()
    optimizer = optim.Adam(params, lr=0.01)
    train(params, optimizer, chainrule.tensor(X), chainrule.tensor(Y), 3)
    saved = optimizer.state_dict()
    other = optim.Adam(groups_of(chainrule_params(), True), lr=0.01)
    with pytest.raises(
        DomainError, match="the state dict has 1 parameter groups, this optimizer 2"
    ):
        other.load_state_dict(saved)
    wrong_sizes = optim.Adam([params[0], params[1], params[2]], lr=0.01)
    with pytest.raises(DomainError, match="group 0 has 4 parameters in the state dict, 3"):
        wrong_sizes.load_state_dict(saved)
    swapped = optim.Adam([params[2], params[1], params[0], params[3]], lr=0.5)
    with pytest.raises(ShapeError, match="state 'exp_avg' of parameter 0 has shape"):
        swapped.load_state_dict(saved)
    assert not swapped.state and swapped.param_groups[0]["lr"] == 0.5


# Learning-rate schedulers: 30 steps, the same sequence of learning rates as PyTorch.

SCHEDULERS = [
    ("StepLR", {"step_size": 4, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [3, 8, 8, 20], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 10}),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.001}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 0.95**epoch / (1 + epoch % 3)}),
]


def _two_group_optimizers(torch):
    ours = optim.SGD(
        [
            {"params": [nn.Parameter(chainrule.ones(1))], "lr": 0.1},
            {"params": [nn.Parameter(chainrule.ones(1))], "lr": 0.03},
        ],
        momentum=0.9,
    )
    theirs = torch.optim.SGD([{"params": [torch.ones(1, requires_grad=True)], "lr": 0.1},
                              {"params": [torch.ones(1, requires_grad=True)], "lr": 0.03}],
                             momentum=0.9)  # fmt: skip
    return ours, theirs


@pytest.mark.parametrize(("name", "options"), SCHEDULERS, ids=[n for n, _ in SCHEDULERS])
def test_scheduler_lr_sequence_matches_pytorch(torch, name, options):
    ours, theirs = _two_group_optimizers(torch)
    mine = getattr(lr_scheduler, name)(ours, **options)
    reference = getattr(torch.optim.lr_scheduler, name)(theirs, **options)
    assert mine.get_last_lr() == reference.get_last_lr()
    for _ in range(30):
        ours.step()
        theirs.step()
        mine.step()
        reference.step()
        assert mine.get_last_lr() == reference.get_last_lr()
        assert [g["lr"] for g in ours.param_groups] == [g["lr"] for g in theirs.param_groups]


PLATEAU = [
    {},
    {"mode": "max", "patience": 2, "factor": 0.5},
    {"patience": 1, "threshold": 0.05, "threshold_mode": "abs", "cooldown": 2},
    {"mode": "max", "patience": 0, "threshold_mode": "abs", "min_lr": [0.02, 0.001]},
    {"patience": 2, "factor": 0.2, "min_lr": 0.005, "eps": 1e-3},
]


@pytest.mark.parametrize("options", PLATEAU)
def test_reduce_lr_on_plateau_matches_pytorch(torch, options):
    ours, theirs = _two_group_optimizers(torch)
    mine = lr_scheduler.ReduceLROnPlateau(ours, **options)
    reference = torch.optim.lr_scheduler.ReduceLROnPlateau(theirs, **options)
    metrics = [1.0, 0.8, 0.79, 0.8, 0.9, 0.7, 0.7, 0.71, 0.69, 0.68] * 3
    for metric in metrics:
        mine.step(chainrule.tensor(metric))
        reference.step(metric)
        assert mine.get_last_lr() == reference.get_last_lr()
    assert mine.get_last_lr() != [0.1, 0.03]


@pytest.mark.parametrize(("name", "options"), SCHEDULERS[:5], ids=[n for n, _ in SCHEDULERS[:5]])
def test_scheduler_state_dict_resumes(torch, name, options):
    ours, _ = _two_group_optimizers(torch)
    straight = getattr(lr_scheduler, name)(ours, **options)
    lrs = []
    for _ in range(20):
        straight.step()
        lrs.append(straight.get_last_lr())

    first, _ = _two_group_optimizers(torch)
    scheduler = getattr(lr_scheduler, name)(first, **options)
    for _ in range(8):
        scheduler.step()
    second, _ = _two_group_optimizers(torch)
    second.load_state_dict(first.state_dict())
    resumed = getattr(lr_scheduler, name)(second, **options)
    resumed.load_state_dict(scheduler.state_dict())
    for expected in lrs[8:]:
        resumed.step()
        assert resumed.get_last_lr() == expected


def test_lambda_lr_state_dict_leaves_out_the_functions():
    optimizer = optim.SGD([nn.Parameter(chainrule.ones(1))], lr=1.0)
    scheduler = lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.5**epoch)
    assert scheduler.state_dict()["lr_lambdas"] == [None]  # as PyTorch: no functions saved


def test_scheduler_errors():
    optimizer = optim.SGD([nn.Parameter(chainrule.ones(1))], lr=1.0)
    with pytest.raises(DTypeError, match="StepLR: expected an Optimizer, got list"):
        lr_scheduler.StepLR([], step_size=1)
    with pytest.raises(DomainError, match="StepLR: step_size must be a positive int"):
        lr_scheduler.StepLR(optimizer, step_size=0)
    with pytest.raises(DomainError, match="ReduceLROnPlateau: factor must be < 1"):
        lr_scheduler.ReduceLROnPlateau(optimizer, factor=1.5)
    with pytest.raises(DomainError, match="mode must be 'min' or 'max'"):
        lr_scheduler.ReduceLROnPlateau(optimizer, mode="up")
    with pytest.raises(DomainError, match="got 2 lr_lambdas for 1 parameter groups"):
        lr_scheduler.LambdaLR(optimizer, [math.exp, math.exp])
    fresh = optim.SGD([nn.Parameter(chainrule.ones(1))], lr=1.0)
    with pytest.raises(DomainError, match=r"param_groups\[0\] has no 'initial_lr'"):
        lr_scheduler.ExponentialLR(fresh, gamma=0.9, last_epoch=3)


def test_step_lr_takes_a_float_period_as_pytorch(torch):
    # The text-classification tutorial's StepLR(optimizer, 1.0, gamma=0.1).
    def lrs(lib, sched):
        optimizer = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=5.0)
        scheduler = sched.StepLR(optimizer, 1.5, gamma=0.1)
        out = []
        for _ in range(5):
            optimizer.step()
            scheduler.step()
            out += scheduler.get_last_lr()
        return out

    ours = lrs(chainrule, lr_scheduler)
    assert ours == pytest.approx(lrs(torch, torch.optim.lr_scheduler), rel=1e-12)
    assert ours[0] == 5.0 and ours[-1] == pytest.approx(0.5)  # decayed at epoch 3 only
