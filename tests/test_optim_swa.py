"""optim.swa_utils against PyTorch: AveragedModel (SWA, EMA, custom avg_fn, use_buffers), its
state_dict, SWALR's lrs, and update_bn's BatchNorm statistics."""

import numpy as np
import pytest

import chainrule
from chainrule import nn
from chainrule.errors import DomainError
from chainrule.optim import SGD, swa_utils

RNG = np.random.default_rng(34)
X = RNG.normal(size=(16, 3))
Y = RNG.normal(size=(16, 1))


def _pair(torch):
    """The same float64 Linear-BatchNorm-Tanh-Linear net in chainrule and in PyTorch."""
    ours = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.Tanh(), nn.Linear(5, 1)).double()
    theirs = torch.nn.Sequential(
        torch.nn.Linear(3, 5), torch.nn.BatchNorm1d(5), torch.nn.Tanh(), torch.nn.Linear(5, 1)
    ).double()
    with torch.no_grad():
        for mine, reference in zip(ours.parameters(), theirs.parameters()):
            reference.copy_(torch.from_numpy(mine.detach().numpy().copy()))
    return ours, theirs


def _train_and_average(library, model, averaged, steps=4):
    opt = library.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    x, y = library.tensor(X), library.tensor(Y)
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        averaged.update_parameters(model)


def _assert_same_state(ours, theirs, rtol=1e-12):
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(reference)
    for key in mine:
        np.testing.assert_allclose(
            np.asarray(mine[key]), reference[key].numpy(), rtol=rtol, atol=1e-14, err_msg=key
        )


AVERAGERS = {
    "swa": lambda lib: {},
    "swa_avg_fn": lambda lib: {"avg_fn": lib.optim.swa_utils.get_swa_avg_fn()},
    "ema_avg_fn": lambda lib: {"avg_fn": lib.optim.swa_utils.get_ema_avg_fn(0.7)},
    "ema_multi": lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn(0.7)},
    "swa_multi": lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_swa_multi_avg_fn()},
}


# PyTorch's SWA multi_avg_fn refuses integer buffers (num_batches_tracked): no use_buffers there.
CASES = [(kind, buffers) for kind in AVERAGERS for buffers in (False, True)
         if not (kind == "swa_multi" and buffers)]  # fmt: skip


@pytest.mark.parametrize(("kind", "use_buffers"), CASES)
def test_averaged_model_matches_pytorch(torch, kind, use_buffers):
    ours, theirs = _pair(torch)
    averaged_ours = swa_utils.AveragedModel(
        ours, use_buffers=use_buffers, **AVERAGERS[kind](chainrule)
    )
    averaged_theirs = torch.optim.swa_utils.AveragedModel(
        theirs, use_buffers=use_buffers, **AVERAGERS[kind](torch)
    )
    _train_and_average(chainrule, ours, averaged_ours)
    _train_and_average(torch, theirs, averaged_theirs)
    _assert_same_state(averaged_ours, averaged_theirs)
    assert averaged_ours.n_averaged.item() == 4
    # The average differs from the last weights, and the forward runs the averaged copy.
    assert not np.allclose(averaged_ours.module[0].weight.detach().numpy(),
                           ours[0].weight.detach().numpy())  # fmt: skip
    averaged_ours.eval()
    averaged_theirs.eval()
    np.testing.assert_allclose(
        averaged_ours(chainrule.tensor(X)).detach().numpy(),
        averaged_theirs(torch.tensor(X)).detach().numpy(),
        rtol=1e-12,
    )


def test_state_dict_round_trip_and_keys(torch):
    ours, theirs = _pair(torch)
    averaged = swa_utils.AveragedModel(ours)
    assert list(averaged.state_dict()) == list(
        torch.optim.swa_utils.AveragedModel(theirs).state_dict()
    )
    _train_and_average(chainrule, ours, averaged, steps=2)
    fresh = swa_utils.AveragedModel(ours)
    fresh.load_state_dict(averaged.state_dict())
    assert fresh.n_averaged.item() == 2
    np.testing.assert_array_equal(
        fresh.module[0].weight.detach().numpy(), averaged.module[0].weight.detach().numpy()
    )


def test_averaged_model_copies_and_checks():
    net = nn.Linear(2, 1)
    averaged = swa_utils.AveragedModel(net)
    assert averaged.module is not net and averaged.module.weight is not net.weight
    assert averaged.n_averaged.dtype == chainrule.int64
    with pytest.raises(DomainError, match="not both"):
        swa_utils.AveragedModel(
            net, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn()
        )
    with pytest.raises(DomainError, match="decay"):
        swa_utils.get_ema_avg_fn(1.5)
    with pytest.raises(ValueError, match="decay"):  # the class PyTorch users catch
        swa_utils.get_ema_multi_avg_fn(-0.1)


def _lrs(library, scheduler_options, epochs=14):
    first = library.zeros(2, requires_grad=True)
    second = library.zeros(2, requires_grad=True)
    opt = library.optim.SGD([{"params": [first]}, {"params": [second], "lr": 0.3}], lr=1.0)
    scheduler = library.optim.swa_utils.SWALR(opt, **scheduler_options)
    lrs = []
    for _ in range(epochs):
        opt.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr())
    return lrs


@pytest.mark.parametrize(
    "options",
    [
        {"swa_lr": 0.05},
        {"swa_lr": 0.05, "anneal_strategy": "linear", "anneal_epochs": 5},
        {"swa_lr": [0.1, 0.02], "anneal_strategy": "cos", "anneal_epochs": 3},
        {"swa_lr": 0.5, "anneal_epochs": 0},
        {"swa_lr": 0.01, "anneal_epochs": 1, "anneal_strategy": "linear"},
    ],
)
def test_swalr_matches_pytorch(torch, options):
    np.testing.assert_allclose(_lrs(chainrule, options), _lrs(torch, options), rtol=1e-13)


def test_swalr_state_and_errors():
    opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=4)
    scheduler.step()
    state = scheduler.state_dict()
    assert state["anneal_epochs"] == 4 and state["_anneal_strategy"] == "cos"
    assert opt.param_groups[0]["swa_lr"] == 0.1
    with pytest.raises(DomainError, match="anneal_strategy"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="step")
    with pytest.raises(DomainError, match="anneal_epochs"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
    with pytest.raises(DomainError, match="parameter groups"):
        swa_utils.SWALR(opt, swa_lr=[0.1, 0.2])


def test_update_bn_matches_pytorch(torch):
    ours, theirs = _pair(torch)
    ours.eval()
    theirs.eval()
    ours[1].momentum = theirs[1].momentum = 0.3
    batches = [X[:5], X[5:11], X[11:]]
    # A loader of (input, target) pairs for one library, of bare inputs for the other.
    swa_utils.update_bn([(chainrule.tensor(b), None) for b in batches], ours)
    torch.optim.swa_utils.update_bn([torch.tensor(b) for b in batches], theirs)
    _assert_same_state(ours, theirs)
    assert ours[1].num_batches_tracked.item() == 3
    assert not ours.training and ours[1].momentum == 0.3  # restored
    assert not np.allclose(ours[1].running_mean.detach().numpy(), 0)


def test_update_bn_without_batchnorm_changes_nothing():
    net = nn.Linear(2, 1)
    net.eval()
    swa_utils.update_bn([chainrule.ones(3, 2)], net)
    assert not net.training


def test_torch_names_resolve():
    from chainrule import optim

    assert optim.swa_utils.AveragedModel is swa_utils.AveragedModel
