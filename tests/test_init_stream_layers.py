"""Initial weights under one seed are PyTorch's, bit for bit: each `chainrule.nn.init`
function, each layer that draws (float64 ones too), spectral_norm and the parametrizations,
against PyTorch from the same seed, and the generator's state afterwards (the same number of
draws). orthogonal_'s QR and the power iterations are LAPACK and BLAS arithmetic, so their
values are compared to rounding."""

import math

import numpy as np
import pytest

import chainrule

SHAPES = [(3, 4), (20, 7), (5, 3, 3, 3), (1, 17)]


def _same_state(torch) -> bool:
    return np.array_equal(chainrule.get_rng_state().numpy(), torch.get_rng_state().numpy())


def _both(torch, seed: int, make):
    """``make(library)`` run on chainrule and on PyTorch from ``seed``; the two results."""
    chainrule.manual_seed(seed)
    torch.manual_seed(seed)
    return make(chainrule), make(torch)


def _init_cases():
    root2 = math.sqrt(5)
    return {
        "uniform_": lambda lib, t: lib.nn.init.uniform_(t, -0.3, 0.7),
        "normal_": lambda lib, t: lib.nn.init.normal_(t, 0.1, 0.7),
        "xavier_uniform_": lambda lib, t: lib.nn.init.xavier_uniform_(t, gain=1.5),
        "xavier_normal_": lambda lib, t: lib.nn.init.xavier_normal_(t),
        "kaiming_uniform_": lambda lib, t: lib.nn.init.kaiming_uniform_(t, a=root2),
        "kaiming_uniform_fan_out": lambda lib, t: lib.nn.init.kaiming_uniform_(
            t, mode="fan_out", nonlinearity="relu"
        ),
        "kaiming_normal_": lambda lib, t: lib.nn.init.kaiming_normal_(t, a=0.1),
        "trunc_normal_": lambda lib, t: lib.nn.init.trunc_normal_(t),
        "trunc_normal_narrow_std": lambda lib, t: lib.nn.init.trunc_normal_(t, std=0.02),
        # Little mass inside [a, b]: PyTorch's acceptance rounds, several of them.
        "trunc_normal_tail": lambda lib, t: lib.nn.init.trunc_normal_(t, 0.0, 1.0, 1.5, 3.0),
        "trunc_normal_window": lambda lib, t: lib.nn.init.trunc_normal_(t, 0.3, 1.0, -0.3, 0.5),
    }


@pytest.mark.parametrize("case", list(_init_cases()))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_init_draws_pytorchs_numbers(torch, case, dtype):
    fill = _init_cases()[case]
    for seed, shape in enumerate(SHAPES):
        ours, theirs = _both(
            torch,
            seed,
            lambda lib, shape=shape: fill(lib, lib.zeros(*shape, dtype=getattr(lib, dtype))),
        )
        assert ours.dtype == theirs.numpy().dtype
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=f"{case} {shape}")
        assert _same_state(torch), f"{case} {shape}: a different number of draws"


def test_init_draws_from_a_given_generator(torch):
    ours, theirs = chainrule.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    chainrule.manual_seed(1)
    torch.manual_seed(1)
    for fill in ("kaiming_uniform_", "xavier_normal_", "trunc_normal_"):
        a = getattr(chainrule.nn.init, fill)(chainrule.zeros(6, 5), generator=ours)
        b = getattr(torch.nn.init, fill)(torch.zeros(6, 5), generator=theirs)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(ours.get_state().numpy(), theirs.get_state().numpy())
    assert _same_state(torch)  # the default generator was not touched
    with pytest.raises(TypeError, match="chainrule.Generator"):
        chainrule.nn.init.uniform_(chainrule.zeros(3), generator=np.random.default_rng(0))


def test_sparse_zeroes_pytorchs_rows(torch):
    for seed, shape in enumerate([(10, 3), (20, 7), (1, 4)]):
        ours, theirs = _both(
            torch,
            seed,
            lambda lib, shape=shape: lib.nn.init.sparse_(lib.zeros(*shape), sparsity=0.3),
        )
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert _same_state(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_orthogonal_draws_pytorchs_gaussians(torch, dtype):
    """The normal draws are PyTorch's; Q and R come from NumPy's LAPACK, so Q matches to
    rounding."""
    for seed, shape in enumerate(SHAPES):
        ours, theirs = _both(
            torch,
            seed,
            lambda lib, shape=shape: lib.nn.init.orthogonal_(
                lib.zeros(*shape, dtype=getattr(lib, dtype)), 2.0
            ),
        )
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=1e-5)
        assert _same_state(torch)


def _float64(lib):
    return lib.float64


LAYERS = {
    "Linear": lambda lib: lib.nn.Linear(5, 3),
    "Linear_no_bias_float64": lambda lib: lib.nn.Linear(5, 3, False, dtype=_float64(lib)),
    "Bilinear": lambda lib: lib.nn.Bilinear(2, 3, 4),
    "Bilinear_float64": lambda lib: lib.nn.Bilinear(2, 3, 4, dtype=_float64(lib)),
    "Conv1d": lambda lib: lib.nn.Conv1d(4, 6, 3, groups=2),
    "Conv2d": lambda lib: lib.nn.Conv2d(3, 5, (3, 2)),
    "Conv2d_float64": lambda lib: lib.nn.Conv2d(3, 5, 3, dtype=_float64(lib)),
    "Conv3d": lambda lib: lib.nn.Conv3d(2, 3, 2, bias=False),
    "ConvTranspose1d": lambda lib: lib.nn.ConvTranspose1d(4, 6, 3, groups=2),
    "ConvTranspose2d": lambda lib: lib.nn.ConvTranspose2d(3, 5, 3),
    "ConvTranspose3d_float64": lambda lib: lib.nn.ConvTranspose3d(2, 3, 2, dtype=_float64(lib)),
    "Embedding": lambda lib: lib.nn.Embedding(10, 4),
    "Embedding_padding": lambda lib: lib.nn.Embedding(10, 4, padding_idx=2),
    "Embedding_float64": lambda lib: lib.nn.Embedding(30, 4, dtype=_float64(lib)),
    "EmbeddingBag": lambda lib: lib.nn.EmbeddingBag(10, 4, mode="sum", padding_idx=1),
    "RNN": lambda lib: lib.nn.RNN(3, 4, num_layers=2, bidirectional=True),
    "LSTM": lambda lib: lib.nn.LSTM(3, 4, num_layers=2),
    "GRU": lambda lib: lib.nn.GRU(3, 4, bias=False, bidirectional=True),
    "RNNCell": lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="relu"),
    "LSTMCell": lambda lib: lib.nn.LSTMCell(3, 4),
    "GRUCell": lambda lib: lib.nn.GRUCell(3, 4),
    "MultiheadAttention": lambda lib: lib.nn.MultiheadAttention(8, 2),
    "MultiheadAttention_kv": lambda lib: lib.nn.MultiheadAttention(
        8, 2, kdim=3, vdim=5, add_bias_kv=True
    ),
    "MultiheadAttention_no_bias": lambda lib: lib.nn.MultiheadAttention(8, 2, bias=False),
    "TransformerEncoderLayer": lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16),
    "TransformerDecoderLayer": lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16),
    "Transformer": lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16, batch_first=True),
    "PReLU": lambda lib: lib.nn.PReLU(3),
    "AdaptiveLogSoftmaxWithLoss_float64": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(
        8, 10, [3, 6], dtype=_float64(lib)
    ),
    "Sequential": lambda lib: lib.nn.Sequential(
        lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2), lib.nn.Flatten(), lib.nn.Linear(8, 3)
    ),
}


@pytest.mark.parametrize("layer", list(LAYERS))
def test_layer_starts_from_pytorchs_weights(torch, layer):
    for seed in (0, 1):
        ours, theirs = _both(torch, seed, LAYERS[layer])
        ours = [(name, p.detach().numpy()) for name, p in ours.named_parameters()]
        theirs = [(name, p.detach().numpy()) for name, p in theirs.named_parameters()]
        assert [name for name, _ in ours] == [name for name, _ in theirs]
        for (name, a), (_, b) in zip(ours, theirs):
            assert a.dtype == b.dtype, name
            np.testing.assert_array_equal(a, b, err_msg=f"{layer}.{name}")
        assert _same_state(torch), f"{layer}: a different number of draws"


def test_reset_parameters_draws_again_as_pytorch(torch):
    ours, theirs = _both(torch, 3, lambda lib: lib.nn.LSTM(2, 3))
    ours.reset_parameters()
    theirs.reset_parameters()
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert _same_state(torch)


def _at(module, path: str):
    for part in path.split("."):
        module = getattr(module, part)
    return module.detach().numpy()


@pytest.mark.parametrize(
    ("wrap", "exact", "close"),
    [
        (lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(5, 3)), ["weight_u"], ["weight_v"]),
        (
            lambda lib: lib.nn.utils.spectral_norm(lib.nn.ConvTranspose2d(3, 4, 3)),
            ["weight_orig"],
            ["weight_u", "weight_v"],
        ),
        (
            lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Conv2d(3, 20, 3)),
            ["parametrizations.weight.original"],
            ["parametrizations.weight.0._u", "parametrizations.weight.0._v", "weight"],
        ),
        (
            lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 5)),
            ["parametrizations.weight.original"],
            ["weight"],
        ),
        (
            lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(5, 3)),
            ["parametrizations.weight.original"],
            ["weight"],
        ),
    ],
)
def test_parametrizations_draw_as_pytorch(torch, wrap, exact, close):
    """The random starting vectors (spectral norm's u and v, orthogonal's completing columns)
    are PyTorch's draws; what follows them is arithmetic, matched to rounding."""
    ours, theirs = _both(torch, 0, wrap)
    assert _same_state(torch)
    for path in exact:
        np.testing.assert_array_equal(_at(ours, path), _at(theirs, path), err_msg=path)
    for path in close:
        np.testing.assert_allclose(_at(ours, path), _at(theirs, path), atol=1e-6, err_msg=path)
