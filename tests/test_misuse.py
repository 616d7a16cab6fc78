"""The misuse table: mistakes a PyTorch user makes, each run on chainrule and on PyTorch. Both
must refuse it; chainrule's exception is a ChainruleError that is also an instance of the
class PyTorch raises (so the user's ``except`` works either way), and its message names the
op and what is wrong (shapes, dtypes, values)."""

# ruff: noqa: E501  (the table reads best as one misuse per line)
import re

import numpy as np
import pytest

import chainrule
from chainrule import ChainruleError


def _backward_twice(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _modified_after_saved(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = (h * h).sum()
    h.add_(1)
    y.backward()


def _linear_wrong_features(lib):
    lib.manual_seed(0)
    lib.nn.Linear(3, 2)(lib.zeros(4, 5))


def _conv_wrong_channels(lib):
    lib.manual_seed(0)
    lib.nn.Conv2d(3, 4, 3)(lib.zeros(1, 2, 5, 5))


def _state_dict(lib, change):
    lib.manual_seed(0)
    model = lib.nn.Linear(2, 2)
    state = dict(model.state_dict())
    change(state, lib)
    model.load_state_dict(state)


def _optimizer(lib, **options):
    lib.optim.SGD([lib.zeros(2, requires_grad=True)], **options)


def _adam(lib, **options):
    lib.optim.Adam([lib.zeros(2, requires_grad=True)], **options)


def _rand(lib, shape):
    return lib.ones(*shape)


#: (name, program run on both libraries as ``program(lib)``, what chainrule's message says).
MISUSES = [
    # Shapes.
    ("matmul shapes", lambda lib: _rand(lib, (3, 4)) @ _rand(lib, (5, 2)), r"matmul.*\(3, 4\).*\(5, 2\)"),
    ("broadcast add", lambda lib: _rand(lib, (3,)) + _rand(lib, (4,)), r"add.*\(3,\).*\(4,\)"),
    ("cat sizes", lambda lib: lib.cat([_rand(lib, (2, 3)), _rand(lib, (2, 4))]), r"cat: sizes must match .*\(2, 3\) and \(2, 4\)"),
    ("stack shapes", lambda lib: lib.stack([_rand(lib, (2,)), _rand(lib, (3,))]), r"stack: .*same shape.*\(2,\) at position 0 and \(3,\) at position 1"),
    ("reshape size", lambda lib: _rand(lib, (2, 3)).reshape(4, 2), r"reshape.*\(2, 3\).*\(4, 2\)"),
    ("reshape two -1", lambda lib: _rand(lib, (2, 3)).reshape(-1, -1), r"reshape.*-1"),
    ("expand size", lambda lib: _rand(lib, (2, 3)).expand(4, 3), r"expand.*\(2, 3\).*\(4, 3\)"),
    ("dim out of range", lambda lib: _rand(lib, (2, 3)).sum(dim=2), r"sum.*dim.*2"),
    ("transpose dim", lambda lib: _rand(lib, (2, 3)).transpose(0, 2), r"transpose.*2"),
    ("softmax dim", lambda lib: _rand(lib, (2, 3)).softmax(dim=-3), r"softmax.*-3"),
    ("index out of range", lambda lib: _rand(lib, (3,))[5], r"5.*3"),
    ("permute dims", lambda lib: _rand(lib, (2, 3)).permute(1, 0, 2), r"permute: dims \(1, 0, 2\) .*2 dimensions.*\(2, 3\)"),
    ("gather index dims", lambda lib: lib.gather(_rand(lib, (2, 3)), 1, lib.zeros(2, dtype=lib.int64)), r"gather: index of shape \(2,\) .*dimensions.*\(2, 3\)"),
    ("linear features", _linear_wrong_features, r"linear: input has shape \(4, 5\).*in_features = 3"),
    ("conv channels", _conv_wrong_channels, r"conv2d.*channel"),
    ("mse shapes", lambda lib: lib.nn.functional.mse_loss(_rand(lib, (2, 3)), _rand(lib, (3, 2))), r"mse_loss.*\(2, 3\).*\(3, 2\)"),
    ("cross_entropy target shape", lambda lib: lib.nn.functional.cross_entropy(_rand(lib, (4, 3)), lib.zeros(5, dtype=lib.int64)), r"cross_entropy: .*\(4, 3\).*target has shape \(5,\); expected target shape \(4,\)"),
    ("backward gradient shape", lambda lib: (lib.ones(2, requires_grad=True) * 2).backward(lib.ones(3)), r"backward.*\(3,\).*\(2,\)"),
    # Values.
    ("nll target out of range", lambda lib: lib.nn.functional.nll_loss(_rand(lib, (2, 3)), lib.tensor([0, 5])), r"nll_loss.*5"),
    ("embedding index out of range", lambda lib: lib.nn.functional.embedding(lib.tensor([4]), _rand(lib, (3, 2))), r"embedding.*4"),
    ("item of many", lambda lib: _rand(lib, (2,)).item(), r"item.*2"),
    ("bool of many", lambda lib: bool(_rand(lib, (2,))), r"bool: .*shape \(2,\) has no single truth value"),
    ("dropout p", lambda lib: lib.nn.Dropout(1.5), r"[Dd]ropout.*1.5"),
    # Dtypes.
    ("int requires grad", lambda lib: lib.zeros(2, dtype=lib.int64, requires_grad=True), r"requires_grad.*int64"),
    ("embedding float indices", lambda lib: lib.nn.functional.embedding(lib.tensor([0.0]), _rand(lib, (3, 2))), r"embedding.*float"),
    ("cross_entropy float classes", lambda lib: lib.nn.functional.cross_entropy(_rand(lib, (2, 3)), lib.tensor([0.5, 1.0])), r"cross_entropy: .*\(2, 3\).*target has shape \(2,\); they must be the same"),
    ("matmul int float", lambda lib: lib.ones(2, 2, dtype=lib.int64) @ lib.ones(2, 2), r"matmul.*int64.*float32"),
    # The graph.
    ("backward twice", _backward_twice, r"second time.*retain_graph"),
    ("backward non-scalar", lambda lib: (lib.ones(2, requires_grad=True) * 2).backward(), r"backward.*\(2,\)"),
    ("backward without grad", lambda lib: lib.ones(2).sum().backward(), r"backward.*require"),
    ("in-place on leaf", lambda lib: lib.ones(2, requires_grad=True).add_(1), r"add_.*leaf"),
    ("in-place on a view of a leaf", lambda lib: lib.ones(2, requires_grad=True)[:1].mul_(2), r"mul_.*view of a leaf"),
    ("saved tensor modified", _modified_after_saved, r"modified in place by add_"),
    ("grad unused input", lambda lib: lib.autograd.grad((lib.ones(1, requires_grad=True) * 2).sum(), [lib.ones(1, requires_grad=True)]), r"grad.*not used|allow_unused"),
    ("numpy of requires grad", lambda lib: lib.ones(2, requires_grad=True).numpy(), r"numpy.*detach"),
    ("grad of the wrong shape", lambda lib: setattr(lib.ones(2, requires_grad=True), "grad", lib.ones(3)), r"grad.*\(3,\).*\(2,\)"),
    # Optimizers.
    ("sgd negative lr", lambda lib: _optimizer(lib, lr=-0.1), r"lr.*-0.1"),
    ("sgd negative momentum", lambda lib: _optimizer(lib, lr=0.1, momentum=-1.0), r"momentum.*-1"),
    ("sgd negative weight decay", lambda lib: _optimizer(lib, lr=0.1, weight_decay=-1.0), r"weight_decay.*-1"),
    ("adam beta", lambda lib: _adam(lib, betas=(1.5, 0.9)), r"beta.*1.5"),
    ("adam eps", lambda lib: _adam(lib, eps=-1.0), r"eps.*-1"),
    ("optimizer without parameters", lambda lib: lib.optim.SGD([], lr=0.1), r"SGD: got an empty parameter list"),
    ("optimizer given a tensor", lambda lib: lib.optim.SGD(lib.zeros(2, requires_grad=True), lr=0.1), r"SGD: params must be an iterable .*got a single Tensor; pass \[tensor\]"),
    # state_dict.
    ("state_dict missing key", lambda lib: _state_dict(lib, lambda s, lib: s.pop("bias")), r"[Mm]issing.*bias"),
    ("state_dict unexpected key", lambda lib: _state_dict(lib, lambda s, lib: s.update(extra=lib.zeros(1))), r"[Uu]nexpected.*extra"),
    ("state_dict shape", lambda lib: _state_dict(lib, lambda s, lib: s.update(bias=lib.zeros(3))), r"bias.*\(3,\).*\(2,\)"),
    # Creation.
    ("arange zero step", lambda lib: lib.arange(0, 5, 0), r"arange.*step"),
    ("randint empty range", lambda lib: lib.randint(5, 3, (2,)), r"randint.*5.*3"),
    ("ragged data", lambda lib: lib.tensor([[1.0, 2.0], [3.0]]), r"tensor: data is not rectangular"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "program", "message"), MISUSES, ids=[m[0] for m in MISUSES])
def test_a_misuse_is_refused_as_pytorch_refuses_it_with_a_clear_message(
    name, program, message, torch
):
    with pytest.raises(Exception) as theirs:
        program(torch)
    with pytest.raises(Exception) as ours:
        program(chainrule)
    error = ours.value
    expected = type(theirs.value)
    assert isinstance(error, ChainruleError), f"{name}: a bare {type(error).__name__}: {error}"
    assert isinstance(error, expected), (
        f"{name}: PyTorch raises {expected.__name__}, chainrule {type(error).__mro__[1:]}"
    )
    assert re.search(message, str(error)), f"{name}: {error}"


def test_the_table_is_long_enough_to_mean_something():
    assert len(MISUSES) >= 40
    assert len({name for name, _, _ in MISUSES}) == len(MISUSES)
    assert np.all([callable(program) for _, program, _ in MISUSES])
