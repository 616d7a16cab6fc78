"""The scalar engines: every op row against finite differences, PyTorch and forward mode,
the teaching material's worked numbers, deep graphs, and error messages."""

import math
import random

import pytest
from conftest import FD_TOL, TORCH_TOL
from hypothesis import given
from hypothesis import strategies as st
from scalar_cases import CASES

import chainrule
from chainrule import DomainError, Dual, Value, derivative, forward_gradient, gradcheck
from chainrule.scalar.rules import RULES, Rule


def test_every_op_has_a_case():
    assert set(CASES) == set(RULES)


def _draw(data, name):
    return [data.draw(strategy, label=f"x{i}") for i, strategy in enumerate(CASES[name].domain)]


def _recorded_ops(case, xs):
    out = case.fn(*[Value(x) for x in xs])
    return {node._rule.name for node in chainrule.scalar.value.topological_order(out) if node._rule}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_exercises_its_op(name):
    xs = [1.5] * len(CASES[name].domain)
    assert name in _recorded_ops(CASES[name], xs)


@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_gradient_matches_finite_differences(name, data):
    xs = _draw(data, name)
    report = gradcheck(CASES[name].fn, xs, **FD_TOL)
    assert report, str(report)


@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_value_and_gradient_match_pytorch(name, data, torch):
    case, xs = CASES[name], _draw(data, name)
    values = [Value(x) for x in xs]
    out = case.fn(*values)
    out.backward()
    tensors = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    expected = (case.torch_fn or case.fn)(*tensors)
    expected.backward()
    assert out.data == pytest.approx(expected.item(), abs=TORCH_TOL["atol"], rel=TORCH_TOL["rtol"])
    for v, t in zip(values, tensors):
        assert v.grad == pytest.approx(t.grad.item(), abs=TORCH_TOL["atol"], rel=TORCH_TOL["rtol"])


@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_forward_mode_matches_reverse_mode(name, data):
    case, xs = CASES[name], _draw(data, name)
    values = [Value(x) for x in xs]
    out = case.fn(*values)
    out.backward()
    assert forward_gradient(case.fn, *xs) == pytest.approx([v.grad for v in values], rel=1e-12)
    dual = case.fn(*[Dual(x) for x in xs])
    assert dual.value == pytest.approx(out.data, rel=1e-15)


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda x: 2 * x, (6.0, 2.0)),
        (lambda x: 1 - x, (-2.0, -1.0)),
        (lambda x: 2 / x, (2 / 3, -2 / 9)),
        (lambda x: 2**x, (8.0, 8 * math.log(2))),
        (lambda x: x + 1, (4.0, 1.0)),
        (lambda x: -x, (-3.0, -1.0)),
        (lambda x: x**-1, (1 / 3, -1 / 9)),
        (lambda x: abs(x), (3.0, 1.0)),
    ],
)
def test_python_numbers_mix_in_either_order(fn, expected):
    x = Value(3.0)
    out = fn(x)
    out.backward()
    assert (out.data, x.grad) == pytest.approx(expected)
    assert derivative(fn, 3.0) == pytest.approx(expected[1])


# The worked numbers of the teaching material.


def test_teaching_z_equals_xy_plus_x():
    x, y = Value(2.0, label="x"), Value(3.0, label="y")
    z = x * y + x
    z.backward()
    assert (z.data, x.grad, y.grad) == (8.0, 4.0, 2.0)


def test_teaching_l_equals_ab_plus_a_squared():
    a, b = Value(3.0), Value(4.0)
    loss = a * b + a**2
    loss.backward()
    assert (loss.data, a.grad, b.grad) == (21.0, 10.0, 3.0)


def test_teaching_relu_example():
    x, y = Value(2.0), Value(3.0)
    f = x * y + (x * x).relu()
    f.backward()
    assert (f.data, x.grad, y.grad) == (10.0, 7.0, 2.0)


def test_teaching_cubic_log_example_both_modes():
    def f(x):
        return x**3 * x.log() + (-x).exp()

    x = Value(2.0)
    f(x).backward()
    assert x.grad == pytest.approx(12.18243088, abs=5e-9)
    assert derivative(f, 2.0) == pytest.approx(12.18243088, abs=5e-9)


def test_teaching_sigmoid_example():
    w1, w2, x1, x2 = (Value(v) for v in (0.2, 0.4, -0.4, 0.5))
    f = (w1 * x1 + w2 * x2).sigmoid() + 0.5 * (w1**2 + w2**2)
    f.backward()
    assert round(f.data, 4) == 0.6300
    assert [round(v.grad, 4) for v in (w1, w2, x1, x2)] == [0.1004, 0.5246, 0.0498, 0.0996]


def test_teaching_forward_and_reverse_agree():
    def f(x, y):
        return x**2 * y + (x * y).exp()

    x, y = Value(1.0), Value(2.0)
    f(x, y).backward()
    forward = forward_gradient(f, 1.0, 2.0)
    assert [round(g, 4) for g in forward] == [18.7781, 8.3891]
    assert forward == pytest.approx([x.grad, y.grad], rel=1e-14)


# Graph behaviour.


def test_node_used_many_times_sums_its_gradients():
    x = Value(3.0)
    y = x * x * x + x
    y.backward()
    assert x.grad == 3 * 9.0 + 1


def test_second_backward_accumulates_on_leaves_only():
    x = Value(2.0)
    h = x * x
    y = h * 3.0
    y.backward()
    y.backward()
    assert x.grad == 2 * 12.0
    assert h.grad == 3.0  # interior nodes hold the latest pass
    y.zero_grad()
    assert (x.grad, h.grad, y.grad) == (0.0, 0.0, 0.0)


def test_million_op_chain_backpropagates():
    x = Value(0.3)
    y = x
    for _ in range(500_000):
        y = y * 1.000001
        y = y + 0.5
    y.backward()
    assert x.grad == pytest.approx(1.000001**500_000, rel=1e-9)


def test_relu_and_abs_use_subgradient_zero_at_zero():
    x = Value(0.0)
    x.relu().backward()
    assert x.grad == 0.0
    x.zero_grad()
    x.abs().backward()
    assert x.grad == 0.0


@pytest.mark.parametrize("big", [1000.0, -1000.0])
def test_saturating_ops_stay_finite(big):
    for op in ("sigmoid", "softplus", "tanh"):
        x = Value(big)
        out = getattr(x, op)()
        out.backward()
        assert math.isfinite(out.data) and math.isfinite(x.grad), op
    assert Value(1000.0).softplus().data == 1000.0
    assert Value(-1000.0).sigmoid().data == 0.0


def test_repr_shows_data_grad_and_label():
    x = Value(2.0, label="x")
    (x * 3).backward()
    assert repr(x) == "Value(data=2, grad=3, label='x')"
    assert repr(Dual(1.5, 2.0)) == "Dual(value=1.5, deriv=2)"


def test_nodes_record_op_symbol_and_parents():
    a, b = Value(1.0), Value(2.0)
    c = a * b
    assert c._op == "*" and c._prev == (a, b)
    assert (c**2)._op == "**" and (a + b)._op == "+" and a.exp()._op == "exp"


# Errors name the op and the value.


@pytest.mark.parametrize(
    "fn, message",
    [
        (lambda: Value(0.0, label="x").log(), r"log: undefined at 0\.0 for Value 'x'; log needs"),
        (lambda: Value(-2.0).log(), r"log: undefined at -2\.0"),
        (lambda: Value(-1.0).sqrt(), r"sqrt: undefined at -1\.0; sqrt needs a non-negative"),
        (lambda: Value(0.0) ** -1, r"pow: undefined at x=0\.0, y=-1\.0"),
        (lambda: Value(-2.0) ** 0.5, r"pow: undefined at x=-2\.0, y=0\.5"),
        (lambda: Value(1.0) / 0, r"div: undefined at x=1\.0, y=0\.0"),
        (lambda: Value(1000.0).exp(), r"exp: undefined at 1000\.0; exp overflows"),
        (lambda: Dual(0.0).log(), r"log: undefined at 0\.0"),
    ],
)
def test_undefined_points_raise_domain_error(fn, message):
    with pytest.raises(DomainError, match=message):
        fn()


def test_derivative_undefined_at_zero_for_sqrt_is_named():
    x = Value(0.0, label="x")
    y = x.sqrt()
    assert y.data == 0.0
    with pytest.raises(DomainError, match=r"sqrt: derivative undefined at 0\.0 for Value 'x'"):
        y.backward()


@pytest.mark.parametrize("other", ["a", [1.0], None, Dual(1.0)])
def test_other_types_are_a_clear_type_error(other):
    with pytest.raises(TypeError, match=r"(add|mul): cannot combine a Value with"):
        Value(1.0) + other
    with pytest.raises(TypeError, match=r"mul: cannot combine a (Value|Dual) with"):
        other * Value(1.0)


def test_value_rejects_non_numbers():
    with pytest.raises(TypeError, match="Value: data must be a real number, got str"):
        Value("3")


# gradcheck.


def test_gradcheck_catches_a_wrong_backward_rule():
    wrong_sin = Rule("wrong_sin", "sin", math.sin, lambda x: math.sin(x))  # should be cos
    report = gradcheck(lambda x: Value.apply(wrong_sin, x), [0.7])
    assert not report
    assert report.worst.analytical == pytest.approx(math.sin(0.7))
    assert report.worst.numerical == pytest.approx(math.cos(0.7), rel=1e-8)
    assert "NO" in str(report) and "FAILED" in str(report)


def test_gradcheck_report_lists_each_input():
    report = gradcheck(lambda a, b: a * b, [Value(2.0, label="a"), 5.0])
    assert report
    assert [c.input for c in report.checks] == ["a", "x1"]
    assert [c.analytical for c in report.checks] == [5.0, 2.0]
    assert "passed" in str(report)


def test_custom_rule_applies_in_both_modes():
    cube = Rule("cube", "³", lambda x: x**3, lambda x: 3 * x**2)
    x = Value(2.0)
    y = Value.apply(cube, x)
    y.backward()
    assert (y.data, x.grad) == (8.0, 12.0)
    assert Dual._apply(cube, Dual(2.0, 1.0), None).deriv == 12.0


# Scalar networks.


def test_mlp_learns_xor():
    from chainrule.apps.demos import train_xor

    result = train_xor(steps=500, seed=0, log=None)
    assert result["losses"][-1] < 0.01
    assert result["losses"][-1] < result["losses"][0] / 10
    for prediction, target in zip(result["predictions"], [0, 1, 1, 0]):
        assert (prediction > 0.5) == bool(target)


def test_mlp_structure_and_zero_grad():
    mlp = chainrule.MLP(3, [4, 4, 2], activations=["relu", "tanh", "linear"], rng=random.Random(1))
    assert len(mlp.parameters()) == (3 + 1) * 4 + (4 + 1) * 4 + (4 + 1) * 2
    out = mlp([1.0, -2.0, 0.5])
    assert isinstance(out, list) and len(out) == 2
    sum(out).backward()
    assert any(p.grad != 0.0 for p in mlp.parameters())
    mlp.zero_grad()
    assert all(p.grad == 0.0 for p in mlp.parameters())


def test_mlp_rejects_bad_configuration():
    with pytest.raises(ValueError, match="unknown activation 'gelu'"):
        chainrule.MLP(2, [3, 1], activations=["gelu", "linear"])
    with pytest.raises(ValueError, match="2 layers need 2 activations, got 1"):
        chainrule.MLP(2, [3, 1], activations=["tanh"])
    with pytest.raises(ValueError, match="expected 2 inputs, got 3"):
        chainrule.MLP(2, [1])([1.0, 2.0, 3.0])


def test_the_scalar_engine_lives_in_chainrule_scalar_alone():
    import importlib

    from chainrule import scalar

    assert (chainrule.Value, chainrule.Dual, chainrule.MLP) == (
        scalar.Value,
        scalar.Dual,
        scalar.MLP,
    )
    for old in ["value", "dual", "rules", "scalar_nn"]:  # top-level once, with no aliases now
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"chainrule.{old}")


def _text_style_sigmoid(v):
    """A new op written as the teaching texts write one: children, op name, closure."""
    out = Value(1 / (1 + math.exp(-v.data)), (v,), "sigmoid")

    def _backward():
        v.grad += out.data * (1 - out.data) * out.grad

    out._backward = _backward
    return out


def test_an_op_added_with_a_backward_closure_joins_the_graph_as_a_row_does():
    # The closure op between row ops: gradients equal those of the built-in sigmoid row.
    grads = []
    for sigmoid in (_text_style_sigmoid, Value.sigmoid):
        a, b = Value(0.7), Value(-1.3)
        y = sigmoid(a * b + a) * b + a
        y.backward()
        grads.append((y.data, a.grad, b.grad))
    assert grads[0] == pytest.approx(grads[1], rel=1e-15)
    assert gradcheck(lambda a, b: _text_style_sigmoid(a * b) + a, [0.4, -2.0])


def test_backward_steps_can_be_run_by_hand_as_the_texts_do():
    # Manual backpropagation, one node at a time from the output, as in the texts.
    x, w = Value(2.0), Value(-3.0)
    n = x * w
    o = _text_style_sigmoid(n)
    o.grad = 1.0
    o._backward()
    n._backward()
    assert (n.grad, x.grad, w.grad) == pytest.approx(
        (o.data * (1 - o.data), o.data * (1 - o.data) * -3.0, o.data * (1 - o.data) * 2.0)
    )
    assert x._backward() is None  # a leaf's step does nothing


def test_the_constructor_takes_children_and_an_op_and_refuses_a_label_in_their_place():
    x = Value(3.0)
    made = Value(9.0, (x,))  # children without an op and without a closure: no gradient
    assert made._prev == (x,) and made._op == ""
    made.backward()
    assert x.grad == 0.0
    with pytest.raises(TypeError, match="label"):
        Value(2.0, "x")
    with pytest.raises(TypeError, match="children must be Values"):
        Value(2.0, (1.0,))


def test_a_closure_assigned_to_a_row_made_node_replaces_its_rule_in_backward():
    # The texts' way to change an op's gradient after the fact: backward runs the new closure.
    a = Value(2.0)
    b = a * 3
    op = b._op

    def doubled():
        a.grad += 6.0 * b.grad

    b._backward = doubled
    (b + 1).backward()
    assert a.grad == 6.0 and b._op == op and b._backward is doubled
