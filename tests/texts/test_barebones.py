"""BareBonesML (Building an Autograd Engine from Scratch) on chainrule.texts.barebones: the
post's two programs print its lines, and what a reader does next (a new Function, an SGD step,
broadcasting, drawing the graph) works on chainrule's engine."""

import numpy as np
import pytest
import torch
from conftest import FD_TOL, TORCH_TOL

import chainrule
from chainrule.texts.barebones import Add, Function, Mul, Pow, Tensor


class Exp(Function):
    """e**x, saving its output: the kind of op the post invites a reader to add."""

    def forward(self, x):
        out = np.exp(x)
        self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved_tensors
        return grad * out


def test_the_module_gives_chainrule_objects():
    assert issubclass(Tensor, chainrule.Tensor) and issubclass(Function, chainrule.Function)
    assert all(issubclass(op, Function) for op in (Add, Mul, Pow, Exp))
    a = Tensor(3.0, requires_grad=True)
    for result in (a * 2, 2 * a, a + 1, 1 + a, a**2, Exp.apply(a), Add.apply(a, a)):
        assert type(result) is Tensor
        assert isinstance(result.grad_fn, chainrule.Function)


def test_first_demo_prints_what_the_post_shows(capsys):
    a = Tensor(3.0, requires_grad=True)
    b = Tensor(4.0, requires_grad=True)

    # c = a * b
    # d = c + b
    c = a * b
    d = c + b

    print(f"Tensor c: {c}")
    print(f"c was created by: {c._creator.__class__.__name__}")
    print(f"Tensor d: {d}")
    print(f"d was created by: {d._creator.__class__.__name__}")
    assert capsys.readouterr().out.splitlines() == [
        "Tensor c: Tensor(data=12.0, requires_grad=True)",
        "c was created by: Mul",
        "Tensor d: Tensor(data=16.0, requires_grad=True)",
        "d was created by: Add",
    ]


def test_final_demo_prints_the_value_and_both_gradients(capsys):
    a = Tensor(3.0, requires_grad=True)
    b = Tensor(4.0, requires_grad=True)

    # L = (a * b) + a**2
    term1 = a * b
    term2 = a**2.0
    L = term1 + term2

    # Kick off backpropagation from the final node
    L.backward()

    print(f"The final value L is: {L.data.item():.2f}")
    print("--- Gradients ---")
    print(f"dL/da: {a.grad.item():.2f} (Expected: 10.0)")
    print(f"dL/db: {b.grad.item():.2f} (Expected: 3.0)")
    assert capsys.readouterr().out.splitlines() == [
        "The final value L is: 21.00",
        "--- Gradients ---",
        "dL/da: 10.00 (Expected: 10.0)",
        "dL/db: 3.00 (Expected: 3.0)",
    ]


def test_creator_is_the_function_with_its_parents_and_saved_arrays():
    a = Tensor(3.0, requires_grad=True)
    b = Tensor(4.0, requires_grad=True)
    c = a * b
    d = c + b
    e = d**2.0
    assert a._creator is None and b._creator is None
    assert [type(t._creator).__name__ for t in (c, d, e)] == ["Mul", "Add", "Pow"]
    assert c._creator.parents == (a, b) and d._creator.parents == (c, b)
    assert e._creator.parents == (d,) and e._creator.power == 2.0
    x, y = c._creator.saved_tensors
    assert x is a.data and y is b.data
    assert d._creator.saved_tensors == ()
    (saved,) = e._creator.saved_tensors
    assert saved is d.data
    # A number is made a Tensor before the op, as in the post: it is a parent too.
    f = 2 * a
    assert isinstance(f._creator, Mul) and f._creator.parents[1] is a
    assert f._creator.parents[0].data == np.float32(2)


def test_result_needs_no_creator_when_no_input_requires_grad():
    c = Tensor(3.0) * Tensor(4.0)
    assert c._creator is None and not c.requires_grad
    assert repr(c) == "Tensor(data=12.0, requires_grad=False)"


def test_data_becomes_float32_unless_it_is_already_an_array():
    assert Tensor(3).dtype == np.float32 and Tensor(2.5).dtype == np.float32
    assert Tensor([1, 2, 3]).dtype == np.float32
    array = np.array([1.0, 2.0])  # float64
    t = Tensor(array)
    assert t.data is array and t.dtype == np.float64
    assert (Tensor(3) * 2).dtype == np.float32 and (Tensor(3) ** 2).dtype == np.float32


def test_repr_prints_the_data_as_numpy_does():
    assert repr(Tensor(12.0, requires_grad=True)) == "Tensor(data=12.0, requires_grad=True)"
    assert str(Tensor([1, 2])) == "Tensor(data=[1. 2.], requires_grad=False)"


def test_creator_argument_is_refused_with_what_to_do_instead():
    with pytest.raises(chainrule.GraphError, match=r"Tensor: _creator is set when Function"):
        Tensor(1.0, _creator=Mul())
    assert Tensor(1.0, _creator=None)._creator is None


def test_grad_is_an_array_and_sgd_steps_lower_a_quadratic_loss():
    a = Tensor(3.0, requires_grad=True)
    b = Tensor(-2.0, requires_grad=True)
    assert a.grad is None
    lr = 0.1
    losses = []
    for _ in range(5):
        loss = (a + -1.0) ** 2 + b * b  # minimum 0 at a = 1, b = 0
        loss.backward()
        assert isinstance(a.grad, np.ndarray) and a.grad.dtype == np.float32
        losses.append(loss.data.item())
        a.data -= lr * a.grad
        b.data -= lr * b.grad
        a.grad = b.grad = None
    assert all(later < earlier for earlier, later in zip(losses, losses[1:]))
    assert losses[0] == 8.0 and losses[-1] < 0.2 * losses[0]
    # 0.8 per step: a - 1 = 2 * 0.8**5, b = -2 * 0.8**5
    assert a.data.item() == pytest.approx(1 + 2 * 0.8**5, rel=1e-5)
    assert b.data.item() == pytest.approx(-2 * 0.8**5, rel=1e-5)


def test_grad_is_the_stored_gradient_not_a_copy():
    a = Tensor(3.0, requires_grad=True)
    (a * 2).backward()
    assert a.grad is a._grad._array
    a.grad = np.array(5.0, dtype=np.float32)
    assert a._grad.item() == 5.0
    with pytest.raises(chainrule.ShapeError, match=r"grad: assigned grad has shape \(2,\)"):
        a.grad = np.zeros(2, dtype=np.float32)


def test_gradients_accumulate_over_backward_calls():
    a = Tensor(3.0, requires_grad=True)
    b = Tensor(4.0, requires_grad=True)
    for _ in range(3):
        (a * b + a**2.0).backward()
    assert (a.grad.item(), b.grad.item()) == (30.0, 9.0)


def test_backward_on_many_elements_without_a_grad_is_a_value_error():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    with pytest.raises(ValueError, match=r"backward: output has shape \(3,\); pass grad="):
        y.backward()
    with pytest.raises(chainrule.ChainruleError):
        y.backward()


def test_backward_seeds_with_a_given_grad_array():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(np.array([1.0, 0.5, -1.0], dtype=np.float32))
    np.testing.assert_array_equal(x.grad, np.array([2.0, 2.0, -6.0], dtype=np.float32))


def test_backward_of_a_tensor_without_requires_grad_raises_as_chainrule_does():
    c = Tensor(3.0) * Tensor(4.0)
    with pytest.raises(chainrule.GraphError, match=r"backward: the output does not require"):
        c.backward()


def test_pow_takes_only_a_number_exponent():
    a = Tensor(2.0, requires_grad=True)
    with pytest.raises(TypeError, match=r"pow: the exponent must be an int or a float, got Tensor"):
        a ** Tensor(2.0)
    y = Pow.apply(a, power=3)
    y.backward()
    assert (y.data.item(), a.grad.item()) == (8.0, 12.0)


def test_save_for_backward_adds_to_what_was_saved():
    class MulAdd(Function):
        """x * y + x, saving its inputs one call at a time."""

        def forward(self, x, y):
            self.save_for_backward(x)
            self.save_for_backward(y)
            return x * y + x

        def backward(self, grad):
            x, y = self.saved_tensors
            return grad * (y + 1), grad * x

    a = Tensor(3.0, requires_grad=True)
    b = Tensor(4.0, requires_grad=True)
    MulAdd.apply(a, b).backward()
    assert (a.grad.item(), b.grad.item()) == (5.0, 3.0)


def test_a_readers_exp_function_matches_finite_differences_and_pytorch():
    data = np.array([[0.3, -1.2, 0.5], [2.0, 0.0, -0.7]])
    seed = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])
    x = Tensor(data.copy(), requires_grad=True)
    assert chainrule.gradcheck(lambda t: Exp.apply(t * t + t), [x], **FD_TOL)

    y = Exp.apply(x * x + x)
    y.backward(seed)
    assert isinstance(y._creator, Exp) and y._creator.parents[0]._creator.__class__ is Add
    tx = torch.tensor(data, requires_grad=True)
    ty = torch.exp(tx * tx + tx)
    ty.backward(torch.tensor(seed))
    np.testing.assert_allclose(y.data, ty.detach().numpy(), **TORCH_TOL)
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), **TORCH_TOL)


def test_broadcast_gradients_are_summed_to_each_input_shape_as_pytorch_does():
    rng = np.random.default_rng(0)
    m, v, seed = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal((2, 3))
    x, w = Tensor(m.copy(), requires_grad=True), Tensor(v.copy(), requires_grad=True)
    y = (x * w + w) ** 2
    y.backward(seed)
    tx, tw = torch.tensor(m, requires_grad=True), torch.tensor(v, requires_grad=True)
    ((tx * tw + tw) ** 2).backward(torch.tensor(seed))
    assert x.grad.shape == (2, 3) and w.grad.shape == (3,)
    np.testing.assert_allclose(x.grad, tx.grad.numpy(), **TORCH_TOL)
    np.testing.assert_allclose(w.grad, tw.grad.numpy(), **TORCH_TOL)


def test_draw_graph_shows_the_functions_and_the_gradients():
    a = Tensor(3.0, requires_grad=True)
    b = Tensor([4.0, 5.0], requires_grad=True)
    loss = a * b + a**2.0
    loss.backward(np.ones(2, dtype=np.float32))
    source = chainrule.draw_graph(loss, format=None).source
    assert all(name in source for name in ("Mul", "Add", "Pow"))
    # a: 4 + 5 from Mul, and 2a from Pow once per element Add broadcast it to
    assert "grad 21.0000" in source
    assert "grad [3.0000 3.0000]" in source


def test_subtraction_division_and_negation_are_built_from_the_texts_functions(torch):
    a, b = Tensor(3.0, requires_grad=True), Tensor(2.0, requires_grad=True)
    loss = (a - 1) * b + a / b - (-a) + 1 / b + 5 - a
    loss.backward()
    at = torch.tensor(3.0, requires_grad=True)
    bt = torch.tensor(2.0, requires_grad=True)
    expected = (at - 1) * bt + at / bt - (-at) + 1 / bt + 5 - at
    expected.backward()
    assert float(loss.data) == expected.item() == 11.0
    assert (float(a.grad), float(b.grad)) == (at.grad.item(), bt.grad.item())
    assert type(loss) is Tensor and type(loss._creator).__name__ == "Add"
    assert float(loss.grad) == 1.0  # the output keeps its seed, as the text's does
