"""PyTorch-style custom Functions (`chainrule.autograd.Function`): each Function is written once
and defined for both libraries, and values, gradients and errors are compared with PyTorch's."""

import numpy as np
import pytest
from conftest import TORCH_TOL

import chainrule
from chainrule import Tensor
from chainrule.autograd import function as cr_function


def _define(lib, function_module):
    """The test Functions, written once against ``lib`` (chainrule or torch)."""
    Function = lib.autograd.Function
    once_differentiable = function_module.once_differentiable

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.grad_mode_in_forward = lib.is_grad_enabled()
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    class Scaled(Function):  # setup_context, a non-tensor argument with a default
        @staticmethod
        def forward(x, y, alpha=2.0):
            return alpha * x * y, x - y

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y, alpha = inputs
            ctx.save_for_backward(x, y)
            ctx.alpha = alpha
            ctx.seen = ctx.needs_input_grad

        @staticmethod
        def backward(ctx, g_prod, g_diff):
            x, y = ctx.saved_tensors
            gx = gy = None
            if ctx.needs_input_grad[0]:
                gx = ctx.alpha * y * g_prod + g_diff
            if ctx.needs_input_grad[1]:
                gy = ctx.alpha * x * g_prod - g_diff
            return gx, gy, None

    class Exp(Function):  # saves its output
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    class Double(Function):  # in place
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    class MaxAt(Function):  # a non-differentiable output
        @staticmethod
        def forward(ctx, x):
            index = x.argmax()
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(x)
            return x * 1.5, index

        @staticmethod
        def backward(ctx, g, g_index):
            ctx.g_index = g_index
            return 1.5 * g

    class Pair(Function):  # two outputs, gradients not materialized
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            Pair.seen = (g1 is None, g2 is None)
            total = 0
            if g1 is not None:
                total = total + 2 * g1
            if g2 is not None:
                total = total + 3 * g2
            return total, None

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 2 * g, g

    class ExtraNone(TooMany):
        @staticmethod
        def backward(ctx, g):
            return 2 * g, None

    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return (g,)

    class Once(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            Once.grad_mode = lib.is_grad_enabled()
            return 2 * x * g

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x + 1

    return {name: value for name, value in locals().items() if isinstance(value, type)}


@pytest.fixture(scope="module")
def both(torch):
    import torch.autograd.function as torch_function

    return _define(chainrule, cr_function), _define(torch, torch_function)


X = np.array([0.5, -1.25, 2.0])
Y = np.array([1.5, 0.25, -0.75])


def _pair(torch):
    """The same leaves in both libraries."""
    return (
        (Tensor(X, requires_grad=True), Tensor(Y, requires_grad=True)),
        (torch.tensor(X, requires_grad=True), torch.tensor(Y, requires_grad=True)),
    )


def _close(a, b) -> None:
    np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), **TORCH_TOL)


@pytest.mark.parametrize("name", ["Cube", "Exp"])
def test_values_and_first_and_second_gradients_match_pytorch(torch, both, name):
    results = []
    for lib, fns, (x, _) in zip((chainrule, torch), both, _pair(torch)):
        out = fns[name].apply(x)
        (g,) = lib.autograd.grad(out.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        results.append((out, g, gg))
        assert type(out.grad_fn).__name__ == f"{name}Backward"
    for mine, theirs in zip(*results):
        _close(mine, theirs)


def test_setup_context_defaults_attributes_and_needs_input_grad(torch, both):
    results = []
    for lib, fns, (x, y) in zip((chainrule, torch), both, _pair(torch)):
        y = y.detach()  # needs no grad
        prod, diff = fns["Scaled"].apply(x, y)
        (gx,) = lib.autograd.grad((prod * diff).sum(), x, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), x)
        results.append((prod, diff, gx, ggx, prod.grad_fn))
    for mine, theirs in zip(results[0][:4], results[1][:4]):
        _close(mine, theirs)
    assert results[0][4].seen == results[1][4].seen == (True, False, False)


def test_saved_tensors_are_the_inputs_read_through_grad_fn(torch, both):
    for lib, fns, (x, _) in zip((chainrule, torch), both, _pair(torch)):
        out = fns["Cube"].apply(x)
        assert out.grad_fn.saved_tensors[0] is x  # the input itself, history kept
        assert out.grad_fn.grad_mode_in_forward is False and lib.is_grad_enabled()


def test_mark_dirty_changes_the_input_in_place(torch, both):
    results = []
    for fns, (x, _) in zip(both, _pair(torch)):
        a = x.clone()
        out = fns["Double"].apply(a)
        assert out is a and a.requires_grad
        out.sum().backward()
        results.append((a, x.grad))
        with pytest.raises(RuntimeError, match="leaf"):
            fns["Double"].apply(x)
    for mine, theirs in zip(*results):
        _close(mine, theirs)


def test_non_differentiable_outputs(torch, both):
    results = []
    for fns, (x, _) in zip(both, _pair(torch)):
        value, index = fns["MaxAt"].apply(x)
        assert value.requires_grad and not index.requires_grad
        value.sum().backward()
        results.append((value, x.grad, value.grad_fn))
    _close(results[0][0], results[1][0])
    _close(results[0][1], results[1][1])
    assert int(results[0][2].g_index.item()) == int(results[1][2].g_index.item()) == 0


@pytest.mark.parametrize("materialize", [True, False])
def test_materialize_grads(torch, both, materialize):
    seen, grads = [], []
    for fns, (x, _) in zip(both, _pair(torch)):
        first, _ = fns["Pair"].apply(x, materialize)
        first.sum().backward()
        seen.append(fns["Pair"].seen)
        grads.append(x.grad)
    assert seen[0] == seen[1] == (False, not materialize)
    _close(*grads)


@pytest.mark.parametrize("name", ["TooMany", "TooFew"])
def test_wrong_number_of_gradients_raises_as_pytorch(torch, both, name):
    messages = []
    for fns, (x, y) in zip(both, _pair(torch)):
        args = (x,) if name == "TooMany" else (x, y)
        with pytest.raises(RuntimeError, match="incorrect number of gradients") as info:
            fns[name].apply(*args).sum().backward()
        messages.append(str(info.value))
    assert messages[0].endswith(messages[1].split("returned", 1)[1])


def test_extra_none_gradients_are_accepted(torch, both):
    for fns, (x, _) in zip(both, _pair(torch)):
        fns["ExtraNone"].apply(x).sum().backward()
        np.testing.assert_array_equal(np.asarray(x.grad), [2.0, 2.0, 2.0])


def test_once_differentiable(torch, both):
    results = []
    for lib, fns, (x, _) in zip((chainrule, torch), both, _pair(torch)):
        out = fns["Once"].apply(x)
        (g,) = lib.autograd.grad((out * out).sum(), x, create_graph=True)
        assert fns["Once"].grad_mode is False and g.requires_grad
        results.append(g)
        with pytest.raises(RuntimeError, match="differentiate twice.*once_differentiable"):
            g.sum().backward()
    _close(*results)


def test_saved_tensor_modified_in_place_raises(torch, both):
    for fns, (x, _) in zip(both, _pair(torch)):
        a = x.clone()
        out = fns["Cube"].apply(a)
        with chainrule.no_grad() if fns is both[0] else torch.no_grad():
            a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace|modified in place"):
            out.sum().backward()


def test_missing_backward_raises_not_implemented(torch, both):
    for fns, (x, _) in zip(both, _pair(torch)):
        with pytest.raises(NotImplementedError, match="backward or vjp"):
            fns["NoBackward"].apply(x).sum().backward()


def test_gradcheck_and_gradgradcheck(both):
    x = Tensor(X, requires_grad=True)
    assert chainrule.autograd.gradcheck(both[0]["Cube"].apply, (x,))
    assert chainrule.autograd.gradgradcheck(both[0]["Cube"].apply, (x,))


def test_no_graph_without_grad(both):
    out = both[0]["Cube"].apply(Tensor(X))
    assert not out.requires_grad and out.grad_fn is None
    with chainrule.no_grad():
        assert both[0]["Cube"].apply(Tensor(X, requires_grad=True)).grad_fn is None


def test_forward_mode_needs_jvp(both):
    Cube = both[0]["Cube"]

    class CubeJvp(Cube):
        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * t

    x, t = Tensor(X), Tensor(np.ones(3))
    _, tangent = chainrule.func.jvp(CubeJvp.apply, (x,), (t,))
    np.testing.assert_allclose(np.asarray(tangent), 3 * X**2)
    with pytest.raises(chainrule.errors.UnsupportedError, match="jvp staticmethod"):
        chainrule.func.jvp(Cube.apply, (x,), (t,))


def test_vmap_runs_once_per_example(both):
    xs = Tensor(np.stack([X, Y]))
    out = chainrule.func.vmap(both[0]["Cube"].apply)(xs)
    np.testing.assert_allclose(np.asarray(out), np.stack([X, Y]) ** 3)


def test_array_style_still_records_a_node_of_its_class():
    from conftest import Cube  # the array style

    assert not Cube._ctx_style
    x = Tensor(X, requires_grad=True)
    out = Cube.apply(x)
    assert isinstance(out.grad_fn, Cube)
    out.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), 3 * X**2)


def test_names_under_autograd_function():
    assert cr_function.FunctionCtx is chainrule.function.FunctionCtx
    assert chainrule.autograd.Function is chainrule.Function
    assert callable(cr_function.once_differentiable)


def test_profiler_and_compiler_see_a_call(both):
    Cube = both[0]["Cube"]
    with chainrule.profiler.profile() as prof:
        x = Tensor(X, requires_grad=True)
        Cube.apply(x).sum().backward()
    names = {event.name for event in prof.events()}
    assert {"Cube", "CubeBackward"} <= names

    def step(x):
        return Cube.apply(x * 2).sum()

    compiled = chainrule.compile(step)
    with pytest.warns(UserWarning, match="graph break: Cube"):  # once per signature
        result = compiled(Tensor(X))
        for values in (Y, X + 1):  # a signature with grad: recorded once, then replayed
            x = Tensor(values, requires_grad=True)
            loss = compiled(x)
            loss.backward()
            np.testing.assert_allclose(loss.item(), ((2 * values) ** 3).sum())
            np.testing.assert_allclose(np.asarray(x.grad), 24 * values**2)
    np.testing.assert_allclose(result.item(), ((2 * X) ** 3).sum())


def test_saved_outputs_of_several_and_attributes_named_like_the_engines(torch):
    """A saved second output comes back with its history; a ctx attribute named ``op`` or
    ``saved`` does not confuse the engine (it probes nodes for those names)."""

    def define(lib):
        class SinCos(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                sin, cos = x.sin(), x.cos()
                ctx.save_for_backward(sin, cos)
                ctx.op, ctx.saved = "sincos", True
                return sin, cos

            @staticmethod
            def backward(ctx, g_sin, g_cos):
                sin, cos = ctx.saved_tensors
                return g_sin * cos - g_cos * sin

        return SinCos

    results = []
    for lib, (x, _) in zip((chainrule, torch), _pair(torch)):
        sin, cos = define(lib).apply(x)
        (g,) = lib.autograd.grad((sin * cos).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        results.append((sin, cos, g, gg))
    for mine, theirs in zip(*results):
        _close(mine, theirs)
    with chainrule.profiler.profile() as prof:
        x = Tensor(X, requires_grad=True)
        define(chainrule).apply(x)[0].sum().backward()
    assert "SinCosBackward" in {event.name for event in prof.events()}


def test_vjp_is_another_name_for_backward_and_hooks_see_missing_gradients(torch):
    def define(lib):
        class Pair(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def vjp(ctx, g1, g2):
                return 2 * g1 if g2 is None else 2 * g1 + 3 * g2

        return Pair

    grads, calls = [], []
    for lib, (x, _) in zip((chainrule, torch), _pair(torch)):
        first, second = define(lib).apply(x)
        second.register_hook(calls.append)  # called with None, as PyTorch does
        first.sum().backward()
        grads.append(x.grad)
        first, second = define(lib).apply(x)
        second.register_hook(lambda g, lib=lib: lib.ones(3))
        with pytest.raises(RuntimeError, match="replace a None gradient"):
            first.sum().backward()
    assert calls == [None, None]
    _close(*grads)
