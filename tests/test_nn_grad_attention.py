"""torch.nn.grad (the gradients of conv1d/2d/3d with respect to input and weight) and
torch.nn.attention (SDPBackend, sdpa_kernel) against PyTorch."""

import numpy as np
import pytest

import chainrule
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.errors import DTypeError
from chainrule.nn import attention, grad

RNG = np.random.default_rng(34)

# (spatial dims, input shape, weight shape, stride, padding, dilation, groups)
CASES = [
    (1, (2, 4, 9), (6, 2, 3), 2, 1, 1, 2),
    (1, (1, 3, 11), (2, 3, 2), 3, 0, 2, 1),
    (2, (2, 2, 7, 6), (4, 2, 3, 2), (2, 1), (1, 0), 1, 1),
    (2, (1, 4, 8, 8), (4, 1, 3, 3), 2, 2, (2, 1), 4),
    (3, (1, 2, 5, 6, 4), (3, 2, 2, 3, 2), (1, 2, 1), 1, 1, 1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"conv{c[0]}d-{c[1]}-{c[2]}")
def test_conv_grads_match_pytorch(torch, case):
    dims, input_shape, weight_shape, stride, padding, dilation, groups = case
    x, w = RNG.normal(size=input_shape), RNG.normal(size=weight_shape)
    options = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    out_shape = getattr(torch.nn.functional, f"conv{dims}d")(
        torch.tensor(x), torch.tensor(w), **options
    ).shape
    g = RNG.normal(size=tuple(out_shape))
    ours_input = getattr(grad, f"conv{dims}d_input")(
        input_shape, chainrule.tensor(w), chainrule.tensor(g), **options
    )
    theirs_input = getattr(torch.nn.grad, f"conv{dims}d_input")(
        input_shape, torch.tensor(w), torch.tensor(g), **options
    )
    ours_weight = getattr(grad, f"conv{dims}d_weight")(
        chainrule.tensor(x), weight_shape, chainrule.tensor(g), **options
    )
    theirs_weight = getattr(torch.nn.grad, f"conv{dims}d_weight")(
        torch.tensor(x), weight_shape, torch.tensor(g), **options
    )
    for ours, theirs in ((ours_input, theirs_input), (ours_weight, theirs_weight)):
        assert ours.dtype == chainrule.float64 and tuple(ours.shape) == tuple(theirs.shape)
        assert not ours.requires_grad
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_conv_input_grad_is_differentiable_in_the_weight(torch):
    x, w = RNG.normal(size=(1, 2, 6)), RNG.normal(size=(3, 2, 3))
    g = RNG.normal(size=(1, 3, 4))
    ours_w = chainrule.tensor(w, requires_grad=True)
    grad.conv1d_input(x.shape, ours_w, chainrule.tensor(g)).pow(2).sum().backward()
    theirs_w = torch.tensor(w, requires_grad=True)
    torch.nn.grad.conv1d_input(x.shape, theirs_w, torch.tensor(g)).pow(2).sum().backward()
    np.testing.assert_allclose(ours_w.grad.numpy(), theirs_w.grad.numpy(), rtol=1e-10)


def test_sdp_backend_matches_pytorch(torch):
    theirs = torch.nn.attention.SDPBackend
    assert [(m.name, int(m)) for m in attention.SDPBackend] == [
        (name, int(member)) for name, member in theirs.__members__.items()
    ]
    assert repr(attention.SDPBackend.MATH) == repr(theirs.MATH)
    assert attention.WARN_FOR_UNFUSED_KERNELS is torch.nn.attention.WARN_FOR_UNFUSED_KERNELS


def test_sdpa_kernel_accepts_backends_and_changes_nothing():
    q, k, v = (chainrule.tensor(RNG.normal(size=(2, 3, 5, 4))) for _ in range(3))
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    backends = attention.SDPBackend
    for choice in (backends.FLASH_ATTENTION, [backends.MATH, backends.EFFICIENT_ATTENTION]):
        with attention.sdpa_kernel(choice, set_priority=True):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        np.testing.assert_array_equal(out.numpy(), expected)
    with pytest.raises(DTypeError, match="sdpa_kernel"), attention.sdpa_kernel("flash"):
        pass
    assert nn.attention is attention and nn.grad is grad
