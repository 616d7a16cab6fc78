"""Attention against PyTorch: MultiheadAttention (with PyTorch's weights loaded, every mask
kind, train and eval; float32, state dicts, dropout, initialisation, errors),
scaled_dot_product_attention's dropout and multi_head_attention_forward. The
scaled_dot_product_attention table rows are in test_nn_functional.py and test_nn_surface.py."""

import math

import numpy as np
import pytest
from conftest import TORCH_TOL
from nn_checks import Fixed, assert_module_matches
from nn_checks import check_first_output as _check
from nn_checks import uniform_bound_check as _uniform_bound_check

import chainrule
import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.errors import ShapeError

RNG = np.random.default_rng(99)


def normal(*shape):
    return RNG.normal(size=shape)


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


def test_multihead_attention_init_bounds(torch):
    chainrule.manual_seed(1)
    attention = nn.MultiheadAttention(64, 4, kdim=32, add_bias_kv=True)
    for weight, fan_in in ((attention.q_proj_weight, 64), (attention.k_proj_weight, 32),
                           (attention.v_proj_weight, 64)):  # fmt: skip
        _uniform_bound_check(weight.detach().numpy(), math.sqrt(6 / (64 + fan_in)))
    _uniform_bound_check(
        nn.MultiheadAttention(64, 4).in_proj_weight.detach().numpy(), math.sqrt(6 / 256)
    )
    assert (
        not attention.in_proj_bias.detach().numpy().any()
        and not attention.out_proj.bias.detach().numpy().any()
    )
    _uniform_bound_check(attention.out_proj.weight.detach().numpy(), 1 / math.sqrt(64))
    names = [name for name, _ in attention.named_parameters()]
    theirs = torch.nn.MultiheadAttention(64, 4, kdim=32, add_bias_kv=True)
    assert names == [name for name, _ in theirs.named_parameters()]
    assert attention.bias_k.shape == (1, 1, 64)


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


# The functional forms.


def test_sdpa_dropout_one_gives_zeros():
    q = chainrule.randn(2, 3, 4)
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 3, 4)))


def _attention(lib, f, options, q, k, v, in_w, in_b, bias_k, bias_v, out_w, out_b):
    """multi_head_attention_forward of lib with 2 heads; ``options`` holds the masks (arrays),
    flags, and whether to use bias_k/bias_v ("bias")."""
    options = dict(options)
    use_bias = options.pop("bias", False)
    zero_attn = options.pop("add_zero_attn", False)
    extra = {key: lib.tensor(value) if isinstance(value, np.ndarray) else value
             for key, value in options.items()}  # fmt: skip
    return f.multi_head_attention_forward(
        q, k, v, q.shape[-1], 2, in_w, in_b, bias_k if use_bias else None,
        bias_v if use_bias else None, zero_attn, 0.0, out_w, out_b, **extra,
    )  # fmt: skip


def test_multi_head_attention_forward_matches_pytorch(torch):
    rng = np.random.default_rng(0)
    e, length, source, n = 6, 3, 4, 2
    arrays = [rng.standard_normal(shape) for shape in [
        (length, n, e), (source, n, e), (source, n, e), (3 * e, e), (3 * e,), (1, 1, e),
        (1, 1, e), (e, e), (e,)]]  # fmt: skip
    padding = np.array([[False, False, True, False], [False, False, False, True]])
    mask = np.triu(np.ones((length, source), bool), 2)
    theirs = torch.nn.functional
    for options in [{}, {"add_zero_attn": True, "key_padding_mask": padding},
                    {"attn_mask": mask, "average_attn_weights": False, "bias": True}]:  # fmt: skip
        _check(torch, lambda *xs, o=options: _attention(cr, F, o, *xs),
               lambda *xs, o=options: _attention(torch, theirs, o, *xs), arrays)  # fmt: skip
