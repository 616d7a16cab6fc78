"""Views' gradients summed in place: a basic-indexing view sends its base a `SliceGrad`, which
the backward pass adds into one array per base (unbind's T steps, chunk's pieces, x[:, t] in a
loop), and sums the pass made are added into in place. The values are PyTorch's, whatever
mixes of slices, whole gradients, leaves and nodes meet; the common indices take getitem's
short cut and the rest its general path, with the same results and errors."""

import numpy as np
import pytest

import chainrule
from chainrule.graph import SliceGrad
from chainrule.ops.indexing import getitem_row


def _both(torch, fn, *arrays):
    """fn on chainrule and on PyTorch leaves of ``arrays``, backward of a weighted sum;
    returns ((out, grads) ours, (out, grads) theirs)."""
    results = []
    for lib in (chainrule, torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *leaves)
        weights = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)))
        (out * weights).sum().backward()
        results.append((out.detach().numpy(), [t.grad.numpy() for t in leaves]))
    return results


CASES = {
    "unbind_restacked": lambda lib, x: lib.stack([t * (i + 1) for i, t in enumerate(x.unbind(1))]),
    "chunks_used_twice": lambda lib, x: sum(c * c + c for c in x.chunk(3, -1)),
    "overlapping_slices": lambda lib, x: x[:, 0:3] * x[:, 1:4] + x[:, 2:5],
    "slices_of_a_node": lambda lib, x: (lambda y: y[0, :3] + y[1, 1:].sum() + y[:, 2])(x.exp()),
    "slice_and_whole": lambda lib, x: x[1:2] + x.tanh() + x[::2].sum(0, keepdim=True),
    "ints_and_none": lambda lib, x: x[1, None, 2:] * x[-1, 0] + x[None, 0, 1:-1],
    "scalar_slices": lambda lib, x: lib.stack([x[i, i] for i in range(3)]) * x[0, 0],
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_slices_of_one_base_sum_to_pytorch_gradients(torch, name, dtype):
    x = np.random.default_rng(1).standard_normal((3, 6)).astype(dtype)
    (ours, our_grads), (theirs, their_grads) = _both(torch, CASES[name], x)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)
    assert our_grads[0].dtype == dtype
    np.testing.assert_allclose(our_grads[0], their_grads[0], rtol=tol, atol=tol)


def test_a_view_sends_a_slice_and_the_pass_sums_it_into_one_array(monkeypatch):
    made = []
    original = SliceGrad.__init__

    def counting(self, values, index, view):
        made.append(index)
        original(self, values, index, view)

    monkeypatch.setattr(SliceGrad, "__init__", counting)
    x = chainrule.randn(5, 4, requires_grad=True)
    sum(t.sum() for t in x.unbind(0)).backward()
    assert len(made) == 5
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((5, 4), np.float32))


def test_a_second_backward_with_retained_graph_gives_the_same_gradients():
    x = chainrule.randn(4, 6, requires_grad=True)
    y = sum(c.sin() for c in x.chunk(3, 1)) + x[:, :2]
    y.sum().backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-6)


def test_slices_keep_second_derivatives(torch):
    x = np.random.default_rng(2).standard_normal((3, 4))
    grads = []
    for lib in (chainrule, torch):
        t = lib.tensor(x, requires_grad=True)
        y = (t[:, :2] ** 3).sum() + (t[1] * t[2]).sum()
        (g,) = lib.autograd.grad(y, t, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), t)
        grads.append(h.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_a_gradient_handed_to_two_inputs_is_not_summed_into():
    # add's backward gives the same array to both inputs; neither sum may change it.
    x = chainrule.randn(3, requires_grad=True)
    y = x * 2
    z = y + y  # one array sent twice to y's node
    w = z + x[0:3]  # and a slice to x
    w.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 5.0, np.float32))


@pytest.mark.parametrize(
    "index",
    [
        (0,),
        (slice(1, 3),),
        (slice(None), 2),
        (None, 1),
        (slice(0, 4, 2), -1),
        (-3, slice(None)),
        (1, None, slice(1, None)),
    ],  # fmt: skip
)
def test_plain_indices_take_the_short_cut_with_the_general_results(index, monkeypatch):
    x = chainrule.arange(12.0).reshape(3, 4)
    calls = []
    original = getitem_row.forward
    monkeypatch.setattr(getitem_row, "forward", lambda a, index: calls.append(index) or
                        original(a, index=index))  # fmt: skip
    np.testing.assert_array_equal(x[index].numpy(), x.numpy()[index])
    assert calls == [index]


@pytest.mark.parametrize(
    "index, error",
    [
        ((3,), IndexError),
        ((0, 4), IndexError),
        ((-4,), IndexError),
        ((0, 0, 0), IndexError),
        ((slice(None, None, -1),), ValueError),
        ((slice(0, 2, 0),), ValueError),
    ],  # fmt: skip
)
def test_bad_plain_indices_give_the_general_errors(index, error):
    x = chainrule.zeros(3, 4)
    with pytest.raises(error, match="getitem"):
        x[index]
