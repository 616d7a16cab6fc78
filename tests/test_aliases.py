"""PyTorch's other names and everyday utilities (the aliases beside their ops in
chainrule/ops/, creation.py's scalar_tensor, asarray, range and typename, dtypes.py,
settings.py, compiling.py, methods/aliases.py) against PyTorch: divide's rounding modes on
integers, floats, zeros and signs; dtype facts (finfo, iinfo, promotion, casting,
result_type); Size; factories (range, scalar_tensor, asarray, fill); the settings; the
Tensor attributes; and every error message."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import DomainError, DTypeError, GraphError, ShapeError


def both(torch, values, dtype="float64", requires_grad=False):
    """The same values as a chainrule and a torch tensor."""
    array = np.array(values, dtype=dtype)
    return cr.tensor(array, requires_grad=requires_grad), torch.tensor(
        array, requires_grad=requires_grad
    )


def assert_same(ours, theirs):
    """Same shape, dtype and values (nan where PyTorch has nan)."""
    expected = theirs.detach().numpy()
    assert ours.shape == expected.shape
    assert ours.dtype == expected.dtype, (ours.dtype, expected.dtype)
    np.testing.assert_array_equal(ours.detach().numpy(), expected)


def torch_dtype(torch, d):
    return getattr(torch, np.dtype(d).name)


# The plain aliases are the ops themselves.


def test_plain_aliases_are_the_ops_under_pytorchs_other_names():
    pairs = [("absolute", "abs"), ("multiply", "mul"), ("true_divide", "div"),
             ("negative", "neg"), ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
             ("less_equal", "le"), ("not_equal", "ne")]  # fmt: skip
    for alias, name in pairs:
        assert getattr(cr.ops, alias) is getattr(cr.ops, name), alias
    x, y = cr.tensor([1.0, -2.0, 3.0]), cr.tensor([1.0, 2.0, 2.0])
    assert x.greater(y).tolist() == [False, False, True]
    assert x.less_equal(y).tolist() == [True, True, False]
    assert x.not_equal(y).tolist() == [False, True, True]
    assert x.absolute().tolist() == [1.0, 2.0, 3.0] and x.negative().tolist() == [-1, 2, -3]
    assert x.multiply(y).tolist() == [1.0, -4.0, 6.0]
    assert x.true_divide(y).tolist() == [1.0, -1.0, 1.5]


def test_shape_aliases_match_pytorch(torch):
    array = np.arange(24.0).reshape(2, 3, 4)
    ours, theirs = cr.tensor(array), torch.tensor(array)
    assert_same(cr.moveaxis(ours, 0, 2), torch.moveaxis(theirs, 0, 2))
    assert_same(ours.moveaxis((0, 1), (2, 0)), theirs.moveaxis((0, 1), (2, 0)))
    assert_same(cr.swapdims(ours, 0, 2), torch.swapdims(theirs, 0, 2))
    assert_same(ours.swapdims(-1, 1), theirs.swapdims(-1, 1))
    assert_same(cr.ravel(ours.transpose(0, 2)), torch.ravel(theirs.transpose(0, 2)))
    assert_same(ours.fliplr(), theirs.fliplr())
    assert_same(ours.flipud(), theirs.flipud())
    rows = [cr.tensor([1.0, 2.0]), cr.tensor([[3.0, 4.0]])]
    assert_same(
        cr.row_stack(rows), torch.row_stack([torch.tensor(r.detach().numpy()) for r in rows])
    )
    v, w = both(torch, [1.0, 2.0, 3.0])
    assert_same(cr.ger(v, v[:2]), torch.ger(w, w[:2]))
    assert_same(v.ger(v), w.ger(w))


def test_msort_sorts_along_dim_0_and_its_gradient_follows_the_values(torch):
    ours, theirs = both(torch, [[3.0, 1.0], [1.0, 2.0], [2.0, 0.0]], requires_grad=True)
    assert_same(cr.msort(ours), torch.msort(theirs))
    weights = np.arange(6.0).reshape(3, 2)
    (ours.msort() * cr.tensor(weights)).sum().backward()
    (theirs.msort() * torch.tensor(weights)).sum().backward()
    assert_same(ours.grad, theirs.grad)
    assert_same(cr.tensor([[3, 1], [1, 2]]).msort(), torch.tensor([[3, 1], [1, 2]]).msort())


def test_flips_refuse_too_few_dims():
    with pytest.raises(ShapeError, match=r"fliplr: input must be at least 2-D, got shape \(3,\)"):
        cr.fliplr(cr.zeros(3))
    with pytest.raises(ShapeError, match="flipud: input must be at least 1-D, got a 0-d tensor"):
        cr.tensor(1.0).flipud()


def test_trace_sums_the_diagonal_with_pytorchs_dtype_and_gradient(torch):
    ours, theirs = both(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert_same(ours.trace(), theirs.trace())
    ours.trace().backward()
    theirs.trace().backward()
    assert_same(ours.grad, theirs.grad)
    assert_same(cr.tensor([[1, 2], [3, 4]], dtype=cr.int32).trace(),
                torch.tensor([[1, 2], [3, 4]], dtype=torch.int32).trace())  # fmt: skip
    with pytest.raises(ShapeError, match=r"trace: expects a matrix \(2-D\), got shape \(2, 2, 2\)"):
        cr.zeros(2, 2, 2).trace()


def test_positive_is_the_tensor_itself_and_refuses_bool():
    x = cr.tensor([1, -2])
    assert cr.positive(x) is x and x.positive() is x
    with pytest.raises(DTypeError, match="positive: unary \\+ is not defined for bool tensors"):
        cr.tensor([True]).positive()


def test_subtract_takes_alpha(torch):
    (x, tx), (y, ty) = both(torch, [5.0, 6.0]), both(torch, [1.0, 2.0])
    assert_same(cr.subtract(x, y, alpha=2), torch.subtract(tx, ty, alpha=2))
    assert_same(x.subtract(y), tx.subtract(ty))
    assert_same(x.subtract(y, alpha=-0.5), tx.subtract(ty, alpha=-0.5))


# divide's rounding modes.


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8", "int8"])
def test_divide_matches_pytorch_on_every_sign_and_dtype(torch, mode, dtype):
    values = [7, -7, 6, -6, 0, 1] if dtype != "uint8" else [7, 6, 0, 1, 200, 255]
    divisors = [2, 2, -4, -4, 3, -3] if dtype != "uint8" else [2, 4, 3, 3, 7, 255]
    (x, tx), (y, ty) = both(torch, values, dtype), both(torch, divisors, dtype)
    assert_same(cr.divide(x, y, rounding_mode=mode), torch.divide(tx, ty, rounding_mode=mode))
    assert_same(x.divide(y, rounding_mode=mode), tx.divide(ty, rounding_mode=mode))
    assert_same(x.div(y, rounding_mode=mode), tx.div(ty, rounding_mode=mode))
    assert_same(x.divide(3, rounding_mode=mode), tx.divide(3, rounding_mode=mode))
    assert_same(cr.divide(x, 2.5, rounding_mode=mode), torch.divide(tx, 2.5, rounding_mode=mode))


def test_divide_rounds_floats_as_pytorch_at_zero_inf_and_inexact_quotients(torch):
    (x, tx), (y, ty) = (both(torch, [7.0, -7.0, 0.0, 1.0, -1.0, np.inf, 1.0]),
                        both(torch, [0.0, 0.0, 0.0, 0.1, 0.1, 2.0, np.inf]))  # fmt: skip
    for mode in ("trunc", "floor"):
        assert_same(cr.divide(x, y, rounding_mode=mode), torch.divide(tx, ty, rounding_mode=mode))


def test_rounded_division_has_a_zero_gradient_as_in_pytorch(torch):
    (x, tx), (y, ty) = both(torch, [7.5, -3.0], requires_grad=True), both(torch, [2.0, 4.0])
    y.requires_grad_(), ty.requires_grad_()
    for mode in ("trunc", "floor"):
        out, expected = (
            cr.divide(x, y, rounding_mode=mode),
            torch.divide(tx, ty, rounding_mode=mode),
        )
        assert out.requires_grad and expected.requires_grad
        out.sum().backward()
        expected.sum().backward()
    assert_same(x.grad, tx.grad)
    assert_same(y.grad, ty.grad)


def test_divide_errors_name_the_op():
    ints = cr.tensor([1, 2])
    with pytest.raises(DomainError, match="divide: integer division by zero"):
        cr.divide(ints, cr.tensor([1, 0]), rounding_mode="trunc")
    with pytest.raises(DomainError, match="divide: integer division by zero"):
        ints.divide(0, rounding_mode="floor")
    with pytest.raises(DTypeError, match="divide: rounding_mode='trunc' takes numbers, not bool"):
        cr.divide(cr.tensor([True]), cr.tensor([True]), rounding_mode="trunc")
    with pytest.raises(DomainError, match="divide: rounding_mode must be None, 'trunc' or 'floor'"):
        ints.divide(2, rounding_mode="round")


# Copies, fills and factories.


def test_detach_and_fill_match_pytorch(torch):
    x, tx = both(torch, [1.0, 2.0], requires_grad=True)
    assert not cr.detach(x).requires_grad and cr.detach(x).detach().numpy() is x.detach().numpy()
    assert_same(cr.fill(x, 3), torch.fill(tx, 3))
    ints, tints = both(torch, [0, 0], "int64")
    assert_same(cr.fill(ints, 3.7), torch.fill(tints, 3.7))
    value, tvalue = both(torch, 5.0, requires_grad=True)
    out, expected = cr.fill(x, value), torch.fill(tx, tvalue)
    assert_same(out, expected)
    (out * cr.tensor([1.0, 3.0], dtype=cr.float64)).sum().backward()
    (expected * torch.tensor([1.0, 3.0], dtype=torch.float64)).sum().backward()
    assert_same(value.grad, tvalue.grad)
    assert_same(x.grad, tx.grad)
    with pytest.raises(ShapeError, match=r"fill: the value must be a number or a 0-d tensor"):
        cr.fill(x, cr.tensor([5.0]))


def test_scalar_tensor_matches_pytorch(torch):
    for value, kwargs in [(1, {}), (True, {}), (2.5, {}), (2, {"dtype": "int64"})]:
        theirs_kwargs = {k: getattr(torch, v) for k, v in kwargs.items()}
        assert_same(cr.scalar_tensor(value, **kwargs), torch.scalar_tensor(value, **theirs_kwargs))
    assert cr.scalar_tensor(1.5, requires_grad=True).requires_grad
    with pytest.raises(DTypeError, match="scalar_tensor: expects a number, got str"):
        cr.scalar_tensor("1")


@pytest.mark.parametrize(
    "args, kwargs",
    [((1, 4), {}), ((0, 1, 0.1), {}), ((4, 1, -1), {}), ((1, 4), {"dtype": "int64"}),
     ((0, 1, 0.1), {"dtype": "float64"}), ((-2.5, 2.5, 0.5), {})],
)  # fmt: skip
def test_range_includes_its_end_warns_and_matches_pytorch(torch, args, kwargs):
    with pytest.warns(UserWarning, match="deprecated"):
        ours = cr.range(*args, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.range(*args, **{k: getattr(torch, v) for k, v in kwargs.items()})
    assert_same(ours, theirs)


def test_range_errors_name_the_op():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DomainError, match="range: step must be nonzero"):
            cr.range(1, 4, 0)
        with pytest.raises(DomainError, match="range: the bounds 4 and 1 are inconsistent"):
            cr.range(4, 1)


def test_asarray_shares_memory_where_it_can_as_pytorch(torch):
    x = cr.ones(2)
    assert cr.asarray(x) is x and cr.asarray(x, dtype=cr.float32) is x
    assert cr.asarray(x, copy=True) is not x
    assert cr.asarray(x, dtype=cr.float64).dtype == np.float64
    array = np.zeros(2)
    shared = cr.asarray(array)
    array[0] = 5.0
    assert shared.tolist() == [5.0, 0.0] and shared.dtype == np.float64
    assert cr.asarray(array, copy=True).detach().numpy() is not array
    for data in ([1, 2], [1.0, 2.0], 3, np.float32(2.0)):
        assert_same(cr.asarray(data), torch.asarray(data))
    w = cr.zeros(2)
    assert cr.asarray(w, requires_grad=True) is w and w.requires_grad
    assert not cr.asarray(w, requires_grad=False).requires_grad
    with pytest.raises(DomainError, match="asarray: copy=False, but turning a float32 array"):
        cr.asarray(np.zeros(2, np.float32), dtype=cr.float64, copy=False)
    with pytest.raises(DomainError, match="asarray: copy=False, but turning list data"):
        cr.asarray([1, 2], copy=False)


# Dtypes.


def test_dtype_is_the_class_of_every_dtype():
    assert isinstance(cr.zeros(1).dtype, cr.dtype) and isinstance(cr.int64, cr.dtype)


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_pytorch(torch, name):
    ours, theirs = cr.finfo(getattr(cr, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


def test_finfo_defaults_to_the_default_dtype():
    cr.set_default_dtype(cr.float64)
    try:
        assert cr.finfo().dtype == "float64"
    finally:
        cr.set_default_dtype(cr.float32)
    assert cr.finfo().dtype == "float32"


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_pytorch(torch, name):
    ours, theirs = cr.iinfo(getattr(cr, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.max, ours.min, ours.dtype) == (
        theirs.bits, theirs.max, theirs.min, theirs.dtype
    )  # fmt: skip
    assert repr(ours) == repr(theirs)


def test_finfo_and_iinfo_refuse_the_other_kind():
    with pytest.raises(DTypeError, match="finfo: needs a floating-point dtype, got int32"):
        cr.finfo(cr.int32)
    with pytest.raises(DTypeError, match="iinfo: needs an integer dtype, got float32"):
        cr.iinfo(cr.float32)
    with pytest.raises(DTypeError, match="iinfo: needs an integer dtype, got bool"):
        cr.iinfo(cr.bool_)
    with pytest.raises(DTypeError, match="finfo: bfloat16 is not supported"):
        cr.finfo(cr.bfloat16)


NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def test_promote_types_and_can_cast_match_pytorch_for_every_pair(torch):
    for a in NAMES:
        for b in NAMES:
            ours_a, ours_b = np.dtype(a), np.dtype(b)
            theirs_a, theirs_b = getattr(torch, a), getattr(torch, b)
            promoted = torch.promote_types(theirs_a, theirs_b)
            assert cr.promote_types(ours_a, ours_b) == str(promoted).removeprefix("torch."), (a, b)
            assert cr.can_cast(ours_a, ours_b) == torch.can_cast(theirs_a, theirs_b), (a, b)


def test_result_type_matches_pytorch_across_tensors_0d_tensors_and_numbers(torch):
    operands = [2, 2.5, True]
    for name in NAMES:
        operands += [("dims", name), ("0-d", name)]

    def make(lib, operand):
        if not isinstance(operand, tuple):
            return operand
        kind, name = operand
        dtype = getattr(lib, name) if lib is torch else np.dtype(name)
        return lib.ones((2,) if kind == "dims" else (), dtype=dtype)

    for a in operands:
        for b in operands:
            if not isinstance(a, tuple) and not isinstance(b, tuple):
                continue
            expected = str(torch.result_type(make(torch, a), make(torch, b)))
            assert cr.result_type(make(cr, a), make(cr, b)) == expected.removeprefix("torch."), (
                a, b
            )  # fmt: skip
    assert cr.result_type(2, 3.0) == torch_dtype_name(torch.result_type(2, 3.0))
    with pytest.raises(DTypeError, match="result_type: takes tensors and Python numbers, got str"):
        cr.result_type(cr.zeros(1), "a")


def torch_dtype_name(d) -> str:
    return str(d).removeprefix("torch.")


def test_size_behaves_as_torch_size(torch):
    ours, theirs = cr.Size([2, 3, 4]), torch.Size([2, 3, 4])
    assert repr(ours) == repr(theirs).replace("torch", "chainrule")
    assert ours.numel() == theirs.numel() and ours == theirs == (2, 3, 4)
    for result in (ours[1:], ours + (5,), (1,) + ours, ours * 2):
        assert type(result) is cr.Size
    assert ours[1:] == theirs[1:] and (1,) + ours == (1,) + theirs and ours * 2 == theirs * 2
    assert cr.Size(np.array([2, 3])) == (2, 3) and isinstance(cr.Size([2])[0], int)
    assert cr.zeros(cr.Size([2, 3])).shape == cr.Size([2, 3])
    with pytest.raises(DTypeError, match=r"Size: takes an iterable of ints \(item 0 is float\)"):
        cr.Size([2.0])


def test_memory_format_names_and_constants(torch):
    assert cr.legacy_contiguous_format is cr.contiguous_format
    assert repr(cr.legacy_contiguous_format) == "chainrule.contiguous_format"
    assert (cr.e, cr.pi, cr.inf, cr.newaxis) == (torch.e, torch.pi, torch.inf, torch.newaxis)
    assert np.isnan(cr.nan)
    assert cr.zeros(3)[:, cr.newaxis].shape == (3, 1)


def test_typename_matches_pytorch_for_non_tensors(torch):
    for obj in (1, 2.5, "s", [1], np.zeros(1), warnings.warn):
        assert cr.typename(obj) == torch.typename(obj)
    for dtype in ("float32", "float64", "int64", "bool"):
        ours, theirs = cr.zeros(1, dtype=dtype), torch.zeros(1, dtype=getattr(torch, dtype))
        assert cr.typename(ours) == torch.typename(theirs)
    assert cr.typename(cr.nn.Linear) == "chainrule.nn.modules.linear.Linear"


# Settings.


def test_compile_accepts_pytorchs_keywords_and_disable_returns_the_model():
    def fn(x):
        return x + 1

    compiled = cr.compile(fn, fullgraph=True, dynamic=False, backend="eager",
                          mode="reduce-overhead", options={})  # fmt: skip
    assert compiled(cr.tensor([1.0])).tolist() == [2.0]
    assert cr.compile(fn, disable=True) is fn
    assert cr.compile(mode="max-autotune")(fn)(cr.tensor([2.0])).tolist() == [3.0]
    assert cr.jit is cr.compile
    with pytest.raises(TypeError):
        cr.compile(fn, bogus=1)


def test_set_printoptions_changes_the_repr_and_profiles_reset_it():
    x = cr.tensor([1.23456, 100.5])
    try:
        cr.set_printoptions(precision=2)
        assert repr(x) == "tensor([  1.23, 100.50])"
        cr.set_printoptions(sci_mode=True)
        assert repr(x) == "tensor([1.23e+00, 1.00e+02])"
        cr.set_printoptions(profile="short", sci_mode=False)
        assert repr(cr.tensor([1e-8, 1.0])) == "tensor([0.00, 1.00])"
        cr.set_printoptions(threshold=5, edgeitems=2)
        assert repr(cr.arange(10)) == "tensor([0, 1, ..., 8, 9])"
        cr.set_printoptions(profile="full")
        assert "..." not in repr(cr.arange(2000))
        cr.set_printoptions(profile="default", linewidth=20)
        assert repr(cr.arange(6)) == "tensor([0, 1, 2, 3,\n        4, 5])"
    finally:
        cr.set_printoptions(profile="default")
    assert repr(x) == "tensor([  1.2346, 100.5000])"
    assert repr(cr.arange(2000)).count("...") == 1


def test_set_printoptions_errors():
    with pytest.raises(DomainError, match="set_printoptions: profile must be one of"):
        cr.set_printoptions(profile="long")
    with pytest.raises(DomainError, match="set_printoptions: precision must be an int >= 0"):
        cr.set_printoptions(precision=-1)


def test_the_default_print_options_match_pytorchs_line_width(torch):
    for n in (12, 30):
        values = np.arange(float(n)) + 0.5
        assert repr(cr.tensor(values, dtype=cr.float32)) == repr(torch.tensor(values).float())
        assert repr(cr.arange(n)) == repr(torch.arange(n))


def test_threads_are_set_through_threadpoolctl_and_read_back():
    before = cr.get_num_threads()
    try:
        cr.set_num_threads(1)
        assert cr.get_num_threads() == 1
    finally:
        cr.set_num_threads(before)
    assert cr.get_num_threads() == before
    with pytest.raises(DomainError, match="set_num_threads: expects a positive integer, got 0"):
        cr.set_num_threads(0)
    with pytest.raises(DTypeError, match="set_num_threads: expects an int, got float"):
        cr.set_num_threads(2.5)


def test_without_threadpoolctl_threads_fall_back_to_the_environment(monkeypatch):
    monkeypatch.setattr(cr.settings, "_threadpoolctl", lambda: None)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    assert cr.get_num_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert cr.get_num_threads() >= 1
    with pytest.warns(RuntimeWarning, match="set_num_threads: NumPy's BLAS threads cannot"):
        cr.set_num_threads(2)


def test_deterministic_and_matmul_precision_flags_are_recorded(torch):
    assert cr.are_deterministic_algorithms_enabled() is False
    try:
        cr.use_deterministic_algorithms(True, warn_only=True)
        assert cr.are_deterministic_algorithms_enabled()
        assert cr.is_deterministic_algorithms_warn_only_enabled()
    finally:
        cr.use_deterministic_algorithms(False)
    assert not cr.is_deterministic_algorithms_warn_only_enabled()
    with pytest.raises(DTypeError, match="use_deterministic_algorithms: mode and warn_only"):
        cr.use_deterministic_algorithms("yes")
    assert cr.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    try:
        cr.set_float32_matmul_precision("medium")
        assert cr.get_float32_matmul_precision() == "medium"
        with pytest.warns(UserWarning, match="'bad' is not one of 'highest', 'high' or 'medium'"):
            cr.set_float32_matmul_precision("bad")
        assert cr.get_float32_matmul_precision() == "medium"
    finally:
        cr.set_float32_matmul_precision("highest")


def test_multiprocessing_helpers_and_top_level_containers():
    assert cr.thread_safe_generator() is None
    assert cr.prepare_multiprocessing_environment("/tmp") is None
    assert cr.ModuleDict is cr.nn.ModuleDict and cr.ParameterDict is cr.nn.ParameterDict


# Tensor attributes.


def test_sizes_and_flags_match_pytorch(torch):
    ours, theirs = cr.zeros(2, 3, 4), torch.zeros(2, 3, 4)
    assert (ours.ndimension(), ours.nelement()) == (theirs.ndimension(), theirs.nelement())
    for name in ("name", "is_nested", "is_xla", "is_maia", "is_mtia"):
        assert getattr(ours, name) == getattr(theirs, name), name
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert ours.volatile is False
    assert ours.const_data_ptr() == ours.numpy().ctypes.data


@pytest.mark.parametrize(
    "make",
    [lambda x: x, lambda x: x.permute(2, 0, 1), lambda x: x.transpose(0, 1),
     lambda x: x[:, :, ::2], lambda x: x.permute(1, 2, 0)[1:]],
)  # fmt: skip
def test_dim_order_matches_pytorch(torch, make):
    array = np.zeros((2, 3, 4))
    assert make(cr.tensor(array)).dim_order() == make(torch.tensor(array)).dim_order()
    for shape in ((2, 1, 3), (1, 1), ()):
        assert cr.zeros(shape).dim_order() == torch.zeros(shape).dim_order()
    assert cr.zeros(1, 1).t().dim_order() == torch.zeros(1, 1).t().dim_order()


def test_dim_order_ambiguity_check():
    assert cr.zeros(2, 3).dim_order(ambiguity_check=True) == (0, 1)
    assert cr.zeros(2, 3).dim_order(ambiguity_check=[cr.contiguous_format]) == (0, 1)
    with pytest.raises(DomainError, match=r"dim_order: dimensions share a memory step"):
        cr.zeros(2, 1, 3).dim_order(ambiguity_check=True)
    with pytest.raises(DomainError, match="dim_order: this tensor's layout is none of"):
        cr.zeros(2, 3).t().dim_order(ambiguity_check=[cr.contiguous_format])


def test_conjugate_transposes_of_real_tensors_are_transposes(torch):
    array = np.arange(24.0).reshape(2, 3, 4)
    ours, theirs = cr.tensor(array), torch.tensor(array)
    assert_same(ours[0].H, theirs[0].H)
    assert_same(ours.mH, theirs.mH)
    assert_same(ours.adjoint(), theirs.adjoint())
    with pytest.raises(
        ShapeError, match=r"H: only matrices \(2-D\) have .H, got shape \(2, 3, 4\)"
    ):
        _ = ours.H
    with pytest.raises(ShapeError, match=r"adjoint: needs a matrix or a batch of matrices"):
        _ = cr.zeros(3).mH


def test_autograd_attributes_match_pytorch(torch):
    leaf, tleaf = both(torch, [1.0, 2.0], requires_grad=True)
    mid, tmid = leaf * 2, tleaf * 2
    assert (leaf.retains_grad, mid.retains_grad) == (tleaf.retains_grad, tmid.retains_grad)
    mid.retain_grad(), tmid.retain_grad()
    assert mid.retains_grad and tmid.retains_grad
    assert (leaf.output_nr, mid.output_nr) == (tleaf.output_nr, tmid.output_nr)
    assert leaf.grad_dtype == np.float64 and cr.arange(2).grad_dtype == np.int64
    with pytest.raises(GraphError, match="grad_dtype: can only be read on leaf tensors"):
        _ = mid.grad_dtype


def test_as_subclass_keeps_memory_and_the_graph():
    x = cr.ones(2, requires_grad=True)
    p = x.as_subclass(cr.nn.Parameter)
    assert type(p) is cr.nn.Parameter
    assert np.shares_memory(p.detach().numpy(), x.detach().numpy())
    (p * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    plain = cr.zeros(2).as_subclass(cr.nn.Parameter)
    assert type(plain) is cr.nn.Parameter and not plain.requires_grad
    with pytest.raises(TypeError, match="as_subclass: <class 'int'> does not inherit"):
        x.as_subclass(int)


def test_new_empty_strided_and_module_load(torch):
    x = cr.zeros(1, dtype=cr.float64)
    made = x.new_empty_strided((2, 3), (1, 2))
    assert made.shape == (2, 3) and made.stride() == (1, 2) and made.dtype == np.float64
    assert x.new_empty_strided((2, 3), (3, 1), dtype=cr.int32).dtype == np.int32
    with pytest.raises(ShapeError, match="new_empty_strided: size"):
        x.new_empty_strided((2, 3), (1,))
    target, source = cr.zeros(2), cr.tensor([1.0, 2.0])
    loaded = target.module_load(source)
    assert loaded is not target and target.tolist() == [1.0, 2.0] and loaded.tolist() == [1, 2]
    assigned = target.module_load(source, assign=True)
    assert assigned is not source and assigned.detach().numpy() is source.detach().numpy()


def test_bfloat16_is_refused_as_to_refuses_it():
    with pytest.raises(DTypeError, match="bfloat16: bfloat16 is not supported"):
        cr.zeros(2).bfloat16()


def test_random_methods_call_the_generators_functions():
    cr.manual_seed(0)
    first = cr.tensor([1.0, 2.0, 3.0]).multinomial(3)
    cr.manual_seed(0)
    assert cr.multinomial(cr.tensor([1.0, 2.0, 3.0]), 3).tolist() == first.tolist()
    assert first.dtype == np.int64 and sorted(first.tolist()) == [0, 1, 2]
    assert cr.tensor([0.0, 1.0]).bernoulli().tolist() == [0.0, 1.0]
    assert cr.tensor([5.0, 5.0]).bernoulli(0.0).tolist() == [0.0, 0.0]
    generator = cr.Generator().manual_seed(1)
    draws = cr.full((1000,), 0.5).bernoulli(generator=generator)
    assert 400 < draws.sum().item() < 600
