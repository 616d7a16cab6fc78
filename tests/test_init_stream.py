"""Under one seed every initialiser and every layer starts from PyTorch's weights, bit for bit,
and leaves the generator where PyTorch's is (the same draws, in the same order)."""

import warnings

import numpy as np
import pytest

import chainrule as cr

INITS = [
    ("uniform_", ()), ("normal_", (0.5, 0.02)), ("xavier_uniform_", ()),
    ("xavier_normal_", (2.0,)), ("kaiming_uniform_", ()), ("kaiming_normal_", (0.1, "fan_out")),
    ("trunc_normal_", ()), ("trunc_normal_", (0.0, 0.02, -0.04, 0.04)),
    ("trunc_normal_", (0.0, 1.0, 2.5, 5.0)), ("sparse_", (0.3,)),
]  # fmt: skip

LAYERS = [
    ("Linear", lambda nn: nn.Linear(20, 30)),
    ("Linear without bias", lambda nn: nn.Linear(20, 30, bias=False)),
    ("Bilinear", lambda nn: nn.Bilinear(4, 5, 6)),
    ("Conv1d", lambda nn: nn.Conv1d(3, 8, 5)),
    ("Conv2d groups", lambda nn: nn.Conv2d(4, 8, 3, groups=2)),
    ("Conv3d", lambda nn: nn.Conv3d(2, 4, 3)),
    ("ConvTranspose1d groups", lambda nn: nn.ConvTranspose1d(4, 6, 3, groups=2)),
    ("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(3, 8, 3)),
    ("Embedding", lambda nn: nn.Embedding(50, 16)),
    ("Embedding padding_idx", lambda nn: nn.Embedding(50, 16, padding_idx=3)),
    ("EmbeddingBag", lambda nn: nn.EmbeddingBag(50, 16)),
    ("RNN", lambda nn: nn.RNN(5, 7, 2)),
    ("LSTM bidirectional", lambda nn: nn.LSTM(5, 7, 2, bidirectional=True)),
    ("GRU", lambda nn: nn.GRU(5, 7, batch_first=True)),
    ("RNNCell", lambda nn: nn.RNNCell(5, 7)),
    ("LSTMCell", lambda nn: nn.LSTMCell(5, 7)),
    ("GRUCell", lambda nn: nn.GRUCell(5, 7)),
    ("MultiheadAttention", lambda nn: nn.MultiheadAttention(16, 4)),
    (
        "MultiheadAttention kdim vdim bias_kv",
        lambda nn: nn.MultiheadAttention(16, 4, kdim=8, vdim=6, add_bias_kv=True),
    ),  # fmt: skip
    ("TransformerEncoderLayer", lambda nn: nn.TransformerEncoderLayer(16, 4, 32)),
    ("TransformerDecoderLayer", lambda nn: nn.TransformerDecoderLayer(16, 4, 32)),
    ("Transformer", lambda nn: nn.Transformer(16, 2, 1, 1, 32)),
    ("PReLU and norms", lambda nn: nn.Sequential(nn.PReLU(), nn.BatchNorm2d(4), nn.LayerNorm(4))),
    (
        "a model",
        lambda nn: nn.Sequential(
            nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 26 * 26, 10)
        ),
    ),  # fmt: skip
]


def _same_stream(torch):
    return np.array_equal(cr.get_rng_state().numpy(), torch.get_rng_state().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, args", INITS, ids=[f"{n}{a}" for n, a in INITS])
def test_each_initialiser_draws_pytorchs_weights(torch, name, args, dtype):
    for seed, shape in ((0, (30, 20)), (7, (3, 64)), (2**33, (16, 4))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # trunc_normal_'s far-off mean, in both
            cr.manual_seed(seed)
            ours = getattr(cr.nn.init, name)(cr.zeros(*shape, dtype=getattr(cr, dtype)), *args)
            torch.manual_seed(seed)
            theirs = getattr(torch.nn.init, name)(
                torch.zeros(*shape, dtype=getattr(torch, dtype)), *args
            )
        assert ours.dtype == theirs.numpy().dtype
        assert np.array_equal(ours.numpy(), theirs.numpy()), (name, seed)
        assert _same_stream(torch), (name, seed)


def test_a_generator_argument_draws_from_that_generator(torch):
    ours = cr.nn.init.kaiming_uniform_(cr.zeros(8, 5), generator=cr.Generator().manual_seed(3))
    theirs = torch.nn.init.kaiming_uniform_(
        torch.zeros(8, 5), generator=torch.Generator().manual_seed(3)
    )
    assert np.array_equal(ours.numpy(), theirs.numpy())


def test_orthogonal_draws_pytorchs_normals_and_agrees_to_rounding(torch):
    for shape in ((6, 4), (3, 10), (4, 2, 3)):
        cr.manual_seed(1)
        torch.manual_seed(1)
        ours = cr.nn.init.orthogonal_(cr.zeros(*shape), gain=2.0)
        theirs = torch.nn.init.orthogonal_(torch.zeros(*shape), gain=2.0)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-5)
        assert _same_stream(torch)


@pytest.mark.parametrize("name, make", LAYERS, ids=[n for n, _ in LAYERS])
def test_each_layer_starts_from_pytorchs_weights(torch, name, make):
    cr.manual_seed(1337)
    ours = dict(make(cr.nn).named_parameters())
    torch.manual_seed(1337)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Transformer's nested-tensor advice
        theirs = dict(make(torch.nn).named_parameters())
    assert list(ours) == list(theirs)
    for key, value in theirs.items():
        assert np.array_equal(ours[key].detach().numpy(), value.detach().numpy()), key
    assert _same_stream(torch)
