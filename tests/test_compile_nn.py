"""chainrule.compile on training steps: nn layers, losses, every optimizer and an lr schedule,
20 steps on varying batches, compiled against eager from the same seed. The losses, the
parameters, their .grad and the buffers (BatchNorm's running statistics) equal eager mode's
bit for bit, and at least 18 of the 20 steps are replays."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F

STEPS = 20


def _batches(seed: int, make) -> list:
    rng = np.random.default_rng(seed)
    return [tuple(cr.tensor(a) for a in make(rng)) for _ in range(STEPS)]


def _train(build, make_batch, loss_fn, optimizer=None, schedule=None, seed=0):
    """Run 20 steps eagerly, then 20 compiled on a model built from the same seed; return the
    two runs (model, losses) and the compiled function."""
    batches = _batches(seed + 1, make_batch)
    runs = []
    for compiled in (False, True):
        cr.manual_seed(seed)
        model = build()
        opt = (optimizer or (lambda p: cr.optim.SGD(p, lr=0.05)))(list(model.parameters()))
        sched = schedule(opt) if schedule else None

        def step(*batch, model=model, opt=opt, sched=sched):
            opt.zero_grad()
            loss = loss_fn(model, *batch)
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            return loss.detach()

        fn = cr.compile(step, backend="numpy") if compiled else step
        cr.manual_seed(seed + 2)  # the same random draws (dropout masks) in both runs
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            losses = [fn(*batch).detach().numpy().copy() for batch in batches]
        runs.append((model, losses, fn))
    return runs


def _assert_equal_runs(runs, replayed=STEPS - 2):
    (eager, eager_losses, _), (model, losses, compiled) = runs
    for i, (a, b) in enumerate(zip(eager_losses, losses)):
        assert np.array_equal(a, b), f"step {i}: loss {a} != {b}"
    for (name, p), q in zip(eager.named_parameters(), model.parameters()):
        assert np.array_equal(p.data, q.data), name
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            assert np.array_equal(p.grad.data, q.grad.data), name
    for (name, b), c in zip(eager.named_buffers(), model.buffers()):
        assert np.array_equal(b.data, c.data), name
    assert compiled.stats["replayed"] >= replayed and compiled.stats["eager"] == 0
    assert not np.array_equal(eager_losses[0], eager_losses[-1])  # it did train


def _normal(*shape):
    return lambda rng: (rng.normal(size=shape).astype(np.float32),)


def _regression(x_shape, y_shape):
    return lambda rng: (
        rng.normal(size=x_shape).astype(np.float32),
        rng.normal(size=y_shape).astype(np.float32),
    )


def _squares(model, x):
    out = model(x)
    out = out[0] if isinstance(out, tuple) else out
    return (out * out).mean()


def _mse(model, x, y):
    return F.mse_loss(model(x), y)


def _sequential(layers):
    return lambda: nn.Sequential(*layers())


LAYERS = {
    "Linear": (lambda: nn.Linear(4, 3), _regression((8, 4), (8, 3)), _mse),
    "Conv1d": (lambda: nn.Conv1d(3, 4, 3, padding=1), _normal(2, 3, 6), _squares),
    "Conv2d": (lambda: nn.Conv2d(2, 3, 3, stride=2, padding=1), _normal(2, 2, 5, 5), _squares),
    "ConvTranspose2d": (
        lambda: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1),
        _normal(2, 2, 3, 3),
        _squares,
    ),
    "MaxPool2d": (
        _sequential(lambda: [nn.Conv2d(1, 2, 3, padding=1), nn.MaxPool2d(2)]),
        _normal(2, 1, 4, 4),
        _squares,
    ),
    "AvgPool2d": (
        _sequential(lambda: [nn.Conv2d(1, 2, 3, padding=1), nn.AvgPool2d(2, padding=1)]),
        _normal(2, 1, 4, 4),
        _squares,
    ),
    "BatchNorm1d": (
        _sequential(lambda: [nn.Linear(4, 5), nn.BatchNorm1d(5), nn.Tanh(), nn.Linear(5, 3)]),
        _regression((8, 4), (8, 3)),
        _mse,
    ),
    "BatchNorm2d": (
        _sequential(lambda: [nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3)]),
        _normal(4, 2, 3, 3),
        lambda m, x: (m(x).tanh() * x[:, :1]).mean(),
    ),
    "LayerNorm": (
        _sequential(lambda: [nn.Linear(4, 6), nn.LayerNorm(6), nn.Linear(6, 3)]),
        _regression((8, 4), (8, 3)),
        _mse,
    ),
    "GroupNorm": (
        _sequential(lambda: [nn.Conv1d(2, 4, 3), nn.GroupNorm(2, 4)]),
        _normal(3, 2, 5),
        lambda m, x: (m(x).sigmoid() * x[:, :1, :3]).mean(),
    ),
    "RMSNorm": (
        _sequential(lambda: [nn.Linear(4, 6), nn.RMSNorm(6), nn.Linear(6, 3)]),
        _regression((8, 4), (8, 3)),
        _mse,
    ),
    "Embedding": (
        _sequential(lambda: [nn.Embedding(10, 4), nn.Linear(4, 2)]),
        lambda rng: (rng.integers(0, 10, (3, 5)),),
        _squares,
    ),
    "RNN": (lambda: nn.RNN(4, 5, batch_first=True), _normal(2, 3, 4), _squares),
    "LSTM": (lambda: nn.LSTM(4, 5, num_layers=2), _normal(3, 2, 4), _squares),
    "GRU": (lambda: nn.GRU(4, 5, batch_first=True, bidirectional=True), _normal(2, 3, 4), _squares),
    "MultiheadAttention": (
        lambda: nn.MultiheadAttention(8, 2, batch_first=True),
        _normal(2, 3, 8),
        lambda m, x: (m(x, x, x)[0] ** 2).mean(),
    ),
    "TransformerEncoderLayer": (
        lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True),
        _normal(2, 3, 8),
        lambda m, x: (m(x) * x).mean(),
    ),
    "Dropout": (
        _sequential(lambda: [nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3)]),
        _regression((8, 4), (8, 3)),
        _mse,
    ),
}


@pytest.mark.parametrize(
    "name",
    sorted(LAYERS),
)
def test_a_layer_trains_compiled_exactly_as_eager(name):
    build, make_batch, loss_fn = LAYERS[name]
    _assert_equal_runs(_train(build, make_batch, loss_fn))


def _classes(n, classes, extra=()):
    return lambda rng: (
        rng.normal(size=(n, 4)).astype(np.float32),
        rng.integers(0, classes, n),
        *[make(rng) for make in extra],
    )


def _probabilities(rng):
    x = rng.normal(size=(6, 4)).astype(np.float32)
    return x, rng.random((6, 3)).astype(np.float32)


def _ctc_batch(rng):
    return (
        rng.normal(size=(5, 2, 4)).astype(np.float32),  # (T, N, 4): made (T, N, C=4)
        rng.integers(1, 4, (2, 3)),
    )


def _ctc(model, x, targets):
    log_probs = model(x).log_softmax(-1)
    lengths = cr.tensor([5, 5])
    return F.ctc_loss(log_probs, targets, lengths, cr.tensor([3, 2]))


LOSS_WEIGHTS = np.array([0.5, 2.0, 1.0], np.float32)

LOSSES = {
    "mse_loss": (_regression((6, 4), (6, 3)), lambda m, x, y: F.mse_loss(m(x), y)),
    "l1_loss": (_regression((6, 4), (6, 3)), lambda m, x, y: F.l1_loss(m(x), y)),
    "smooth_l1_loss": (
        _regression((6, 4), (6, 3)),
        lambda m, x, y: F.smooth_l1_loss(m(x), y, beta=0.5),
    ),
    "huber_loss": (_regression((6, 4), (6, 3)), lambda m, x, y: F.huber_loss(m(x), y, delta=0.7)),
    "cross_entropy": (_classes(6, 3), lambda m, x, t: F.cross_entropy(m(x), t)),
    "cross_entropy[weight_ignore_smoothing]": (
        _classes(6, 3),
        lambda m, x, t: F.cross_entropy(
            m(x), t, weight=cr.tensor(LOSS_WEIGHTS), ignore_index=1, label_smoothing=0.2
        ),
    ),
    "cross_entropy[probabilities]": (
        _probabilities,
        lambda m, x, p: F.cross_entropy(m(x), p.softmax(-1)),
    ),
    "nll_loss": (
        _classes(6, 3),
        lambda m, x, t: F.nll_loss(m(x).log_softmax(-1), t, weight=cr.tensor(LOSS_WEIGHTS)),
    ),
    "binary_cross_entropy": (
        _probabilities,
        lambda m, x, p: F.binary_cross_entropy(m(x).sigmoid(), p),
    ),
    "binary_cross_entropy_with_logits": (
        _probabilities,
        lambda m, x, p: F.binary_cross_entropy_with_logits(
            m(x), p, pos_weight=cr.tensor(LOSS_WEIGHTS)
        ),
    ),
    "kl_div": (
        _probabilities,
        lambda m, x, p: F.kl_div(m(x).log_softmax(-1), p.softmax(-1), reduction="batchmean"),
    ),
    "ctc_loss": (_ctc_batch, _ctc),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_loss_trains_compiled_exactly_as_eager(name):
    make_batch, loss_fn = LOSSES[name]
    build = (lambda: nn.Linear(4, 4)) if name == "ctc_loss" else (lambda: nn.Linear(4, 3))
    _assert_equal_runs(_train(build, make_batch, loss_fn))


def _mlp(bias=True):
    return lambda: nn.Sequential(nn.Linear(4, 8, bias=bias), nn.Tanh(), nn.Linear(8, 3, bias=bias))


O = cr.optim
OPTIMIZERS = {
    "SGD": lambda p: O.SGD(p, lr=0.05, weight_decay=0.01),
    "SGD[momentum_nesterov]": lambda p: O.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
    "SGD[momentum_dampening]": lambda p: O.SGD(p, lr=0.05, momentum=0.8, dampening=0.1),
    "Adam": lambda p: O.Adam(p, lr=0.01),
    "Adam[amsgrad_decay]": lambda p: O.Adam(p, lr=0.01, amsgrad=True, weight_decay=0.01),
    "AdamW": lambda p: O.AdamW(p, lr=0.01),
    "Adamax": lambda p: O.Adamax(p, lr=0.01),
    "NAdam": lambda p: O.NAdam(p, lr=0.01),
    "RAdam": lambda p: O.RAdam(p, lr=0.01),
    "Adagrad": lambda p: O.Adagrad(p, lr=0.05),
    "Adadelta": lambda p: O.Adadelta(p, lr=1.0),
    "RMSprop": lambda p: O.RMSprop(p, lr=0.01),
    "RMSprop[centered_momentum]": lambda p: O.RMSprop(p, lr=0.01, centered=True, momentum=0.5),
    "ASGD": lambda p: O.ASGD(p, lr=0.05),
    "Rprop": lambda p: O.Rprop(p, lr=0.01),
    "Adafactor": lambda p: O.Adafactor(p, lr=0.01),
    "SparseAdam": lambda p: O.SparseAdam(p, lr=0.01),
    "Muon": lambda p: O.Muon(p, lr=0.01),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_an_optimizer_steps_compiled_exactly_as_eager(name):
    build = _mlp(bias=name != "Muon")  # Muon updates 2-D weights only
    runs = _train(build, _regression((8, 4), (8, 3)), _mse, OPTIMIZERS[name])
    # SGD's first step with momentum starts its buffer as the gradient, which later steps do
    # not: the second and third records are the program. RAdam rectifies from its sixth
    # step, a branch: recorded anew there (two calls more).
    replayed = {"SGD[momentum_nesterov]": STEPS - 3, "SGD[momentum_dampening]": STEPS - 3,
                "RAdam": STEPS - 4}.get(name, STEPS - 2)  # fmt: skip
    _assert_equal_runs(runs, replayed)


def test_an_lr_schedule_steps_with_the_compiled_step():
    runs = _train(
        _mlp(),
        _regression((8, 4), (8, 3)),
        _mse,
        lambda p: O.SGD(p, lr=0.1, momentum=0.9),
        lambda opt: O.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
    )
    _assert_equal_runs(runs, STEPS - 3)  # SGD with momentum: its first step differs


def test_lbfgs_with_a_closure_runs_eagerly_and_equals_eager():
    # The closure is a new function at each call and LBFGS.step calls it: the record cannot
    # replay it (its arguments differ between calls), so every call runs eagerly, as it says.
    batches = _batches(3, _regression((8, 4), (8, 3)))
    results = []
    for compile_it in (False, True):
        cr.manual_seed(0)
        model = _mlp()()
        opt = O.LBFGS(model.parameters(), lr=0.5, max_iter=4, history_size=3)

        def step(x, y, model=model, opt=opt):
            def closure():
                opt.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                return loss

            return opt.step(closure).detach()

        fn = cr.compile(step, backend="numpy") if compile_it else step
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            losses = [fn(*batch).detach().numpy().copy() for batch in batches]
        results.append((model, losses, fn))
    (eager, eager_losses, _), (model, losses, compiled) = results
    assert all(np.array_equal(a, b) for a, b in zip(eager_losses, losses))
    for p, q in zip(eager.parameters(), model.parameters()):
        assert np.array_equal(p.data, q.data) and np.array_equal(p.grad.data, q.grad.data)
    assert compiled.stats["replayed"] == 0
