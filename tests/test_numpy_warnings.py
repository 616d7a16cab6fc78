"""NumPy's floating-point RuntimeWarnings never reach the user where PyTorch is silent
(chainrule/numpy_warnings.py): in eager ops, in backward, in compiled replays, whatever
filters the user set; and the user's own NumPy code warns as before."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.numpy_warnings import FILTER


def _log_of_tril(lib):
    return lib.log(lib.tril(lib.ones(3, 3)))


def _grad_at_zero(name):
    def program(lib):
        x = lib.zeros(3, requires_grad=True)
        getattr(x, name)().sum().backward()
        return x.grad

    return program


def _empty_mean(lib):
    x = lib.zeros(0, requires_grad=True)
    x.mean().backward()
    return x.grad


def _pow_grads_at_zero(lib):
    x = lib.zeros(4, requires_grad=True)
    y = lib.tensor([0.0, -1.0, 0.5, 2.0], requires_grad=True)
    (x**y).sum().backward()
    (x**-1).sum().backward()
    return x.grad, y.grad


#: Programs that meet log(0), division by 0, overflow and square roots of negative numbers,
#: forward and backward; each runs as written on chainrule and on PyTorch.
PROGRAMS = {
    "log of tril(ones)": _log_of_tril,
    "log(0)": lambda lib: lib.log(lib.zeros(2)),
    "x ** -1 at 0": lambda lib: lib.zeros(2) ** -1,
    "1 / 0": lambda lib: 1 / lib.zeros(2),
    "tensor / 0": lambda lib: lib.ones(2) / 0,
    "0 / 0": lambda lib: lib.zeros(2) / lib.zeros(2),
    "exp(1000)": lambda lib: lib.exp(lib.full((2,), 1000.0)),
    "exp(1000) float64": lambda lib: lib.exp(lib.full((2,), 1000.0, dtype=lib.float64)),
    "sqrt(-1)": lambda lib: lib.sqrt(-lib.ones(2)),
    "inf - inf": lambda lib: lib.full((2,), float("inf")) - float("inf"),
    "inf * 0": lambda lib: lib.full((2,), float("inf")) * 0,
    "gradient of log at 0": _grad_at_zero("log"),
    "gradient of sqrt at 0": _grad_at_zero("sqrt"),
    "gradient of rsqrt at 0": _grad_at_zero("rsqrt"),
    "gradients of pow at 0": _pow_grads_at_zero,
    "mean of an empty tensor and its gradient": _empty_mean,
}


def _warnings_from(program, lib):
    """The warnings ``program(lib)`` gives under filters that show them all, and whether it
    also runs under filters that make them errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        program(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(lib)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_program_pytorch_runs_silently_runs_silently(name, torch):
    program = PROGRAMS[name]
    assert _warnings_from(program, torch) == []
    assert _warnings_from(program, cr) == []


def test_a_compiled_replay_is_silent_too(torch):
    def step(x, y):
        return (x / y).log().sum() + (x * 0 - 1).sqrt().sum()

    compiled = cr.compile(step)

    def program(lib):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        (compiled if lib is cr else step)(x, lib.tensor([0.0, 2.0])).backward()

    for _ in range(4):  # recorded, verified, then replayed
        assert _warnings_from(program, cr) == []
    assert _warnings_from(program, torch) == []


def test_making_a_tensor_puts_the_filter_first_again_after_the_user_changes_the_filters():
    for change in (warnings.resetwarnings, lambda: warnings.simplefilter("always")):
        with warnings.catch_warnings(record=True) as caught:
            change()
            x = cr.zeros(1)
            assert warnings.filters[0] is FILTER
            assert cr.log(x).item() == -np.inf
        assert caught == []


def test_an_op_whose_warning_a_filter_made_an_error_runs_again_quietly(torch):
    def program(lib):
        x, y = lib.zeros(2, requires_grad=True), lib.tensor([0.0, 1.0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # in front of chainrule's filter: the op reruns
            out = (x + 1) / y
            out.sum().backward()
        return out.tolist(), x.grad.tolist()

    assert program(cr) == program(torch) == ([np.inf, 1.0], [np.inf, 1.0])


def test_the_users_own_numpy_code_still_warns():
    cr.log(cr.zeros(1))
    with warnings.catch_warnings(), pytest.raises(RuntimeWarning, match="divide by zero"):
        warnings.simplefilter("error")
        np.log(np.zeros(1))
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))
    assert np.geterr()["divide"] == "warn"


def test_a_runtime_warning_chainrule_raises_on_purpose_still_shows():
    cr.log(cr.zeros(1))  # the filter first
    with pytest.warns(RuntimeWarning, match="on purpose"):
        warnings.warn_explicit("on purpose", RuntimeWarning, "ops.py", 1, "chainrule.ops.x")


def test_importing_chainrule_changes_no_filter_and_no_numpy_setting():
    script = (
        "import warnings, numpy as np\n"
        "before = (list(warnings.filters), np.geterr())\n"
        "import chainrule\n"
        "assert (list(warnings.filters), np.geterr()) == before\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
