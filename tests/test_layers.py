"""Layers and loss modules against PyTorch: the weights are copied from a PyTorch module (its
state dict loads as it is), then outputs, input and parameter gradients and buffers must agree
in float64. Also initialisation, reprs, train/eval behaviour and error messages."""

import math

import numpy as np
import pytest
from conftest import TORCH_TOL

import chainrule
from chainrule import nn
from chainrule.errors import DomainError, ShapeError

RNG = np.random.default_rng(99)


class Fixed:
    """An input given to both libraries without requires_grad (indices, masks, targets)."""

    def __init__(self, array):
        self.array = np.asarray(array)


def normal(*shape):
    return RNG.normal(size=shape)


def _tensors(library, inputs):
    return [
        library.tensor(item.array)
        if isinstance(item, Fixed)
        else library.tensor(item, requires_grad=item.dtype.kind == "f")
        for item in inputs
    ]


def _run(library, module, inputs, call):
    tensors = _tensors(library, inputs)
    outs = call(module, *tensors)
    outs = [o for o in (outs if isinstance(outs, tuple) else (outs,)) if o is not None]
    rng = np.random.default_rng(0)
    total = sum((o * library.tensor(rng.normal(size=tuple(o.shape)))).sum() for o in outs)
    total.backward()
    return (
        [o.detach().numpy() for o in outs],
        [t.grad.numpy() for t in tensors if t.requires_grad],
        {name: p.grad.numpy() for name, p in module.named_parameters()},
        {name: t.numpy() for name, t in module.state_dict().items()},
    )


def assert_module_matches(torch, ours, theirs, inputs, call=lambda m, *xs: m(*xs)):
    """Load ``theirs``'s float64 weights into ``ours``; compare a forward and backward pass."""
    theirs.double()
    ours.double().load_state_dict(theirs.state_dict())
    our_outs, our_grads, our_params, our_state = _run(chainrule, ours, inputs, call)
    their_outs, their_grads, their_params, their_state = _run(torch, theirs, inputs, call)
    assert len(our_outs) == len(their_outs)
    for mine, expected in zip(our_outs, their_outs):
        assert mine.shape == expected.shape
        np.testing.assert_allclose(mine, expected, **TORCH_TOL)
    for mine, expected in zip(our_grads, their_grads):
        np.testing.assert_allclose(mine, expected, **TORCH_TOL)
    assert list(our_params) == list(their_params)
    for name in our_params:
        np.testing.assert_allclose(our_params[name], their_params[name], **TORCH_TOL)
    assert list(our_state) == list(their_state)
    for name in our_state:
        np.testing.assert_allclose(our_state[name], their_state[name], **TORCH_TOL)


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


# MultiheadAttention.

SEQ = normal(4, 2, 8)  # (L, N, E)
MEMORY = normal(5, 2, 8)  # (S, N, E)
KEY_PADDING = Fixed([[False, False, True, False, True], [False, True, False, False, False]])
CAUSAL = Fixed(np.triu(np.ones((4, 4), bool), 1))

MHA_CASES = {
    "self": (dict(), [SEQ, SEQ, SEQ], lambda m, q, k, v: m(q, k, v)),
    "cross": (dict(), [SEQ, MEMORY, MEMORY], lambda m, q, k, v: m(q, k, v)),
    "batch_first_per_head": (
        dict(batch_first=True), [SEQ.transpose(1, 0, 2), *[MEMORY.transpose(1, 0, 2)] * 2],
        lambda m, q, k, v: m(q, k, v, average_attn_weights=False)),
    "key_padding_mask": (dict(), [SEQ, MEMORY, MEMORY, KEY_PADDING],
                         lambda m, q, k, v, pad: m(q, k, v, key_padding_mask=pad)),
    "bool_attn_mask_and_padding": (
        dict(), [SEQ, MEMORY, MEMORY, KEY_PADDING,
                 Fixed(RNG.uniform(size=(4, 5)) < 0.3)],
        lambda m, q, k, v, pad, mask: m(q, k, v, key_padding_mask=pad, attn_mask=mask)),
    "float_attn_mask_3d": (
        dict(), [SEQ, MEMORY, MEMORY, normal(4, 4, 5)],
        lambda m, q, k, v, mask: m(q, k, v, attn_mask=mask)),
    "causal_hint_no_weights": (
        dict(), [SEQ, SEQ, SEQ, CAUSAL],
        lambda m, q, k, v, mask: m(q, k, v, attn_mask=mask, is_causal=True, need_weights=False)),
    "kdim_vdim_no_bias": (
        dict(kdim=3, vdim=6, bias=False), [SEQ, normal(5, 2, 3), normal(5, 2, 6), KEY_PADDING],
        lambda m, q, k, v, pad: m(q, k, v, key_padding_mask=pad)),
    "bias_kv_zero_attn": (
        dict(add_bias_kv=True, add_zero_attn=True), [SEQ, MEMORY, MEMORY, KEY_PADDING,
                                                     Fixed(RNG.uniform(size=(4, 5)) < 0.3)],
        lambda m, q, k, v, pad, mask: m(q, k, v, key_padding_mask=pad, attn_mask=mask)),
    "unbatched": (dict(), [SEQ[:, 0], MEMORY[:, 0], MEMORY[:, 0],
                           Fixed(np.array([True, False, False, True, False]))],
                  lambda m, q, k, v, pad: m(q, k, v, key_padding_mask=pad)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(MHA_CASES))
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_multihead_attention_matches_torch(torch, name, training):
    options, inputs, call = MHA_CASES[name]
    ours = nn.MultiheadAttention(8, 2, **options).train(training)
    theirs = torch.nn.MultiheadAttention(8, 2, **options).train(training)
    assert_module_matches(torch, ours, theirs, inputs, call)


def test_multihead_attention_float32():
    attention = nn.MultiheadAttention(8, 2, dropout=0.1, add_bias_kv=True)
    x = chainrule.tensor(SEQ.astype(np.float32))
    mask = chainrule.tensor(np.triu(np.ones((4, 4), bool), 1))
    out, weights = attention(x, x, x, attn_mask=mask, key_padding_mask=chainrule.zeros(2, 4))
    assert out.dtype == weights.dtype == np.float32


def test_multihead_attention_causal_flag_builds_the_mask(torch):
    theirs = torch.nn.MultiheadAttention(8, 2).double()
    ours = nn.MultiheadAttention(8, 2).double()
    ours.load_state_dict(theirs.state_dict())
    x = chainrule.tensor(SEQ)
    out, weights = ours(x, x, x, is_causal=True)
    expected, expected_weights = theirs(*[torch.tensor(SEQ)] * 3,
                                        attn_mask=torch.tensor(CAUSAL.array))  # fmt: skip
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **TORCH_TOL)
    np.testing.assert_allclose(weights.detach().numpy(), expected_weights.detach().numpy(),
                               **TORCH_TOL)  # fmt: skip
    assert np.all(np.triu(weights.detach().numpy(), 1) == 0)


def test_multihead_attention_state_dict_round_trip(torch):
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    ours = nn.MultiheadAttention(8, 2, batch_first=True)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())  # float32 PyTorch tensors, loaded as they are
    back = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    back.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in
                          ours.state_dict().items()})  # fmt: skip
    x = normal(2, 3, 8).astype(np.float32)
    mine, _ = ours(*[chainrule.tensor(x)] * 3)
    expected, _ = back(*[torch.tensor(x)] * 3)
    np.testing.assert_allclose(mine.detach().numpy(), expected.detach().numpy(), atol=1e-5)


def test_multihead_attention_dropout_is_seeded():
    attention = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = chainrule.tensor(SEQ, dtype=chainrule.float32)  # the layer's dtype
    chainrule.manual_seed(5)
    first, _ = attention(x, x, x)
    chainrule.manual_seed(5)
    second, _ = attention(x, x, x)
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())
    attention.eval()
    out, weights = attention(x, x, x)
    np.testing.assert_allclose(weights.detach().numpy().sum(-1), 1.0, rtol=1e-6)  # float32
    assert not np.allclose(out.detach().numpy(), first.detach().numpy())


# Initialisation, checked against PyTorch's formulas.


def _uniform_bound_check(values: np.ndarray, bound: float) -> None:
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.98 * bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.03 * bound


def test_linear_init_bounds(torch):
    chainrule.manual_seed(0)
    layer = nn.Linear(300, 200)
    gain = torch.nn.init.calculate_gain("leaky_relu", math.sqrt(5))
    fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(200, 300))
    _uniform_bound_check(layer.weight.data, gain * math.sqrt(3 / fan_in))
    _uniform_bound_check(layer.bias.data, 1 / math.sqrt(fan_in))
    assert layer.weight.dtype == np.float32


def test_multihead_attention_init_bounds(torch):
    chainrule.manual_seed(1)
    attention = nn.MultiheadAttention(64, 4, kdim=32, add_bias_kv=True)
    for weight, fan_in in ((attention.q_proj_weight, 64), (attention.k_proj_weight, 32),
                           (attention.v_proj_weight, 64)):  # fmt: skip
        _uniform_bound_check(weight.data, math.sqrt(6 / (64 + fan_in)))
    _uniform_bound_check(nn.MultiheadAttention(64, 4).in_proj_weight.data, math.sqrt(6 / 256))
    assert not attention.in_proj_bias.data.any() and not attention.out_proj.bias.data.any()
    _uniform_bound_check(attention.out_proj.weight.data, 1 / math.sqrt(64))
    names = [name for name, _ in attention.named_parameters()]
    theirs = torch.nn.MultiheadAttention(64, 4, kdim=32, add_bias_kv=True)
    assert names == [name for name, _ in theirs.named_parameters()]
    assert attention.bias_k.shape == (1, 1, 64)


def test_embedding_init():
    chainrule.manual_seed(2)
    table = nn.Embedding(1000, 50, padding_idx=-1)
    assert table.padding_idx == 999
    assert not table.weight.data[999].any()
    assert abs(table.weight.data.mean()) < 0.01 and abs(table.weight.data.std() - 1) < 0.01


@pytest.mark.parametrize("make", [lambda lib: lib.nn.BatchNorm2d(5),
                                  lambda lib: lib.nn.LayerNorm([2, 3])])  # fmt: skip
def test_norm_init_matches_torch(torch, make):
    ours, theirs = make(chainrule).state_dict(), make(torch).state_dict()
    assert list(ours) == list(theirs)
    for mine, expected in zip(ours.values(), theirs.values()):
        np.testing.assert_array_equal(mine.numpy(), expected.numpy())


def test_init_is_seeded():
    chainrule.manual_seed(3)
    first = nn.Linear(4, 4).weight.data.copy()
    chainrule.manual_seed(3)
    np.testing.assert_array_equal(nn.Linear(4, 4).weight.data, first)


# Train and eval behaviour.


def test_dropout_module_train_and_eval():
    layer = nn.Dropout(0.25)
    x = chainrule.ones(100_000, dtype=chainrule.float64)
    chainrule.manual_seed(0)
    out = layer(x).numpy()
    assert abs((out == 0).mean() - 0.25) < 0.01
    np.testing.assert_allclose(out[out != 0], 1 / 0.75)
    assert layer.eval()(x) is x


def test_batch_norm_eval_without_running_stats_uses_the_batch():
    layer = nn.BatchNorm1d(2, track_running_stats=False).eval()
    out = layer(chainrule.tensor([[1.0, 5.0], [3.0, 7.0]]))
    np.testing.assert_allclose(out.detach().numpy(), [[-1, -1], [1, 1]], atol=1e-4)


def test_batch_norm_eval_does_not_update():
    layer = nn.BatchNorm1d(2).eval()
    layer(chainrule.randn(4, 2))
    np.testing.assert_array_equal(layer.running_mean.numpy(), [0.0, 0.0])
    assert layer.num_batches_tracked.item() == 0


def test_loss_modules_keep_class_weights_as_buffers():
    loss = nn.CrossEntropyLoss(weight=chainrule.ones(3))
    assert list(loss.state_dict()) == ["weight"]
    assert list(loss.parameters()) == []


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


def test_multihead_attention_errors():
    attention = nn.MultiheadAttention(8, 2)
    x = chainrule.zeros(4, 2, 8)
    with pytest.raises(ShapeError, match=r"attn_mask has shape \(3, 3\), expected \(4, 4\) or "
                                         r"\(4, 4, 4\)"):  # fmt: skip
        attention(x, x, x, attn_mask=chainrule.zeros(3, 3))
    with pytest.raises(ShapeError, match=r"key_padding_mask has shape \(4, 2\), expected "
                                         r"\(2, 4\)"):  # fmt: skip
        attention(x, x, x, key_padding_mask=chainrule.zeros(4, 2))
    with pytest.raises(ShapeError, match=r"expected last dims \(8, 8, 8\)"):
        attention(x, chainrule.zeros(4, 2, 6), x)
    with pytest.raises(ShapeError, match=r"must all be 3-D \(batched\) or 2-D"):
        attention(x, x[0], x)


def test_every_public_layer_has_a_docstring():
    for name in nn.__all__:
        assert getattr(nn, name).__doc__, name
