"""The core layers and loss modules against PyTorch, one table across the families
(Linear, BatchNorm, LayerNorm, Embedding, Dropout, activations, losses): the weights are copied
from a PyTorch module (its state dict loads as it is), then outputs, input and parameter
gradients and buffers must agree in float64; also reprs, float32, BatchNorm's running
statistics over its table rows, and the layers' error messages. Each family's own tests are in
tests/test_nn_<family>.py."""

import numpy as np
import pytest
from conftest import TORCH_TOL
from nn_checks import Fixed, assert_module_matches

import chainrule
from chainrule import nn
from chainrule.errors import DomainError, ShapeError

RNG = np.random.default_rng(99)


def normal(*shape):
    return RNG.normal(size=shape)


CLASS_WEIGHT = RNG.uniform(0.5, 2.0, 4)

LOGITS = normal(5, 4)

TARGETS = Fixed(np.array([0, 3, 1, 3, 2]))


# name -> (a lambda building the module from a library, the inputs); the lambda runs on both.
CASES = {
    "Linear": (lambda lib: lib.nn.Linear(5, 3), [normal(2, 5)]),
    "Linear_no_bias": (lambda lib: lib.nn.Linear(5, 3, bias=False), [normal(2, 4, 5)]),
    "BatchNorm1d": (lambda lib: lib.nn.BatchNorm1d(3), [normal(6, 3)]),
    "BatchNorm1d_3d_cumulative": (lambda lib: lib.nn.BatchNorm1d(3, momentum=None),
                                  [normal(4, 3, 5)]),
    "BatchNorm1d_no_bias": (lambda lib: lib.nn.BatchNorm1d(3, bias=False), [normal(4, 3)]),
    "BatchNorm2d": (lambda lib: lib.nn.BatchNorm2d(3, eps=1e-3, momentum=0.2),
                    [normal(2, 3, 4, 4)]),
    "BatchNorm2d_no_affine": (lambda lib: lib.nn.BatchNorm2d(2, affine=False),
                              [normal(3, 2, 2, 3)]),
    "BatchNorm2d_untracked": (lambda lib: lib.nn.BatchNorm2d(2, track_running_stats=False),
                              [normal(3, 2, 2, 3)]),
    "LayerNorm": (lambda lib: lib.nn.LayerNorm((4, 5)), [normal(2, 4, 5)]),
    "LayerNorm_no_bias": (lambda lib: lib.nn.LayerNorm(5, eps=1e-3, bias=False),
                          [normal(3, 5)]),
    "LayerNorm_no_affine": (lambda lib: lib.nn.LayerNorm([5], elementwise_affine=False),
                            [normal(3, 5)]),
    "Embedding": (lambda lib: lib.nn.Embedding(6, 4, padding_idx=2),
                  [Fixed([[2, 0, 5], [5, 5, 2]])]),
    "Dropout_p0": (lambda lib: lib.nn.Dropout(0.0), [normal(3, 4)]),
    "ReLU": (lambda lib: lib.nn.ReLU(), [normal(3, 4)]),
    "LeakyReLU": (lambda lib: lib.nn.LeakyReLU(0.3), [normal(3, 4)]),
    "GELU": (lambda lib: lib.nn.GELU(), [normal(3, 4)]),
    "GELU_tanh": (lambda lib: lib.nn.GELU("tanh"), [normal(3, 4)]),
    "SiLU": (lambda lib: lib.nn.SiLU(), [normal(3, 4)]),
    "Sigmoid": (lambda lib: lib.nn.Sigmoid(), [normal(3, 4)]),
    "Tanh": (lambda lib: lib.nn.Tanh(), [normal(3, 4)]),
    "Softplus": (lambda lib: lib.nn.Softplus(beta=2.0, threshold=1.0), [normal(3, 4)]),
    "ELU": (lambda lib: lib.nn.ELU(alpha=0.5), [normal(3, 4)]),
    "Softmax": (lambda lib: lib.nn.Softmax(dim=0), [normal(3, 4)]),
    "LogSoftmax": (lambda lib: lib.nn.LogSoftmax(dim=1), [normal(3, 4)]),
    "CrossEntropyLoss": (
        lambda lib: lib.nn.CrossEntropyLoss(lib.tensor(CLASS_WEIGHT), ignore_index=1,
                                            label_smoothing=0.2),
        [LOGITS, TARGETS]),
    "CrossEntropyLoss_probabilities": (lambda lib: lib.nn.CrossEntropyLoss(reduction="sum"),
                                       [LOGITS, RNG.dirichlet(np.ones(4), 5)]),
    "NLLLoss": (lambda lib: lib.nn.NLLLoss(lib.tensor(CLASS_WEIGHT), reduction="none"),
                [LOGITS, TARGETS]),
    "BCELoss": (lambda lib: lib.nn.BCELoss(lib.tensor(CLASS_WEIGHT)),
                [RNG.uniform(0.1, 0.9, (5, 4)), Fixed(RNG.uniform(0, 1, (5, 4)))]),
    "BCEWithLogitsLoss": (
        lambda lib: lib.nn.BCEWithLogitsLoss(pos_weight=lib.tensor(CLASS_WEIGHT)),
        [LOGITS, RNG.uniform(0, 1, (5, 4))]),
    "MSELoss": (lambda lib: lib.nn.MSELoss(), [LOGITS, normal(5, 4)]),
    "L1Loss": (lambda lib: lib.nn.L1Loss(reduction="sum"), [LOGITS, normal(5, 4)]),
    "HuberLoss": (lambda lib: lib.nn.HuberLoss(delta=0.5), [LOGITS, normal(5, 4)]),
    "SmoothL1Loss": (lambda lib: lib.nn.SmoothL1Loss(beta=0.5), [LOGITS, normal(5, 4)]),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_layer_matches_torch(torch, name):
    make, inputs = CASES[name]
    assert_module_matches(torch, make(chainrule), make(torch), inputs)


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(torch, name):
    make, _ = CASES[name]
    assert repr(make(chainrule)) == repr(make(torch))


@pytest.mark.parametrize("name", list(CASES))
def test_float32_stays_float32(name):
    make, inputs = CASES[name]
    arrays = [i.array if isinstance(i, Fixed) else i for i in inputs]
    tensors = [chainrule.tensor(a.astype(np.float32) if a.dtype.kind == "f" else a) for a in arrays]
    assert make(chainrule).float()(*tensors).dtype == np.float32


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith("BatchNorm")])
def test_batch_norm_running_stats_over_steps_then_eval(torch, name):
    make, (x,) = CASES[name]
    ours, theirs = make(chainrule).double(), make(torch).double()
    ours.load_state_dict(theirs.state_dict())
    for step in range(4):
        batch = normal(*x.shape) * (step + 1) + step
        ours(chainrule.tensor(batch))
        theirs(torch.tensor(batch))
    for (name, mine), expected in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(mine.numpy(), expected.numpy(), **TORCH_TOL, err_msg=name)
    if ours.track_running_stats:
        assert ours.num_batches_tracked.item() == 4
        assert ours.num_batches_tracked.dtype == np.int64
    ours.eval(), theirs.eval()
    assert_module_matches(torch, ours, theirs, [normal(*x.shape)])


# Errors.


def test_layer_errors():
    with pytest.raises(ShapeError, match=r"BatchNorm1d: expected 2D or 3D input, got shape "
                                         r"\(2, 3, 4, 5\)"):  # fmt: skip
        nn.BatchNorm1d(3)(chainrule.zeros(2, 3, 4, 5))
    with pytest.raises(ShapeError, match=r"batch_norm: running_mean has shape \(3,\) but the "
                                         r"input of shape \(2, 4\) has 4 channels"):  # fmt: skip
        nn.BatchNorm1d(3)(chainrule.zeros(2, 4))
    with pytest.raises(DomainError, match=r"MultiheadAttention: embed_dim 10 must be divisible "
                                          r"by num_heads 3"):  # fmt: skip
        nn.MultiheadAttention(10, 3)
    with pytest.raises(DomainError, match=r"Embedding: padding_idx 5 is out of range"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(DomainError, match=r"MSELoss: reduction must be 'none', 'mean' or 'sum'"):
        nn.MSELoss(reduction="average")
    with pytest.raises(DomainError, match=r"Dropout: p must be a probability"):
        nn.Dropout(-0.1)
    with pytest.raises(ShapeError, match=r"linear: input has shape \(2, 3\)"):
        nn.Linear(4, 2)(chainrule.zeros(2, 3))


def test_every_public_layer_has_a_docstring():
    for name in nn.__all__:
        assert getattr(nn, name).__doc__, name
