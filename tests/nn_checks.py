"""The comparisons against PyTorch that the nn tests share: a module with PyTorch's weights
loaded (`assert_module_matches`), functions on arrays (`check_with_weights`,
`check_first_output`, `compare_with_cotangent`) and the spread of uniform initialisers."""

import math

import numpy as np
from conftest import TORCH_TOL

import chainrule
import chainrule as cr


class Fixed:
    """An input given to both libraries without requires_grad (indices, masks, targets)."""

    def __init__(self, array):
        self.array = np.asarray(array)


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


def uniform_bound_check(values: np.ndarray, bound: float) -> None:
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.98 * bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.03 * bound


def _pair(torch, *arrays, grad=None):
    """Each array as a chainrule and a torch tensor (float ones requiring grad by default)."""
    ours, theirs = [], []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        needs = a.dtype.kind == "f" if grad is None else i in grad
        ours.append(cr.tensor(a, requires_grad=needs))
        theirs.append(torch.tensor(a, requires_grad=needs))
    return ours, theirs


def check_with_weights(torch, ours_fn, theirs_fn, *arrays, grad=None, rtol=1e-10, atol=1e-12):
    """Values, and the gradients of sum(out * w) for a fixed random w, agree."""
    ours, theirs = _pair(torch, *arrays, grad=grad)
    out, expected = ours_fn(*ours), theirs_fn(*theirs)
    np.testing.assert_allclose(
        out.detach().numpy(), expected.detach().numpy(), rtol=rtol, atol=atol
    )
    weights = np.random.default_rng(1).uniform(0.5, 1.5, np.shape(out.detach().numpy()))
    (out * cr.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        if b.requires_grad:
            np.testing.assert_allclose(
                a.grad.detach().numpy(), b.grad.numpy(), rtol=rtol, atol=atol
            )


def check_first_output(torch, ours, theirs, arrays, atol=1e-10):
    """ours(*chainrule tensors) and theirs(*torch tensors) agree in value and gradient."""
    xs = [cr.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = ours(*xs), theirs(*ts)
    out = out if isinstance(out, tuple) else (out,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for o, e in zip(out, expected):
        np.testing.assert_allclose(o.detach().numpy(), e.detach().numpy(), atol=atol)
    g = np.random.default_rng(1).standard_normal(out[0].shape)
    out[0].backward(cr.tensor(g))
    expected[0].backward(torch.tensor(g))
    for x, t in zip(xs, ts):
        assert (x.grad is None) == (t.grad is None)
        if x.grad is not None:
            np.testing.assert_allclose(x.grad.detach().numpy(), t.grad.numpy(), atol=atol)


def compare_with_cotangent(fn, torch_fn, arrays, torch, tol=TORCH_TOL):
    """fn on chainrule tensors and torch_fn on torch tensors: same value, same gradients."""
    ours = [chainrule.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = fn(*ours), torch_fn(*theirs)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **tol)
    cotangent = np.random.default_rng(0).standard_normal(out.shape)
    out.backward(chainrule.tensor(cotangent))
    expected.backward(torch.tensor(cotangent))
    for t, e in zip(ours, theirs):
        np.testing.assert_allclose(t.grad.detach().numpy(), e.grad.numpy(), **tol)
