"""Transformer layers against PyTorch: each module is built in both libraries, PyTorch's float64
weights are loaded into ours, and outputs, input and parameter gradients must agree (with every
mask kind). Also deep copies in the stacks, initialisation, the causal mask and errors."""

import math

import numpy as np
import pytest
from nn_checks import Fixed, assert_module_matches
from nn_checks import uniform_bound_check as _uniform_bound_check

import chainrule
from chainrule import nn
from chainrule.errors import DomainError, ShapeError

RNG = np.random.default_rng(11)

# PyTorch warns that its nested-tensor fast path is off for these small layers.
pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")


def normal(*shape):
    return RNG.normal(size=shape)


SRC = normal(5, 2, 8)  # (S, N, E)
TGT = normal(4, 2, 8)  # (T, N, E)
SRC_PADDING = Fixed([[False, False, False, True, True], [False, False, False, False, False]])
TGT_PADDING = Fixed([[False, False, False, False], [False, False, True, True]])
CAUSAL = Fixed(np.triu(np.ones((4, 4), bool), 1))
FLOAT_CAUSAL = Fixed(np.triu(np.full((4, 4), -np.inf), 1))
OPTIONS = dict(dim_feedforward=16, dropout=0.0)


def encoder_layer(lib, **options):
    return lib.nn.TransformerEncoderLayer(8, 2, **{**OPTIONS, **options})


def decoder_layer(lib, **options):
    return lib.nn.TransformerDecoderLayer(8, 2, **{**OPTIONS, **options})


# name -> (a lambda building the module from a library, the inputs, how to call it).
CASES = {
    "EncoderLayer": (lambda lib: encoder_layer(lib), [SRC], lambda m, x: m(x)),
    "EncoderLayer_norm_first_padding": (
        lambda lib: encoder_layer(lib, norm_first=True), [SRC, SRC_PADDING],
        lambda m, x, pad: m(x, src_key_padding_mask=pad)),
    "EncoderLayer_gelu_batch_first_mask": (
        lambda lib: encoder_layer(lib, activation="gelu", batch_first=True),
        [TGT.transpose(1, 0, 2), CAUSAL], lambda m, x, mask: m(x, src_mask=mask)),
    "EncoderLayer_callable_activation_no_bias": (
        lambda lib: encoder_layer(lib, activation=lib.nn.Tanh(), bias=False,
                                  layer_norm_eps=1e-3), [SRC], lambda m, x: m(x)),
    "EncoderLayer_eval_unbatched": (
        lambda lib: encoder_layer(lib, dropout=0.3).eval(), [SRC[:, 0]], lambda m, x: m(x)),
    "DecoderLayer": (lambda lib: decoder_layer(lib), [TGT, SRC],
                     lambda m, t, s: m(t, s)),
    "DecoderLayer_masks": (
        lambda lib: decoder_layer(lib), [TGT, SRC, CAUSAL, TGT_PADDING, SRC_PADDING],
        lambda m, t, s, mask, tpad, spad: m(t, s, tgt_mask=mask, tgt_key_padding_mask=tpad,
                                            memory_key_padding_mask=spad)),
    "DecoderLayer_norm_first_float_masks": (
        lambda lib: decoder_layer(lib, norm_first=True), [TGT, SRC, FLOAT_CAUSAL, normal(4, 5)],
        lambda m, t, s, mask, memory_mask: m(t, s, tgt_mask=mask, memory_mask=memory_mask,
                                             tgt_is_causal=True)),
    "Encoder_with_norm": (
        lambda lib: lib.nn.TransformerEncoder(encoder_layer(lib), 2, norm=lib.nn.LayerNorm(8)),
        [SRC, SRC_PADDING], lambda m, x, pad: m(x, src_key_padding_mask=pad)),
    "Decoder": (
        lambda lib: lib.nn.TransformerDecoder(decoder_layer(lib, batch_first=True), 2),
        [TGT.transpose(1, 0, 2), SRC.transpose(1, 0, 2), CAUSAL],
        lambda m, t, s, mask: m(t, s, tgt_mask=mask)),
    "Transformer": (
        lambda lib: lib.nn.Transformer(8, 2, 2, 1, **OPTIONS),
        [SRC, TGT, CAUSAL, SRC_PADDING, TGT_PADDING],
        lambda m, s, t, mask, spad, tpad: m(
            s, t, tgt_mask=mask, src_key_padding_mask=spad, tgt_key_padding_mask=tpad,
            memory_key_padding_mask=spad)),
    "Transformer_batch_first_norm_first_gelu": (
        lambda lib: lib.nn.Transformer(8, 2, 1, 2, activation="gelu", batch_first=True,
                                       norm_first=True, **OPTIONS),
        [SRC.transpose(1, 0, 2), TGT.transpose(1, 0, 2), FLOAT_CAUSAL],
        lambda m, s, t, mask: m(s, t, tgt_mask=mask)),
    "Transformer_unbatched_memory_mask": (
        lambda lib: lib.nn.Transformer(8, 2, 1, 1, **OPTIONS),
        [SRC[:, 0], TGT[:, 0], Fixed(RNG.uniform(size=(4, 5)) < 0.3)],
        lambda m, s, t, mask: m(s, t, memory_mask=mask)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_transformer_module_matches_torch(torch, name):
    make, inputs, call = CASES[name]
    assert_module_matches(torch, make(chainrule), make(torch), inputs, call)


@pytest.mark.parametrize("name", list(CASES))
def test_parameter_names_and_shapes_match_torch(torch, name):
    make, _, _ = CASES[name]
    assert [(name, p.shape) for name, p in make(chainrule).named_parameters()] == [
        (name, tuple(p.shape)) for name, p in make(torch).named_parameters()
    ]


def test_transformer_float32_stays_float32():
    model = nn.Transformer(8, 2, 1, 1, dim_feedforward=16)
    src, tgt = (chainrule.tensor(x, dtype=chainrule.float32) for x in (SRC, TGT))
    assert model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(4)).dtype == np.float32


def test_is_causal_without_a_mask_applies_the_causal_mask(torch):
    ours, theirs = encoder_layer(chainrule), encoder_layer(torch).double()
    ours.double().load_state_dict(theirs.state_dict())
    mine = ours(chainrule.tensor(TGT), is_causal=True)
    expected = theirs(torch.tensor(TGT), src_mask=torch.tensor(CAUSAL.array))
    np.testing.assert_allclose(mine.detach().numpy(), expected.detach().numpy(), atol=1e-12)


def test_generate_square_subsequent_mask_matches_torch(torch):
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    expected = torch.nn.Transformer.generate_square_subsequent_mask(5)
    assert mask.dtype == np.float32
    np.testing.assert_array_equal(mask.numpy(), expected.numpy())
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=chainrule.float64).dtype == (
        np.float64
    )


def test_stacks_deep_copy_the_layer():
    layer = encoder_layer(chainrule)
    encoder = nn.TransformerEncoder(layer, 3)
    weights = [block.linear1.weight for block in encoder.layers]
    assert len({id(w) for w in weights}) == 3
    assert all(w is not layer.linear1.weight for w in weights)
    np.testing.assert_array_equal(
        weights[0].detach().numpy(), weights[2].detach().numpy()
    )  # copies, not redraws
    assert len(list(encoder.parameters())) == 3 * len(list(layer.parameters()))
    decoder = nn.TransformerDecoder(decoder_layer(chainrule), 2)
    assert decoder.layers[0].multihead_attn is not decoder.layers[1].multihead_attn


def test_transformer_init_is_xavier_uniform():
    chainrule.manual_seed(6)
    model = nn.Transformer(64, 4, 1, 1, dim_feedforward=256)
    layer = model.encoder.layers[0]
    _uniform_bound_check(layer.self_attn.in_proj_weight.detach().numpy(), math.sqrt(6 / (64 + 192)))
    _uniform_bound_check(layer.linear1.weight.detach().numpy(), math.sqrt(6 / (64 + 256)))
    _uniform_bound_check(model.decoder.layers[0].self_attn.out_proj.weight.detach().numpy(),
                         math.sqrt(6 / 128))  # fmt: skip
    np.testing.assert_array_equal(model.encoder.norm.weight.detach().numpy(), 1.0)
    assert not layer.self_attn.in_proj_bias.detach().numpy().any()


def test_dropout_is_active_in_training_only():
    layer = encoder_layer(chainrule, dropout=0.5).double()
    x = chainrule.tensor(SRC)
    chainrule.manual_seed(2)
    first = layer(x)
    chainrule.manual_seed(2)
    np.testing.assert_array_equal(layer(x).detach().numpy(), first.detach().numpy())
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())
    assert not np.allclose(layer(x).detach().numpy(), first.detach().numpy())


def test_transformer_errors():
    message = r"TransformerEncoderLayer: activation should be 'relu', 'gelu' or a callable, got "
    with pytest.raises(DomainError, match=message + "'swish'"):
        nn.TransformerEncoderLayer(8, 2, activation="swish")
    with pytest.raises(DomainError, match=r"TransformerDecoderLayer: activation should be"):
        nn.TransformerDecoderLayer(8, 2, activation=3)
    model = nn.Transformer(8, 2, 1, 1, dim_feedforward=16)
    with pytest.raises(ShapeError, match=r"Transformer: src \(5, 2, 8\) and tgt \(4, 3, 8\) must "
                                         r"have the same batch size"):  # fmt: skip
        model(chainrule.zeros(5, 2, 8), chainrule.zeros(4, 3, 8))
    with pytest.raises(ShapeError, match=r"must both have d_model = 8 features"):
        model(chainrule.zeros(5, 2, 8), chainrule.zeros(4, 2, 6))
    with pytest.raises(DomainError, match=r"generate_square_subsequent_mask: device 'cuda'"):
        nn.Transformer.generate_square_subsequent_mask(3, device="cuda")
