"""PyTorch's legacy typed-tensor classes (chainrule.FloatTensor, LongTensor, ...) as
constructors, ``isinstance`` targets and ``Tensor.type`` arguments, and ``Tensor.__format__``,
each against the installed torch."""

import numpy as np
import pytest

import chainrule

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]  # fmt: skip
DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _same(ours, theirs):
    assert ours.shape == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", NAMES)
def test_a_legacy_class_builds_tensors_as_pytorchs(name, torch):
    ours, theirs = getattr(chainrule, name), getattr(torch, name)
    assert tuple(ours(2, 3).shape) == tuple(theirs(2, 3).shape) == (2, 3)  # values: zeros here
    _same(ours(), theirs())
    _same(ours([1, 0, 1]), theirs([1, 0, 1]))
    _same(ours([[1, 2], [0, 3]]), theirs([[1, 2], [0, 3]]))
    _same(ours(np.array([1, 0])), theirs(np.array([1, 0])))
    sized, unset = ours(chainrule.Size([4])), theirs(torch.Size([4]))  # a size, not data
    assert (sized.shape, str(sized.dtype)) == (tuple(unset.shape), str(unset.dtype)[6:])
    x = chainrule.zeros(2).type(ours)
    assert ours(x) is x  # PyTorch shares the argument's data too
    with pytest.raises(TypeError):
        theirs(2.5)
    with pytest.raises(TypeError, match=rf"^{name}: data must be a sequence \(got float\)"):
        ours(2.5)


def test_isinstance_asks_the_dtype_as_pytorch(torch):
    for dtype in DTYPES:
        x, y = (
            chainrule.zeros(2).to(getattr(chainrule, dtype)),
            torch.zeros(2).to(getattr(torch, dtype)),
        )
        for name in NAMES:
            assert isinstance(x, getattr(chainrule, name)) == isinstance(y, getattr(torch, name))
    parameter = chainrule.nn.Parameter(chainrule.zeros(2))
    assert isinstance(parameter, chainrule.FloatTensor)
    assert isinstance(torch.nn.Parameter(torch.zeros(2)), torch.FloatTensor)
    assert not isinstance([1.0], chainrule.FloatTensor)
    assert not issubclass(chainrule.FloatTensor, chainrule.Tensor)
    assert not issubclass(torch.FloatTensor, torch.Tensor)


def test_tensor_type_takes_and_gives_pytorchs_type_names(torch):
    for dtype in DTYPES:
        x, y = (
            chainrule.ones(2).to(getattr(chainrule, dtype)),
            torch.ones(2).to(getattr(torch, dtype)),
        )
        assert x.type() == y.type()
        for name in NAMES:
            _same(x.type(getattr(chainrule, name)), y.type(getattr(torch, name)))
            _same(x.type(f"torch.{name}"), y.type(f"torch.{name}"))


def test_a_tensor_of_another_dtype_is_refused_as_in_pytorch(torch):
    with pytest.raises(TypeError):
        torch.LongTensor(torch.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"^LongTensor: expected a int64 tensor, got float32"):
        chainrule.LongTensor(chainrule.tensor([1.0, 2.0]))


def test_a_0d_tensor_formats_as_its_value(torch):
    for value, spec in [(1.23456, ".4f"), (2.0, ".2e"), (3, "d"), (3, "5d"), (7, ""), (0.5, "%"),
                        (True, ""), (-1.5, "+.1f")]:  # fmt: skip
        assert format(chainrule.tensor(value), spec) == format(torch.tensor(value), spec)
    loss = chainrule.tensor(0.25, requires_grad=True) * 2
    assert f"{loss:.4f}" == "0.5000"


def test_other_tensors_take_only_the_empty_format(torch):
    x, y = chainrule.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    assert f"{x}" == str(x) and f"{y}" == str(y)
    with pytest.raises(TypeError) as theirs:
        format(y, ".4f")
    with pytest.raises(TypeError) as ours:
        format(x, ".4f")
    assert str(ours.value) == str(theirs.value)


def test_set_default_tensor_type_sets_the_default_dtype_as_pytorch(torch):
    try:
        for t in ("DoubleTensor", "FloatTensor", "torch.DoubleTensor"):
            ours = getattr(chainrule, t) if not t.startswith("torch.") else t
            theirs = getattr(torch, t) if not t.startswith("torch.") else t
            chainrule.set_default_tensor_type(ours)
            torch.set_default_tensor_type(theirs)
            assert str(chainrule.zeros(1).dtype) == str(torch.zeros(1).dtype)[6:]
        with pytest.raises(TypeError):
            torch.set_default_tensor_type(torch.LongTensor)
        with pytest.raises(TypeError, match="only floating-point types"):
            chainrule.set_default_tensor_type(chainrule.LongTensor)
    finally:
        chainrule.set_default_dtype(chainrule.float32)
        torch.set_default_dtype(torch.float32)


def test_a_0d_parameter_formats_as_its_str_as_pytorch(torch):
    # PyTorch formats only exact Tensors as their value; a subclass takes the empty format.
    ours, theirs = (
        chainrule.nn.Parameter(chainrule.tensor(1.5)),
        torch.nn.Parameter(torch.tensor(1.5)),
    )
    assert f"{ours}" == str(ours)
    for p in (ours, theirs):
        with pytest.raises(TypeError, match="unsupported format string passed to Parameter"):
            format(p, ".2f")
