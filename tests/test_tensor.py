"""The Tensor API: construction, dtypes, factories, conversions, repr and errors."""

import numpy as np
import pytest

import chainrule
from chainrule import DomainError, DTypeError, GraphError, ShapeError, Tensor


def test_python_floats_become_float32_and_numpy_float64_stays():
    assert Tensor([1.0, 2.0]).dtype == np.float32
    assert Tensor(1.5).dtype == np.float32
    assert Tensor(np.array([1.0])).dtype == np.float64
    assert Tensor([1, 2]).dtype == np.int64
    assert Tensor([True, False]).dtype == np.bool_
    assert Tensor([1.0], dtype=chainrule.float64).dtype == np.float64
    assert Tensor([1, 2], dtype="float32").dtype == np.float32


def test_constructor_copies_and_from_numpy_shares():
    array = np.zeros(3)
    copied, shared = Tensor(array), chainrule.from_numpy(array)
    array[0] = 7.0
    assert copied.data[0] == 0.0 and shared.data[0] == 7.0


def test_float32_arithmetic_with_python_scalars_stays_float32():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (2.5 * x - 1) / 3 + x**2
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == np.float32


def test_factories():
    chainrule.manual_seed(0)
    a = chainrule.randn(2, 3)
    chainrule.manual_seed(0)
    assert np.array_equal(a.data, chainrule.randn((2, 3)).data)
    assert chainrule.zeros(2, 3).shape == (2, 3) and chainrule.zeros(2).dtype == np.float32
    assert chainrule.ones((2,), dtype=chainrule.float64).dtype == np.float64
    assert chainrule.full((2, 2), 7.0).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert chainrule.arange(4).tolist() == [0, 1, 2, 3] and chainrule.arange(4).dtype == np.int64
    assert chainrule.arange(0.0, 1.0, 0.25).dtype == np.float32
    assert chainrule.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert chainrule.eye(3).data.trace() == 3.0
    r = chainrule.rand(100)
    assert r.data.min() >= 0 and r.data.max() < 1
    i = chainrule.randint(0, 5, (50,))
    assert i.dtype == np.int64 and set(i.tolist()) <= set(range(5))
    z = chainrule.zeros_like(a)
    assert z.shape == a.shape and z.dtype == a.dtype
    assert chainrule.ones(2, requires_grad=True).requires_grad


def test_conversions_and_introspection():
    t = Tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.shape == (2, 2) and t.ndim == 2 and t.size() == (2, 2) and t.size(1) == 2
    assert t.numel() == 4 and t.dim() == 2 and len(t) == 2
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert t.double().dtype == np.float64 and t.long().dtype == np.int64
    assert np.asarray(t).shape == (2, 2)
    assert [row.tolist() for row in t] == [[1.0, 2.0], [3.0, 4.0]]
    assert Tensor([3.0]).item() == 3.0 and float(Tensor(2.0)) == 2.0
    assert t.device == "cpu"


def test_item_and_bool_need_one_element():
    with pytest.raises(ShapeError, match=r"item: only a one-element tensor .* shape \(2,\)"):
        Tensor([1.0, 2.0]).item()
    with pytest.raises(ValueError, match="no single truth value"):
        bool(Tensor([1.0, 2.0]))


def test_numpy_refuses_tensors_that_require_grad():
    x = Tensor([1.0], requires_grad=True)
    with pytest.raises(GraphError, match=r"call \.detach\(\)\.numpy\(\)"):
        x.numpy()
    assert x.detach().numpy()[0] == 1.0


def test_repr_follows_pytorch():
    assert repr(Tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(Tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert repr(Tensor(np.array([1.5]))) == "tensor([1.5000], dtype=float64)"
    assert repr(Tensor([1, 2])) == "tensor([1, 2])"
    x = Tensor([2.0], requires_grad=True)
    assert repr(x * x) == "tensor([4.], grad_fn=<MulBackward>)"
    assert repr(Tensor(3.0)) == "tensor(3.)"


def test_comparisons_return_bool_tensors_without_grad():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    mask = x > 1.5
    assert mask.dtype == np.bool_ and not mask.requires_grad
    assert mask.tolist() == [False, True, True]
    assert (~mask).tolist() == [True, False, False]


def test_numpy_arrays_on_the_left_defer_to_tensor():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = np.array([3.0, 4.0]) * x
    assert isinstance(y, Tensor) and y.requires_grad


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_data_update_from_grad_matches_pytorch_outside_autograd(torch, dtype):
    values = np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]], dtype=dtype)
    ours = chainrule.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    for w in (ours, theirs):
        (w * w * w).sum().backward()
    grad_before, version_before = ours.grad.detach().numpy().copy(), theirs._version
    for w in (ours, theirs):
        w.data -= 0.1 * w.grad  # every PyTorch tutorial's update
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    assert ours.dtype == dtype and ours._version == theirs._version == version_before
    np.testing.assert_array_equal(ours.grad.numpy(), grad_before)
    assert ours.is_leaf and ours.requires_grad and ours.grad_fn is None
    assert ours._version == 0 and theirs._version == version_before  # .data: no version bump


def test_data_update_after_forward_does_not_refuse_backward_as_in_pytorch(torch):
    values = np.array([0.5, -1.0, 2.0])
    ours = chainrule.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    steps = (
        (ours, chainrule.full((3,), 0.5, dtype=chainrule.float64)),
        (theirs, torch.full((3,), 0.5, dtype=torch.float64)),
    )
    for w, step in steps:
        loss = (w.sin() * w).sum()  # saves w for backward
        w.data -= step
        loss.backward()  # not refused: PyTorch's saved-tensor check ignores .data writes
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.data, values - 0.5)


def test_inplace_ufuncs_on_arrays_read_tensors_as_their_arrays():
    t = chainrule.tensor([1.0, 2.0, 4.0], requires_grad=True)
    a = np.ones(3, dtype=np.float32)
    a += t
    a *= t
    a /= t
    np.testing.assert_array_equal(a, [2.0, 3.0, 5.0])
    assert a.dtype == np.float32
    out = np.empty(3)
    assert np.multiply(t, 2.0, out=out) is out and out.tolist() == [2.0, 4.0, 8.0]
    assert t.grad is None and t.is_leaf


def test_numpy_operands_on_the_left_give_tensors_with_pytorchs_values_and_gradients(torch):
    left = {
        "add": (lambda a, t: a + t, np.ones(3)),
        "sub": (lambda a, t: a - t, np.ones(3)),
        "mul": (lambda a, t: a * t, np.float64(2.0)),
        "div": (lambda a, t: a / t, np.array([1.0, -2.0, 3.0])),
        "pow": (lambda a, t: a**t, np.float64(2.0)),
        "matmul": (lambda a, t: a @ t, np.arange(6.0).reshape(2, 3)),
    }
    values = np.array([0.5, 1.5, -2.0])
    for name, (expression, a) in left.items():
        ours = chainrule.tensor(values, requires_grad=True)
        theirs = torch.tensor(values, requires_grad=True)
        out = expression(a, ours)
        assert type(out) is Tensor and out.grad_fn is not None, name
        expected = expression(torch.as_tensor(a), theirs)
        np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-12)
        out.sum().backward()
        expected.sum().backward()
        np.testing.assert_allclose(ours.grad.data, theirs.grad.numpy(), rtol=1e-12, err_msg=name)


def test_numpy_operands_on_the_left_of_a_comparison_flip_it():
    t = chainrule.tensor([0.5, 1.0, 2.0])
    a = np.ones(3)
    for got, expected in [(a < t, t > 1), (a <= t, t >= 1), (a > t, t < 1), (a >= t, t <= 1),
                          (a == t, t == 1), (a != t, t != 1)]:  # fmt: skip
        assert type(got) is Tensor and got.tolist() == expected.tolist()


def test_other_numpy_ufuncs_on_tensors_are_refused_with_the_fix():
    t = chainrule.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"np.exp: NumPy ufuncs do not take chainrule Tensors; "
                       r"call t.exp\(...\) instead, .* or pass t.detach\(\).numpy"):  # fmt: skip
        np.exp(t)
    with pytest.raises(TypeError, match=r"np.add.reduce: .* compute it with chainrule's ops"):
        np.add.reduce(t)
    with pytest.raises(TypeError, match=r"np.spacing: .* compute it with chainrule's ops"):
        np.spacing(t)
    with pytest.raises(TypeError, match=r"np.add: "):
        np.add(np.ones(2), t, out=chainrule.zeros(2))  # only arrays are written into


def test_bad_data_and_dtypes_are_clear_errors():
    with pytest.raises(DTypeError, match="cannot make a tensor of"):
        Tensor(["a", "b"])
    with pytest.raises(ShapeError, match="not rectangular"):
        Tensor([[1.0, 2.0], [3.0]])
    with pytest.raises(DTypeError, match="is not a dtype"):
        Tensor([1.0], dtype="floaty")


def test_broadcasting_mismatch_names_op_and_shapes():
    with pytest.raises(ShapeError, match=r"mul: shapes \(2, 3\) and \(4,\) do not broadcast"):
        Tensor(np.ones((2, 3))) * Tensor(np.ones(4))


def test_reshape_mismatch_names_shapes():
    with pytest.raises(ShapeError, match=r"reshape: cannot reshape a tensor of shape \(2, 3\)"):
        Tensor(np.ones((2, 3))).reshape(4, 2)


def test_named_arithmetic_and_comparison_methods_match_pytorch(torch):
    x, y = np.array([[1.5, -2.0], [0.5, 3.0]]), np.array([0.5, -2.0])
    ours = [chainrule.tensor(x, requires_grad=True), chainrule.tensor(y, requires_grad=True)]
    theirs = [torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)]
    for a, b in (ours, theirs):
        out = a.add(b, alpha=3).sub(b, alpha=0.5).mul(a).div(b).pow(2)
        out.sum().backward()
    np.testing.assert_allclose(ours[0].grad.numpy(), theirs[0].grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours[1].grad.numpy(), theirs[1].grad.numpy(), rtol=1e-12)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        got = getattr(ours[0], name)(ours[1]).numpy()
        np.testing.assert_array_equal(got, getattr(theirs[0], name)(theirs[1]).numpy())
    a, b = chainrule.tensor([True, False, True]), chainrule.tensor([True, True, False])
    assert a.logical_and(b).tolist() == [True, False, False]
    assert a.logical_or(b).tolist() == [True, True, True]
    assert a.logical_not().tolist() == [False, True, False]


def test_randint_takes_pytorchs_two_forms_and_refuses_an_empty_range():
    chainrule.manual_seed(0)
    high_only = chainrule.randint(10, (16,))  # randint(high, size), not randint(low=10, high=16)
    assert high_only.shape == (16,) and high_only.dtype == chainrule.int64
    assert high_only.min().item() >= 0 and high_only.max().item() < 10
    both = chainrule.randint(3, 5, (400,))
    assert set(both.tolist()) == {3, 4}
    with pytest.raises(DomainError, match=r"randint: low \(5\) must be less than high \(3\)"):
        chainrule.randint(5, 3, (2,))


def test_arange_refuses_a_zero_step_and_one_leading_away_from_the_end():
    with pytest.raises(DomainError, match="arange: step must be nonzero"):
        chainrule.arange(0, 5, 0)
    with pytest.raises(DomainError, match="leads away from end 5"):
        chainrule.arange(0, 5, -1)
    assert chainrule.arange(5, 0, -2).tolist() == [5, 3, 1]
    assert chainrule.arange(2, 2).tolist() == []


def test_assigning_a_wrong_grad_is_refused_where_it_happens(torch):
    w = chainrule.zeros(2, 3, requires_grad=True)
    with pytest.raises(ShapeError, match=r"grad: assigned grad has shape \(3,\)") as info:
        w.grad = chainrule.zeros(3)
    assert isinstance(info.value, RuntimeError)  # what PyTorch raises for this
    with pytest.raises(RuntimeError):
        torch.zeros(2, 3, requires_grad=True).grad = torch.zeros(3)
    with pytest.raises(DTypeError, match="assigned grad has dtype int64"):
        w.grad = chainrule.zeros(2, 3, dtype=chainrule.int64)
    with pytest.raises(DTypeError, match="expected to be a Tensor or None, got list"):
        w.grad = [[0.0] * 3] * 2
    w.grad = chainrule.ones(2, 3)
    assert w.grad.sum().item() == 6.0
    w.grad = None
    assert w.grad is None
