"""The convolution modules against PyTorch (with copied weights, every padding mode), their
parameters, initialisation and argument errors. The convolution rows themselves
(chainrule.ops.conv) are tested in test_conv.py."""

import math

import numpy as np
import pytest
from conftest import TORCH_TOL
from nn_checks import check_first_output as _check
from nn_checks import compare_with_cotangent as _compare

import chainrule
import chainrule as cr
from chainrule import nn
from chainrule.errors import DomainError, DTypeError, ShapeError

RNG = np.random.default_rng(0)


def _copy_parameters(ours, theirs, torch):
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        if ours.bias is not None:
            theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize(
    ("name", "args", "kwargs", "shape"),
    [
        ("Conv2d", (4, 6, 3), dict(stride=2, padding=1), (2, 4, 7, 6)),
        (
            "Conv2d",
            (4, 6, (3, 2)),
            dict(padding="same", dilation=2, groups=2, bias=False),
            (4, 6, 5),
        ),
        ("Conv2d", (2, 4, 3), dict(padding=(1, 2), padding_mode="reflect"), (1, 2, 5, 6)),
        ("Conv2d", (2, 2, 2), dict(padding="same", padding_mode="circular"), (1, 2, 4, 4)),
        ("Conv2d", (2, 2, 3), dict(padding=1, stride=(1, 2), padding_mode="replicate"), (2, 4, 5)),
        ("Conv1d", (4, 2, 3), dict(stride=2, padding=1, groups=2), (2, 4, 9)),
        ("Conv1d", (3, 5, 4), dict(padding="same", padding_mode="reflect"), (3, 8)),
    ],
)
def test_conv_modules_match_pytorch_with_copied_weights(name, args, kwargs, shape, torch):
    ours = getattr(nn, name)(*args, **kwargs).double()
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    _copy_parameters(ours, theirs, torch)
    assert repr(ours) == repr(theirs)
    x = RNG.standard_normal(shape)
    _compare(ours, theirs, [x], torch)
    ours(chainrule.tensor(x)).sum().backward()
    theirs(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(
        ours.weight.grad.detach().numpy(), theirs.weight.grad.numpy(), **TORCH_TOL
    )
    if ours.bias is not None:
        np.testing.assert_allclose(
            ours.bias.grad.detach().numpy(), theirs.bias.grad.numpy(), **TORCH_TOL
        )
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]


def test_conv_modules_register_parameters_like_pytorch(torch):
    layer = nn.Conv2d(6, 8, (3, 5), groups=2)
    assert layer.weight.shape == (8, 3, 3, 5) and layer.bias.shape == (8,)
    assert layer.weight.dtype == np.float32
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    assert nn.Conv1d(2, 2, 3, bias=False).bias is None
    assert list(nn.Conv1d(2, 2, 3, bias=False).state_dict()) == ["weight"]
    assert nn.Conv2d(2, 2, 3, dtype=np.float64).weight.dtype == np.float64


def test_conv_init_bounds_match_pytorch(torch):
    # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as does the bias.
    chainrule.manual_seed(0)
    ours = nn.Conv2d(8, 64, 3, groups=2)
    theirs = torch.nn.Conv2d(8, 64, 3, groups=2)
    bound = 1 / math.sqrt(4 * 3 * 3)
    for mine, reference in (
        (ours.weight.detach().numpy(), theirs.weight),
        (ours.bias.detach().numpy(), theirs.bias),
    ):
        reference = reference.detach().numpy()
        assert np.abs(mine).max() <= bound and np.abs(reference).max() <= bound
        assert np.abs(mine).max() > 0.9 * bound
    weight = ours.weight.detach().numpy()
    assert abs(weight.mean()) < 0.05 * bound
    assert weight.std() == pytest.approx(bound / math.sqrt(3), rel=0.05)
    assert weight.std() == pytest.approx(theirs.weight.detach().numpy().std(), rel=0.08)
    conv1 = nn.Conv1d(5, 300, 7)
    assert np.abs(conv1.weight.detach().numpy()).max() <= 1 / math.sqrt(35)
    assert np.abs(conv1.weight.detach().numpy()).max() > 0.95 / math.sqrt(35)


def test_conv_init_is_reproducible_with_manual_seed():
    chainrule.manual_seed(3)
    first = nn.Conv2d(2, 3, 2).weight.detach().numpy().copy()
    chainrule.manual_seed(3)
    np.testing.assert_array_equal(nn.Conv2d(2, 3, 2).weight.detach().numpy(), first)


def test_conv_module_argument_errors():
    with pytest.raises(DomainError, match=r"Conv2d: in_channels=3 is not divisible by groups=2"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(DomainError, match=r"Conv1d: out_channels=5 is not divisible by groups=2"):
        nn.Conv1d(4, 5, 3, groups=2)
    with pytest.raises(DomainError, match=r"Conv2d: padding='same' needs stride 1"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(DomainError, match=r"Conv2d: padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")
    with pytest.raises(DomainError, match=r"Conv2d: padding must be 'valid', 'same'"):
        nn.Conv2d(3, 4, 3, padding="full")
    with pytest.raises(ShapeError, match=r"Conv2d: kernel_size must be an int or a tuple of 2"):
        nn.Conv2d(3, 4, (3, 3, 3))
    with pytest.raises(DTypeError, match=r"Conv1d: stride must be an int or a tuple of 1 ints"):
        nn.Conv1d(3, 4, 3, stride=1.5)


def test_conv_transpose3d_layer_matches_pytorch(torch):
    rng = np.random.default_rng(0)
    theirs = torch.nn.ConvTranspose3d(4, 6, (2, 3, 1), stride=(2, 1, 3), padding=(1, 1, 0),
                                      output_padding=(1, 0, 2), groups=2, dilation=(1, 2, 1),
                                      dtype=torch.float64)  # fmt: skip
    ours = nn.ConvTranspose3d(4, 6, (2, 3, 1), stride=(2, 1, 3), padding=(1, 1, 0),
                              output_padding=(1, 0, 2), groups=2, dilation=(1, 2, 1),
                              dtype=cr.float64)  # fmt: skip
    ours.load_state_dict({k: cr.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    assert repr(ours) == repr(theirs)
    _check(torch, ours, theirs, [rng.standard_normal((2, 4, 3, 4, 2))])
    out = ours(cr.zeros(4, 3, 4, 2, dtype=cr.float64), output_size=(5, 6, 5))
    assert out.shape == tuple(theirs(torch.zeros(4, 3, 4, 2, dtype=torch.float64),
                                     output_size=(5, 6, 5)).shape)  # fmt: skip
