"""`Tensor.data` as PyTorch's: a detached Tensor sharing memory, with a version counter of its
own. Each idiom public PyTorch programs use runs on chainrule and on PyTorch, values compared."""

import numpy as np
import pytest

import chainrule as cr

W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)
G0 = np.array([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]], dtype=np.float32)
LR = 0.1


def _both(torch, idiom):
    """``idiom(lib, p)`` on a parameter of each library holding W0 with grad G0; p's values
    after it and its result (as an array, or the value itself when it is not a tensor)."""
    found = []
    for lib, param in ((cr, cr.nn.Parameter), (torch, torch.nn.Parameter)):
        p = param(lib.tensor(W0.copy()))
        p.grad = lib.tensor(G0.copy())
        out = idiom(lib, p)
        if isinstance(out, (cr.Tensor, torch.Tensor)):
            out = out.detach().numpy().copy()
        found.append((p.detach().numpy().copy(), out))
    (mine, mine_out), (theirs, their_out) = found
    np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-7)
    if isinstance(mine_out, np.ndarray) or isinstance(their_out, np.ndarray):
        np.testing.assert_allclose(mine_out, their_out, rtol=1e-6, atol=1e-7)
    else:
        assert mine_out == their_out
    return mine


def test_data_is_a_detached_tensor_sharing_memory(torch):
    for lib in (cr, torch):
        p = lib.nn.Parameter(lib.tensor(W0.copy()))
        d = p.data
        assert type(d) is lib.Tensor  # a Parameter's data is a plain Tensor
        assert d.grad_fn is None and not d.requires_grad and d.is_leaf
        assert d._version == 0 and p._version == 0
        d.add_(1.0)
        assert p._version == 0 and d._version == 1  # a counter of its own
        np.testing.assert_array_equal(p.detach().numpy(), W0 + 1)


def test_data_add_with_lr_times_grad(torch):
    _both(torch, lambda lib, p: p.data.add_(-LR * p.grad))
    assert np.allclose(_both(torch, lambda lib, p: p.data.add_(-LR * p.grad)), W0 - LR * G0)


def test_data_add_with_alpha(torch):
    _both(torch, lambda lib, p: p.data.add_(p.grad, alpha=-LR))


def test_data_isub(torch):
    def idiom(lib, p):
        p.data -= LR * p.grad

    assert np.allclose(_both(torch, idiom), W0 - LR * G0)


def test_data_imul_keeps_the_tensor(torch):
    def idiom(lib, p):
        before = p.data
        p.data *= 2.0
        return p.data is not before  # a new Tensor per access, as PyTorch

    _both(torch, idiom)


def test_data_copy(torch):
    _both(torch, lambda lib, p: p.data.copy_(lib.tensor(G0)))


def test_data_zero_fill_mul_clamp(torch):
    _both(torch, lambda lib, p: p.data.zero_())
    _both(torch, lambda lib, p: p.data.fill_(3.5))
    _both(torch, lambda lib, p: p.data.mul_(0.5))
    _both(torch, lambda lib, p: p.data.clamp_(-0.6, 0.6))
    _both(torch, lambda lib, p: p.data.clamp_(min=0.0))


def test_data_random_fills_change_the_parameter(torch):
    for lib in (cr, torch):
        p = lib.nn.Parameter(lib.zeros(200, 3))
        p.data.normal_(0.0, 0.02)
        assert 0.01 < float(p.detach().std()) < 0.03 and p._version == 0
        p.data.uniform_(-0.5, 0.5)
        values = p.detach().numpy()
        assert values.min() >= -0.5 and values.max() < 0.5 and values.std() > 0.2


def test_data_setitem(torch):
    def idiom(lib, p):
        p.data[0, 1] = 7.0
        p.data[1] = lib.tensor([1.0, 2.0, 3.0])
        p.data[:, 2] = 0.0

    _both(torch, idiom)


def test_grad_data_zero(torch):
    def idiom(lib, p):
        p.grad.data.zero_()
        return p.grad

    _both(torch, idiom)


def test_reading_values_through_data(torch):
    _both(torch, lambda lib, p: p.data.numpy().copy())
    _both(torch, lambda lib, p: p.data.cpu().numpy().copy())
    _both(torch, lambda lib, p: tuple(p.data.shape))
    _both(torch, lambda lib, p: tuple(p.data.size()))
    _both(torch, lambda lib, p: (p * p).sum().data.item())
    _both(torch, lambda lib, p: p.data.sum().item())


def test_assigning_data(torch):
    for lib in (cr, torch):
        p = lib.nn.Parameter(lib.tensor(W0.copy()))
        other = lib.ones(4, dtype=lib.float64)
        p.data = other  # shape and dtype change; the memory is other's
        assert tuple(p.shape) == (4,) and p.dtype == lib.float64 and p.requires_grad
        other.add_(1.0)
        np.testing.assert_array_equal(p.detach().numpy(), np.full(4, 2.0))
        assert isinstance(p, lib.nn.Parameter) and p._version == 0
        with pytest.raises(TypeError):
            p.data = np.zeros(3)
        with pytest.raises(TypeError):
            p.data = 3.0
        with pytest.raises(RuntimeError, match="floating point"):
            p.data = lib.tensor([1, 2])


def test_data_of_a_view_a_transpose_and_a_scalar(torch):
    for lib in (cr, torch):
        base = lib.tensor(W0.copy())
        row = base[1]
        d = row.data
        assert not d._is_view()
        d.mul_(10.0)
        np.testing.assert_allclose(base.numpy()[1], W0[1] * 10)
        t = base.t()
        assert not t.data.is_contiguous() and tuple(t.data.shape) == (3, 2)
        t.data[0, 0] = -1.0
        assert base[0, 0].item() == -1.0
        s = lib.tensor(2.5, requires_grad=True)
        assert s.data.shape == s.shape and s.data.item() == 2.5 and s.data.dim() == 0
        s.data.add_(1.0)
        assert s.item() == 3.5


def test_backward_after_a_data_update_does_not_raise(torch):
    for lib in (cr, torch):
        p = lib.nn.Parameter(lib.tensor(W0.copy()))
        loss = (p * p).sum()  # saves p for backward
        p.data.add_(1.0)
        loss.backward()  # as PyTorch: .data's writes are not seen by the check
        np.testing.assert_allclose(p.grad.numpy(), 2 * (W0 + 1), rtol=1e-6)

        q = lib.nn.Parameter(lib.tensor(W0.copy()))
        loss = (q * q).sum()
        with lib.no_grad():
            q.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation|in place"):
            loss.backward()


def test_in_place_on_data_with_a_tensor_that_requires_grad(torch):
    for lib in (cr, torch):
        p = lib.nn.Parameter(lib.tensor(W0.copy()))
        x = lib.tensor(G0.copy(), requires_grad=True)
        d = p.data
        d.add_(x)  # recorded on the new tensor, never on p
        assert d.grad_fn is not None and p.grad_fn is None and p.is_leaf
        np.testing.assert_allclose(p.detach().numpy(), W0 + G0)


def test_data_under_vmap_and_no_grad():
    with cr.no_grad():
        w = cr.ones(3, requires_grad=True)
        w.data.sub_(0.5)
    assert w.tolist() == [0.5, 0.5, 0.5] and w.requires_grad
    out = cr.func.vmap(lambda x: x.data * 2)(cr.arange(6.0).reshape(2, 3))
    assert out.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]


def test_a_scalar_parameters_grad_data_is_written_in_place(torch):
    for lib in (cr, torch):
        s = lib.nn.Parameter(lib.tensor(0.5))
        (s * s).backward()  # a 0-d gradient
        s.grad.data.mul_(3.0)
        assert s.grad.item() == 3.0
        s.grad.data.zero_()
        assert s.grad.item() == 0.0
        s.data.add_(s.grad, alpha=-LR)
