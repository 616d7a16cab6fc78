"""ASGD, Rprop, Adafactor, Muon and SparseAdam against PyTorch over 100 steps, their state dicts
and errors, and swap_in_optimizer_params_and_state."""

import numpy as np
import pytest
from test_optim import INIT, X, Y, chainrule_params, groups_of, torch_params, train

import chainrule
from chainrule import nn, optim
from chainrule.errors import DomainError, DTypeError, ShapeError

CONFIGS = [
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 20, "weight_decay": 0.01}),
    ("ASGD", {"lr": 0.01, "t0": 0, "maximize": True, "foreach": False}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.001, "etas": (0.3, 1.5), "step_sizes": (1e-4, 0.05)}),
    ("Rprop", {"lr": 0.001, "maximize": True, "step_sizes": (1e-6, 0.01), "capturable": False}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-20, 1e-2), "d": 2.0,
                   "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.001, "maximize": True, "foreach": None}),
]  # fmt: skip


def _compare(ours, theirs, initial=INIT, atol=1e-6):
    for mine, reference, start in zip(ours, theirs, initial):
        assert mine.dtype == np.float64
        np.testing.assert_allclose(mine.data, reference.detach().numpy(), rtol=0, atol=atol)
        assert not np.allclose(mine.data, start)  # it did train


@pytest.mark.parametrize("grouped", [False, True], ids=["one_group", "two_groups"])
@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=[f"{n}-{o}" for n, o in CONFIGS])
def test_optimizer_matches_pytorch_over_100_steps(torch, name, options, grouped):
    ours = chainrule_params()
    train(ours, getattr(optim, name)(groups_of(ours, grouped), **options),
          chainrule.tensor(X), chainrule.tensor(Y), 100)  # fmt: skip
    theirs = torch_params(torch)
    train(theirs, getattr(torch.optim, name)(groups_of(theirs, grouped), **options),
          torch.tensor(X), torch.tensor(Y), 100)  # fmt: skip
    _compare(ours, theirs)


def _mlp_with_matrices(optimizer, params, options, library):
    """Muon for the two weight matrices, SGD for the biases (Muon refuses vectors)."""
    return [optimizer([params[0], params[2]], **options),
            library.optim.SGD([params[1], params[3]], lr=0.01)]  # fmt: skip


class _Both:
    def __init__(self, optimizers):
        self.optimizers = optimizers

    def zero_grad(self):
        for optimizer in self.optimizers:
            optimizer.zero_grad()

    def step(self):
        for optimizer in self.optimizers:
            optimizer.step()


@pytest.mark.parametrize(
    "options",
    [{"lr": 0.02}, {"lr": 0.01, "momentum": 0.8, "nesterov": False, "weight_decay": 0.0},
     {"lr": 0.01, "adjust_lr_fn": "match_rms_adamw", "ns_steps": 3, "eps": 1e-5}],
)  # fmt: skip
def test_muon_matches_pytorch_with_its_iteration_in_float64(torch, monkeypatch, options):
    """PyTorch runs Newton–Schulz in bfloat16; given the same iteration in float64 it must give
    our numbers exactly."""
    import torch.optim._muon as muon

    def float64_newton_schulz(grad, coefficients, steps, eps):
        a, b, c = coefficients
        x = grad.T if grad.size(0) > grad.size(1) else grad
        x = x / x.norm().clamp(min=eps)
        for _ in range(steps):
            gram = x @ x.T
            x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
        return x.T if grad.size(0) > grad.size(1) else x

    monkeypatch.setattr(muon, "_zeropower_via_newtonschulz", float64_newton_schulz)
    ours = chainrule_params()
    train(ours, _Both(_mlp_with_matrices(optim.Muon, ours, options, chainrule)),
          chainrule.tensor(X), chainrule.tensor(Y), 100)  # fmt: skip
    theirs = torch_params(torch)
    train(theirs, _Both(_mlp_with_matrices(torch.optim.Muon, theirs, options, torch)),
          torch.tensor(X), torch.tensor(Y), 100)  # fmt: skip
    _compare(ours, theirs)


def test_muon_stays_near_pytorch_bfloat16_iteration(torch):
    ours, theirs = chainrule_params(), torch_params(torch)
    train(ours, _Both(_mlp_with_matrices(optim.Muon, ours, {"lr": 0.02}, chainrule)),
          chainrule.tensor(X), chainrule.tensor(Y), 10)  # fmt: skip
    train(theirs, _Both(_mlp_with_matrices(torch.optim.Muon, theirs, {"lr": 0.02}, torch)),
          torch.tensor(X), torch.tensor(Y), 10)  # fmt: skip
    _compare(ours, theirs, atol=5e-3)


def test_muon_orthogonalises_the_update():
    from chainrule.optim.matrix import _orthogonalize

    g = np.random.default_rng(1).normal(size=(6, 3))
    q = _orthogonalize(g, (2.0, -1.5, 0.5), 30, 1e-7)  # the cubic iteration converges to 1
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-8)
    u, _, vt = np.linalg.svd(g, full_matrices=False)
    np.testing.assert_allclose(q, u @ vt, atol=1e-8)


@pytest.mark.parametrize(
    "options",
    [{}, {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-6}, {"lr": 0.01, "maximize": True}],
)
def test_sparse_adam_matches_pytorch_sparse_embedding_gradients(torch, options):
    rng = np.random.default_rng(3)
    table = rng.normal(size=(10, 3))
    batches = [rng.integers(0, 6, size=4) for _ in range(100)]  # rows 6..9 are never touched
    targets = rng.normal(size=(100, 4, 3))
    mine = nn.Embedding(10, 3, dtype=chainrule.float64)
    mine.weight.data[...] = table
    theirs = torch.nn.Embedding(10, 3, sparse=True).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(table))
    ours_opt = optim.SparseAdam(list(mine.parameters()), **options)
    their_opt = torch.optim.SparseAdam(list(theirs.parameters()), **options)
    for rows, target in zip(batches, targets):
        ours_opt.zero_grad()
        ((mine(chainrule.tensor(rows)) - chainrule.tensor(target)) ** 2).sum().backward()
        ours_opt.step()
        their_opt.zero_grad()
        ((theirs(torch.tensor(rows)) - torch.tensor(target)) ** 2).sum().backward()
        their_opt.step()
    np.testing.assert_allclose(mine.weight.data, theirs.weight.detach().numpy(), atol=1e-6)
    np.testing.assert_array_equal(mine.weight.data[6:], table[6:])
    state = ours_opt.state[mine.weight]
    assert state["step"] == 100 and not state["exp_avg"].data[6:].any()


def test_sparse_adam_skips_rows_with_zero_gradient_and_counts_steps():
    w = nn.Parameter(chainrule.ones(3, 2))
    optimizer = optim.SparseAdam([w], lr=0.1)
    w.grad = chainrule.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, -2.0]])
    optimizer.step()
    np.testing.assert_allclose(w.data, [[0.9, 1.0], [1.0, 1.0], [1.0, 1.1]], atol=1e-6)
    w.grad = chainrule.zeros(3, 2)
    optimizer.step()
    assert optimizer.state[w]["step"] == 2
    np.testing.assert_allclose(w.data, [[0.9, 1.0], [1.0, 1.0], [1.0, 1.1]], atol=1e-6)


STATE_CONFIGS = [
    ("ASGD", {"lr": 0.05, "t0": 3}),
    ("Rprop", {"lr": 0.001}),
    ("Adafactor", {"lr": 0.05}),
    ("SparseAdam", {"lr": 0.01}),
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
def test_state_dict_has_pytorch_keys(torch, name, options):
    ours, theirs = chainrule_params(), torch_params(torch)
    optimizer = getattr(optim, name)(groups_of(ours, True), **options)
    if name == "SparseAdam":  # PyTorch's needs sparse gradients: compare with a fresh one
        reference = torch.optim.SparseAdam(groups_of(theirs, True), **options)
        assert optimizer.param_groups[1].keys() == reference.param_groups[1].keys()
        return
    reference = getattr(torch.optim, name)(groups_of(theirs, True), **options)
    train(ours, optimizer, chainrule.tensor(X), chainrule.tensor(Y), 2)
    train(theirs, reference, torch.tensor(X), torch.tensor(Y), 2)
    mine, expected = optimizer.state_dict(), reference.state_dict()
    assert list(mine["state"]) == list(expected["state"]) == [0, 1, 2, 3]
    for i in range(4):
        assert set(mine["state"][i]) == set(expected["state"][i])
    for group, torch_group in zip(mine["param_groups"], expected["param_groups"]):
        assert set(group) == set(torch_group)
        assert all(group[k] == torch_group[k] for k in group if k != "params")
    assert mine["state"][2]["step"] == 2


def test_asgd_averages_the_iterates_after_t0():
    x = nn.Parameter(chainrule.tensor([4.0]))
    optimizer = optim.ASGD([x], lr=0.1, lambd=0.0, t0=2)
    seen = []
    for _ in range(6):
        optimizer.zero_grad()
        (x * x).sum().backward()
        optimizer.step()
        seen.append(x.item())
    # mu (set after step t to 1 / max(1, t - t0)) is 1 through step t0 + 2: ax averages from there
    assert optimizer.state[x]["ax"].item() == pytest.approx(np.mean(seen[3:]))


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda p: optim.Rprop(p, etas=(1.2, 0.5)), DomainError, r"Rprop: invalid etas"),
        (lambda p: optim.ASGD(p, lr=-1), DomainError, r"ASGD: invalid lr -1"),
        (lambda p: optim.ASGD(p, differentiable=True), DomainError, "differentiable=True"),
        (lambda p: optim.Adafactor(p, beta2_decay=0.5), DomainError, "invalid beta2_decay"),
        (lambda p: optim.Adafactor(p, d=0.5), DomainError, r"Adafactor: invalid d 0\.5"),
        (lambda p: optim.Adafactor(p, eps=(-1, 0.1)), DomainError, "Adafactor: invalid eps"),
        (lambda p: optim.Muon(p), ShapeError, r"Muon: parameter 1 of a group has shape \(3,\)"),
        (lambda p: optim.Muon(p[:1], adjust_lr_fn="x"), DomainError, "unknown adjust_lr_fn"),
        (lambda p: optim.Muon(p[:1], ns_steps=100), DomainError, r"ns_steps must be in"),
        (lambda p: optim.SparseAdam(p, lr=0.0), DomainError, "SparseAdam: invalid lr 0.0"),
        (lambda p: optim.SparseAdam(p, betas=(0.9, 1.0)), DomainError, "SparseAdam: invalid"),
    ],
)
def test_bad_arguments_raise_clear_errors(make, error, message):
    params = [nn.Parameter(chainrule.ones(2, 2)), nn.Parameter(chainrule.ones(3))]
    with pytest.raises(error, match=message):
        make(params)


def test_swap_in_steps_other_tensors_and_restores_the_optimizer(torch):
    def run(library, make):
        params = [library.tensor(w, dtype=library.float64, requires_grad=True) for w in INIT]
        optimizer = library.optim.Adam(params, lr=0.01)
        train(params, optimizer, make(X), make(Y), 3)
        others = {f"p{i}": library.tensor(w * 2, dtype=library.float64, requires_grad=True)
                  for i, w in enumerate(INIT)}  # fmt: skip
        saved = optimizer.state_dict()
        saved = {"state": {k: {n: (v.clone() if hasattr(v, "clone") else v)
                               for n, v in s.items()} for k, s in saved["state"].items()},
                 "param_groups": [dict(g, lr=0.1) for g in saved["param_groups"]]}  # fmt: skip
        with library.optim.swap_in_optimizer_params_and_state(optimizer, others, saved):
            assert optimizer.param_groups[0]["lr"] == 0.1
            train(list(others.values()), optimizer, make(X), make(Y), 2)
        assert optimizer.param_groups[0]["params"][0] is params[0]
        assert optimizer.param_groups[0]["lr"] == 0.01
        train(params, optimizer, make(X), make(Y), 1)
        return [p.detach() for p in params + list(others.values())]

    ours = run(chainrule, chainrule.tensor)
    theirs = run(torch, torch.tensor)
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.data, reference.numpy(), atol=1e-10)


def _enter(*args):
    with optim.swap_in_optimizer_params_and_state(*args):
        pass


def test_swap_in_checks_its_arguments():
    w = nn.Parameter(chainrule.ones(2))
    optimizer = optim.SGD([w], lr=0.1)
    with pytest.raises(DomainError, match="no state yet"):
        _enter(optimizer, {"w": w}, {})
    optimizer = optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    optimizer.step()
    with pytest.raises(DTypeError, match="must be a dict with 'state' and 'param_groups'"):
        _enter(optimizer, {"w": w}, {"state": {}})
    with pytest.raises(DomainError, match="got 2 parameters, the optimizer has 1"):
        _enter(optimizer, {"a": w, "b": w}, optimizer.state_dict())
