"""The backward engine: accumulation, retain_graph, hooks, in-place versions, no_grad, custom
Functions, anomaly detection, deep graphs and memory."""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest
from conftest import Cube

import chainrule
from chainrule import Function, GraphError, ShapeError, Tensor, no_grad
from chainrule.autograd import grad


def leaf(values, dtype=np.float64):
    """A leaf tensor that requires grad."""
    return Tensor(np.array(values, dtype=dtype), requires_grad=True)


def test_leaf_grad_accumulates_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [6.0, 6.0])


def test_grad_from_one_backward_is_not_changed_by_the_next():
    # Within one backward the engine adds into the .grad it made; a .grad the user already
    # holds is never written into.
    x = leaf([1.0, 2.0])
    (x * x * x + x).sum().backward()
    first = x.grad
    (x * 3 + x).sum().backward()
    np.testing.assert_array_equal(first.data, [4.0, 13.0])
    np.testing.assert_array_equal(x.grad.data, [8.0, 17.0])


def test_backward_takes_an_array_as_the_gradient_of_one_output():
    x = leaf([1.0, 2.0])
    (x * 3).backward(np.array([1.0, 10.0]))
    np.testing.assert_array_equal(x.grad.data, [3.0, 30.0])


def test_grad_is_a_tensor_with_the_leaf_dtype():
    x = leaf([1.0, 2.0], np.float32)
    (x * 2.5).sum().backward()
    assert isinstance(x.grad, Tensor) and x.grad.dtype == np.float32


def test_shared_gradient_arrays_are_not_aliased_between_leaves():
    a, b = leaf([1.0]), leaf([2.0])
    (a + b).sum().backward()
    a.grad.data[0] = 100.0
    assert b.grad.item() == 1.0


def test_broadcast_gradient_is_summed_back_to_each_shape():
    a = leaf(np.ones((3, 1)))
    b = leaf(np.arange(4.0))
    (a * b).sum().backward()
    np.testing.assert_array_equal(a.grad.data, np.full((3, 1), 6.0))
    np.testing.assert_array_equal(b.grad.data, np.full(4, 3.0))


def test_node_used_twice_runs_its_rule_once_and_sums():
    x = leaf([2.0])
    y = x.exp()
    z = y * y + y
    z.sum().backward()
    e = np.exp(2.0)
    np.testing.assert_allclose(x.grad.data, [2 * e * e + e])


def test_backward_on_non_scalar_needs_gradient():
    x = leaf(np.ones((2, 3)))
    y = x * 2
    with pytest.raises(GraphError, match=r"backward: output has shape \(2, 3\); pass gradient="):
        y.backward()
    y.backward(gradient=Tensor(np.ones((2, 3))))
    np.testing.assert_array_equal(x.grad.data, np.full((2, 3), 2.0))


def test_gradient_of_the_wrong_shape_is_a_shape_error():
    y = leaf(np.ones((2, 3))) * 2
    with pytest.raises(ShapeError, match=r"gradient has shape \(3,\) but the output has shape"):
        y.backward(gradient=Tensor(np.ones(3)))


def test_backward_without_grad_is_a_clear_error():
    with pytest.raises(GraphError, match="does not require grad and has no grad_fn"):
        Tensor([1.0, 2.0]).sum().backward()


def test_second_backward_through_freed_graph_is_an_error_unless_retained():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [4.0, 8.0])
    with pytest.raises(GraphError, match="mul: trying to backward through the graph a second"):
        y.backward()


def test_no_grad_records_nothing_and_works_as_decorator():
    x = leaf([1.0])
    with no_grad():
        assert (x * 2).grad_fn is None
        with chainrule.enable_grad():
            assert (x * 2).requires_grad

    @no_grad()
    def double(t):
        return t * 2

    assert not double(x).requires_grad
    assert chainrule.is_grad_enabled()


def test_detach_shares_data_but_not_history():
    x = leaf([1.0, 2.0])
    y = (x * 2).detach()
    assert not y.requires_grad and y.grad_fn is None
    z = x * 1
    d = z.detach()
    d.data[0] = 5.0
    assert z.data[0] == 5.0


def test_requires_grad_propagates_and_is_leaf():
    x, c = leaf([1.0]), Tensor([2.0])
    y = x * c
    assert y.requires_grad and not y.is_leaf and x.is_leaf and c.is_leaf
    assert not (c * 2).requires_grad


def test_integer_tensor_cannot_require_grad():
    with pytest.raises(chainrule.DTypeError, match="only floating-point tensors can require"):
        Tensor([1, 2], requires_grad=True)


def test_retain_grad_keeps_non_leaf_gradient():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    np.testing.assert_array_equal(y.grad.data, [6.0, 12.0])
    z = x * 3
    (z * z).sum().backward()
    assert z.grad is None


def test_hooks_see_and_replace_gradients():
    x = leaf([1.0, 2.0])
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.detach().numpy().copy()))
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_array_equal(seen[0], [20.0, 20.0])
    np.testing.assert_array_equal(x.grad.data, [20.0, 20.0])
    handle.remove()
    (x * 1).sum().backward()
    assert len(seen) == 1


def test_grad_returns_gradients_without_touching_dot_grad():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    gx, gy = grad((x * y).sum(), [x, y])
    np.testing.assert_array_equal(gx.data, [3.0, 4.0])
    np.testing.assert_array_equal(gy.data, [1.0, 2.0])
    assert x.grad is None and y.grad is None


def test_grad_with_respect_to_an_intermediate_tensor():
    x = leaf([1.0, 2.0])
    h = x * 2
    (gh,) = grad((h * h).sum(), h)
    np.testing.assert_array_equal(gh.data, [4.0, 8.0])


def test_grad_of_unused_input_needs_allow_unused():
    x, unused = leaf([1.0]), leaf([1.0])
    with pytest.raises(GraphError, match="grad: input 1 was not used"):
        grad((x * 2).sum(), [x, unused])
    gx, gu = grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gu is None and gx.item() == 2.0


def test_create_graph_gives_higher_derivatives():
    x = leaf(0.7)
    (d1,) = grad(x.sin() * x, x, create_graph=True)
    (d2,) = grad(d1, x, create_graph=True)
    (d3,) = grad(d2, x)
    v = 0.7
    assert d1.item() == pytest.approx(np.cos(v) * v + np.sin(v))
    assert d2.item() == pytest.approx(-np.sin(v) * v + 2 * np.cos(v))
    assert d3.item() == pytest.approx(-np.cos(v) * v - 3 * np.sin(v))


def test_backward_create_graph_leaves_differentiable_grad():
    x = leaf([1.0, 2.0])
    (x**3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (g2,) = grad(x.grad.sum(), x)
    np.testing.assert_array_equal(g2.data, [6.0, 12.0])


# In place.


def test_in_place_on_leaf_that_requires_grad_is_refused():
    x = leaf([1.0])
    with pytest.raises(GraphError, match=r"add_: a leaf tensor that requires grad cannot be"):
        x += 1
    with no_grad():
        x -= 0.5
    assert x.item() == 0.5 and x._version == 1


def test_modifying_a_saved_tensor_in_place_makes_backward_fail():
    x = leaf([1.0, 2.0])
    h = x * 1
    y = h * h  # mul saves h
    h.add_(1)
    with pytest.raises(GraphError, match=r"mul: a tensor saved for backward was modified in place"
                       r" by add_ after it was saved \(it is now at version 1\)"):  # fmt: skip
        y.sum().backward()


@pytest.mark.parametrize("op", ["tanh", "exp", "sigmoid"])
def test_modifying_a_saved_output_in_place_makes_backward_fail(op):
    # Their rules read the output: changing it would silently change the gradient.
    y = getattr(leaf([0.5, 1.0]), op)()
    y.add_(1)
    with pytest.raises(GraphError, match=rf"{op}: a tensor saved for backward was modified in"):
        y.sum().backward()


def test_modifying_an_output_a_function_saved_makes_backward_fail():
    class Exp(Function):
        def forward(self, x):
            out = np.exp(x)
            self.save_for_backward(out)
            return out

        def backward(self, g):
            (out,) = self.saved_tensors
            return g * out

    y = Exp.apply(leaf([0.5, 1.0]))
    y.mul_(2)
    with pytest.raises(GraphError, match=r"Exp: a tensor saved for backward was modified"):
        y.sum().backward()


def test_changes_made_before_a_node_saved_the_array_are_allowed():
    h = leaf([1.0, 2.0]) * 1
    h.add_(1)  # before mul saves h: mul's gradient uses the changed values, as it should
    y = h * h
    k = leaf([3.0]) * 1
    k.mul_(2)  # a change elsewhere, after y's nodes: backward checks them and finds nothing
    y.sum().backward()
    assert h._version == 1


def test_a_change_through_a_view_made_after_saving_is_detected():
    h = leaf([1.0, 2.0, 3.0]) * 1
    y = (h * h).sum()  # h had no version counter when mul saved it
    view = h[1:]  # made later; shares the counter it creates with h
    view.mul_(2)
    with pytest.raises(GraphError, match="modified in place by mul_"):
        y.backward()


def test_in_place_ops_on_non_leaf_are_recorded():
    x = leaf([1.0, 2.0])
    y = x * 2
    y *= 3
    y += x
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [7.0, 7.0])
    assert y.tolist() == [7.0, 14.0]


def test_views_share_the_version_counter():
    x = leaf(np.arange(6.0))
    h = x * 1
    v = h.reshape(2, 3)
    y = (v * v).sum()
    h.mul_(2)
    assert v._version == 1
    with pytest.raises(GraphError, match="modified in place by mul_"):
        y.backward()


def test_setitem_and_fill_record_gradients():
    x = leaf(np.arange(4.0))
    v = leaf([10.0, 20.0])
    y = x * 1
    y[1:3] = v
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 0.0, 0.0, 6.0])
    np.testing.assert_array_equal(v.grad.data, [20.0, 40.0])
    z = x * 1
    z.zero_()
    assert z.tolist() == [0.0] * 4


def test_in_place_dtype_mismatch_is_clear():
    t = Tensor([1, 2])
    with pytest.raises(chainrule.DTypeError, match="add_: cannot write a float"):
        t += 0.5


def test_in_place_on_expanded_view_is_refused():
    t = Tensor([1.0]).expand(3)
    with pytest.raises(GraphError, match="read-only"):
        t += 1


# Custom Functions.


class SplitHalves(Function):
    """Two outputs: the first and the second half of a 1-D array."""

    def forward(self, x):
        n = len(x) // 2
        return x[:n].copy(), x[n:].copy()

    def backward(self, g_first, g_second):
        return np.concatenate([g_first, g_second])


def test_custom_function_gradient_passes_gradcheck():
    x = leaf(np.linspace(-1, 1, 5))
    assert chainrule.gradcheck(lambda t: Cube.apply(t), [x])


def test_custom_function_with_two_outputs_gets_zero_for_unused_output():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    first, second = SplitHalves.apply(x)
    (first * 5).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [5.0, 5.0, 0.0, 0.0])


def test_custom_function_cannot_be_differentiated_twice():
    x = leaf([1.0])
    with pytest.raises(GraphError, match="Cube: a Function's backward works on arrays"):
        grad(Cube.apply(x).sum(), x, create_graph=True)


def test_custom_function_detects_in_place_change_of_saved_input():
    x = leaf([1.0, 2.0])
    h = x * 1
    y = Cube.apply(h)
    h.mul_(2)
    with pytest.raises(GraphError, match="Cube: a tensor saved for backward was modified"):
        y.sum().backward()


# Anomaly detection.


def test_detect_anomaly_names_the_op_and_where_it_was_made():
    x = leaf([0.0, 1.0])
    with chainrule.detect_anomaly():
        y = x.sqrt()  # the line the message must point to
        with pytest.raises(GraphError) as info:  # NumPy's 0.5 / 0 is silent, as in PyTorch
            y.sum().backward()
    message = str(info.value)
    assert "sqrt: backward produced Inf in the gradient of input 0" in message
    assert "test_autograd.py" in message and "x.sqrt()" in message


# Depth and memory.


def test_backward_through_a_very_deep_graph():
    x = leaf([0.5])
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.item() == 1.0


def test_saved_arrays_are_freed_after_backward_and_dropping_the_output():
    x = leaf(np.ones(1000))
    h = x * 2
    y = h.exp()  # exp saves its output array
    saved = weakref.ref(y.grad_fn)
    out_array = weakref.ref(y.data) if hasattr(y.data, "__weakref__") else None
    loss = (y * 3).sum()
    loss.backward()
    del h, y, loss
    gc.collect()
    assert saved() is None
    if out_array is not None:
        assert out_array() is None


def test_training_like_loop_does_not_grow_memory():
    rng = np.random.default_rng(0)
    w = Tensor(rng.standard_normal((20, 20)), requires_grad=True)
    data = Tensor(rng.standard_normal((32, 20)))

    def step():
        loss = ((data @ w).tanh() ** 2).mean()
        loss.backward()
        with no_grad():
            w.sub_(w.grad * 0.01)
        w.grad = None

    for _ in range(50):
        step()
    tracemalloc.start()
    first = tracemalloc.take_snapshot()
    for _ in range(1000):
        step()
    gc.collect()
    growth = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(first, "filename"))
    tracemalloc.stop()
    assert growth < 200_000, f"memory grew by {growth} bytes over 1000 steps"


def test_grad_mode_is_per_thread():
    import threading

    started, release = threading.Event(), threading.Event()

    def evaluate_without_grad():
        with chainrule.no_grad():
            started.set()
            release.wait(5)

    thread = threading.Thread(target=evaluate_without_grad)
    thread.start()
    started.wait(5)
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()  # recorded: the other thread's no_grad is its own
    release.set()
    thread.join()
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_a_leaf_hook_runs_once_per_backward_with_the_leaf_total_gradient():
    x = Tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 2 + x * 3).sum().backward()
    assert seen == [[5.0, 5.0]]
    np.testing.assert_array_equal(x.grad.data, [5.0, 5.0])


def test_the_engine_builds_tensors_and_nodes_with_every_slot_of_their_classes():
    # apply_op makes its result and node field by field (its speed seam): every slot of
    # Tensor and of OpNode (with Node's) must be set there, as Tensor._make sets them.
    from chainrule.dispatch import OpNode

    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    made = Tensor._make(np.zeros(2))
    slots = [name for cls in Tensor.__mro__ for name in getattr(cls, "__slots__", ())]
    assert "_grad_fn" in slots
    for name in slots:
        if name != "__weakref__":
            getattr(y, name)
            getattr(made, name)
    for cls in OpNode.__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name != "__weakref__":
                getattr(y.grad_fn, name)
    assert (y.grad, y._hooks, y._tangent, y._output_nr) == (None, None, None, 0)
    # apply_op builds edges inline: they must be what edge_of builds.
    from chainrule.graph import edge_of

    z = y * x
    assert z.grad_fn.edges == (edge_of(y), edge_of(x)) == ((y.grad_fn, 0), x)


def test_backward_rules_read_the_saved_values_without_changing_them():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    before = dict(y.grad_fn.saved)
    y.sum().backward(retain_graph=True)
    assert y.grad_fn.saved.keys() == before.keys()
    assert all(y.grad_fn.saved[k] is v for k, v in before.items())


def test_grad_outputs_may_be_a_tensor_or_a_sequence_for_one_output_as_in_pytorch(torch):
    x_array, v_array = np.array([1.0, 2.0, -0.5]), np.array([1.0, 0.5, 2.0])
    results = []
    for lib, make in ((chainrule, chainrule.tensor), (torch, torch.tensor)):
        x = make(x_array, requires_grad=True)
        y = x * x
        as_list = lib.autograd.grad(y, [x], grad_outputs=[make(v_array)], retain_graph=True)
        as_tensor = lib.autograd.grad(y, x, grad_outputs=make(v_array), retain_graph=True)
        two = lib.autograd.grad([y, y.sum()], [x], grad_outputs=[make(v_array), None])
        results.append([g.detach().numpy() for g in (*as_list, *as_tensor, *two)])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-15)
    np.testing.assert_allclose(results[0][0], 2 * x_array * v_array)
    x = chainrule.tensor(x_array, requires_grad=True)
    with pytest.raises(GraphError, match="grad: 2 gradients given for 1 outputs"):
        chainrule.autograd.grad(x * 2, [x], grad_outputs=[chainrule.ones(3), chainrule.ones(3)])


def test_hooks_leaf_non_leaf_retain_grad_and_post_accumulate_as_in_pytorch(torch):
    logs = []
    for lib in (chainrule, torch):
        log = []
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        x.register_hook(lambda g, log=log: log.append(("x", g.tolist())))
        x.register_post_accumulate_grad_hook(
            lambda t, log=log: log.append(("x.grad", t.grad.tolist()))
        )
        h = x * x
        h.retain_grad()
        h.register_hook(lambda g, log=log: g * 10)  # replaces h's gradient on its way down
        (h * 3 + h).sum().backward()
        log.append(("h.grad", h.grad.tolist()))
        logs.append(log)
    assert logs[0] == logs[1]
    assert logs[0][0] == ("x", [80.0, 160.0])  # once, with the total: 10 * 4 * 2x
    with pytest.raises(GraphError, match="non-leaf"):
        (chainrule.tensor([1.0], requires_grad=True) * 2).register_post_accumulate_grad_hook(print)
