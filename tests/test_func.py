"""Function transforms (chainrule.func), checkpointing and op counting."""

import math
import weakref

import numpy as np
import pytest
from conftest import Cube

import chainrule
from chainrule import DomainError, GraphError, ShapeError, Tensor, func
from chainrule.checkpoint import checkpoint, checkpoint_sequential


def t64(values):
    """A float64 tensor."""
    return Tensor(np.asarray(values, dtype=np.float64))


def test_grad_and_its_compositions():
    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    x = t64([0.3, -1.1])
    v = x.detach().numpy()
    np.testing.assert_allclose(func.grad(f)(x).detach().numpy(), np.cos(v) * v + np.sin(v))
    second = func.grad(lambda y: func.grad(f)(y).sum())(x)
    np.testing.assert_allclose(second.detach().numpy(), -np.sin(v) * v + 2 * np.cos(v))
    third = func.grad(lambda y: func.grad(lambda z: func.grad(f)(z).sum())(y).sum())(x)
    np.testing.assert_allclose(third.detach().numpy(), -np.cos(v) * v - 3 * np.sin(v))


def test_grad_argnums_and_has_aux():
    f = lambda x, y: ((x * y).sum(), x + y)  # noqa: E731
    (gx, gy), aux = func.grad(f, argnums=(0, 1), has_aux=True)(t64([1.0, 2.0]), t64([3.0, 4.0]))
    assert gx.tolist() == [3.0, 4.0] and gy.tolist() == [1.0, 2.0] and aux.tolist() == [4.0, 6.0]
    (value, _), g = func.value_and_grad(f, has_aux=True)(t64([1.0, 2.0]), t64([3.0, 4.0]))
    assert value.item() == 11.0 and g.tolist() == [3.0, 4.0]


def test_grad_leaves_inputs_and_results_without_history():
    x = t64([1.0, 2.0])
    g = func.grad(lambda t: (t**2).sum())(x)
    assert not x.requires_grad and x.grad is None and g.grad_fn is None


def test_grad_needs_a_scalar_output():
    with pytest.raises(ShapeError, match=r"grad: f must return a one-element Tensor, got \(2,\)"):
        func.grad(lambda x: x * 2)(t64([1.0, 2.0]))


def test_grad_of_a_function_that_ignores_its_input_is_zero():
    assert func.grad(lambda x: Tensor(3.0))(t64([1.0, 2.0])).tolist() == [0.0, 0.0]


def test_vjp_matches_the_jacobian_transpose():
    a = np.arange(6.0).reshape(2, 3)
    out, vjp_fn = func.vjp(lambda x: Tensor(a) @ x.tanh(), t64([0.1, 0.2, 0.3]))
    (g,) = vjp_fn(t64([1.0, -1.0]))
    np.testing.assert_allclose(
        g.detach().numpy(), (np.array([1.0, -1.0]) @ a) * (1 - np.tanh([0.1, 0.2, 0.3]) ** 2)
    )
    with pytest.raises(ShapeError, match=r"vjp: cotangent has shape \(3,\) but the output"):
        vjp_fn(t64([1.0, 2.0, 3.0]))


def test_jvp_is_one_forward_pass_with_tangents():
    out, tangent = func.jvp(
        lambda x, y: (x * y).exp() + x.tanh(), (t64([1.0, 2.0]), t64([0.5, 0.1])),
        (t64([1.0, 0.0]), t64([0.0, 0.0])),
    )  # fmt: skip
    expected = 0.5 * np.exp(0.5) + 1 - np.tanh(1.0) ** 2
    np.testing.assert_allclose(tangent.detach().numpy(), [expected, 0.0])
    assert out.grad_fn is None


def test_jvp_rejects_mismatched_tangents_and_reverse_over_forward():
    with pytest.raises(ShapeError, match=r"jvp: tangent has shape \(3,\) but its primal"):
        func.jvp(lambda x: x, (t64([1.0, 2.0]),), (t64([1.0, 2.0, 3.0]),))
    with pytest.raises(GraphError, match="reverse mode over forward mode is not supported"):
        func.grad(lambda x: func.jvp(lambda y: y.sin(), (x,), (t64(1.0),))[1])(t64(0.5))


def vector_function(x):
    """R^3 -> R^2."""
    return chainrule.stack([(x[0] * x[1]).sin(), x[2].exp() * x[0]])


def test_jacrev_and_jacfwd_match_pytorch(torch):
    x = np.array([0.4, -0.7, 1.2])
    expected = torch.func.jacrev(lambda t: torch.stack([(t[0] * t[1]).sin(), t[2].exp() * t[0]]))(
        torch.tensor(x)
    )
    for transform in (func.jacrev, func.jacfwd, func.jacobian):
        jac = transform(vector_function)(t64(x))
        assert jac.shape == (2, 3)
        np.testing.assert_allclose(jac.detach().numpy(), expected.numpy(), rtol=1e-12)


def test_hessian_of_a_small_mlp_loss_matches_pytorch(torch):
    rng = np.random.default_rng(0)
    data, target = rng.standard_normal((5, 3)), rng.standard_normal((5, 1))
    w1, w2 = rng.standard_normal((3, 4)), rng.standard_normal((4, 1))

    def loss(lib, flat):
        a, b = flat[:12].reshape(3, 4), flat[12:].reshape(4, 1)
        hidden = (lib.tensor(data) @ a).tanh()
        return ((hidden @ b - lib.tensor(target)) ** 2).mean()

    flat = np.concatenate([w1.ravel(), w2.ravel()])
    ours = func.hessian(lambda p: loss(chainrule, p))(t64(flat))
    theirs = torch.func.hessian(lambda p: loss(torch, p))(torch.tensor(flat))
    assert ours.shape == (16, 16)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)


def looped(monkeypatch, transform, *args):
    """``transform(*args)`` forced onto jacrev's per-row loop (one backward per output)."""
    with monkeypatch.context() as patch:
        patch.setattr(func.transforms, "_batched_rows", lambda *_: None)
        return transform(*args)


def test_jacrev_runs_every_row_in_one_batched_backward_pass(monkeypatch):
    rng = np.random.default_rng(1)
    a = t64(rng.standard_normal((6, 4)))
    f = lambda x: (a @ x).tanh()  # noqa: E731
    x = t64([0.3, -0.2, 0.9, 0.1])
    with chainrule.count_ops() as batched:
        jac = func.jacrev(f)(x)
    with chainrule.count_ops() as per_row:
        expected = looped(monkeypatch, func.jacrev(f), x)
    # tanh's node sends one gradient (2 backward ops): once in all, not once per row.
    assert batched.backward["tanh"] == 2 and per_row.backward["tanh"] == 2 * 6
    assert jac.shape == (6, 4) and jac.grad_fn is None
    np.testing.assert_allclose(jac.detach().numpy(), expected.detach().numpy(), rtol=0, atol=1e-12)


def test_hessian_batches_its_outer_jacrev_and_agrees_with_the_loop(monkeypatch):
    rng = np.random.default_rng(2)
    a = t64(rng.standard_normal((7, 5)) / 3)
    f = lambda x: (a @ x).tanh().sum() + (x**3).sum() * x[0]  # noqa: E731
    x = t64(rng.standard_normal(5))
    with chainrule.count_ops() as batched:
        h = func.hessian(f)(x)
    with chainrule.count_ops() as per_row:
        expected = looped(monkeypatch, func.hessian(f), x)
    assert batched.backward_total * 3 < per_row.backward_total
    np.testing.assert_allclose(h.detach().numpy(), expected.detach().numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(h.detach().numpy(), h.detach().numpy().T, atol=1e-12)


def test_nested_batched_jacrev_stays_differentiable(monkeypatch):
    # The inner jacrev has 2 outputs, so its rows are batched with create_graph.
    x = t64([0.4, -0.7, 1.2])
    second = func.jacrev(func.jacrev(vector_function))
    expected = looped(monkeypatch, second, x)
    got = second(x)
    assert got.shape == (2, 3, 3)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=0, atol=1e-12)


def test_jacrev_falls_back_to_one_pass_per_row(monkeypatch):
    # Cube's backward works on arrays: it cannot take a batch of cotangents.
    x = t64([1.0, 2.0, -1.0])
    with chainrule.count_ops() as counts:
        jac = func.jacrev(lambda t: Cube.apply(t).sin())(x)
    assert counts.backward["sin"] == 2 * 3  # one backward pass per row
    np.testing.assert_allclose(
        jac.detach().numpy(), np.diag(np.cos(x.detach().numpy() ** 3) * 3 * x.detach().numpy() ** 2)
    )
    seen = []

    def f(t):
        y = t.exp()
        y.register_hook(lambda g: seen.append(g.shape))
        return y * 2

    jac = func.jacrev(f)(x)  # a hook sees each row's gradient, as before
    assert seen == [(3,)] * 3
    np.testing.assert_allclose(jac.detach().numpy(), np.diag(2 * np.exp(x.detach().numpy())))


def test_jacfwd_over_an_op_without_jvp_is_a_clear_error():
    square = chainrule.Op("square_without_jvp", lambda x: x * x, vjp=(lambda g, x: 2 * g * x,))
    with pytest.raises(GraphError, match="square_without_jvp: forward mode .* not implemented"):
        func.jacfwd(square)(t64([1.0]))


# Checkpointing.


def mlp_layers(n, width, rng):
    """n tanh layers as closures over weights that require grad."""
    weights = [Tensor(rng.standard_normal((width, width)) / np.sqrt(width), requires_grad=True)
               for _ in range(n)]  # fmt: skip
    return weights, [lambda t, w=w: (t @ w).tanh() for w in weights]


def test_checkpoint_gives_identical_gradients():
    rng = np.random.default_rng(0)
    weights, layers = mlp_layers(8, 6, rng)
    x = Tensor(rng.standard_normal((4, 6)), requires_grad=True)

    def plain():
        t = x
        for f in layers:
            t = f(t)
        return t

    plain().sum().backward()
    expected = [x.grad.detach().numpy().copy()] + [w.grad.detach().numpy().copy() for w in weights]
    for segments in (1, 2, 3, 8):
        x.grad = None
        for w in weights:
            w.grad = None
        checkpoint_sequential(layers, segments, x).sum().backward()
        got = [x.grad.detach().numpy()] + [w.grad.detach().numpy() for w in weights]
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)


def test_checkpoint_keeps_only_its_inputs():
    x = Tensor(np.ones(4), requires_grad=True)
    y = checkpoint(lambda t: (t.exp() * 2).sin(), x)
    assert y.grad_fn.name == "checkpoint" and y.grad_fn.edges == (x,)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), np.cos(2 * np.e) * 2 * np.e)


def test_checkpoint_replays_random_numbers():
    chainrule.manual_seed(3)
    x = Tensor(np.ones(5), requires_grad=True)
    y = checkpoint(lambda t: t * chainrule.rand(5, dtype="float64"), x)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), y.detach().numpy())


def scalar_block(x):
    """The teaching text's checkpointed scalar chain."""
    return ((x * x).tanh() * 3).exp()


def test_checkpoint_of_a_scalar_chain_matches_the_plain_gradient_and_pytorch(torch):
    plain = chainrule.Value(0.5)
    (scalar_block(plain) * 2).backward()
    x = chainrule.Value(0.5)
    y = checkpoint(scalar_block, x)
    assert y._op == "checkpoint" and y._prev == (x,)
    assert y.data == scalar_block(chainrule.Value(0.5)).data
    (y * 2).backward()
    assert x.grad == plain.grad
    xt = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    (scalar_block(xt) * 2).backward()
    assert x.grad == pytest.approx(xt.grad.item(), rel=1e-12)
    (y * 2).backward()  # leaves accumulate, as without checkpoint
    assert x.grad == 2 * plain.grad


def test_checkpoint_of_values_with_several_inputs_a_repeated_value_and_a_constant():
    def block(a, b, c, k):
        return (a * b + a.tanh() * k) * c.exp() - b**2

    def run(ck):
        x, y = chainrule.Value(0.3), chainrule.Value(-1.2)
        out = ck(block, x, y, x, 2.5)  # x is both a and c
        (out * x + y.sigmoid()).backward()  # x and y are used outside the block too
        return out.data, x.grad, y.grad

    plain = run(lambda fn, *args: fn(*args))
    data, *grads = run(checkpoint)
    assert data == plain[0]
    assert grads == pytest.approx(plain[1:], rel=1e-14)


def test_checkpoint_of_values_passes_other_arguments_through_and_takes_keyword_values():
    table = [2.0, 3.0]
    seen = []

    def block(x, weights, scale=None):
        seen.append(weights)
        return x * weights[0] + x * scale

    x, s = chainrule.Value(1.5), chainrule.Value(4.0)
    y = checkpoint(block, x, table, scale=s)
    assert y._prev == (x, s)
    y.backward()
    assert all(w is table for w in seen) and len(seen) == 2  # forward, then the recompute
    assert (x.grad, s.grad) == (2.0 + 4.0, 1.5)


def test_checkpoint_of_values_gives_captured_values_their_share_once():
    def run(ck):
        w, u = chainrule.Value(0.7), chainrule.Value(-0.4)
        h = w * u  # made outside the block, read inside it and outside
        x = chainrule.Value(1.1)
        out = ck(lambda v: (v * h).tanh() + w * w, x) * h + h.exp()
        out.backward()
        return x.grad, w.grad, u.grad, h.grad

    plain, checked = run(lambda fn, *args: fn(*args)), run(checkpoint)
    assert checked[:3] == pytest.approx(plain[:3], rel=1e-14)
    # h's own grad keeps what the outer graph sent it; the block's share went on to w and u.
    x, h = 1.1, 0.7 * -0.4
    block_share = x * (1 - math.tanh(x * h) ** 2) * h  # d(tanh(x*h))/dh times out's grad, h
    assert checked[3] == pytest.approx(plain[3] - block_share, rel=1e-12)


def test_checkpoint_of_a_value_subclass_keeps_the_class():
    class Scalar(chainrule.Value):
        """A text's Value under its own name."""

    seen = []
    x = Scalar(0.5)
    y = checkpoint(lambda v: seen.append(type(v)) or scalar_block(v), x)
    y.backward()
    assert type(y) is Scalar and seen == [Scalar, Scalar]
    plain = chainrule.Value(0.5)
    scalar_block(plain).backward()
    assert x.grad == plain.grad


def test_checkpoint_of_values_nests():
    plain = chainrule.Value(0.2)
    (scalar_block(scalar_block(plain)) * plain).backward()
    x = chainrule.Value(0.2)
    inner = lambda v: checkpoint(scalar_block, v)  # noqa: E731
    (checkpoint(lambda v: scalar_block(inner(v)), x) * x).backward()
    assert x.grad == pytest.approx(plain.grad, rel=1e-14)


def test_checkpoint_of_values_keeps_no_intermediate_values_and_recomputes_in_backward():
    inside = []

    def block(x):
        h = (x * x).tanh()
        inside.append(weakref.ref(h))
        return (h * 3).exp()

    with chainrule.count_ops() as counts:
        x = chainrule.Value(0.5)
        y = checkpoint(block, x)
        assert inside[0]() is None  # the forward's graph is gone as soon as it ran
        assert sum(counts.forward.values()) == 4  # mul, tanh, mul, exp
        (y * 2).backward()
    assert counts.forward_total == 4 + 1 + 4  # the block, the outer * 2, the block again
    assert counts.backward["tanh"] == 2  # the recomputed block's backward ran
    assert len(inside) == 2 and inside[1]() is None


def test_checkpoint_refuses_to_mix_tensors_and_values():
    with pytest.raises(TypeError, match=r"checkpoint: the arguments mix Tensors and Values"):
        checkpoint(lambda t, v: t * v.data, t64([1.0]), chainrule.Value(2.0))
    with pytest.raises(TypeError, match=r"a block of Values must return one Value, got tuple"):
        checkpoint(lambda v: (v, v), chainrule.Value(2.0))


# Op counting.


def test_count_ops_scalar_teaching_examples_obey_cheap_gradient_principle():
    with chainrule.count_ops() as counts:
        w1, w2, x1, x2 = (chainrule.Value(v) for v in (0.2, 0.4, -0.4, 0.5))
        f = (w1 * x1 + w2 * x2).sigmoid() + 0.5 * (w1**2 + w2**2)
        f.backward()
    assert counts.forward_total == 9  # 3 mul, 3 add, 2 pow, 1 sigmoid
    assert counts.backward["mul"] == 2 * 2 * 3  # three muls with two parents each
    assert counts.backward_total <= 5 * counts.forward_total
    assert "backward / forward" in str(counts)


def test_count_ops_tensor_mlp_and_matmul_flops():
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((8, 3)))
    w1 = Tensor(rng.standard_normal((3, 5)), requires_grad=True)
    w2 = Tensor(rng.standard_normal((5, 2)), requires_grad=True)
    with chainrule.count_ops() as counts:
        ((x @ w1).relu() @ w2).sum().backward()
    assert counts.forward["matmul"] == 2 and counts.forward_total == 4
    assert counts.forward_flops == 2 * 8 * 5 * 3 + 2 * 8 * 2 * 5
    assert counts.backward_total <= 5 * counts.forward_total
    assert chainrule.counting.active is None


def test_forward_over_reverse_is_a_clear_error_not_a_silent_zero():
    with pytest.raises(GraphError, match="reverse mode inside forward mode"):
        func.jacfwd(func.jacrev(lambda v: (v**3).sin().sum()))(t64([1.0, 2.0]))


@pytest.mark.parametrize("chunk_size", [1, 2, 3, None])
def test_jacrev_chunk_size_gives_the_same_jacobian(chunk_size):
    x = t64([0.3, -1.2, 0.7, 2.0])
    f = lambda v: (v * v.flip(0)).tanh() * v.sum()
    expected = func.jacrev(f, chunk_size=1)(x).detach().numpy()
    np.testing.assert_allclose(
        func.jacrev(f, chunk_size=chunk_size)(x).detach().numpy(), expected, rtol=1e-12
    )
    with chainrule.count_ops() as one_pass:
        func.jacrev(f)(x)
    with chainrule.count_ops() as counts:
        func.jacrev(f, chunk_size=chunk_size)(x)
    # one backward pass per chunk of rows: tanh's backward runs once per pass
    passes = -(-4 // (chunk_size or 4))
    assert counts.backward["tanh"] == passes * one_pass.backward["tanh"]


def test_jacrev_chunk_size_must_be_positive():
    with pytest.raises(DomainError, match="jacrev: chunk_size must be None or a positive int"):
        func.jacrev(lambda v: v, chunk_size=0)


def test_checkpoint_of_values_in_a_list_or_read_from_outside_matches_the_plain_gradient():
    def run(ck):
        w, u = chainrule.Value(0.7), chainrule.Value(-0.4)
        h = w * 2
        listed = ck(lambda vs, k: (vs[0] * vs[1]).tanh() * k, [w, u], 3.0)
        captured = ck(lambda: (h * u).sigmoid())  # no arguments: every Value comes from outside
        (listed * captured + h).backward()
        return listed._prev, captured._prev, w.grad, u.grad

    plain, checked = run(lambda fn, *args: fn(*args)), run(checkpoint)
    assert checked[2:] == pytest.approx(plain[2:], rel=1e-14)
    w_and_u = {id(v) for v in checked[0]}
    assert len(w_and_u) == 2 and w_and_u <= {id(v) for v in checked[1]}  # the leaves it read


def test_checkpoint_refuses_a_block_returning_neither_tensors_nor_a_value():
    with pytest.raises(TypeError, match=r"checkpoint: the block must return .* got float"):
        checkpoint(lambda x: float(x.sum().item()), chainrule.ones(2, requires_grad=True))
