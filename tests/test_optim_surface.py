"""The rest of torch.optim against PyTorch: NAdam, RAdam, Adamax, Adadelta and LBFGS over 100
steps, PyTorch's constructor switches and named parameters, and the schedulers added with them
(LinearLR, ConstantLR, PolynomialLR, MultiplicativeLR, CyclicLR, OneCycleLR,
CosineAnnealingWarmRestarts, SequentialLR, ChainedScheduler) over 100 steps."""

import inspect
import math

import numpy as np
import pytest
from test_optim import (
    INIT,
    X,
    Y,
    chainrule_params,
    groups_of,
    mlp_loss,
    torch_params,
    train,
)

import chainrule
from chainrule import nn, optim
from chainrule.errors import DomainError, DTypeError
from chainrule.optim import lr_scheduler

NEW_OPTIMIZERS = ["NAdam", "RAdam", "Adamax", "Adadelta", "LBFGS"]

CONFIGS = [
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.005, "maximize": True, "betas": (0.8, 0.99)}),
    ("RAdam", {"lr": 0.01}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "betas": (0.8, 0.9)}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.05, "betas": (0.8, 0.99), "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.01, "eps": 1e-5}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("SGD", {"lr": 0.002, "momentum": 0.5, "nesterov": True, "maximize": True, "foreach": False}),
    ("RMSprop", {"lr": 0.001, "maximize": True, "foreach": None, "capturable": False}),
    ("Adagrad", {"lr": 0.01, "maximize": True, "fused": None}),
]  # fmt: skip


@pytest.mark.parametrize("grouped", [False, True], ids=["one_group", "two_groups"])
@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=[f"{n}-{o}" for n, o in CONFIGS])
def test_new_optimizer_matches_pytorch_over_100_steps(torch, name, options, grouped):
    ours = chainrule_params()
    train(ours, getattr(optim, name)(groups_of(ours, grouped), **options),
          chainrule.tensor(X), chainrule.tensor(Y), 100)  # fmt: skip
    theirs = torch_params(torch)
    train(theirs, getattr(torch.optim, name)(groups_of(theirs, grouped), **options),
          torch.tensor(X), torch.tensor(Y), 100)  # fmt: skip
    for mine, reference, initial in zip(ours, theirs, INIT):
        np.testing.assert_allclose(mine.data, reference.detach().numpy(), rtol=0, atol=1e-6)
        assert not np.allclose(mine.data, initial)


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "Adadelta"])
def test_new_optimizers_keep_float32_and_track_pytorch(torch, name):
    ours, theirs = chainrule_params(np.float32), torch_params(torch, torch.float32)
    optimizer = getattr(optim, name)(ours, lr=0.01)
    train(ours, optimizer, chainrule.tensor(X.astype(np.float32)),
          chainrule.tensor(Y.astype(np.float32)), 20)  # fmt: skip
    x32, y32 = torch.tensor(X, dtype=torch.float32), torch.tensor(Y, dtype=torch.float32)
    train(theirs, getattr(torch.optim, name)(theirs, lr=0.01), x32, y32, 20)
    for mine, reference in zip(ours, theirs):
        assert mine.dtype == np.float32
        np.testing.assert_allclose(mine.data, reference.detach().numpy(), atol=1e-4)
    arrays = [
        v for s in optimizer.state.values() for v in s.values() if isinstance(v, chainrule.Tensor)
    ]
    assert arrays and all(v.dtype == np.float32 for v in arrays)


def lbfgs_train(params, optimizer, x, y, steps):
    def closure():
        optimizer.zero_grad()
        loss = mlp_loss(params, x, y)
        loss.backward()
        return loss

    return [float(optimizer.step(closure)) for _ in range(steps)]


# Each step runs up to max_iter iterations; near the minimum (loss ~1e-9) the stopping tests
# compare numbers at rounding level (PyTorch's add with alpha is a fused multiply-add), so the
# configurations with a short history, which get there later, are compared over 10 steps.
LBFGS_CONFIGS = [
    ({}, 100),
    ({"line_search_fn": "strong_wolfe"}, 100),
    ({"lr": 0.1, "tolerance_grad": 1e-9}, 100),
    ({"lr": 0.5, "max_iter": 5, "history_size": 3}, 10),
    ({"max_iter": 4, "max_eval": 6, "history_size": 2, "line_search_fn": "strong_wolfe"}, 10),
]


@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's float() of a loss with grad
@pytest.mark.parametrize(
    ("options", "steps"), LBFGS_CONFIGS, ids=[str(o) for o, _ in LBFGS_CONFIGS]
)
def test_lbfgs_matches_pytorch(torch, options, steps):
    ours = chainrule_params()
    optimizer = optim.LBFGS(ours, **options)
    our_losses = lbfgs_train(ours, optimizer, chainrule.tensor(X), chainrule.tensor(Y), steps)
    theirs = torch_params(torch)
    reference = torch.optim.LBFGS(theirs, **options)
    their_losses = lbfgs_train(theirs, reference, torch.tensor(X), torch.tensor(Y), steps)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-6, atol=1e-12)
    for mine, expected, initial in zip(ours, theirs, INIT):
        np.testing.assert_allclose(mine.data, expected.detach().numpy(), rtol=0, atol=1e-6)
        assert not np.allclose(mine.data, initial)
    state, torch_state = optimizer.state[ours[0]], reference.state[theirs[0]]
    assert (state["func_evals"], state["n_iter"]) == (
        torch_state["func_evals"],
        torch_state["n_iter"],
    )


def test_lbfgs_returns_the_first_loss_and_stops_at_a_zero_gradient():
    w = nn.Parameter(chainrule.tensor([3.0], dtype=chainrule.float64))
    optimizer = optim.LBFGS([w])
    calls = []

    def closure():
        calls.append(1)
        optimizer.zero_grad()
        loss = ((w - 3.0) ** 2).sum()
        loss.backward()
        return loss

    assert optimizer.step(closure).item() == 0.0
    assert len(calls) == 1 and w.data.tolist() == [3.0]


SCHEDULER_NAMES = [
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "PolynomialLR", "CosineAnnealingLR", "ChainedScheduler",
    "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
]  # fmt: skip


@pytest.mark.parametrize(
    "name",
    ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", *NEW_OPTIMIZERS]
    + [f"lr_scheduler.{n}" for n in SCHEDULER_NAMES],
)
def test_signature_matches_pytorch(torch, name):
    def find(root):
        for part in name.split("."):
            root = getattr(root, part)
        return root

    ours = inspect.signature(find(optim))
    theirs = inspect.signature(find(torch.optim))
    assert list(ours.parameters) == list(theirs.parameters)
    for key, parameter in theirs.parameters.items():
        assert ours.parameters[key].kind == parameter.kind, key
        assert ours.parameters[key].default == parameter.default, key


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", *NEW_OPTIMIZERS])
def test_param_groups_have_pytorchs_keys_and_defaults(torch, name):
    options = {"lr": 0.1} if name == "SGD" else {}
    ours = getattr(optim, name)([nn.Parameter(chainrule.zeros(2))], **options)
    theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **options)
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


STATE_CONFIGS = [
    ("NAdam", {"lr": 0.01}),
    ("RAdam", {"lr": 0.01}),
    ("Adamax", {"lr": 0.01}),
    ("Adadelta", {"lr": 0.5}),
]


@pytest.mark.parametrize(("name", "options"), STATE_CONFIGS, ids=[n for n, _ in STATE_CONFIGS])
def test_state_dict_has_pytorch_layout_and_resumes_exactly(torch, name, options):
    x, y = chainrule.tensor(X), chainrule.tensor(Y)
    ours, theirs = chainrule_params(), torch_params(torch)
    optimizer = getattr(optim, name)(groups_of(ours, True), **options)
    reference = getattr(torch.optim, name)(groups_of(theirs, True), **options)
    train(ours, optimizer, x, y, 10)
    train(theirs, reference, torch.tensor(X), torch.tensor(Y), 10)
    mine, expected = optimizer.state_dict(), reference.state_dict()
    assert list(mine["state"]) == list(expected["state"]) == [0, 1, 2, 3]
    assert list(mine["state"][0]) == list(expected["state"][0])
    assert mine["param_groups"] == expected["param_groups"]

    resumed = [nn.Parameter(chainrule.tensor(p.detach().numpy().copy())) for p in ours]
    fresh = getattr(optim, name)(groups_of(resumed, True), **options)
    fresh.load_state_dict(mine)
    train(ours, optimizer, x, y, 10)
    train(resumed, fresh, x, y, 10)
    for a, b in zip(ours, resumed):
        np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize("name", ["Adam", "NAdam", "RAdam"])
def test_a_pytorch_optimizer_state_loads_and_training_goes_on_alike(torch, name):
    ours, theirs = chainrule_params(), torch_params(torch)
    reference = getattr(torch.optim, name)(theirs, lr=0.01)
    train(theirs, reference, torch.tensor(X), torch.tensor(Y), 10)
    saved = reference.state_dict()
    converted = {
        "state": {
            i: {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in s.items()}
            for i, s in saved["state"].items()
        },
        "param_groups": saved["param_groups"],
    }
    for mine, theirs_param in zip(ours, theirs):
        mine.data[...] = theirs_param.detach().numpy()
    optimizer = getattr(optim, name)(ours, lr=0.5)
    optimizer.load_state_dict(converted)
    assert optimizer.param_groups[0]["lr"] == 0.01
    train(ours, optimizer, chainrule.tensor(X), chainrule.tensor(Y), 10)
    train(theirs, reference, torch.tensor(X), torch.tensor(Y), 10)
    for mine, expected in zip(ours, theirs):
        np.testing.assert_allclose(mine.data, expected.detach().numpy(), rtol=0, atol=1e-12)


def test_named_parameters_give_param_names_as_pytorch(torch):
    model = nn.Linear(3, 2)
    optimizer = optim.Adam(model.named_parameters(), lr=0.1)
    reference = torch.optim.Adam(torch.nn.Linear(3, 2).named_parameters(), lr=0.1)
    group = optimizer.state_dict()["param_groups"][0]
    assert group == reference.state_dict()["param_groups"][0]
    assert group["param_names"] == ["weight", "bias"]
    assert optimizer.param_groups[0]["params"] == [model.weight, model.bias]
    by_group = optim.SGD([{"params": model.named_parameters(), "lr": 0.5}], lr=0.1)
    assert by_group.param_groups[0]["param_names"] == ["weight", "bias"]


def test_editing_group_lr_and_adding_groups_matches_pytorch(torch):
    ours, theirs = chainrule_params(), torch_params(torch)
    optimizer = optim.NAdam(ours[:2], lr=0.01)
    reference = torch.optim.NAdam(theirs[:2], lr=0.01)
    train(ours, optimizer, chainrule.tensor(X), chainrule.tensor(Y), 5)
    train(theirs, reference, torch.tensor(X), torch.tensor(Y), 5)
    optimizer.add_param_group({"params": ours[2:], "lr": 0.03, "betas": (0.5, 0.9)})
    reference.add_param_group({"params": theirs[2:], "lr": 0.03, "betas": (0.5, 0.9)})
    for groups in (optimizer.param_groups, reference.param_groups):
        groups[0]["lr"] = 0.002
    train(ours, optimizer, chainrule.tensor(X), chainrule.tensor(Y), 20)
    train(theirs, reference, torch.tensor(X), torch.tensor(Y), 20)
    for mine, expected in zip(ours, theirs):
        np.testing.assert_allclose(mine.data, expected.detach().numpy(), rtol=0, atol=1e-12)


def test_zero_grad_defaults_to_none_for_every_optimizer():
    w = nn.Parameter(chainrule.ones(2))
    for name in ["NAdam", "RAdam", "Adamax", "Adadelta", "LBFGS"]:
        (w * w).sum().backward()
        getattr(optim, name)([w]).zero_grad()
        assert w.grad is None


def _two_groups(optimizer, params):
    optimizer.add_param_group({"params": params})
    return optimizer


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: optim.NAdam(p, betas=(0.9, 1.0)), r"NAdam: invalid betas"),
        (lambda p: optim.NAdam(p, momentum_decay=-1), "NAdam: invalid momentum_decay"),
        (lambda p: optim.RAdam(p, eps=-1.0), "RAdam: invalid eps"),
        (lambda p: optim.Adamax(p, lr=-0.1), "Adamax: invalid lr"),
        (lambda p: optim.Adadelta(p, rho=1.5), r"Adadelta: invalid rho 1\.5; it must be in"),
        (lambda p: optim.Adam(p, differentiable=True), "Adam: differentiable=True"),
        (lambda p: optim.Adadelta(p, differentiable=True), "Adadelta: differentiable=True"),
        (lambda p: optim.LBFGS([{"params": p[:1]}, {"params": p[1:]}]), "LBFGS: got 2 param"),
        (lambda p: optim.LBFGS(p, line_search_fn="armijo"), "line_search_fn must be None or"),
        (lambda p: _two_groups(optim.LBFGS(p[:1]), p[1:]).step(lambda: 0.0), "LBFGS.step: there"),
        (lambda p: optim.LBFGS(p).step(None), "LBFGS.step: needs a closure"),
    ],
)
def test_bad_arguments_raise_clear_errors(make, message):
    params = [nn.Parameter(chainrule.ones(2)), nn.Parameter(chainrule.ones(3))]
    with pytest.raises(DomainError, match=message):
        make(params)


# Schedulers: 100 steps, the lrs (and cycled momenta) equal to PyTorch's to 1e-12.


def _sgd(lib, tensor):
    return lib.SGD([{"params": [tensor()], "lr": 0.1}, {"params": [tensor()], "lr": 0.03}],
                   momentum=0.9)  # fmt: skip


def _adam(lib, tensor):
    return lib.Adam([{"params": [tensor()], "lr": 0.1}, {"params": [tensor()], "lr": 0.03}])


SCHEDULERS = {
    "LinearLR": (_sgd, lambda L, o: L.LinearLR(o)),
    "LinearLR-custom": (_sgd, lambda L, o: L.LinearLR(o, 0.1, 0.9, total_iters=37)),
    "ConstantLR": (_sgd, lambda L, o: L.ConstantLR(o)),
    "ConstantLR-custom": (_sgd, lambda L, o: L.ConstantLR(o, factor=0.3, total_iters=40)),
    "PolynomialLR": (_sgd, lambda L, o: L.PolynomialLR(o, total_iters=60, power=2.5)),
    "MultiplicativeLR": (_sgd, lambda L, o: L.MultiplicativeLR(o, lambda e: 0.97 + e % 3 / 1e3)),
    "CyclicLR-triangular": (_sgd, lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=7)),
    "CyclicLR-triangular2": (
        _sgd, lambda L, o: L.CyclicLR(o, [0.01, 0.02], 0.1, 5, 9, mode="triangular2")),
    "CyclicLR-exp_range-adam": (
        _adam, lambda L, o: L.CyclicLR(o, 0.001, [0.1, 0.05], 6, mode="exp_range", gamma=0.97,
                                       base_momentum=0.7, max_momentum=[0.9, 0.95])),
    "CyclicLR-scale_fn": (
        _sgd, lambda L, o: L.CyclicLR(o, 0.01, 0.1, 4, scale_fn=lambda x: 1 / (1 + x),
                                      scale_mode="iterations", cycle_momentum=False)),
    "OneCycleLR-cos": (_sgd, lambda L, o: L.OneCycleLR(o, max_lr=0.5, total_steps=100)),
    "OneCycleLR-linear-adam": (
        _adam, lambda L, o: L.OneCycleLR(o, [0.5, 0.2], epochs=10, steps_per_epoch=10,
                                         anneal_strategy="linear", pct_start=0.25)),
    "OneCycleLR-three_phase": (
        _sgd, lambda L, o: L.OneCycleLR(o, 0.5, 120, three_phase=True, div_factor=10.0,
                                        final_div_factor=100.0, base_momentum=0.8)),
    "OneCycleLR-no-momentum": (
        _adam, lambda L, o: L.OneCycleLR(o, 0.5, 100, cycle_momentum=False)),
    "CosineAnnealingWarmRestarts": (
        _sgd, lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=10)),
    "CosineAnnealingWarmRestarts-mult": (
        _sgd, lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.001)),
    "SequentialLR": (
        _sgd, lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=10),
                                              L.CosineAnnealingLR(o, T_max=90)], [10])),
    "SequentialLR-three": (
        _sgd, lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, 8), L.ExponentialLR(o, 0.95),
                                              L.StepLR(o, 7, 0.5)], milestones=[5, 30])),
    "ChainedScheduler": (
        _sgd, lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.5, 8), L.ExponentialLR(o, 0.97)])),
    "ChainedScheduler-warmup-cosine": (
        _adam, lambda L, o: L.ChainedScheduler([L.LinearLR(o, 0.2, total_iters=12),
                                                L.CosineAnnealingLR(o, 50, 0.001)], o)),
    "ChainedScheduler-of-SequentialLR": (
        _sgd, lambda L, o: L.ChainedScheduler([
            L.SequentialLR(o, [L.ConstantLR(o, 0.5, 4), L.ExponentialLR(o, 0.9)], [6]),
            L.MultiplicativeLR(o, lambda e: 0.99)])),
    "two-schedulers-on-one-optimizer": (
        _sgd, lambda L, o: (L.MultiStepLR(o, [10, 50]), L.PolynomialLR(o, 80))[1]),
}  # fmt: skip


def _momenta(optimizer):
    return [g["betas"][0] if "betas" in g else g["momentum"] for g in optimizer.param_groups]


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def _both(torch, name):
    make_optimizer, make_scheduler = SCHEDULERS[name]
    ours = make_optimizer(optim, lambda: nn.Parameter(chainrule.ones(1)))
    theirs = make_optimizer(torch.optim, lambda: torch.ones(1, requires_grad=True))
    return (
        ours,
        make_scheduler(lr_scheduler, ours),
        theirs,
        make_scheduler(torch.optim.lr_scheduler, theirs),
    )


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_matches_pytorch_over_100_steps(torch, name):
    ours, mine, theirs, reference = _both(torch, name)
    _close(mine.get_last_lr(), reference.get_last_lr())
    changed = set()
    for _ in range(100):
        ours.step()
        theirs.step()
        mine.step()
        reference.step()
        _close(mine.get_last_lr(), reference.get_last_lr())
        _close([g["lr"] for g in ours.param_groups], [g["lr"] for g in theirs.param_groups])
        _close(_momenta(ours), _momenta(theirs))
        changed.add(tuple(mine.get_last_lr()))
    assert len(changed) >= 2


@pytest.mark.parametrize("T_mult", [1, 3])
def test_warm_restarts_with_fractional_epochs_match_pytorch(torch, T_mult):
    ours, theirs = (
        _sgd(optim, lambda: nn.Parameter(chainrule.ones(1))),
        _sgd(torch.optim, lambda: torch.ones(1, requires_grad=True)),
    )
    mine = lr_scheduler.CosineAnnealingWarmRestarts(ours, T_0=4, T_mult=T_mult)
    reference = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(theirs, T_0=4, T_mult=T_mult)
    for epoch in np.arange(0, 40, 0.35):
        mine.step(float(epoch))
        reference.step(float(epoch))
        _close(mine.get_last_lr(), reference.get_last_lr())


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "name", ["LinearLR", "ConstantLR-custom", "PolynomialLR", "ExponentialLR", "StepLR"]
)
def test_step_with_an_epoch_uses_the_closed_form_as_pytorch(torch, name):
    extra = {
        "ExponentialLR": lambda L, o: L.ExponentialLR(o, 0.9),
        "StepLR": lambda L, o: L.StepLR(o, 3, 0.5),
    }
    make_scheduler = extra.get(name) or SCHEDULERS[name][1]
    ours = _sgd(optim, lambda: nn.Parameter(chainrule.ones(1)))
    theirs = _sgd(torch.optim, lambda: torch.ones(1, requires_grad=True))
    mine, reference = (
        make_scheduler(lr_scheduler, ours),
        make_scheduler(torch.optim.lr_scheduler, theirs),
    )
    for epoch in [3, 7, 2, 40, 5]:
        with pytest.warns(UserWarning, match="deprecated"):
            mine.step(epoch)
        reference.step(epoch)
        _close(mine.get_last_lr(), reference.get_last_lr())


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "name",
    ["LinearLR-custom", "PolynomialLR", "CyclicLR-exp_range-adam", "OneCycleLR-three_phase",
     "CosineAnnealingWarmRestarts-mult", "SequentialLR-three", "ChainedScheduler",
     "MultiplicativeLR"],
)  # fmt: skip
def test_scheduler_state_dict_resumes(torch, name):
    """Build optimizer and scheduler, load both states (optimizer first), go on: as straight."""
    make_optimizer, make_scheduler = SCHEDULERS[name]

    def build():
        optimizer = make_optimizer(optim, lambda: nn.Parameter(chainrule.ones(1)))
        return optimizer, make_scheduler(lr_scheduler, optimizer)

    optimizer, scheduler = build()
    expected = []
    for _ in range(60):
        scheduler.step()
        expected.append((scheduler.get_last_lr(), _momenta(optimizer)))
    optimizer, scheduler = build()
    for _ in range(25):
        scheduler.step()
    saved = (optimizer.state_dict(), scheduler.state_dict())
    fresh_optimizer, fresh = build()
    fresh_optimizer.load_state_dict(saved[0])
    fresh.load_state_dict(saved[1])
    for lrs, momenta in expected[25:]:
        fresh.step()
        assert fresh.get_last_lr() == lrs and _momenta(fresh_optimizer) == momenta


def test_lambda_state_keeps_callable_objects_attributes():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate**epoch

    optimizer = optim.SGD([nn.Parameter(chainrule.ones(1))], lr=1.0)
    decay = Decay()
    scheduler = lr_scheduler.LambdaLR(optimizer, decay)
    decay.rate = 0.25
    saved = scheduler.state_dict()
    assert saved["lr_lambdas"] == [{"rate": 0.25}]
    other = Decay()
    lr_scheduler.LambdaLR(
        optim.SGD([nn.Parameter(chainrule.ones(1))], lr=1.0), other
    ).load_state_dict(saved)
    assert other.rate == 0.25


def test_one_cycle_refuses_to_step_past_total_steps():
    optimizer = optim.SGD([nn.Parameter(chainrule.ones(1))], lr=1.0, momentum=0.9)
    scheduler = lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=3)
    for _ in range(3):
        scheduler.step()
    with pytest.raises(DomainError, match="OneCycleLR: stepped 4 times, past total_steps=3"):
        scheduler.step()


def test_scheduler_errors():
    optimizer = optim.SGD([nn.Parameter(chainrule.ones(1))], lr=1.0, momentum=0.9)
    other = optim.SGD([nn.Parameter(chainrule.ones(1))], lr=1.0)
    no_momentum = optim.Adadelta([nn.Parameter(chainrule.ones(1))])
    cases = [
        (lambda: lr_scheduler.LinearLR(optimizer, start_factor=0), "LinearLR: start_factor"),
        (lambda: lr_scheduler.ConstantLR(optimizer, factor=2), "ConstantLR: factor must be"),
        (lambda: lr_scheduler.CyclicLR(optimizer, 0.1, 1.0, mode="saw"), "CyclicLR: mode must"),
        (lambda: lr_scheduler.CyclicLR(optimizer, [0.1, 0.2], 1.0), "got 2 values of base_lr"),
        (lambda: lr_scheduler.CyclicLR(no_momentum, 0.1, 1.0), "cycle_momentum needs"),
        (lambda: lr_scheduler.OneCycleLR(optimizer, 1.0), "pass total_steps, or both"),
        (lambda: lr_scheduler.OneCycleLR(optimizer, 1.0, 0), "total_steps must be a positive"),
        (lambda: lr_scheduler.OneCycleLR(optimizer, 1.0, 10, pct_start=1), "pct_start must be"),
        (lambda: lr_scheduler.OneCycleLR(optimizer, 1.0, 10, anneal_strategy="exp"), "anneal_"),
        (lambda: lr_scheduler.CosineAnnealingWarmRestarts(optimizer, 0), "T_0 must be"),
        (lambda: lr_scheduler.CosineAnnealingWarmRestarts(optimizer, 2, T_mult=0), "T_mult"),
        (
            lambda: lr_scheduler.SequentialLR(optimizer, [lr_scheduler.StepLR(optimizer, 2)], [3]),
            "one milestone fewer",
        ),  # fmt: skip
        (lambda: lr_scheduler.SequentialLR(optimizer, [], []), "at least one scheduler"),
        (
            lambda: lr_scheduler.ChainedScheduler(
                [lr_scheduler.StepLR(optimizer, 2), lr_scheduler.StepLR(other, 2)]
            ),
            "scheduler 1 \\(StepLR\\) drives another optimizer",
        ),  # fmt: skip
    ]
    for make, message in cases:
        with pytest.raises(DomainError, match=message):
            make()
    with pytest.raises(DTypeError, match="scheduler 0 is a ReduceLROnPlateau"):
        lr_scheduler.ChainedScheduler([lr_scheduler.ReduceLROnPlateau(optimizer)])
    with pytest.raises(DTypeError, match="lr_lambda must be callable, got int"):
        lr_scheduler.MultiplicativeLR(optimizer, 3)
    assert math.isfinite(optimizer.param_groups[0]["lr"])
