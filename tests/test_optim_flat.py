"""Adam and AdamW update a group whose parameters all have gradients in one go, over their
state laid end to end: the same numbers, bit for bit, as one parameter at a time, and the
state dicts PyTorch's layout, whatever replaces the state tensors in between."""

import numpy as np
import pytest

import chainrule
from chainrule import optim
from chainrule.optim.adam import Adam, AdamW


class OneAtATimeAdam(Adam):
    """Adam through the per-parameter path (its own `_update` turns the group path off)."""

    def _update(self, x, g, state, group):
        super()._update(x, g, state, group)


class OneAtATimeAdamW(AdamW):
    def _update(self, x, g, state, group):
        super()._update(x, g, state, group)


def _params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(4, 8), (8,), (8, 3), (3,)]
    return [
        chainrule.nn.Parameter(chainrule.tensor(rng.normal(size=s).astype(dtype))) for s in shapes
    ]


def _loss(params, x):
    w1, b1, w2, b2 = params
    return (((x @ w1 + b1).tanh() @ w2 + b2) ** 2).mean()


def _train(make, dtype, options, steps=20, skip_at=None):
    params = _params(dtype)
    groups = [{"params": params[:2], "lr": 0.003}, {"params": params[2:]}]
    optimizer = make(groups, **options)
    x = chainrule.tensor(np.random.default_rng(1).normal(size=(16, 4)).astype(dtype))
    for i in range(steps):
        optimizer.zero_grad()
        _loss(params, x).backward()
        if i == skip_at:
            params[1].grad = None  # this step, one group goes one parameter at a time
        optimizer.step()
    return params, optimizer


CASES = [
    (Adam, OneAtATimeAdam, {"lr": 0.01}),
    (Adam, OneAtATimeAdam, {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    (AdamW, OneAtATimeAdamW, {"lr": 0.01, "weight_decay": 0.3, "betas": (0.8, 0.99)}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("together", "one_at_a_time", "options"), CASES)
@pytest.mark.parametrize("skip_at", [None, 5])
def test_the_group_update_gives_the_per_parameter_numbers(
    together, one_at_a_time, options, dtype, skip_at
):
    ours, optimizer = _train(together, dtype, options, skip_at=skip_at)
    reference, _ = _train(one_at_a_time, dtype, options, skip_at=skip_at)
    for mine, theirs in zip(ours, reference):
        assert mine.dtype == dtype
        np.testing.assert_array_equal(mine.data, theirs.data)
    assert len(optimizer._flat_states) == 2  # it did run together


def test_state_tensors_are_views_and_a_loaded_state_is_taken_up():
    params, optimizer = _train(optim.AdamW, np.float64, {"lr": 0.01}, steps=3)
    state = optimizer.state_dict()
    assert sorted(state["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
    assert state["state"][0]["step"] == 3 and state["state"][0]["exp_avg"].shape == (4, 8)

    # A copy made now and trained on agrees with the original trained on.
    twin_params = [
        chainrule.nn.Parameter(chainrule.tensor(p.detach().numpy().copy())) for p in params
    ]
    groups = [{"params": twin_params[:2], "lr": 0.003}, {"params": twin_params[2:]}]
    twin = optim.AdamW(groups, lr=0.01)
    saved = {"state": {k: {n: (v.clone() if hasattr(v, "clone") else v) for n, v in s.items()}
                       for k, s in state["state"].items()},
             "param_groups": state["param_groups"]}  # fmt: skip
    twin.load_state_dict(saved)
    x = chainrule.tensor(np.random.default_rng(1).normal(size=(16, 4)))
    for group_params, opt in ((params, optimizer), (twin_params, twin)):
        for _ in range(4):
            opt.zero_grad()
            _loss(group_params, x).backward()
            opt.step()
    for mine, theirs in zip(params, twin_params):
        np.testing.assert_array_equal(mine.data, theirs.data)
    assert optimizer.state[params[0]]["step"] == 7 == twin.state[twin_params[0]]["step"]


def test_the_group_path_matches_pytorch_with_maximize(torch):
    ours, _ = _train(Adam, np.float64, {"lr": 0.01, "maximize": True}, steps=50)
    rng = np.random.default_rng(0)
    theirs = [
        torch.tensor(rng.normal(size=s), requires_grad=True) for s in [(4, 8), (8,), (8, 3), (3,)]
    ]
    groups = [{"params": theirs[:2], "lr": 0.003}, {"params": theirs[2:]}]
    optimizer = torch.optim.Adam(groups, lr=0.01, maximize=True)
    x = torch.tensor(np.random.default_rng(1).normal(size=(16, 4)))
    for _ in range(50):
        optimizer.zero_grad()
        _loss(theirs, x).backward()
        optimizer.step()
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.data, reference.detach().numpy(), rtol=0, atol=1e-9)
