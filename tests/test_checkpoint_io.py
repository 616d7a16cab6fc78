"""Checkpoints as PyTorch programs write them: {'model': ..., 'optimizer': ..., 'scheduler':
..., 'step': ..., 'config': ...} saved with chainrule.save, loaded into fresh objects, training
resuming bit-identically; unsaveable objects refused by key path; PyTorch's safetensors files
loading into the matching chainrule model."""

import re

import numpy as np
import pytest

import chainrule
from chainrule import SerializationError, load, nn, optim, save
from chainrule.optim import lr_scheduler

#: chainrule.save and load need the safetensors package: every test here runs with it.
pytestmark = pytest.mark.usefixtures("safetensors_numpy")

_RNG = np.random.default_rng(5)
INPUT = _RNG.normal(size=(16, 4)).astype(np.float32)
TARGET = _RNG.normal(size=(16, 2)).astype(np.float32)


def mlp() -> nn.Module:
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    rng = np.random.default_rng(11)
    model.load_state_dict(
        {
            name: rng.normal(0, 0.5, t.shape).astype(np.float32)
            for name, t in model.state_dict().items()
        }
    )
    return model


# (optimizer, options, scheduler built from the optimizer or None)
RUNS = {
    "SGD+OneCycleLR": (optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True},
                       lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.2, total_steps=20)),
    "Adam+SequentialLR": (optim.Adam, {"lr": 0.01, "amsgrad": True},
                          lambda o: lr_scheduler.SequentialLR(
                              o, [lr_scheduler.LinearLR(o, 0.2, total_iters=5),
                                  lr_scheduler.CosineAnnealingLR(o, T_max=15)], [5])),
    "AdamW+WarmRestarts": (optim.AdamW, {"lr": 0.01, "weight_decay": 0.1},
                           lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 3, T_mult=2)),
    "NAdam+MultiStepLR": (optim.NAdam, {"lr": 0.01, "decoupled_weight_decay": True,
                                        "weight_decay": 0.01},
                          lambda o: lr_scheduler.MultiStepLR(o, [4, 8, 8, 15], gamma=0.5)),
    "RAdam+LambdaLR": (optim.RAdam, {"lr": 0.02},
                       lambda o: lr_scheduler.LambdaLR(o, lambda epoch: 0.9**epoch)),
    "Adamax+CyclicLR": (optim.Adamax, {"lr": 0.01},
                        lambda o: lr_scheduler.CyclicLR(o, 0.001, 0.01, 3, mode="exp_range",
                                                        gamma=0.9)),
    "Adadelta+Chained": (optim.Adadelta, {"lr": 0.5, "weight_decay": 0.01},
                         lambda o: lr_scheduler.ChainedScheduler(
                             [lr_scheduler.ConstantLR(o, 0.5, 12),
                              lr_scheduler.ExponentialLR(o, 0.9)])),
    "RMSprop+PolynomialLR": (optim.RMSprop, {"lr": 0.005, "momentum": 0.5, "centered": True},
                             lambda o: lr_scheduler.PolynomialLR(o, total_iters=25, power=2.0)),
    "Adagrad+StepLR": (optim.Adagrad, {"lr": 0.05, "lr_decay": 0.01},
                       lambda o: lr_scheduler.StepLR(o, 3, 0.7)),
    "LBFGS": (optim.LBFGS, {"lr": 0.1, "history_size": 4, "max_iter": 3}, None),
    "LBFGS-wolfe": (optim.LBFGS, {"history_size": 5, "max_iter": 2,
                                  "line_search_fn": "strong_wolfe"}, None),
}  # fmt: skip


def build(name):
    make_optimizer, options, make_scheduler = RUNS[name]
    model = mlp()
    optimizer = make_optimizer(model.parameters(), **options)
    scheduler = make_scheduler(optimizer) if make_scheduler else None
    return model, optimizer, scheduler


def train(model, optimizer, scheduler, steps):
    x, y = chainrule.tensor(INPUT), chainrule.tensor(TARGET)

    def closure():
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(steps):
        if isinstance(optimizer, optim.LBFGS):
            optimizer.step(closure)
        else:
            closure()
            optimizer.step()
        if scheduler is not None:
            scheduler.step()


@pytest.mark.parametrize("name", list(RUNS))
def test_training_resumed_from_a_checkpoint_is_bit_identical(tmp_path, name):
    straight = build(name)
    train(*straight, 20)

    model, optimizer, scheduler = build(name)
    train(model, optimizer, scheduler, 10)
    path = tmp_path / "checkpoint.safetensors"
    save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict() if scheduler else None,
            "step": 10,
            "config": {"name": name, "options": RUNS[name][1], "tags": ("a", 1, None, True)},
        },
        path,
    )
    train(model, optimizer, scheduler, 3)  # the run goes on: the file must be a snapshot

    checkpoint = load(path)
    assert checkpoint["step"] == 10 and checkpoint["config"]["options"] == RUNS[name][1]
    assert checkpoint["config"]["tags"] == ("a", 1, None, True)
    fresh_model, fresh_optimizer, fresh_scheduler = build(name)
    fresh_model.load_state_dict(checkpoint["model"])
    fresh_optimizer.load_state_dict(checkpoint["optimizer"])
    if fresh_scheduler is not None:
        fresh_scheduler.load_state_dict(checkpoint["scheduler"])
    train(fresh_model, fresh_optimizer, fresh_scheduler, 10)

    for (key, expected), (_, actual) in zip(
        straight[0].state_dict().items(), fresh_model.state_dict().items()
    ):
        assert actual.numpy().tobytes() == expected.numpy().tobytes(), key
    assert [g["lr"] for g in fresh_optimizer.param_groups] == [
        g["lr"] for g in straight[1].param_groups
    ]


def test_optimizer_state_dict_round_trips_with_its_types(tmp_path):
    model, optimizer, scheduler = build("NAdam+MultiStepLR")
    train(model, optimizer, scheduler, 3)
    path = tmp_path / "opt.safetensors"
    save(optimizer.state_dict(), path)
    loaded = load(path)
    original = optimizer.state_dict()
    assert list(loaded) == ["state", "param_groups"]
    assert list(loaded["state"]) == [0, 1, 2, 3]  # int keys stay ints
    assert loaded["param_groups"] == original["param_groups"]  # betas stays a tuple
    for index, values in original["state"].items():
        assert set(loaded["state"][index]) == set(values)
        assert loaded["state"][index]["step"] == values["step"] == 3
        assert loaded["state"][index]["mu_product"] == values["mu_product"]
        np.testing.assert_array_equal(loaded["state"][index]["exp_avg"].numpy(),
                                      values["exp_avg"].numpy())  # fmt: skip


class Config:
    pass


@pytest.mark.parametrize(
    ("obj", "where", "type_name"),
    [
        ({"model": {}, "config": {"act": print}}, "config.act", "builtin_function_or_method"),
        ({"config": {"layers": [4, Config()]}}, "config.layers.1", "Config"),
        ({"optimizer": optim.SGD}, "optimizer", "type"),
        ({"tags": {"a", "b"}}, "tags", "set"),
        ({"blob": b"\x00"}, "blob", "bytes"),
        ({"steps": range(3)}, "steps", "range"),
        (Config(), "the object", "Config"),
    ],
)
def test_unsaveable_objects_raise_serialization_error_naming_key_and_type(
    tmp_path, obj, where, type_name
):
    path = tmp_path / "bad.safetensors"
    message = f"save: '{where}' has type {type_name}; only tensors"
    with pytest.raises(SerializationError, match=re.escape(message)):
        save(obj, path)
    assert not path.exists()


def test_unsaveable_key_raises_serialization_error(tmp_path):
    with pytest.raises(SerializationError, match=r"save: key \(1, 2\) in 'state' is a tuple"):
        save({"state": {(1, 2): 0}}, tmp_path / "bad.safetensors")


def _torch_models(torch):
    torch.manual_seed(0)
    mlp_pair = (
        torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)),
        nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)),
        np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32),
    )
    conv_pair = (
        torch.nn.Sequential(
            torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
            torch.nn.Flatten(), torch.nn.Linear(4 * 5 * 5, 3),
        ),
        nn.Sequential(
            nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
            nn.Linear(4 * 5 * 5, 3),
        ),
        np.random.default_rng(1).normal(size=(2, 2, 5, 5)).astype(np.float32),
    )  # fmt: skip
    return {"mlp": mlp_pair, "conv-batchnorm": conv_pair}


@pytest.mark.parametrize("kind", ["mlp", "conv-batchnorm"])
def test_a_pytorch_safetensors_state_dict_loads_into_the_matching_model(
    torch, safetensors_torch, tmp_path, kind
):
    theirs, ours, x = _torch_models(torch)[kind]
    theirs.train()
    theirs(torch.tensor(x))  # move the batch-norm running statistics off their start
    theirs.eval()
    path = tmp_path / "torch_model.safetensors"
    safetensors_torch.save_file(theirs.state_dict(), str(path))
    state = load(path)
    assert set(state) == set(theirs.state_dict())
    ours.load_state_dict(state)
    ours.eval()
    with torch.no_grad():
        expected = theirs(torch.tensor(x)).numpy()
    actual = ours(chainrule.tensor(x)).detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
