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


# Products with operands of several dtypes: PyTorch refuses to promote a matrix product's
# operands (matmul, mm, bmm, the addmm family, linear, convolution) and promotes an outer
# product's (outer, kron, addr). Each case builds its operands with make(shape, dtype).
MIXED_PRODUCTS = {
    "matmul": lambda lib, make: lib.matmul(make((2, 3)), make((3, 2), "float64")),
    "matmul[vector]": lambda lib, make: lib.matmul(make((3,)), make((3, 2), "float64")),
    "matmul[batch]": lambda lib, make: lib.matmul(make((4, 2, 3), "float64"), make((3, 2))),
    "matmul[batches]": lambda lib, make: lib.matmul(make((4, 2, 3)), make((4, 3, 2), "float64")),
    "matmul[int_float]": lambda lib, make: lib.matmul(make((2, 3), "int64"), make((3, 2))),
    "matmul[ints]": lambda lib, make: lib.matmul(make((2, 3), "int64"), make((3, 2), "int64")),
    "mm": lambda lib, make: lib.mm(make((2, 3), "float64"), make((3, 2))),
    "bmm": lambda lib, make: lib.bmm(make((2, 2, 3)), make((2, 3, 2), "float64")),
    "mv": lambda lib, make: lib.mv(make((2, 3)), make((3,), "float64")),
    "addmm[input]": lambda lib, make: lib.addmm(make((2, 2), "float64"), make((2, 3)),
                                                make((3, 2))),
    "addmm[broadcast_input]": lambda lib, make: lib.addmm(make((2,), "float64"), make((2, 3)),
                                                          make((3, 2))),
    "addmm[0d_input]": lambda lib, make: lib.addmm(make((), "float64"), make((2, 3)),
                                                   make((3, 2))),
    "addmm[beta0]": lambda lib, make: lib.addmm(make((2, 2), "float64"), make((2, 3)),
                                                make((3, 2)), beta=0),
    "addmm[mats]": lambda lib, make: lib.addmm(make((2, 2)), make((2, 3), "float64"),
                                               make((3, 2))),
    "addmm[ints]": lambda lib, make: lib.addmm(make((2, 2), "int64"), make((2, 3), "int64"),
                                               make((3, 2), "int64"), alpha=2),
    "baddbmm": lambda lib, make: lib.baddbmm(make((2, 2, 2), "float64"), make((2, 2, 3)),
                                             make((2, 3, 2))),
    "addmv": lambda lib, make: lib.addmv(make((2,), "float64"), make((2, 3)), make((3,))),
    "addbmm": lambda lib, make: lib.addbmm(make((2, 2), "float64"), make((4, 2, 3)),
                                           make((4, 3, 2))),
    "addr": lambda lib, make: lib.addr(make((2, 3), "float64"), make((2,)), make((3,))),
    "addr[int_input]": lambda lib, make: lib.addr(make((2, 3), "int64"), make((2,)), make((3,))),
    "outer": lambda lib, make: lib.outer(make((2,), "int64"), make((3,))),
    "kron": lambda lib, make: lib.kron(make((2,)), make((2,), "float64")),
    "linear[input]": lambda lib, make: lib.nn.functional.linear(
        make((2, 3), "float64"), make((5, 3)), make((5,))),
    "linear[bias]": lambda lib, make: lib.nn.functional.linear(
        make((2, 3)), make((5, 3)), make((5,), "float64")),
    "linear[no_bias]": lambda lib, make: lib.nn.functional.linear(
        make((2, 3), "float64"), make((5, 3))),
    "linear[tokens]": lambda lib, make: lib.nn.functional.linear(
        make((4, 2, 3), "float64"), make((5, 3)), make((5,))),
    "linear[vector]": lambda lib, make: lib.nn.functional.linear(
        make((3,), "float64"), make((5, 3)), make((5,))),
    "linear[ints]": lambda lib, make: lib.nn.functional.linear(
        make((2, 3), "int64"), make((4, 3), "int64"), make((4,), "int64")),
    "Linear": lambda lib, make: lib.nn.Linear(3, 5)(make((2, 3), "float64")),
    "Linear[no_bias]": lambda lib, make: lib.nn.Linear(3, 5, bias=False)(make((2, 3), "float64")),
    "Linear[int_input]": lambda lib, make: lib.nn.Linear(3, 5)(make((2, 3), "int64")),
    "Linear[tokens]": lambda lib, make: lib.nn.Linear(3, 5)(make((4, 2, 3), "float64")),
    "conv2d[weight]": lambda lib, make: lib.nn.functional.conv2d(
        make((1, 1, 3, 3)), make((1, 1, 2, 2), "float64")),
    "conv2d[bias]": lambda lib, make: lib.nn.functional.conv2d(
        make((1, 1, 3, 3)), make((1, 1, 2, 2)), make((1,), "float64")),
    "conv_transpose2d[bias]": lambda lib, make: lib.nn.functional.conv_transpose2d(
        make((1, 1, 3, 3)), make((1, 1, 2, 2)), make((1,), "float64")),
}  # fmt: skip


def _maker(lib):
    def make(shape, dtype="float32"):
        values = (np.arange(np.prod(shape, dtype=int)) % 5 - 2).reshape(shape).astype(dtype)
        return lib.tensor(values, dtype=getattr(lib, dtype))

    return make


@pytest.mark.parametrize("name", sorted(MIXED_PRODUCTS))
def test_products_of_mixed_dtypes_are_refused_or_promoted_as_in_pytorch(name, torch):
    call = MIXED_PRODUCTS[name]
    try:
        expected = call(torch, _maker(torch))
    except RuntimeError as refusal:
        with pytest.raises(type(refusal), match=name.split("[")[0].lower() + "|matmul"):
            call(cr, _maker(cr))
        return
    ours = call(cr, _maker(cr))
    same_dtype(ours, expected)
    if not name.startswith("Linear"):  # the modules' weights are random
        np.testing.assert_allclose(ours.detach().numpy(), expected.detach().numpy())
