"""The in-place Tensor methods (``x.exp_()``, ``x.pow_(2)``, ``x.t_()``...): values, dtypes,
gradients and refusals as PyTorch's, for every entry of the table in chainrule.methods.variants
and the hand-written shape and map forms."""

import inspect

import numpy as np
import pytest
import torch

import chainrule
from chainrule.errors import DTypeError, GraphError
from chainrule.methods import variants

RNG = np.random.default_rng(3)
UNIT = RNG.uniform(0.2, 0.8, (3, 3))  # inside every unary op's domain but acosh's
MATRIX = RNG.standard_normal((3, 3))
INTS = RNG.integers(1, 9, (3, 3))

#: Extra arguments (as NumPy arrays or numbers) and the input, for entries that need them.
ARGS = {
    "acosh": ([], 1 + UNIT), "arccosh": ([], 1 + UNIT),
    "mvlgamma": ([2], 1 + UNIT), "polygamma": None,  # polygamma_(n): n comes first, below
    "arctan2": ([MATRIX], UNIT), "atan2": ([MATRIX], UNIT), "copysign": ([MATRIX], UNIT),
    "divide": ([1 + UNIT], MATRIX), "true_divide": ([1 + UNIT], MATRIX),
    "floor_divide": ([UNIT], MATRIX), "float_power": ([2.0], UNIT), "heaviside": ([UNIT], MATRIX),
    "hypot": ([MATRIX], UNIT), "igamma": ([UNIT], 1 + UNIT), "igammac": ([UNIT], 1 + UNIT),
    "ldexp": ([INTS], UNIT), "multiply": ([MATRIX], UNIT), "nextafter": ([MATRIX], UNIT),
    "pow": ([2.5], UNIT), "subtract": ([MATRIX], UNIT), "xlogy": ([1 + UNIT], MATRIX),
    "logical_and": ([MATRIX], UNIT), "logical_or": ([MATRIX], UNIT),
    "logical_xor": ([MATRIX], UNIT), "clamp": ([0.3, 0.6], UNIT), "clip": ([0.3, 0.6], UNIT),
    "eq": ([UNIT.round(1)], UNIT.round(1)), "ne": ([MATRIX], UNIT), "lt": ([MATRIX], UNIT),
    "le": ([MATRIX], UNIT), "gt": ([MATRIX], UNIT), "ge": ([MATRIX], UNIT),
    "greater": ([MATRIX], UNIT), "greater_equal": ([MATRIX], UNIT), "less": ([MATRIX], UNIT),
    "less_equal": ([MATRIX], UNIT), "not_equal": ([MATRIX], UNIT),
    "addmm": ([MATRIX, UNIT], UNIT), "addmv": None, "addbmm": None, "baddbmm": None,
    "addcdiv": ([MATRIX, 1 + UNIT], UNIT), "addcmul": ([MATRIX, UNIT], UNIT),
    "addr": None, "cumsum": ([1], MATRIX), "cumprod": ([0], MATRIX), "tril": ([], MATRIX),
    "triu": ([1], MATRIX), "renorm": ([2, 0, 0.5], MATRIX),
    "bitwise_not": ([], INTS), "bitwise_and": ([INTS + 1], INTS), "bitwise_or": ([INTS], INTS),
    "bitwise_xor": ([INTS], INTS), "bitwise_left_shift": ([INTS % 3], INTS),
    "bitwise_right_shift": ([INTS % 3], INTS), "gcd": ([INTS + 2], INTS),
    "lcm": ([INTS + 2], INTS), "logical_not": ([], MATRIX),
}  # fmt: skip


def _ours(value):
    return chainrule.tensor(value) if isinstance(value, np.ndarray) else value


def _theirs(value):
    return torch.tensor(value) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("name", [n for n in variants.IN_PLACE if ARGS.get(n, ()) is not None])
def test_every_table_entry_writes_what_pytorch_writes(name):
    args, start = ARGS.get(name, ([], UNIT))
    x, t = chainrule.tensor(start), torch.tensor(start)
    result = getattr(x, f"{name}_")(*map(_ours, args))
    getattr(t, f"{name}_")(*map(_theirs, args))
    assert result is x and x.dtype == chainrule.tensor(start).dtype
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


def test_entries_with_structured_arguments():
    m, v = MATRIX, RNG.standard_normal(3)
    b = RNG.standard_normal((2, 3, 3))
    for name, args in [("addmv", (m, v)), ("addr", (v, v)), ("addbmm", (b, b)),
                       ("baddbmm", (b[:1].repeat(1, 0), b[:1]))]:  # fmt: skip
        start = {"baddbmm": b[:1], "addmv": v}.get(name, m)
        x, t = chainrule.tensor(start), torch.tensor(start)
        getattr(x, f"{name}_")(*map(_ours, args))
        getattr(t, f"{name}_")(*map(_theirs, args))
        np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-10, err_msg=name)
    x, t = chainrule.tensor(1 + UNIT), torch.tensor(1 + UNIT)
    x.polygamma_(1), t.polygamma_(1)
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-8)  # torch's trigamma: ~5e-10 off


def test_the_table_names_methods_that_exist_and_shadows_nothing():
    for name in variants.IN_PLACE:
        assert hasattr(chainrule.Tensor, name), f"{name}_ in the table, but no Tensor.{name}"
        found = inspect.getattr_static(chainrule.Tensor, f"{name}_")
        assert found is vars(variants.InPlaceMethods)[f"{name}_"], f"{name}_ defined twice"


@pytest.mark.parametrize(
    "name, args",
    [("exp", ()), ("sigmoid", ()), ("pow", (3,)), ("clamp", (0.3, 0.6)), ("addcmul", "xy"),
     ("cumsum", (1,)), ("tril", ()), ("hypot", "x"), ("mul", "x")],
)  # fmt: skip
def test_gradients_through_a_view_as_pytorch(name, args):
    def run(lib, tensor):
        a = tensor(UNIT, requires_grad=True)
        other = tensor(MATRIX)
        y = a * 2
        view = y[1:]
        call = [other[1:] if arg == "x" else other[1:] * 3 if arg == "y" else arg for arg in args]
        getattr(view, f"{name}_")(*call)
        (y * tensor(MATRIX)).sum().backward()
        return y.detach().numpy(), a.grad.numpy()

    for ours, theirs in zip(run(chainrule, chainrule.tensor), run(torch, torch.tensor)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_comparisons_write_zeros_and_ones_in_the_tensors_dtype():
    x = chainrule.tensor([1.0, 2.0])
    x.eq_(chainrule.tensor([1.0, 3.0]))
    assert x.tolist() == [1.0, 0.0] and x.dtype == chainrule.float32
    n = chainrule.tensor([1, 5])
    n.gt_(2)
    assert n.tolist() == [0, 1] and n.dtype == chainrule.int64


def test_a_float_result_is_not_written_into_an_integer_tensor():
    with pytest.raises(DTypeError, match="sqrt_: cannot write a float32 result into a int64"):
        chainrule.arange(4).sqrt_()


def test_a_leaf_that_requires_grad_is_refused():
    a = chainrule.tensor(UNIT, requires_grad=True)
    for call in (lambda: a.exp_(), lambda: a.unsqueeze_(0), lambda: a.t_()):
        with pytest.raises(GraphError, match="leaf tensor that requires grad"):
            call()
    with chainrule.no_grad():
        a.t_()
    assert a.shape == (3, 3) and np.allclose(a.detach().numpy(), UNIT.T)


@pytest.mark.parametrize(
    "call",
    [lambda y: y.unsqueeze_(0), lambda y: y.squeeze_(), lambda y: y.t_(),
     lambda y: y.transpose_(0, 1), lambda y: y.swapaxes_(0, 1), lambda y: y.swapdims_(1, 0)],
)  # fmt: skip
def test_shape_changes_in_place_as_pytorch(call):
    def run(lib, tensor):
        a = tensor(MATRIX[:2], requires_grad=True)
        y = a * 2
        same = call(y)
        weights = tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
        (y * weights).sum().backward()
        return same is y, tuple(y.shape), a.grad.numpy()

    ours, theirs = run(chainrule, chainrule.tensor), run(torch, torch.tensor)
    assert ours[0] and ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


def test_detach_in_place():
    a = chainrule.tensor(UNIT, requires_grad=True)
    y = a * 2
    assert y.detach_() is y and y.grad_fn is None and not y.requires_grad
    with pytest.raises(GraphError, match="detach_: a view cannot be detached in place"):
        (a * 2)[0].detach_()


def test_resize_in_place_as_pytorch():
    x, t = chainrule.arange(6.0), torch.arange(6.0)
    x.resize_(2, 2), t.resize_(2, 2)
    assert x.tolist() == t.tolist()
    x.resize_as_(chainrule.zeros(3, 2))
    assert x.shape == (3, 2) and x.tolist()[:2] == [[0.0, 1.0], [2.0, 3.0]]
    with pytest.raises(GraphError, match="resize_: a tensor that requires grad"):
        chainrule.ones(2, requires_grad=True).resize_(4)


@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((5, 2), False), ((7, 2), True),
                                         ((2, 4), False), ((3, 3, 3), False)])  # fmt: skip
def test_fill_diagonal_as_pytorch(shape, wrap):
    x, t = chainrule.zeros(*shape), torch.zeros(*shape)
    x.fill_diagonal_(5.0, wrap=wrap), t.fill_diagonal_(5.0, wrap=wrap)
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_fill_diagonal_gradient_is_zero_on_the_diagonal():
    a = chainrule.ones(3, 3, requires_grad=True)
    y = a * 1
    y.fill_diagonal_(0.0)
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), 1 - np.eye(3))


def test_python_function_maps():
    x = chainrule.tensor([1.0, 2.0, 3.0])
    x.apply_(lambda v: v * 10)
    x.map_(chainrule.tensor([1.0, 1.0, 1.0]), lambda a, b: a + b)
    x.map2_(chainrule.tensor([1.0]), chainrule.tensor([2.0, 2.0, 2.0]), lambda a, b, c: a - b * c)
    assert x.tolist() == [9.0, 19.0, 29.0]
    with pytest.raises(GraphError, match="apply_: .*not differentiable"):
        chainrule.ones(2, requires_grad=True).apply_(lambda v: v)


@pytest.mark.parametrize(
    "make",
    [lambda F, x, w: F.gelu(x), lambda F, x, w: F.layer_norm(x, (3,)),
     lambda F, x, w: F.linear(x, w, w[0]), lambda F, x, w: F.gelu(x, approximate="tanh")],
)  # fmt: skip
def test_outputs_whose_backward_pytorch_computes_from_the_input_can_change_in_place(make):
    """PyTorch's backward of these reads the input, not the output, so writing into the output
    afterwards is allowed (and the gradient is that of the values before the write)."""

    def run(lib, F):
        x = lib.tensor(MATRIX, requires_grad=True)
        w = lib.tensor(UNIT, requires_grad=True)
        y = make(F, x, w)
        z = y * 1
        y[0] = 0.0
        (z * lib.tensor(MATRIX)).sum().backward()
        return x.grad.numpy()

    ours = run(chainrule, chainrule.nn.functional)
    theirs = run(torch, torch.nn.functional)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-14)
