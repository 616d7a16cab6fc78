"""AdaptiveLogSoftmaxWithLoss against PyTorch after copying its state: outputs, loss,
gradients, log_prob and predict; and its refusals of bad targets."""

import re

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.errors import OutOfRangeError, ShapeError

RNG = np.random.default_rng(0)


def test_adaptive_log_softmax_matches_pytorch_after_copying_its_state(torch):
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0,
                                                 head_bias=True).double()  # fmt: skip
    ours = nn.AdaptiveLogSoftmaxWithLoss(
        16, 20, [4, 10, 15], div_value=2.0, head_bias=True, dtype=cr.float64
    )
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    ours.load_state_dict({k: cr.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})  # fmt: skip
    x = RNG.normal(size=(9, 16))
    target = np.array([0, 3, 4, 9, 10, 14, 15, 19, 2])
    a, b = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = ours(a, cr.tensor(target)), theirs(b, torch.tensor(target))
    np.testing.assert_allclose(
        out.output.detach().numpy(), expected.output.detach().numpy(), rtol=1e-10
    )
    np.testing.assert_allclose(
        out.loss.detach().numpy(), expected.loss.detach().numpy(), rtol=1e-10
    )
    out.loss.backward()
    expected.loss.backward()
    np.testing.assert_allclose(a.grad.detach().numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    grads = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(
            grads[name].grad.detach().numpy(), p.grad.numpy(), rtol=1e-9, atol=1e-12
        )
    full = ours.log_prob(cr.tensor(x)).detach().numpy()
    np.testing.assert_allclose(full, theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.exp(full).sum(1), 1.0)
    predicted = ours.predict(cr.tensor(x))
    assert predicted.dtype == cr.int64
    assert predicted.tolist() == theirs.predict(torch.tensor(x)).tolist()
    assert predicted.tolist() == full.argmax(1).tolist()
    single = ours(cr.tensor(x[0]), cr.tensor(target[0]))
    assert single.output.shape == () and single.output.item() == pytest.approx(out.output[0].item())


def test_adaptive_log_softmax_rejects_bad_targets():
    asm = nn.AdaptiveLogSoftmaxWithLoss(4, 6, [3])
    with pytest.raises(OutOfRangeError, match=re.escape("target values must lie in [0, 5]")):
        asm(cr.zeros(2, 4), cr.tensor([0, 6]))
    with pytest.raises(ShapeError, match=r"input of shape \(2, 4\) and target of shape \(3,\)"):
        asm(cr.zeros(2, 4), cr.tensor([0, 1, 2]))
