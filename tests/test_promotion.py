"""Result dtypes follow PyTorch's promotion: integers meeting floats, float functions of
integers and true division give the widest float operand's dtype, else the default float."""

import numpy as np
import pytest

import chainrule as cr

INTEGERS = ["bool", "uint8", "int8", "int16", "int32", "int64"]


def both(torch, dtype, values=(0, 1, 1)):
    array = np.array(values).astype(dtype)
    return cr.tensor(array), torch.tensor(array)


def same_dtype(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integers_with_python_floats_float_tensors_and_division(dtype, torch):
    x, tx = both(torch, dtype)
    same_dtype(x * 2.5, tx * 2.5)
    same_dtype(x / 2, tx / 2)
    same_dtype(1 / (x + 1), 1 / (tx + 1))
    for float_dtype in ("float16", "float32", "float64"):
        y, ty = both(torch, float_dtype, (0.5, 1.5, 2.5))
        same_dtype(x + y, tx + ty)
        same_dtype(y * x, ty * tx)


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "tanh", "sigmoid", "log1p", "erf"])
def test_float_functions_of_integers_give_the_default_float_with_float_precision(
    name, dtype, torch
):
    x, tx = both(torch, dtype)
    ours, theirs = getattr(cr, name)(x), getattr(torch, name)(tx)
    same_dtype(ours, theirs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)  # not float16's


def test_the_default_dtype_and_explicit_casts_are_respected():
    x = cr.arange(3)
    assert x.double().dtype == cr.float64 and (x.double() * 2.5).dtype == cr.float64
    assert (x * 2).dtype == cr.int64  # integers with integers stay integers
    previous = cr.get_default_dtype()
    cr.set_default_dtype(cr.float64)
    try:
        assert x.exp().dtype == cr.float64 and (x / 2).dtype == cr.float64
        assert (x + cr.ones(3, dtype=cr.float32)).dtype == cr.float32  # the float operand's
    finally:
        cr.set_default_dtype(previous)
