"""Case Study 2 (an automatic differentiation engine from scratch) on
chainrule.texts.case_study: the gradient checks it prints, forward against reverse mode, the
XOR network, and the extensions it invites.

The case study prints no numbers of its training run; the numbers below are what its own
program prints (run once, outside this project, with NumPy's seed 42)."""

import math

import numpy as np
import pytest
import torch

import chainrule
from chainrule import checkpoint
from chainrule.texts.case_study import (
    MLP,
    DualNumber,
    Layer,
    Neuron,
    Scalar,
    numerical_gradient_check,
)

XOR_X = [[0, 0], [0, 1], [1, 0], [1, 1]]
XOR_Y = [0, 1, 1, 0]


def rows(text):
    """The printed rows without their rel_error column (its last digits follow rounding)."""
    return [line.split(", rel_error=")[0] + " " + line.split()[-1] for line in text.splitlines()]


def test_stage_1_scalar_prints_and_names_as_the_case_study():
    a = Scalar(2.0, label="a")
    b = Scalar(-3.0)
    c = a * b + a**2
    c.backward()
    assert repr(a) == "Scalar(data=2.0000, grad=1.0000 (a))"
    assert repr(c) == "Scalar(data=-2.0000, grad=1.0000)"
    assert (a**2)._op == "**2" and (a**-1)._op == "**-1" and a.sigmoid()._op == "sigmoid"
    assert (a * b)._children == {a, b} and (a * a)._children == {a}
    assert isinstance(c, chainrule.Value) and type(c) is Scalar
    d = Scalar(1.5, (a, b), "custom", "d")  # the constructor's four positional arguments
    assert (d._op, d.label, d._children) == ("custom", "d", {a, b})


def test_stage_2_the_four_gradient_checks_print_their_rows(capsys):
    x, y = Scalar(2.0), Scalar(3.0)
    assert numerical_gradient_check(lambda x, y: x * y + x**2, [x, y])
    x = Scalar(0.5)
    assert numerical_gradient_check(lambda x: x.sigmoid(), [x])
    x, y = Scalar(1.0), Scalar(2.0)
    assert numerical_gradient_check(lambda x, y: (x.exp() + y.exp()).log(), [x, y])
    x = Scalar(0.5)
    assert numerical_gradient_check(lambda x: (x - 1).relu() * (1 - x).relu(), [x])
    out = capsys.readouterr().out
    assert rows(out) == [
        " Input 0: analytical=7.000000, numerical=7.000000 [PASS]",
        " Input 1: analytical=2.000000, numerical=2.000000 [PASS]",
        " Input 0: analytical=0.235004, numerical=0.235004 [PASS]",
        " Input 0: analytical=0.268941, numerical=0.268941 [PASS]",
        " Input 1: analytical=0.731059, numerical=0.731059 [PASS]",
        " Input 0: analytical=0.000000, numerical=0.000000 [PASS]",
    ]
    assert out.splitlines()[-1].endswith("rel_error=0.00e+00 [PASS]")
    assert all(float(line.split("rel_error=")[1].split()[0]) < 1e-9 for line in out.splitlines())


def test_gradient_check_leaves_the_analytical_gradients_and_reports_a_wrong_one(capsys):
    x = Scalar(1.3)

    def wrong_square(v):  # a closure that forgets the 2 of d(x**2)/dx
        out = Scalar(v.data**2, (v,), "sq")

        def _backward():
            v.grad += v.data * out.grad

        out._backward = _backward
        return out

    assert numerical_gradient_check(wrong_square, [x]) is False
    assert x.grad == pytest.approx(1.3) and x.data == 1.3
    assert capsys.readouterr().out.rstrip().endswith("[FAIL]")


def test_stage_3_forward_mode_and_reverse_mode_agree():
    def f(x, y):
        return x**2 * y + (x * y).exp()

    dfdx = f(DualNumber(1.0, 1.0), DualNumber(2.0, 0.0)).deriv
    dfdy = f(DualNumber(1.0, 0.0), DualNumber(2.0, 1.0)).deriv
    x, y = Scalar(1.0, label="x"), Scalar(2.0, label="y")
    f(x, y).backward()
    printed = [f"{v:.6f}" for v in (dfdx, dfdy, x.grad, y.grad)]
    assert printed == ["18.778112", "8.389056", "18.778112", "8.389056"]
    assert dfdx == pytest.approx(4 + 2 * math.e**2, rel=1e-15)


def test_dual_numbers_print_and_differentiate_sin_cos_log_and_division():
    x = DualNumber(0.5, 1.0)
    out = x.sin() * x.cos() + x.log() / (1 + x) - 2 / x
    assert repr(DualNumber(1.0, 2.0)) == "Dual(1.0000 + 2.0000e)"
    assert type(out) is DualNumber and isinstance(out, chainrule.Dual)
    v = 0.5
    expected = math.cos(2 * v) + (1 / v * (1 + v) - math.log(v)) / (1 + v) ** 2 + 2 / v**2
    assert out.deriv == pytest.approx(expected, rel=1e-14)


def test_stage_4_neuron_layer_mlp_follow_the_case_study():
    np.random.seed(0)
    expected = np.random.randn(3) * 0.5
    n = Neuron(3, seed=0)
    assert [w.data for w in n.weights] == pytest.approx(expected, rel=0, abs=0)
    assert n.bias.data == 0.0 and n.weights is n.w and n.bias is n.b
    assert n.parameters() == n.weights + [n.bias]
    assert n([Scalar(-1.0), Scalar(-1.0), Scalar(-1.0)])._op in ("relu",)
    layer = Layer(3, 1)
    assert isinstance(layer([1.0, 2.0, 3.0]), list)  # a list even for one neuron
    model = MLP([2, 8, 4, 1])
    assert [len(layer.neurons) for layer in model.layers] == [8, 4, 1]
    assert model.activations == ["relu", "relu", "linear"]
    out = model([0.5, -0.5])
    assert isinstance(out, list) and len(out) == 1 and type(out[0]) is Scalar
    with pytest.raises(ValueError, match="3 layers need 3 activations"):
        MLP([2, 8, 4, 1], activations=["relu"])


def bce_xor(model):
    """The case study's loss: mean binary cross-entropy with the prediction nudged off 0 and 1."""
    total = Scalar(0.0)
    for xi, yi in zip(XOR_X, XOR_Y):
        pred = model(xi)[0]
        eps = 1e-7
        clipped = pred * (1 - 2 * eps) + eps
        total = total + (-(clipped.log()) if yi == 1 else -((1 - clipped).log()))
    return total * (1.0 / len(XOR_X))


def test_stage_4_xor_training_prints_the_case_study_run():
    np.random.seed(42)
    model = MLP([2, 8, 1], activations=["relu", "sigmoid"])
    printed = []
    for epoch in range(500):
        loss = bce_xor(model)
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= 0.1 * p.grad
        if epoch % 100 == 0:
            printed.append(f"Epoch {epoch:3d}: loss = {loss.data:.4f}")
    assert printed == [
        "Epoch   0: loss = 0.7037",
        "Epoch 100: loss = 0.5276",
        "Epoch 200: loss = 0.3479",
        "Epoch 300: loss = 0.2030",
        "Epoch 400: loss = 0.1267",
    ]
    predictions = [f"{model(xi)[0].data:.4f}" for xi in XOR_X]
    assert predictions == ["0.1985", "0.9578", "0.9461", "0.0277"]


# The extensions the case study invites.


def test_extension_vector_support_is_chainrule_tensor():
    w = chainrule.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = chainrule.tensor([1.0, 3.0])
    (w @ x).relu().sum().backward()
    tw = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    (tw @ torch.tensor([1.0, 3.0])).relu().sum().backward()
    assert np.array_equal(w.grad.numpy(), tw.grad.numpy())


def test_extension_a_new_operation_as_a_closure():
    def softsign(v):
        out = Scalar(v.data / (1 + abs(v.data)), (v,), "softsign")

        def _backward():
            v.grad += out.grad / (1 + abs(v.data)) ** 2

        out._backward = _backward
        return out

    x = Scalar(-0.8)
    (softsign(x * 2) ** 2).backward()
    t = torch.tensor(-0.8, dtype=torch.float64, requires_grad=True)
    (torch.nn.functional.softsign(t * 2) ** 2).backward()
    assert x.grad == pytest.approx(t.grad.item(), rel=1e-14)


def test_extension_gradient_checkpointing_of_a_scalar_block():
    def block(a, b):
        return ((a * b).sigmoid() + a).tanh() * b

    a, b = Scalar(0.3), Scalar(-1.2)
    (block(a, b) ** 2).backward()
    a2, b2 = Scalar(0.3), Scalar(-1.2)
    (checkpoint(block, a2, b2) ** 2).backward()
    assert (a2.grad, b2.grad) == pytest.approx((a.grad, b.grad), rel=1e-14)


def test_extension_compare_with_pytorch_on_the_xor_network():
    np.random.seed(7)
    model = MLP([2, 8, 1], activations=["relu", "sigmoid"])
    loss = bce_xor(model)
    model.zero_grad()
    loss.backward()
    w1 = torch.tensor(
        [[w.data for w in n.weights] for n in model.layers[0].neurons],
        dtype=torch.float64,
        requires_grad=True,
    )
    w2 = torch.tensor(
        [w.data for w in model.layers[1].neurons[0].weights], dtype=torch.float64,
        requires_grad=True,
    )  # fmt: skip
    b1 = torch.zeros(8, dtype=torch.float64, requires_grad=True)
    b2 = torch.zeros((), dtype=torch.float64, requires_grad=True)
    x = torch.tensor(XOR_X, dtype=torch.float64)
    y = torch.tensor(XOR_Y, dtype=torch.float64)
    pred = torch.sigmoid((x @ w1.T + b1).relu() @ w2 + b2) * (1 - 2e-7) + 1e-7
    expected = -(y * pred.log() + (1 - y) * (1 - pred).log()).mean()
    expected.backward()
    assert loss.data == pytest.approx(expected.item(), rel=1e-13)
    ours = [[w.grad for w in n.weights] for n in model.layers[0].neurons]
    assert np.allclose(ours, w1.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert model.layers[1].neurons[0].bias.grad == pytest.approx(b2.grad.item(), rel=1e-12)
