"""Views and in-place ops, as PyTorch computes them: a view shares its base's memory and
version counter, an in-place op on a view rewrites the base's history (copy_slices), and every
view's history follows. Each program runs on chainrule and on PyTorch, written once."""

import numpy as np
import pytest

import chainrule
from chainrule import GraphError


def _grads(lib, program):
    x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([2.0, -3.0, 0.25], dtype=lib.float64, requires_grad=True)
    out = program(x, w)
    (out.sum() + (w * 0).sum()).backward()  # w.grad exists where a program does not use w
    return [out.detach().numpy(), x.grad.numpy(), w.grad.numpy()]


def _slice_mul(x, w):  # the issue's first example, in two dims
    y = x * 1
    y[0, :2].mul_(5)
    return y


def _transposed(x, w):
    y = x * 1
    y.T.mul_(2)
    return y * y


def _squeezed(x, w):
    y = (x * 1)[:1]
    y.squeeze(0).mul_(w)
    return y * y


def _view_then_index(x, w):
    y = x * 1
    y.view(3, 2)[1].mul_(w[:2])
    return y * y


def _needs_old_value(x, w):  # y *= w keeps y's old values for w's gradient
    y = x * 1
    y *= w
    return y


def _other_view_reads_after(x, w):  # b overlaps a: b's history must see a's change
    y = x * 1
    a, b = y[:, :2], y[:, 1:]
    a.mul_(10)
    return b * b


def _view_after_base_changes(x, w):  # a view made before an in-place op on its base
    y = x * 1
    a = y[1]
    y.mul_(w)
    return a * a


def _base_without_grad(x, w):  # the base needs no grad until the write brings w in
    base = x.detach() * 0
    base[0, 1:].add_(w[:2] * 2)
    return base * base + x


def _setitem_on_view(x, w):
    y = x * 1
    row = y[1]
    row[0] = w[2] * 4
    return y * row


def _view_of_view_chain(x, w):
    y = x * 1
    y.T[1:, 0].mul_(w[:2])
    y.reshape(6)[::2].add_(1)
    return y * y


def _narrow_select_unbind(x, w):
    y = x * 1
    y.narrow(1, 1, 2).mul_(w[1:])
    y.select(0, 1).add_(w)
    # PyTorch refuses in-place ops on unbind's pieces (differences.md): select is its spelling
    first = y.unbind(0)[0] if isinstance(y, chainrule.Tensor) else y.select(0, 0)
    first.mul_(3)
    return y * y


def _movedim_swapaxes_t(x, w):
    y = x * 1
    y.movedim(0, 1)[2].mul_(w[:2])
    y.swapaxes(0, 1)[0].add_(w[1:])
    y.t()[1].mul_(5)
    return y * y


def _chunks(x, w):  # PyTorch refuses in-place on split's pieces: narrow is its spelling
    y = x * 1
    a, b = (
        y.chunk(2, 1) if isinstance(y, chainrule.Tensor) else (y.narrow(1, 0, 2), y.narrow(1, 2, 1))
    )
    a.mul_(w[:2])
    b.add_(1)
    return y * y


PROGRAMS = [
    _slice_mul, _transposed, _squeezed, _view_then_index, _needs_old_value,
    _other_view_reads_after, _view_after_base_changes, _base_without_grad, _setitem_on_view,
    _view_of_view_chain, _narrow_select_unbind, _movedim_swapaxes_t, _chunks,
]  # fmt: skip


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.strip("_"))
def test_in_place_through_views_gives_pytorchs_values_and_gradients(program, torch):
    ours, theirs = _grads(chainrule, program), _grads(torch, program)
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_the_issues_example_in_one_dimension():
    x = chainrule.tensor([1.0, 1.0, 1.0], requires_grad=True)
    y = x * 1
    y[:2].mul_(5)
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0, 1.0]


def test_second_derivatives_through_an_in_place_op_on_a_view(torch):
    results = []
    for lib in (chainrule, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x * x
        y[1:].mul_(x[:2])
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        results.append((g.detach().numpy(), h.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-13)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-13)


def test_forward_mode_through_an_in_place_op_on_a_view():
    def f(x):
        y = x * 1
        y[1:].mul_(x[:2])
        return y * y

    x, dx = chainrule.tensor([1.0, 2.0, 3.0]), chainrule.tensor([1.0, 0.0, 2.0])
    _, tangent = chainrule.func.jvp(f, (x,), (dx,))
    jacobian = chainrule.func.jacrev(f)(x)
    np.testing.assert_allclose(tangent.numpy(), (jacobian @ dx).numpy(), rtol=1e-6)


def test_refusals_match_pytorchs():
    leaf = chainrule.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(GraphError, match="mul_: this tensor is a view of a leaf tensor"):
        leaf[:2].mul_(2)
    with pytest.raises(GraphError, match="read-only"):
        (leaf * 1)[:1].expand(3).add_(1)
    with chainrule.no_grad():  # as an optimizer or an initialiser writes
        leaf[:2].mul_(2)
    assert leaf.tolist() == [2.0, 4.0, 3.0] and leaf.grad_fn is None


def test_views_know_their_base():
    x = chainrule.zeros(2, 3)
    assert x[0]._base is x and x.T[1:]._base is x and x.reshape(6)._base is x
    assert x._base is None and not x._is_view() and x[0]._is_view()
    assert not x.T.reshape(6)._is_view()  # NumPy had to copy: not a view, as in PyTorch
    assert x[0]._version == x._version
    x[0].add_(1)
    assert x._version == 1 and x.reshape(6).tolist() == [1, 1, 1, 0, 0, 0]
