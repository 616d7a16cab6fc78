"""An optimizer's step in a compiled function is recorded as equations (`compiler.update`):
its update formulas become ops of the program (one fused kernel per parameter with Numba),
and the numbers it takes from Python (the learning rate a scheduler sets, the step count's
bias corrections) come from the step's Python, run again without arrays at each replay."""

import os
import warnings

import numpy as np
import pytest

import chainrule
from chainrule import optim
from chainrule.compiler import backend_numba
from chainrule.errors import GraphError
from chainrule.optim.arithmetic import NUMPY, Collector

RECORDED = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.3}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "betas": (0.3, 0.4), "maximize": True}),  # lerp from the end
    ("NAdam", {"lr": 0.01, "decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
    ("Adadelta", {"lr": 1.0, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.01, "t0": 3.0}),  # its average moves from step 6 on: a branch
]
IDS = [f"{name}-{'-'.join(options) or 'plain'}" for name, options in RECORDED]


def _model():
    chainrule.manual_seed(0)
    return chainrule.nn.Sequential(
        chainrule.nn.Linear(4, 8), chainrule.nn.Tanh(), chainrule.nn.Linear(8, 3)
    )


def _data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    y = rng.normal(size=(16, 3)).astype(np.float32)
    return chainrule.tensor(x), chainrule.tensor(y)


def _plain_step(model, opt, item=False, seen=None, sched=None):
    """The step people write, returning the loss (its ``.item()``, a graph break, with
    ``item``); ``seen`` gets the first parameter's step count after each step; ``sched``
    steps after the optimizer."""

    def step(x, y):
        opt.zero_grad()
        loss = chainrule.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        if seen is not None:
            seen.append(opt.state[opt.param_groups[0]["params"][0]]["step"])
        return loss.item() if item else loss

    return step


def _train(name, options, compiled, steps=6, scheduler=None, fuse=False):
    """Losses and final parameters of ``steps`` calls of the step people write: zero_grad,
    forward, backward, step (and the scheduler's), return the loss itself."""
    model = _model()
    opt = getattr(optim, name)(model.parameters(), **options)
    step = _plain_step(model, opt, sched=scheduler(opt) if scheduler else None)
    fn = chainrule.compile(step, options={"fuse": fuse}) if compiled else step
    x, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no graph break, no eager fallback
        losses = [fn(x, y).item() for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()], fn, opt


@pytest.mark.parametrize(("name", "options"), RECORDED, ids=IDS)
def test_a_recorded_step_gives_eager_numbers_bit_for_bit(name, options):
    losses, params, _, _ = _train(name, options, compiled=False)
    compiled_losses, compiled_params, fn, opt = _train(name, options, compiled=True)
    assert compiled_losses == losses
    for p, q in zip(params, compiled_params):
        np.testing.assert_array_equal(p, q)
    first_step_differs = name == "SGD" and "momentum" in options  # its buffer starts as g
    replays = 3 if first_step_differs else 4
    if name in ("RAdam", "ASGD"):  # a branch from step 6 on, recorded anew there
        replays = 3  # RAdam rectifies; ASGD's average moves (mu < 1 after step t0 + 2)
    assert fn.stats == {"traced": 6 - replays, "replayed": replays, "eager": 0}
    text = str(fn.program)
    assert "call Optimizer.step(" not in text  # not a whole call: equations
    assert f"call {name}.step numbers()" in text
    # the parameters changed in place: their last line writes into them (or copies, after a
    # line that must read their old values)
    assert "  # update" in text and ("# into s" in text or "[...] = " in text)
    params = [v.name for v in fn.program.state if v.value in ("0.weight", "0.bias")]
    assert all(f"# into {p}\n" in text or f"{p}[...] = " in text for p in params)
    assert all(type(s) in (int, float) for s in [opt.state[p].get("step", 0) for p in opt.state])


@pytest.mark.parametrize(("name", "options"), RECORDED, ids=IDS)
def test_with_numba_each_parameters_update_is_one_kernel(name, options):
    if not backend_numba.available():  # the pass without the `fast` extra (.ci/run)
        assert os.environ.get("PYTHONPATH", "").endswith("without_numba")
        return
    losses, params, _, _ = _train(name, options, compiled=False)
    compiled_losses, compiled_params, fn, _ = _train(name, options, compiled=True, fuse=True)
    np.testing.assert_allclose(compiled_losses, losses, rtol=1e-5)
    for p, q in zip(params, compiled_params):
        np.testing.assert_allclose(q, p, rtol=1e-5, atol=1e-6)
    update = [eq for eq in fn.program.equations if eq.phase == "update"]
    kernels = [eq for eq in update if eq.kind == "fused"]
    ops = [eq for eq in update if eq.kind == "op"]
    assert len(kernels) == 4 and not ops  # four parameters, no NumPy call left


@pytest.mark.parametrize(
    "scheduler",
    [
        lambda opt: optim.lr_scheduler.StepLR(opt, 2, 0.5),
        lambda opt: optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=8),
        lambda opt: optim.lr_scheduler.CosineAnnealingLR(opt, 4),
    ],
    ids=["StepLR", "OneCycleLR", "CosineAnnealingLR"],
)
@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_a_scheduler_in_the_step_sets_the_numbers_of_each_replay(scheduler, name):
    options = {"lr": 0.01, "momentum": 0.9} if name == "SGD" else {"lr": 0.01}
    losses, params, _, _ = _train(name, options, False, steps=8, scheduler=scheduler)
    compiled_losses, compiled_params, fn, opt = _train(
        name, options, True, steps=8, scheduler=scheduler
    )
    assert compiled_losses == losses  # OneCycleLR changes momentum and betas too
    for p, q in zip(params, compiled_params):
        np.testing.assert_array_equal(p, q)
    assert fn.stats["eager"] == 0


def test_hyperparameters_set_between_calls_are_read_at_each_replay():
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = optim.AdamW(model.parameters(), lr=0.01)
        step = _plain_step(model, opt)
        fn = chainrule.compile(step) if compiled else step
        x, y = _data()
        losses = []
        for i in range(8):
            for group in opt.param_groups:  # a warm-up written by hand
                group["lr"] = 0.01 * min(1.0, (i + 1) / 4)
                group["weight_decay"] = 0.05 if i < 5 else 0.0  # a branch: records again
            losses.append(fn(x, y).item())
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()], fn))
    (eager, eager_params, _), (compiled, compiled_params, fn) = runs
    np.testing.assert_allclose(compiled, eager, rtol=1e-6)
    for p, q in zip(eager_params, compiled_params):
        np.testing.assert_allclose(q, p, rtol=1e-6, atol=1e-7)
    assert fn.stats["eager"] == 0
    assert fn.stats["traced"] == 4  # two records before weight decay went to 0, two after


@pytest.mark.parametrize("between", ["load_state_dict", "an eager step"])
def test_what_replaces_the_optimizers_state_between_compiled_calls_is_seen(between):
    # Loading a state dict makes new state tensors, and so does an eager step that lays small
    # parameters' state out in packs: the record's guard sees them (the program read others).
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = optim.Adam(model.parameters(), lr=0.01)
        step = _plain_step(model, opt)
        fn = chainrule.compile(step, options={"fuse": False}) if compiled else step
        x, y = _data()
        losses = [fn(x, y).item() for _ in range(4)]
        if between == "load_state_dict":
            saved = opt.state_dict()
            losses += [fn(x, y).item() for _ in range(2)]
            opt.load_state_dict(saved)
        else:
            losses.append(step(x, y).item())  # eager, outside the compiled function
        losses += [fn(x, y).item() for _ in range(4)]
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()], fn))
    (eager, eager_params, _), (compiled, compiled_params, fn) = runs
    assert compiled == eager
    for p, q in zip(eager_params, compiled_params):
        np.testing.assert_array_equal(p, q)
    assert fn.stats["eager"] == 0 and fn.stats["traced"] == 4  # recorded again after it


def test_a_step_with_a_graph_break_replays_its_update_in_pieces():
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = optim.Adam(model.parameters(), lr=0.01)
        seen = []
        step = _plain_step(model, opt, item=True, seen=seen)
        fn = chainrule.compile(step, options={"fuse": False}) if compiled else step
        x, y = _data()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            runs.append(([fn(x, y) for _ in range(5)], seen, fn))
    (eager, eager_seen, _), (compiled, compiled_seen, fn) = runs
    assert compiled == eager
    assert compiled_seen == eager_seen == [1, 2, 3, 4, 5]  # the Python sees each step counted
    assert fn.stats == {"traced": 2, "replayed": 3, "eager": 0}


def test_radams_rectification_from_its_sixth_step_is_recorded_anew():
    losses, params, _, _ = _train("RAdam", {"lr": 0.01}, compiled=False, steps=10)
    compiled_losses, compiled_params, fn, opt = _train("RAdam", {"lr": 0.01}, True, steps=10)
    assert compiled_losses == losses
    for p, q in zip(params, compiled_params):
        np.testing.assert_array_equal(p, q)
    # steps 1-2 recorded (momentum alone), 3-5 replayed; at step 6 the guard (rho_t > 5)
    # no longer holds: 6-7 recorded (rectified), 8-10 replayed
    assert fn.stats == {"traced": 4, "replayed": 6, "eager": 0}
    assert "sqrt" in str(fn.program)  # the rectified update's sqrt(v)


@pytest.mark.parametrize("name", ["Rprop", "SparseAdam"])
def test_optimizers_whose_updates_branch_on_values_stay_whole_calls(name):
    losses, params, _, _ = _train(name, {"lr": 0.01}, compiled=False, steps=8)
    compiled_losses, compiled_params, fn, opt = _train(name, {"lr": 0.01}, compiled=True, steps=8)
    assert compiled_losses == losses
    assert not opt.records_update
    assert "call Optimizer.step()" in str(fn.program)


def test_the_collector_names_the_branch_that_differs():
    x = np.ones(3, np.float32)
    recorded = Collector()
    NUMPY.lerp_(x.copy(), x, 0.1)
    recorded.lerp_(x, x, 0.1)  # weight < 0.5: from the start
    assert recorded.called == ["sub", "mul_", "add_"] and recorded.numbers == [0.1]
    replay = Collector()
    replay.lerp_(x, x, 0.9)  # from the end: sub, mul, sub, assign_
    with pytest.raises(GraphError, match=r"Adam.step: the update ran mul where the record has"):
        replay.check(tuple(recorded.called), "Adam.step")
    recorded.check(("sub", "mul_", "add_"), "Adam.step")  # the same: no error


def test_an_update_reading_an_array_the_record_cannot_name_is_refused():
    class Odd(optim.SGD):
        records_update = True
        outside = np.ones(2, np.float32)

        def _update(self, x, g, state, group, arith):
            arith.sub_(x, arith.mul(self.outside, group["lr"]))

    w = chainrule.zeros(2, requires_grad=True)
    opt = Odd([w], lr=0.5)

    @chainrule.compile
    def step():
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()

    with pytest.raises(GraphError, match="neither its parameter's, its gradient's nor its state"):
        step()


@pytest.mark.parametrize("order", ["after", "before"])
def test_a_scheduler_in_a_step_replayed_in_pieces_runs_in_the_python_without_a_stop(order):
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = optim.lr_scheduler.StepLR(opt, 2, 0.5)
        lrs = []

        def step(x, y, model=model, opt=opt, sched=sched, lrs=lrs):
            opt.zero_grad()
            loss = chainrule.nn.functional.mse_loss(model(x), y)
            loss.backward()
            if order == "before":  # the wrong order, as some programs have it: still eager's
                sched.step()
            opt.step()
            if order == "after":
                sched.step()
            lrs.append(opt.param_groups[0]["lr"])  # the Python sees the new lr at once
            return loss.item()

        fn = chainrule.compile(step, options={"fuse": False}) if compiled else step
        x, y = _data()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            runs.append(([fn(x, y) for _ in range(7)], lrs, model, fn))
    (eager, eager_lrs, eager_model, _), (compiled, compiled_lrs, model, fn) = runs
    assert compiled == eager and compiled_lrs == eager_lrs
    for p, q in zip(eager_model.parameters(), model.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert fn.stats == {"traced": 3, "replayed": 4, "eager": 0}  # SGD's first step differs
    stops = [eq.name for eq in fn.program.equations if eq.kind == "read"]
    assert stops == ["item()", "the end of the call"]  # none for the step nor the scheduler
    assert "StepLR" not in str(fn.program) and "LRScheduler" not in str(fn.program)


def test_a_scheduler_in_a_step_replayed_whole_is_one_call_of_the_program():
    _, _, fn, _ = _train(
        "Adam", {"lr": 0.01}, True, scheduler=lambda opt: optim.lr_scheduler.StepLR(opt, 2, 0.5)
    )
    assert "call LRScheduler.step()" in str(fn.program)


def test_a_call_in_pieces_that_goes_another_way_after_the_step_runs_the_update_eagerly_once():
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = optim.Adam(model.parameters(), lr=0.01)
        calls = [0]

        def step(x, y, model=model, opt=opt, calls=calls):
            calls[0] += 1
            opt.zero_grad()
            loss = chainrule.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()  # the numbers gathered here; the update pending in the program
            if calls[0] == 5:  # another way than recorded, before the next stop
                loss = loss * 2
            return loss.item()

        fn = chainrule.compile(step, options={"fuse": False}) if compiled else step
        x, y = _data()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            losses = [fn(x, y) for _ in range(7)]
        counts = [opt.state[p]["step"] for p in model.parameters()]
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()], counts))
        said = [str(w.message) for w in caught if "compile(" in str(w.message)]
    (eager, eager_params, eager_counts), (compiled, compiled_params, counts) = runs
    assert compiled == eager
    for p, q in zip(eager_params, compiled_params):
        np.testing.assert_array_equal(p, q)
    assert counts == eager_counts == [7] * 4  # each step counted once
    assert fn.stats == {"traced": 2, "replayed": 4, "eager": 1}
    assert len(said) == 1 and "a call did mul where the record has item()" in said[0]
