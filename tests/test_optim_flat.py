"""Every elementwise optimizer updates a group's small parameters in packs, over their values,
gradients and state laid end to end: the same numbers, bit for bit, as one parameter at a
time, PyTorch's numbers (to rounding: its kernels fuse multiply-adds), and the state dicts in
PyTorch's layout, whatever replaces the state tensors in between."""

import numpy as np
import pytest

import chainrule
from chainrule import optim
from chainrule.optim.optimizer import _Pack

# With packs of at most 256 elements (see `small_packs`): packs of the small ones (a 0-d one
# among them); one over the pack size on its own, then more small ones, two of them too many
# for one pack together.
SHAPES = [(4, 8), (8,), (), (3, 5, 2), (1,), (20, 20), (7,), (12, 15), (12, 15), (5,)]

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.2, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 1}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("ASGD", {"lr": 0.01, "t0": 3, "weight_decay": 0.1}),
    ("Rprop", {"lr": 0.01, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.3, "betas": (0.8, 0.99)}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
]
IDS = [f"{name}-{'-'.join(options)}" for name, options in CASES]
STEPS = 6


@pytest.fixture(autouse=True)
def small_packs(monkeypatch):
    """Packs of at most 256 elements, so that small arrays show every case of the layout."""
    monkeypatch.setattr(_Pack, "SIZE", 256)


def _problem(dtype, seed=0):
    """Initial values and, per step, a gradient for each parameter (the same for both sides)."""
    rng = np.random.default_rng(seed)
    init = [rng.normal(size=shape).astype(dtype) for shape in SHAPES]
    grads = [[rng.normal(size=shape).astype(dtype) for shape in SHAPES] for _ in range(STEPS)]
    return init, grads


def _groups(params):
    return [{"params": params[:6], "lr": 0.003}, {"params": params[6:]}]


def _run(name, options, dtype, packed=True, skip_at=None, steps=STEPS):
    init, grads = _problem(dtype)
    params = [chainrule.nn.Parameter(chainrule.tensor(a.copy())) for a in init]
    optimizer = getattr(optim, name)(_groups(params), **options)
    optimizer._pack_small_params = packed
    for i in range(steps):
        for p, g in zip(params, grads[i]):
            p.grad = chainrule.tensor(g.copy())
        if i == skip_at:
            params[1].grad = None  # its pack goes one parameter at a time from now on
        optimizer.step()
    return params, optimizer


def _packs(optimizer):
    return [item for group in optimizer.param_groups for item in optimizer._layout(group)
            if isinstance(item, _Pack)]  # fmt: skip


def _assert_same_state(ours, theirs):
    mine, reference = ours.state_dict()["state"], theirs.state_dict()["state"]
    assert list(mine) == list(reference)
    for index, entries in mine.items():
        assert list(entries) == list(reference[index])  # the same entries in the same order
        for key, value in entries.items():
            other = reference[index][key]
            if isinstance(value, chainrule.Tensor):
                assert value.shape == other.shape and value.dtype == other.dtype
                np.testing.assert_array_equal(value.data, other.data)
            else:
                assert value == other


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "options"), CASES, ids=IDS)
def test_packs_give_the_one_at_a_time_numbers(name, options, dtype):
    ours, optimizer = _run(name, options, dtype)
    reference, one_at_a_time = _run(name, options, dtype, packed=False)
    for mine, theirs in zip(ours, reference):
        assert mine.dtype == dtype
        np.testing.assert_array_equal(mine.data, theirs.data)
    _assert_same_state(optimizer, one_at_a_time)
    packs = _packs(optimizer)
    # (20, 20) alone; two (12, 15) do not fit in one pack: (7,) + (12, 15), (12, 15) + (5,)
    assert [len(pack.params) for pack in packs] == [5, 2, 2]
    if optimizer._packs_pay(optimizer.param_groups[0]):
        assert all(pack.state is not None for pack in packs)  # they did run together
    else:  # plain SGD: one at a time
        assert name == "SGD" and all(pack.state is None for pack in packs)


@pytest.mark.parametrize(("name", "options"), CASES[1::2], ids=IDS[1::2])
def test_a_parameter_without_a_gradient_sends_its_pack_one_at_a_time(name, options):
    ours, optimizer = _run(name, options, np.float64, skip_at=2)
    reference, one_at_a_time = _run(name, options, np.float64, packed=False, skip_at=2)
    for mine, theirs in zip(ours, reference):
        np.testing.assert_array_equal(mine.data, theirs.data)
    _assert_same_state(optimizer, one_at_a_time)
    if "step" in optimizer.state[ours[0]]:
        assert optimizer.state[ours[1]]["step"] == STEPS - 1 == optimizer.state[ours[0]]["step"] - 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "options"), CASES, ids=IDS)
def test_packs_match_pytorch_and_its_state_layout(torch, name, options, dtype):
    ours, optimizer = _run(name, options, dtype)
    init, grads = _problem(dtype)
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    reference = getattr(torch.optim, name)(_groups(theirs), foreach=False, **options)
    for step_grads in grads:
        for p, g in zip(theirs, step_grads):
            p.grad = torch.tensor(g.copy())
        reference.step()
    wide = dtype == np.float32  # PyTorch rounds a fused multiply-add once, NumPy twice
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if wide else {"rtol": 1e-10, "atol": 1e-14}
    for mine, other in zip(ours, theirs):
        np.testing.assert_allclose(mine.data, other.detach().numpy(), **tolerance)
    mine, other = optimizer.state_dict(), reference.state_dict()
    # (SGD without momentum keeps an empty state per parameter, PyTorch none, as before packs)
    assert [index for index, entries in mine["state"].items() if entries] == list(other["state"])
    for index, entries in other["state"].items():
        entries = mine["state"][index]
        assert sorted(entries) == sorted(other["state"][index])
        for key, value in entries.items():
            expected = other["state"][index][key]
            if isinstance(value, chainrule.Tensor):
                assert value.shape == tuple(expected.shape)
                np.testing.assert_allclose(value.data, expected.numpy(), **tolerance)
            else:
                assert value == pytest.approx(float(expected), rel=1e-6)


@pytest.mark.parametrize(("name", "options"), CASES[::3], ids=IDS[::3])
def test_a_saved_state_loads_and_trains_on_as_the_original(name, options):
    params, optimizer = _run(name, options, np.float64, steps=3)
    saved = optimizer.state_dict()
    copied = {"state": {k: {n: (v.clone() if isinstance(v, chainrule.Tensor) else v)
                            for n, v in s.items()} for k, s in saved["state"].items()},
              "param_groups": saved["param_groups"]}  # fmt: skip
    frozen = {(k, n): np.array(v.data) for k, s in copied["state"].items() for n, v in s.items()
              if isinstance(v, chainrule.Tensor)}  # fmt: skip
    twins = []
    for packed in (True, False):
        twin_params = [chainrule.nn.Parameter(p.detach().clone()) for p in params]
        twin = getattr(optim, name)(_groups(twin_params), **options)
        twin._pack_small_params = packed
        twin.load_state_dict(copied)
        twins.append((twin_params, twin))
    _, grads = _problem(np.float64, seed=1)
    for group_params, opt in [(params, optimizer), *twins]:
        for step_grads in grads[:3]:
            for p, g in zip(group_params, step_grads):
                p.grad = chainrule.tensor(g.copy())
            opt.step()
    for twin_params, twin in twins:
        for mine, theirs in zip(params, twin_params):
            np.testing.assert_array_equal(mine.data, theirs.data)
        _assert_same_state(optimizer, twin)
    # The loaded tensors were copied into the packs; the state dict the twins loaded is untouched.
    for (index, key), array in frozen.items():
        np.testing.assert_array_equal(copied["state"][index][key].data, array)


def test_state_tensors_are_views_of_the_pack_and_writes_to_them_count():
    params, optimizer = _run("Adam", {"lr": 0.01}, np.float64, steps=2)
    pack = _packs(optimizer)[0]
    state = optimizer.state[params[0]]
    assert state["exp_avg"]._array.base is pack.state["exp_avg"]._array
    state["exp_avg"].zero_()  # in place: the pack sees it
    assert not pack.state["exp_avg"]._array[: params[0].numel()].any()
    optimizer.state[params[1]]["exp_avg"] = chainrule.ones(8, dtype=chainrule.float64)  # gathered
    for p in params[:2]:
        p.grad = chainrule.ones_like(p)
    for p in params[2:]:
        p.grad = chainrule.zeros_like(p)
    optimizer.step()
    assert (
        optimizer.state[params[1]]["exp_avg"]._array.base
        is _packs(optimizer)[0].state["exp_avg"]._array
    )
    np.testing.assert_allclose(optimizer.state[params[1]]["exp_avg"].data, 1.0)  # lerp(1, 1)
    np.testing.assert_allclose(optimizer.state[params[0]]["exp_avg"].data, 0.1)
    optimizer.load_state_dict(optimizer.state_dict())  # new groups: new packs, the old let go
    optimizer.step()
    assert len(optimizer._layouts) == 2
    assert optimizer.state[params[0]]["step"] == 4


def test_swapped_in_state_is_shared_not_copied():
    params, optimizer = _run("SGD", {"lr": 0.1, "momentum": 0.9}, np.float64, steps=2)
    others = [chainrule.nn.Parameter(chainrule.zeros_like(p)) for p in params]
    for p in others:
        p.grad = chainrule.ones_like(p)
    saved = optimizer.state_dict()
    buffer = saved["state"][0]["momentum_buffer"]
    before = buffer.detach().clone()
    names = {str(i): p for i, p in enumerate(others)}
    with optim.optimizer.swap_in_optimizer_params_and_state(optimizer, names, saved):
        optimizer.step()
    np.testing.assert_array_equal(buffer.data, 0.9 * before.data + 1.0)  # updated in place
    assert vars(optimizer)["_pack_small_params"] is True  # as it was before the block
    assert isinstance(_packs(optimizer)[0].state["momentum_buffer"], chainrule.Tensor)


EACH = list({name: (name, options) for name, options in CASES}.values())  # one per class


@pytest.mark.parametrize(("name", "options"), EACH, ids=[name for name, _ in EACH])
def test_a_compiled_training_step_replays_with_packs(name, options):
    runs = []
    for compiled in (False, True):
        chainrule.manual_seed(0)
        model = chainrule.nn.Sequential(
            chainrule.nn.Linear(4, 8), chainrule.nn.Tanh(), chainrule.nn.Linear(8, 3)
        )
        opt = getattr(optim, name)(model.parameters(), **options)

        def step(x, model=model, opt=opt):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss.detach()

        fn = chainrule.compile(step) if compiled else step
        x = chainrule.tensor(np.random.default_rng(1).normal(size=(16, 4)).astype(np.float32))
        losses = [fn(x).item() for _ in range(5)]
        runs.append((model, losses, fn, opt))
    (eager, eager_losses, _, _), (model, losses, compiled_fn, opt) = runs
    assert eager_losses == losses
    for p, q in zip(eager.parameters(), model.parameters()):
        np.testing.assert_array_equal(p.data, q.data)
    # SGD's first step with momentum makes its buffer the gradient itself, which later steps
    # do not: the second and third calls' records are the program.
    replays = 2 if name == "SGD" and options.get("momentum") else 3
    assert compiled_fn.stats == {"traced": 5 - replays, "replayed": replays, "eager": 0}
    if opt.records_update:  # the update is equations of the program: no whole step, no packs
        assert f"call {name}.step(" not in str(compiled_fn.program)
        assert f"{name}.step numbers" in str(compiled_fn.program)
    else:
        assert all(pack.state is not None for pack in _packs(opt))
