"""Elementwise math beyond the basics (chainrule/ops/numeric.py, and pow's zeros) at the values
the generic property tests do not draw: nan, inf, ties, zeros, the ends of erfinv's domain,
integer and bool dtypes, shifts out of range; the errors; the in-place variants; the operators."""

import math
import operator

import numpy as np
import pytest

import chainrule as cr
from chainrule import DomainError, DTypeError

NAN, INF = math.nan, math.inf


def both(torch, values, dtype="float64", requires_grad=False):
    """The same values as a chainrule and a torch tensor."""
    array = np.array(values, dtype=dtype)
    ours = cr.tensor(array, requires_grad=requires_grad)
    theirs = torch.tensor(array, requires_grad=requires_grad)
    return ours, theirs


def assert_same(ours, theirs):
    """Same dtype and values (nan where PyTorch has nan)."""
    expected = theirs.detach().numpy()
    assert ours.dtype == expected.dtype, (ours.dtype, expected.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), expected, rtol=1e-12, atol=1e-300)


def grads(outputs, inputs, lib):
    """Gradients of outputs.sum() with respect to inputs, on either library."""
    if lib is cr:
        return cr.autograd.grad(outputs.sum(), inputs, allow_unused=True)
    return lib.autograd.grad(outputs.sum(), inputs, allow_unused=True)


# Special functions at the ends of their domains.


def test_erfinv_is_exact_to_the_last_digits_up_to_the_ends_of_its_domain(torch):
    tiny = 2.0**-53
    values = [0.0, -0.0, 1e-300, 0.3, -0.7, 0.999, 1 - 1e-10, 1 - tiny, -1 + tiny, 1.0, -1.0,
              1.5, NAN]  # fmt: skip
    ours, theirs = both(torch, values)
    assert_same(cr.erfinv(ours), torch.erfinv(theirs))
    assert math.copysign(1, cr.erfinv(ours).tolist()[1]) == -1  # -0.0 keeps its sign
    # erf(erfinv(x)) == x, and in the tail erfc(erfinv(x)) == 1 - x to full relative precision.
    x = np.linspace(-0.999999, 0.999999, 2001)
    np.testing.assert_allclose(cr.erf(cr.erfinv(cr.tensor(x))).numpy(), x, rtol=0, atol=4e-16)
    tail = 1 - np.logspace(-15, -1, 50)
    np.testing.assert_allclose(cr.erfc(cr.erfinv(cr.tensor(tail))).numpy(), 1 - tail, rtol=1e-13)


def test_erfinv_gradient_matches_pytorch_near_the_ends(torch):
    ours, theirs = both(torch, [0.0, 0.5, -0.9999, 1 - 1e-12], requires_grad=True)
    (g,) = grads(cr.erfinv(ours), [ours], cr)
    (e,) = grads(torch.erfinv(theirs), [theirs], torch)
    np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-9)


def test_erfc_keeps_its_precision_where_erf_rounds_to_one(torch):
    ours, theirs = both(torch, [-INF, -6.0, 0.0, 0.3, 5.0, 10.0, 26.0, 30.0, INF, NAN])
    assert_same(cr.erfc(ours), torch.erfc(theirs))
    assert cr.erfc(cr.tensor([10.0], dtype=cr.float64)).item() == pytest.approx(2.088487583762e-45)


# Dtypes: integers and bools, as PyTorch treats them.

FLOAT_OPS = ["asin", "acos", "atan", "asinh", "acosh", "atanh", "erfc", "erfinv", "log2",
             "log10", "exp2", "deg2rad", "rad2deg"]  # fmt: skip


@pytest.mark.parametrize("name", FLOAT_OPS)
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_functions_of_real_numbers_turn_integers_into_float32(name, dtype, torch):
    ours, theirs = both(torch, [0, 1, 1], dtype=dtype)
    out = getattr(cr, name)(ours)
    assert out.dtype == cr.float32
    np.testing.assert_allclose(out.numpy(), getattr(torch, name)(theirs).numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["atan2", "copysign", "hypot", "logaddexp"])
def test_binary_functions_of_real_numbers_turn_integers_into_float32(name, torch):
    x, tx = both(torch, [3, -4, 0], dtype="int64")
    y, ty = both(torch, [1.5, 2.0, -1.0], dtype="float32")
    assert_same(getattr(cr, name)(x, y), getattr(torch, name)(tx, ty))
    y64, ty64 = both(torch, [1.5, 2.0, -1.0])
    assert_same(getattr(cr, name)(x, y64), getattr(torch, name)(tx, ty64))


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "fix"])
def test_rounding_keeps_integers_and_refuses_bools(name, torch):
    ours, theirs = both(torch, [-3, 0, 7], dtype="int32")
    assert_same(getattr(cr, name)(ours), getattr(torch, name)(theirs))
    with pytest.raises(DTypeError, match=rf"{'trunc' if name == 'fix' else name}: .*bool"):
        getattr(cr, name)(cr.tensor([True]))


def test_round_to_decimals_matches_pytorch_on_halves_and_negative_places(torch):
    values = (
        np.arange(-30, 31) * 0.125 + np.array([0.0, 1e-3, -2.675, 1234.5, 15.0]).repeat(61)[:61]
    )
    ours, theirs = both(torch, values)
    for decimals in (-2, -1, 0, 1, 2, 3):
        assert_same(cr.round(ours, decimals=decimals), torch.round(theirs, decimals=decimals))
        assert_same(ours.round(decimals=decimals), theirs.round(decimals=decimals))
    x = cr.tensor([1.26], requires_grad=True)
    x.round(decimals=1).sum().backward()
    assert x.grad.tolist() == [0.0]


def test_frac_refuses_integers_and_square_turns_bools_into_int64(torch):
    with pytest.raises(DTypeError, match=r"frac: takes floating-point tensors, got int64"):
        cr.frac(cr.tensor([1, 2]))
    ours, theirs = both(torch, [True, False], dtype="bool")
    assert_same(ours.square(), theirs.square())
    assert_same(cr.square(cr.tensor([-3])), torch.square(torch.tensor([-3])))


# Remainders and division.


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide"])
def test_remainders_follow_pytorch_signs_and_dtypes(name, torch):
    x, tx = both(torch, [7, -7, 7, -7, 0], dtype="int64")
    y, ty = both(torch, [3, 3, -3, -3, 5], dtype="int64")
    fn, reference = getattr(cr, name), getattr(torch, name)
    assert_same(fn(x, y), reference(tx, ty))
    assert_same(fn(x, 2), reference(tx, 2))
    assert_same(fn(x, 2.5), reference(tx, 2.5))  # float32, as PyTorch (NumPy: float64)
    f, tf = both(torch, [5.5, -5.5, 5.5, -5.5, -0.0])
    g, tg = both(torch, [2.0, 2.0, -2.0, -2.0, 1.0])
    assert_same(fn(f, g), reference(tf, tg))
    assert_same(fn(f, 0.0), reference(tf, 0.0))  # inf or nan, no error, for floats


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide"])
def test_integer_division_by_zero_is_an_error(name):
    with pytest.raises(DomainError, match=rf"{name}: integer division by zero"):
        getattr(cr, name)(cr.tensor([1, 2]), cr.tensor([1, 0]))
    with pytest.raises(DTypeError, match=rf"{name}: takes numbers, not bool tensors"):
        getattr(cr, name)(cr.tensor([True]), cr.tensor([True]))


def test_operators_percent_and_floor_division_match_pytorch(torch):
    x, tx = both(torch, [5.5, -5.5, 7.0])
    assert_same(x % 2, tx % 2)
    assert_same(7 % x, 7 % tx)
    assert_same(x // 2, tx // 2)
    assert_same(7 // x, 7 // tx)


def test_remainder_gradients_match_pytorch(torch):
    x, tx = both(torch, [5.5, -5.5, 5.5, -5.5], requires_grad=True)
    y, ty = both(torch, [2.0, 2.0, -2.0, -2.0], requires_grad=True)
    for name in ("fmod", "remainder"):
        ours = grads(getattr(cr, name)(x, y), [x, y], cr)
        theirs = grads(getattr(torch, name)(tx, ty), [tx, ty], torch)
        for g, e in zip(ours, theirs):
            np.testing.assert_array_equal(g.numpy(), e.numpy())
    assert not cr.floor_divide(x, y).requires_grad  # PyTorch: no derivative either


# Ops choosing between their inputs: fmax, fmin, copysign, clamp_min, clamp_max, heaviside.


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_and_fmin_ignore_nan_and_give_ties_to_the_first_input(name, torch):
    x, tx = both(torch, [1.0, 2.0, NAN, NAN, 3.0, -1.0], requires_grad=True)
    y, ty = both(torch, [1.0, NAN, 2.0, NAN, 4.0, -2.0], requires_grad=True)
    out, expected = getattr(cr, name)(x, y), getattr(torch, name)(tx, ty)
    assert_same(out, expected)
    for g, e in zip(grads(out, [x, y], cr), grads(expected, [tx, ty], torch)):
        np.testing.assert_array_equal(g.numpy(), e.numpy())
    assert_same(getattr(x, name)(y), expected)


def test_copysign_gradient_is_zero_at_zero_and_never_reaches_the_sign(torch):
    x, tx = both(torch, [0.0, -0.0, 2.0, -2.0, 3.0], requires_grad=True)
    y, ty = both(torch, [-1.0, 1.0, -0.0, 3.0, NAN], requires_grad=True)
    out, expected = cr.copysign(x, y), torch.copysign(tx, ty)
    assert_same(out, expected)
    assert np.signbit(out.detach().numpy()).tolist() == [True, False, True, False, False]
    for g, e in zip(grads(out, [x, y], cr), grads(expected, [tx, ty], torch)):
        np.testing.assert_array_equal(g.numpy(), e.numpy())


def test_hypot_and_logaddexp_at_zero_and_at_infinity_match_pytorch(torch):
    x, tx = both(torch, [0.0, 3.0, -INF, 1000.0], requires_grad=True)
    y, ty = both(torch, [0.0, 4.0, -INF, -1000.0], requires_grad=True)
    for name in ("hypot", "logaddexp"):
        out, expected = getattr(cr, name)(x, y), getattr(torch, name)(tx, ty)
        assert_same(out, expected)
        for g, e in zip(grads(out, [x, y], cr), grads(expected, [tx, ty], torch)):
            np.testing.assert_array_equal(g.numpy(), e.numpy())


@pytest.mark.parametrize("name", ["clamp_min", "clamp_max"])
def test_clamp_min_and_max_with_a_tensor_bound_split_the_gradient_as_pytorch(name, torch):
    x, tx = both(torch, [1.0, 2.0, 3.0, NAN], requires_grad=True)
    b, tb = both(torch, [2.0, 2.0, 2.0, 2.0], requires_grad=True)
    out, expected = getattr(x, name)(b), getattr(tx, name)(tb)
    assert_same(out, expected)
    for g, e in zip(grads(out, [x, b], cr), grads(expected, [tx, tb], torch)):
        np.testing.assert_array_equal(g.numpy(), e.numpy())
    out, expected = getattr(cr, name)(x, 2.0), getattr(torch, name)(tx, 2.0)
    assert_same(out, expected)
    np.testing.assert_array_equal(grads(out, [x], cr)[0].numpy(), grads(expected, [tx], torch)[0])


def test_heaviside_matches_pytorch_and_wants_one_dtype(torch):
    x, tx = both(torch, [-2.0, 0.0, 3.0, NAN, -0.0])
    v, tv = both(torch, [0.5])
    assert_same(cr.heaviside(x, v), torch.heaviside(tx, tv))
    i, ti = both(torch, [-2, 0, 3], dtype="int64")
    assert_same(i.heaviside(cr.tensor([7])), ti.heaviside(torch.tensor([7])))
    with pytest.raises(DTypeError, match=r"heaviside: input and values must have the same dtype"):
        cr.heaviside(i, cr.tensor([0.5]))


def test_lerp_matches_pytorch_for_large_weights_and_refuses_integers(torch):
    x, tx = both(torch, [0.0, 1.0, -3.0], requires_grad=True)
    e, te = both(torch, [10.0, 1e16, 2.0], requires_grad=True)
    w, tw = both(torch, [0.7, -0.3, 2.5], requires_grad=True)
    out, expected = cr.lerp(x, e, w), torch.lerp(tx, te, tw)
    assert_same(out, expected)
    for g, r in zip(grads(out, [x, e, w], cr), grads(expected, [tx, te, tw], torch)):
        np.testing.assert_array_equal(g.numpy(), r.numpy())
    assert_same(x.lerp(e, 0.75), tx.lerp(te, 0.75))
    with pytest.raises(DTypeError, match=r"lerp: takes floating-point tensors, got int64"):
        cr.lerp(cr.tensor([1]), cr.tensor([2]), 0.5)


# Bitwise ops and the operators.


def test_bitwise_ops_and_operators_match_pytorch_on_integers_and_bools(torch):
    x, tx = both(torch, [12, -7, 0, 255], dtype="int64")
    y, ty = both(torch, [10, 3, -1, 1], dtype="int64")
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        assert_same(getattr(cr, name)(x, y), getattr(torch, name)(tx, ty))
        assert_same(getattr(x, name)(5), getattr(tx, name)(5))
    assert_same(x & y, tx & ty)
    assert_same(x | y, tx | ty)
    assert_same(x ^ y, tx ^ ty)
    assert_same(~x, ~tx)
    assert_same(x.bitwise_not(), tx.bitwise_not())
    p, tp = both(torch, [True, False, True], dtype="bool")
    q, tq = both(torch, [True, True, False], dtype="bool")
    for ours, theirs in ((p & q, tp & tq), (p | q, tp | tq), (p ^ q, tp ^ tq), (~p, ~tp),
                         (cr.bitwise_xor(p, q), torch.bitwise_xor(tp, tq))):  # fmt: skip
        assert_same(ours, theirs)


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "int32"])
def test_shifts_out_of_range_match_pytorch(dtype, torch):
    values = [7, -7, 3, -3, 1, 0] if dtype != "uint8" else [7, 200, 3, 255, 1, 0]
    x, tx = both(torch, values, dtype=dtype)
    bits = np.dtype(dtype).itemsize * 8
    negative = -1 if dtype != "uint8" else 200  # 200: out of range the other way
    s, ts = both(torch, [bits, bits + 6, negative, bits - 1, bits - 1, 2], dtype=dtype)
    assert_same(x << s, tx << ts)
    assert_same(x >> s, tx >> ts)
    assert_same(cr.bitwise_left_shift(x, 2), torch.bitwise_left_shift(tx, 2))
    assert_same(x >> 1, tx >> 1)
    assert_same(3 << s.clamp(0, 3), 3 << ts.clamp(0, 3))


def _same_or_refused_alike(program, torch):
    """program(lib) on both libraries: the same dtype and values, or both refuse it, with
    chainrule's error an instance of PyTorch's class (a ChainruleError naming the op)."""
    try:
        theirs = program(torch)
    except Exception as refusal:  # noqa: BLE001  (PyTorch's class is what is compared)
        with pytest.raises(type(refusal)) as ours:
            program(cr)
        assert isinstance(ours.value, cr.ChainruleError), ours.value
        return ours.value
    assert_same(program(cr), theirs)
    return None


BITWISE = {"&": operator.and_, "|": operator.or_, "^": operator.xor,
           "<<": operator.lshift, ">>": operator.rshift}  # fmt: skip


@pytest.mark.parametrize("symbol", list(BITWISE))
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "bool"])
def test_bitwise_operators_with_a_python_number_on_either_side_match_pytorch(symbol, dtype, torch):
    apply = BITWISE[symbol]
    values = [True, False, True, False] if dtype == "bool" else [3, 0, 1, 6]
    numbers = [1, 5, 0, True, False] + ([-1, -8] if dtype not in ("uint8", "bool") else [])
    for number in numbers:
        for program in (
            lambda lib, n=number: apply(n, lib.tensor(values, dtype=getattr(lib, dtype))),
            lambda lib, n=number: apply(lib.tensor(values, dtype=getattr(lib, dtype)), n),
        ):
            _same_or_refused_alike(program, torch)


def test_bitwise_operators_between_bool_and_integer_tensors_compute_in_integers(torch):
    for apply in BITWISE.values():
        for left, right in (("bool", "int64"), ("int64", "bool"), ("bool", "bool")):

            def program(lib, apply=apply, left=left, right=right):
                x = lib.tensor([True, False, True], dtype=getattr(lib, left))
                return apply(x, lib.tensor([3, 1, 0], dtype=getattr(lib, right)))

            _same_or_refused_alike(program, torch)


def test_in_place_operators_write_into_the_tensor_as_pytorch(torch):
    for symbol in ("&=", "|=", "^=", "<<=", ">>=", "**=", "%=", "//="):
        results = []
        for lib in (cr, torch):
            x = lib.tensor([6, 7, 12])
            alias = x
            exec(f"x {symbol} 3", {}, {"x": x})  # the statement, not the operator function
            results.append(alias)
        assert_same(*results)


def test_bitwise_ops_refuse_floats_and_shifts_refuse_bools_as_pytorch(torch):
    refusals = {
        "bitwise_and: takes integer or bool tensors, got float32 and int64":
            lambda lib: lib.bitwise_and(lib.tensor([1.0]), lib.tensor([1])),
        "bitwise_and: takes integer or bool tensors, got int and float32":
            lambda lib: 1 & lib.tensor([1.0]),
        "bitwise_or: takes integer or bool tensors, got int64 and float":
            lambda lib: lib.tensor([1]) | 2.5,
        "bitwise_xor: takes integer or bool tensors, got bool and float32":
            lambda lib: True ^ lib.tensor([1.0]),
        "bitwise_not: takes integer or bool tensors, got float32":
            lambda lib: ~lib.tensor([1.0]),
        "bitwise_left_shift: takes integer tensors, got bool and bool":
            lambda lib: lib.tensor([True]) << True,
        "bitwise_right_shift: takes integer tensors, got int and float32":
            lambda lib: 1 >> lib.tensor([2.0]),
    }  # fmt: skip
    for message, program in refusals.items():
        error = _same_or_refused_alike(program, torch)
        assert isinstance(error, NotImplementedError) and isinstance(error, DTypeError)
        assert str(error) == message


# Predicates and comparisons.


def test_float_predicates_match_pytorch_on_special_values(torch):
    x, tx = both(torch, [0.0, -1.5, NAN, INF, -INF])
    i, ti = both(torch, [0, -3], dtype="int64")
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
        assert_same(getattr(cr, name)(x), getattr(torch, name)(tx))
        assert_same(getattr(i, name)(), getattr(ti, name)())


def test_isclose_allclose_and_equal_match_pytorch(torch):
    x, tx = both(torch, [1.0, INF, -INF, NAN, 1e-9, 100.0])
    y, ty = both(torch, [1.0 + 1e-6, INF, INF, NAN, 0.0, 100.1])
    assert_same(cr.isclose(x, y), torch.isclose(tx, ty))
    assert_same(x.isclose(y, equal_nan=True), tx.isclose(ty, equal_nan=True))
    assert_same(cr.isclose(x, y, rtol=1e-2, atol=0.0), torch.isclose(tx, ty, rtol=1e-2, atol=0.0))
    assert cr.allclose(x[:2], y[:2]) is True and x.allclose(y) is False
    assert cr.allclose(x[3:4], y[3:4], equal_nan=True) is True
    assert cr.equal(cr.tensor([1, 2]), cr.tensor([1.0, 2.0])) is True
    assert cr.tensor([1.0]).equal(cr.tensor([[1.0]])) is False  # shapes differ
    assert cr.equal(x, x) is False  # nan equals nothing, as in torch.equal
    with pytest.raises(DTypeError, match=r"equal: expected two tensors, got Tensor and list"):
        cr.equal(x, [1.0])


def test_logical_xor_and_sgn_match_pytorch(torch):
    x, tx = both(torch, [0.0, 2.0, -1.0, 0.0])
    y, ty = both(torch, [1.0, 3.0, 0.0, 0.0])
    assert_same(cr.logical_xor(x, y), torch.logical_xor(tx, ty))
    assert_same(x.logical_xor(y), tx.logical_xor(ty))
    assert_same(x.sgn(), tx.sgn())


def test_nan_to_num_matches_pytorch_and_stops_the_gradient_where_it_replaces(torch):
    for dtype in ("float32", "float64"):
        x, tx = both(torch, [1.0, NAN, INF, -INF], dtype=dtype, requires_grad=True)
        assert_same(cr.nan_to_num(x), torch.nan_to_num(tx))
        assert_same(x.nan_to_num(nan=1.0, posinf=2.0, neginf=-2.0),
                    tx.nan_to_num(nan=1.0, posinf=2.0, neginf=-2.0))  # fmt: skip
        (g,) = grads(x.nan_to_num(), [x], cr)
        assert g.tolist() == [1.0, 0.0, 0.0, 0.0]


# Other names, in-place variants.


def test_numpy_names_are_the_same_rows_and_methods(torch):
    x, tx = both(torch, [0.25, -0.5])
    for alias, row in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                       ("arcsinh", "asinh"), ("arctanh", "atanh")):  # fmt: skip
        assert getattr(cr, alias) is getattr(cr, row)
        assert_same(getattr(x, alias)(), getattr(tx, alias)())
    assert_same((x + 2).arccosh(), (tx + 2).arccosh())
    assert cr.arctan2 is cr.atan2 and cr.fix is cr.trunc
    assert_same(x.arctan2(x.flip(0)), tx.arctan2(tx.flip(0)))
    assert_same((x * 9).fix(), (tx * 9).fix())


def test_in_place_variants_write_the_result_and_record_it(torch):
    x, tx = both(torch, [-1.75, 0.5, 2.25])
    for name, args in (("floor_", ()), ("ceil_", ()), ("trunc_", ()), ("frac_", ()),
                       ("round_", ()), ("clamp_min_", (0.0,)), ("clamp_max_", (0.0,)),
                       ("fmod_", (1.0,)), ("remainder_", (1.0,)), ("nan_to_num_", ())):  # fmt: skip
        ours, theirs = x.clone(), tx.clone()
        assert getattr(ours, name)(*args) is ours
        getattr(theirs, name)(*args)
        assert_same(ours, theirs)
    assert_same(x.clone().round_(decimals=1), tx.clone().round_(decimals=1))
    # An exponential moving average, as optimizers and EMA helpers write it.
    ema, param = cr.zeros(3), cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with cr.no_grad():
        ema.lerp_(param, 0.25)
    assert ema.tolist() == [0.25, 0.5, 0.75]
    # Recorded: the gradient reaches end through lerp_.
    end = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = cr.zeros(3)
    y.lerp_(end, 0.25)
    y.sum().backward()
    assert end.grad.tolist() == [0.25, 0.25, 0.25]
    w = cr.tensor(0.5, requires_grad=True)
    z = cr.zeros(3)
    z.lerp_(cr.tensor([2.0, 4.0, 6.0]), w)
    z.sum().backward()
    assert w.grad.item() == 12.0


def test_where_sends_zero_not_nan_to_the_branch_not_taken_even_for_an_infinite_gradient(torch):
    def grads(lib):
        cond = lib.tensor([True, False])
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        lib.where(cond, x, y).backward(lib.tensor([math.inf, -math.inf]))
        return x.grad.tolist(), y.grad.tolist()

    assert grads(cr) == grads(torch) == ([math.inf, 0.0], [0.0, -math.inf])


# pow where its base or its exponent is 0.

#: Exponents at and around each zero case: 0, positive integers, positive non-integers and
#: negative ones; bases 0 and two that are not (a negative base gives nan for non-integers).
POW_EXPONENTS = [0.0, 1.0, 2.0, 3.0, 0.5, 1.5, -1.0, -0.5, -2.0]
POW_BASES = [0.0, 2.0, -2.0]


def _pow_derivatives(lib, form, dtype, base):
    """pow's value, its gradients, their gradients (create_graph) and its forward-mode
    derivatives at ``base`` and each of POW_EXPONENTS, on lib, as NumPy arrays by name.
    ``form``: "tensor ** number", "tensor ** tensor" or "number ** tensor"."""
    dtype = getattr(lib, dtype)
    found = {}

    def record(name, values):
        found.setdefault(name, []).extend(np.asarray(v.detach(), dtype=float) for v in values)

    def derivatives(fn, inputs):
        out = fn(*inputs)
        first = lib.autograd.grad(out.sum(), inputs, create_graph=True)
        record("value", [out])
        record("first", first)
        for g in first:  # a constant gradient (x ** 0's) has no gradient of its own
            second = [lib.zeros_like(v) for v in inputs]
            if g.requires_grad:
                second = lib.autograd.grad(g.sum(), inputs, allow_unused=True)
            record(
                "second", [lib.zeros_like(v) if s is None else s for s, v in zip(second, inputs)]
            )
        for i in range(len(inputs)):  # forward mode, one input's tangent at a time
            tangents = tuple(lib.ones_like(v) if j == i else lib.zeros_like(v)
                             for j, v in enumerate(inputs))  # fmt: skip
            record("jvp", [lib.func.jvp(fn, tuple(v.detach() for v in inputs), tangents)[1]])

    if form == "tensor ** number":
        for e in POW_EXPONENTS:
            x = lib.tensor([base], dtype=dtype, requires_grad=True)
            derivatives(lambda x, e=e: x**e, (x,))
    else:
        y = lib.tensor(POW_EXPONENTS, dtype=dtype, requires_grad=True)
        if form == "number ** tensor":
            derivatives(lambda y: base**y, (y,))
        else:
            x = lib.full((len(POW_EXPONENTS),), base, dtype=dtype, requires_grad=True)
            derivatives(lambda x, y: x**y, (x, y))
    return found


@pytest.mark.parametrize("base", POW_BASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("form", ["tensor ** number", "tensor ** tensor", "number ** tensor"])
def test_pow_and_its_derivatives_at_a_zero_base_or_exponent_match_pytorch(form, dtype, base, torch):
    ours = _pow_derivatives(cr, form, dtype, base)
    theirs = _pow_derivatives(torch, form, dtype, base)
    assert ours.keys() == theirs.keys()
    for name in theirs:
        assert len(ours[name]) == len(theirs[name]), name
        for i, (a, b) in enumerate(zip(ours[name], theirs[name])):
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f"{name} {i}")
