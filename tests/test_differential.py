"""A standing differential test against PyTorch: random programs of 2-6 ops, run unchanged on
chainrule and on PyTorch, must agree.

Each program is a list of steps, each one line of Python that both libraries run as written
(``v2 = v0 * v1``, ``v1[1:].mul_(x2)``, ``v3, v4 = v2.max(1)``), with ``lib`` standing for
``chainrule`` or ``torch`` and ``F`` for their ``nn.functional``. A step carries a PyTorch form
only where the spelling must differ, which is only for `KNOWN_DIFFERENCES`. The generator
draws over chainrule's op table: elementwise ops, reductions, views, in-place ops (also
through views: ``v1.T.add_(1)``, ``v0.view(-1)[::2].mul_(x1)``, ``v2[0] = x3``), broadcasting,
matmul, joins, casts; inputs are contiguous, transposed or strided NumPy arrays of float64,
float32 or int64, and steps mix them with each other and with Python scalars.

After the steps, every input and every value a step made is compared: shape, dtype,
requires_grad and values; then one backward pass from every value that requires grad (a
random cotangent each) and every input's ``.grad``. Where one library raises, the other must
raise at the same step (or both in backward), and chainrule's exception must be an instance of
PyTorch's class (so a user's ``except`` works either way). A few programs end in a step meant to
fail, to compare the refusals.

Tolerances: float64 programs agree to 1e-10 relative (to the larger of 1 and the array's
largest magnitude), programs that touch float32 to 1e-4. Integer and bool results are equal.

Each hypothesis example runs `PER_EXAMPLE` programs from a NumPy generator seeded by
``(seed, index)``, so a failure shrinks to a seed and names its index; ``build_program(seed,
index)`` rebuilds the program and ``run_program`` runs it. A failure prints the program, its
inputs (shape, dtype, strides, values) and both libraries' results.

`KNOWN_DIFFERENCES` lists where chainrule differs from PyTorch on purpose (docs/guides/
differences.md says why); programs exercise each one and check the documented behaviour
instead of skipping it. `BUGS_FOUND` lists differences that are bugs, kept out of the
generator until fixed; a strict xfail test keeps that list from being forgotten.
"""

from __future__ import annotations

import math
import os
import pathlib
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule
import chainrule.nn.functional as chainrule_functional

#: Programs per run (each hypothesis example runs PER_EXAMPLE of them): 10,000 in CI, from the
#: same seeds each time, so CI is repeatable; 200,000 from fresh seeds under the nightly-style
#: profile (HYPOTHESIS_PROFILE=thorough, tests/conftest.py), to keep looking.
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
N_PROGRAMS = 200_000 if THOROUGH else 10_000
PER_EXAMPLE = 50

#: Relative tolerance (against the larger of 1 and an array's largest magnitude).
RTOL_FLOAT64 = 1e-10
RTOL_FLOAT32 = 1e-4

#: Where chainrule differs from PyTorch on purpose or for a known reason. The generator
#: produces these only in programs that allow them, and then checks the documented behaviour:
#: PyTorch's own spelling of the step must still behave as described here (so an entry that
#: stops being true fails), and chainrule must match PyTorch running the step's documented
#: equivalent (an explicit cast, reshape for view, a refusal). docs/guides/differences.md.
KNOWN_DIFFERENCES = {
    "zero_dim_tensor_promotes": (
        "A 0-d float64 tensor combined with a float32 tensor of one or more dimensions gives "
        "float64: NumPy 2 (NEP 50) treats a 0-d array like any other array, while PyTorch "
        "lets a dimensioned operand's dtype win within a category (float32 there)."
    ),
    "float_reductions_of_ints": (
        "mean, var, std, norm(2), softmax and log_softmax of an integer tensor give the default "
        "float dtype (float32), as a float function of an integer tensor does; PyTorch refuses "
        "them (RuntimeError or NotImplementedError)."
    ),
    "logsumexp_without_dim": (
        "x.logsumexp() with no dim reduces every dimension, like sum(); PyTorch's logsumexp "
        "requires dim (TypeError). The same as x.logsumexp(tuple(range(x.ndim)))."
    ),
    "keepdim_without_dim": (
        "x.sum(keepdim=True), mean, prod, max and min with keepdim but no dim reduce "
        "everything and keep every dimension (size 1), as var, std, amax, amin and norm do "
        "in both libraries; PyTorch refuses keepdim without dim for those five (TypeError)."
    ),
    "view_may_copy": (
        "view() is reshape(): NumPy decides whether the result can share memory, and copies "
        "when it cannot. PyTorch's view() raises a RuntimeError there (\"view size is not "
        "compatible with input tensor's size and stride\") and asks for reshape()."
    ),
    "expand_read_only": (
        "Every expanded view is read-only (NumPy's broadcast_to), so an in-place write "
        "through one is refused with a GraphError; PyTorch refuses it only when the written "
        "elements really overlap (a dimension of size > 1 with stride 0) and allows it "
        "otherwise, e.g. x.expand(x.shape).add_(1)."
    ),
    "overlapping_write_source": (
        "An in-place op or setitem whose operand shares memory with the tensor written "
        "(y.add_(y[0]), y.copy_(y.T), y[[0]] = y[1]) computes as if the operand were copied "
        "first: the op runs out of place and the result is copied in. PyTorch refuses such "
        "writes where the memory partly overlaps (RuntimeError: some elements of the input "
        "tensor and the written-to tensor refer to a single memory location). Likewise "
        "y *= y keeps a copy of y's old values for backward, which PyTorch refuses after "
        "the change (one of the variables needed for gradient computation has been "
        "modified by an inplace operation)."
    ),
    "index_put_needs_same_dtype": (
        "x[index] = value with an index list, tensor or mask casts a tensor value to x's "
        "dtype, as every in-place write does (same_kind casting); PyTorch's index_put_ "
        "refuses a value of another dtype (RuntimeError: Index put requires the source and "
        "destination dtypes match)."
    ),
    "split_outputs_are_plain_views": (
        "The pieces of split(), chunk() and unbind() are views like any other: an in-place op "
        "on one (or on a view of one), or on their base before they are used again, rewrites the "
        "history as for x[0:2]. PyTorch refuses both (RuntimeError: Output 0 of Split is a "
        "view ... This view is the output of a function that returns multiple views); "
        "narrow() gives it the same pieces as plain views."
    ),
    "saves_fewer_tensors": (
        "prod saves its input only (its gradient is the product of the others, exact with "
        "zeros), gather saves its input's shape only, x ** y saves its output only when y "
        "needs a gradient and y only when x does, and c ** y (c a number) saves its output "
        "only. After an in-place change to "
        "what chainrule did not save, its backward still gives the gradient at the values "
        "the op saw; PyTorch, which saved it, refuses (RuntimeError: one of the variables "
        "needed for gradient computation has been modified by an inplace operation)."
    ),
    "old_views_stay_writable": (
        "A view taken of a tensor that did not require grad can still be written in place "
        "after an in-place op brought that tensor into the graph: its history is its base's, "
        "as for any view. PyTorch refuses an in-place op on such a view object (RuntimeError: "
        "a leaf Variable that requires grad is being used in an in-place operation); a view "
        "taken again from the base is written the same way in both."
    ),
    "reshape_view_or_copy": (
        "Whether reshape, view or flatten of a tensor that is not contiguous returns a view "
        "or a copy depends on its memory layout, and op results are laid out as NumPy lays "
        "them out (x[:, idx] is not C-contiguous in NumPy; PyTorch's matmul of a matrix and a "
        "batch is not contiguous in PyTorch). PyTorch documents that one must not rely on it; "
        "the generator writes through a reshape, or into a tensor a reshape was taken from, "
        "only when the input is C-contiguous in both libraries."
    ),
    "matmul_saved_operands": (
        "matmul saves its operands themselves, so an in-place change to one refuses backward; "
        "PyTorch's matmul folds batch dims by reshape, and saves a copy where that reshape "
        "copies (a non-contiguous or broadcast operand), so it may run such a backward. The "
        "generator does not write into a matmul operand."
    ),
    "saved_indices_are_copies": (
        "An index tensor used by x[index] or gather, and the indices that max(dim) and "
        "min(dim) return, are copied where backward keeps them, so changing that tensor in "
        "place afterwards leaves the gradient as it was when the op ran. PyTorch saves the "
        "tensor itself and refuses such a backward (RuntimeError: one of the variables "
        "needed for gradient computation has been modified by an inplace operation)."
    ),
}

#: Real bugs this test finds and that are not fixed yet: name -> what goes wrong, with a
#: minimal reproduction. To park one, list it here, keep the generator clear of it with a
#: condition on ``name in BUGS_FOUND``, and put back the strict xfail marker on
#: `test_no_bugs_left_unfixed`. Two were found and fixed (a view's history read before it was
#: brought up to date after an in-place change to its base; ``c / x`` saving x), see
#: docs/guides/reliability.md.
BUGS_FOUND: dict[str, str] = {}


#: How each known difference shows when PyTorch runs the step as written, and a phrase its
#: message must contain: "dtype": it runs, giving another dtype; "raises": it raises;
#: "may_raise": it raises (with the phrase) or runs and agrees with chainrule; "refused":
#: chainrule refuses the step (GraphError) where PyTorch may run it; "equivalent": the
#: difference shows later (in backward), so PyTorch always runs the step's equivalent and
#: `test_known_differences_show` checks the difference on an example; "avoided": the
#: generator keeps clear of it (it depends on memory layouts) and counts each time it does.
_KNOWN_SHOWS = {
    "zero_dim_tensor_promotes": ("dtype", ""),
    "float_reductions_of_ints": ("raises", ""),
    "logsumexp_without_dim": ("raises", ""),
    "keepdim_without_dim": ("raises", ""),
    "view_may_copy": ("may_raise", "view size is not compatible"),
    "expand_read_only": ("refused", ""),
    "overlapping_write_source": ("equivalent", ""),
    "index_put_needs_same_dtype": ("raises", "Index put requires the source and destination"),
    "saved_indices_are_copies": ("equivalent", ""),
    "split_outputs_are_plain_views": ("equivalent", ""),
    "saves_fewer_tensors": ("equivalent", ""),
    "old_views_stay_writable": ("equivalent", ""),
    "reshape_view_or_copy": ("avoided", ""),
    "matmul_saved_operands": ("avoided", ""),
}

#: Counts over every program run in this session (programs, outcomes, exception pairs,
#: known differences checked); the tests assert on them.
STATS: Counter = Counter()

POSITIVE = 0.1  # an operand of sqrt, log, rsqrt, a divisor or a power's base is >= this
LIMIT = 1e4  # no step makes a value whose magnitude may exceed this (exp of exp...)


# Programs.


@dataclass
class InputSpec:
    """One input: its values, the layout of the array handed to from_numpy, requires_grad."""

    name: str
    values: np.ndarray  # contiguous, in the input's dtype
    layout: str  # "contiguous", "transposed" (a permutation of memory order) or "strided"
    perm: tuple = ()  # transposed: memory order; strided: the axis with stride 2
    requires_grad: bool = False

    def array(self) -> np.ndarray:
        """A fresh array with these values and this layout (each library gets its own)."""
        a = self.values
        if self.layout == "transposed":
            inverse = tuple(np.argsort(self.perm))
            return a.transpose(self.perm).copy(order="C").transpose(inverse)
        if self.layout == "strided":
            axis = self.perm[0]
            index = (slice(None),) * axis + (slice(None, None, 2),)
            return np.repeat(a, 2, axis=axis)[index]
        return a.copy()

    def make(self, lib):
        t = lib.from_numpy(self.array())
        return t.requires_grad_() if self.requires_grad else t

    def describe(self) -> str:
        a = self.array()
        strides = tuple(s // a.itemsize for s in a.strides)
        layout = ""
        if self.layout == "transposed":
            layout = f": a.transpose({self.perm}) made contiguous, then transposed back"
        elif self.layout == "strided":
            layout = f": every other element along axis {self.perm[0]} of np.repeat(a, 2, axis)"
        flag = ", requires_grad" if self.requires_grad else ""
        values = np.array2string(self.values, separator=", ", precision=17, threshold=10**6)
        return (
            f"  {self.name}: shape {self.values.shape} {self.values.dtype}, strides {strides} "
            f"({self.layout}{layout}){flag}\n      = np.array({values}, dtype=np."
            f"{self.values.dtype})"
        )


@dataclass
class Step:
    """One line of the program. ``torch_code``, when given, is what PyTorch runs instead
    (the documented equivalent of a known difference); PyTorch also runs ``code`` first to
    check that the difference still shows as `_KNOWN_SHOWS` says."""

    code: str
    torch_code: str | None = None
    known: str | None = None
    out: str | None = None  # the name the step assigns, if one

    def describe(self, i: int) -> str:
        line = f"  {i}: {self.code}"
        if self.known:
            line += f"    # known difference {self.known!r}"
            if self.torch_code:
                line += f"; PyTorch runs: {self.torch_code}"
        return line


@dataclass
class Program:
    seed: int
    index: int
    inputs: list[InputSpec]
    steps: list[Step]
    names: list[str]  # every value, in order of creation (inputs first)
    float32: bool  # a float32 tensor takes part: float32 tolerance
    allowed: frozenset  # the known differences this program may exercise
    error_step: bool  # the last step is meant to fail in both libraries

    def describe(self) -> str:
        lines = [
            f"program (seed={self.seed}, index={self.index}; rebuild with "
            f"build_program({self.seed}, {self.index}) in tests/test_differential.py):",
            "inputs (lib.from_numpy(array), then requires_grad_() where marked):",
            *(spec.describe() for spec in self.inputs),
            "steps (lib is chainrule or torch, F its nn.functional):",
            *(step.describe(i) for i, step in enumerate(self.steps)),
        ]
        return "\n".join(lines)


# The generator's picture of each value: shape, dtype, bounds on its elements, and where its
# memory comes from.


@dataclass
class Var:
    name: str
    shape: tuple
    dtype: str  # "float64", "float32", "int64" or "bool"
    lo: float
    hi: float
    grad: bool = False
    leaf: bool = False
    root: str = ""  # the value whose memory this one shares (itself unless a view)
    writable: str = "yes"  # "yes"; "expanded" (chainrule refuses writes); "no" (never write)
    gather_for: tuple | None = None  # indices of argmax/max(dim, keepdim=True): (shape, dim)
    contiguous: bool = False  # C-contiguous in both libraries (then reshape is a view in both)
    expr: str = ""  # for a view: how to take it from its root again
    born_without_grad: bool = False  # a view taken while its root did not require grad
    distinct: bool = False  # no two elements equal (std has a kink where a slice is constant)

    @property
    def is_float(self) -> bool:
        return self.dtype in ("float64", "float32")

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def bound(self) -> float:
        return max(abs(self.lo), abs(self.hi))


def _kind(dtype: str) -> int:
    return {"bool": 0, "int64": 1, "float32": 2, "float64": 2}[dtype]


@dataclass
class Scalar:
    """A Python number operand."""

    value: float | int

    @property
    def dtype(self) -> str:
        return "pyfloat" if isinstance(self.value, float) else "pyint"

    @property
    def text(self) -> str:
        return repr(self.value)

    @property
    def lo(self) -> float:
        return self.value

    hi = lo


def _text(operand) -> str:
    return operand.text if isinstance(operand, Scalar) else operand.name


# dtype rules: NumPy's (chainrule's) and PyTorch's for one op on two operands.

_TORCH_PROMOTE: dict = {}


def _our_result(a, b) -> str:
    """chainrule's result dtype: NumPy's (Python numbers stay weak, NEP 50), except that a
    float64 no float64 operand asked for is the default float dtype, float32, as in PyTorch."""
    types = [(o.value if isinstance(o, Scalar) else np.dtype(o.dtype)) for o in (a, b)]
    result = np.result_type(*types).name
    if result == "float64" and not any(isinstance(o, Var) and o.dtype == "float64" for o in (a, b)):
        return "float32"
    return result


def _torch_result(torch, a, b) -> str:
    key = tuple(
        (o.dtype, None) if isinstance(o, Scalar) else (o.dtype, len(o.shape) == 0) for o in (a, b)
    )
    if key not in _TORCH_PROMOTE:
        args = []
        for dtype, zero_dim in key:
            if dtype == "pyfloat":
                args.append(1.5)
            elif dtype == "pyint":
                args.append(2)
            else:
                args.append(torch.empty(() if zero_dim else (1,), dtype=getattr(torch, dtype)))
        if all(isinstance(x, (int, float)) for x in args):
            args[0] = torch.tensor(args[0])
        _TORCH_PROMOTE[key] = str(torch.result_type(*args)).removeprefix("torch.")
    return _TORCH_PROMOTE[key]


# Intervals: what a step does to bounds on the elements.


def _threshold(v) -> float:
    """A number to compare ``v`` with: near the middle of its bounds, but not a round one, which
    a computed value may hit exactly in one library and miss by 1e-16 in the other (the sum of
    a softmax's rows, a mean of probabilities)."""
    return round(float((v.lo + v.hi) / 2), 2) + 0.0037


def _product(a: tuple, b: tuple) -> tuple:
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)


def _monotone(f, lo, hi) -> tuple:
    return f(lo), f(hi)


def _sq(lo, hi) -> tuple:
    top = max(lo * lo, hi * hi)
    return (0.0 if lo <= 0 <= hi else min(lo * lo, hi * hi)), top


def _sigmoid(x):
    return 0.5 * (1 + math.tanh(x / 2))


def _softplus(x):
    return math.log1p(math.exp(-abs(x))) + max(x, 0)


# Unary ops: name -> (code template, needs (lo bound, hi bound) or None, new interval). The
# template formats ``{x}``; the interval maps (lo, hi). ``int_ok``: also for int64 (same dtype
# in both libraries); otherwise on an int64 operand the op is a known difference.
UNARY = {
    "exp": ("{x}.exp()", (-30, 6), lambda lo, hi: _monotone(math.exp, lo, hi), False),
    "tanh": ("{x}.tanh()", None, lambda lo, hi: _monotone(math.tanh, lo, hi), False),
    "sigmoid": ("{x}.sigmoid()", None, lambda lo, hi: _monotone(_sigmoid, lo, hi), False),
    "sin": ("{x}.sin()", None, lambda lo, hi: (-1.0, 1.0), False),
    "cos": ("{x}.cos()", None, lambda lo, hi: (-1.0, 1.0), False),
    "relu": ("{x}.relu()", None, lambda lo, hi: (max(lo, 0.0), max(hi, 0.0)), True),
    "abs": ("{x}.abs()", None, lambda lo, hi: (_sq(lo, hi)[0] ** 0.5, max(-lo, hi)), True),
    "neg": ("-{x}", None, lambda lo, hi: (-hi, -lo), True),
    "square": ("{x} ** 2", (-100, 100), _sq, True),
    "cube": ("{x} ** 3", (-20, 20), lambda lo, hi: (lo**3, hi**3), True),
    "sqrt": ("{x}.sqrt()", (POSITIVE, LIMIT), lambda lo, hi: (lo**0.5, hi**0.5), False),
    "log": ("{x}.log()", (POSITIVE, LIMIT), lambda lo, hi: _monotone(math.log, lo, hi), False),
    "rsqrt": ("{x}.rsqrt()", (POSITIVE, LIMIT), lambda lo, hi: (hi**-0.5, lo**-0.5), False),
    "pow_half": ("{x} ** 0.5", (POSITIVE, LIMIT), lambda lo, hi: (lo**0.5, hi**0.5), False),
    "reciprocal": ("1 / {x}", (POSITIVE, LIMIT), lambda lo, hi: (1 / hi, 1 / lo), False),
    "expm1": ("{x}.expm1()", (-30, 6), lambda lo, hi: _monotone(math.expm1, lo, hi), False),
    "log1p": ("{x}.log1p()", (POSITIVE - 0.5, LIMIT), lambda lo, hi: _monotone(math.log1p, lo, hi),
              False),
    "softplus": ("F.softplus({x})", None, lambda lo, hi: _monotone(_softplus, lo, hi), False),
    "leaky_relu": ("F.leaky_relu({x}, 0.2)", None,
                   lambda lo, hi: (min(lo, 0.2 * lo), max(hi, 0.2 * hi)), False),
    "gelu": ("F.gelu({x})", None, lambda lo, hi: (-0.2, max(hi, 0.0)), False),
    "gelu_tanh": ("F.gelu({x}, approximate='tanh')", None, lambda lo, hi: (-0.2, max(hi, 0.0)),
                  False),
    "silu": ("F.silu({x})", None, lambda lo, hi: (-0.3, max(hi, 0.0)), False),
    "erf": ("lib.erf({x})", None, lambda lo, hi: (-1.0, 1.0), False),
    "sign": ("{x}.sign()", None, lambda lo, hi: (-1.0, 1.0), True),
    "clone": ("{x}.clone()", None, lambda lo, hi: (lo, hi), True),
    "sinh": ("{x}.sinh()", (-6, 6), lambda lo, hi: _monotone(math.sinh, lo, hi), False),
    "cosh": ("{x}.cosh()", (-6, 6), lambda lo, hi: (1.0, math.cosh(max(-lo, hi))), False),
    "clamp": ("{x}.clamp(-0.5, 1.25)", None,
              lambda lo, hi: (min(max(lo, -0.5), 1.25), max(min(hi, 1.25), -0.5)), False),
    "clamp_min": ("{x}.clamp(min=0.25)", None, lambda lo, hi: (max(lo, 0.25), max(hi, 0.25)),
                  False),
    "clamp_max": ("{x}.clamp(max=-0.5)", None, lambda lo, hi: (min(lo, -0.5), min(hi, -0.5)),
                  False),
    "clamp_int": ("{x}.clamp(-1, 2)", None,
                  lambda lo, hi: (min(max(lo, -1), 2), max(min(hi, 2), -1)), True),
}  # fmt: skip

# Binary ops: name -> (template on {a} and {b}, interval of the result, what b must satisfy).
BINARY = {
    "add": ("{a} + {b}", lambda a, b: (a[0] + b[0], a[1] + b[1]), None),
    "sub": ("{a} - {b}", lambda a, b: (a[0] - b[1], a[1] - b[0]), None),
    "mul": ("{a} * {b}", _product, None),
    "div": ("{a} / {b}", lambda a, b: _product(a, (1 / b[1], 1 / b[0])), "positive"),
    "rdiv": ("{b} / {a}", None, None),  # placeholder, resolved in Builder.binary
    "maximum": ("{a}.maximum({b})", lambda a, b: (max(a[0], b[0]), max(a[1], b[1])), None),
    "minimum": ("{a}.minimum({b})", lambda a, b: (min(a[0], b[0]), min(a[1], b[1])), None),
    "pow": ("{b} ** {a}", None, None),  # base b positive, exponent a bounded: resolved below
    "add_alpha": ("{a}.add({b}, alpha=2)", lambda a, b: (a[0] + 2 * b[0], a[1] + 2 * b[1]),
                  None),
    "sub_method": ("{a}.sub({b})", lambda a, b: (a[0] - b[1], a[1] - b[0]), None),
}  # fmt: skip

REDUCTIONS = ("sum", "mean", "var", "std", "prod", "amax", "amin", "logsumexp", "norm")


class Builder:
    """Draws one program from a NumPy generator, keeping a `Var` per value."""

    def __init__(self, rng: np.random.Generator, torch, allowed: frozenset):
        self.rng = rng
        self.torch = torch
        self.allowed = allowed
        self.inputs: list[InputSpec] = []
        self.steps: list[Step] = []
        self.vars: dict[str, Var] = {}
        self.n_values = 0
        # Where a later write into a root makes the libraries differ: root -> [(step, known
        # difference, how PyTorch's spelling of that step changes)]. The change is applied
        # when such a write is generated (and the write is not generated unless allowed).
        self.on_write: dict[str, list] = {}
        # Roots no write may follow: root -> why. A reshape of a value not contiguous in both
        # libraries is a view in one and a copy in the other (PyTorch documents that whether
        # reshape copies must not be relied on); and where PyTorch's equivalent of a step
        # casts an operand, it saves the cast copy where chainrule saves the operand itself.
        self.no_write: dict[str, str] = {}
        mode = rng.choice(["float64", "float32", "mixed"], p=[0.45, 0.2, 0.35])
        self.mode = str(mode)

    # Helpers.

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, options):
        return options[int(self.rng.integers(len(options)))]

    def fresh(self) -> str:
        name = f"v{self.n_values}"
        self.n_values += 1
        return name

    def new_dtype(self, float_only=False) -> str:
        if self.mode != "mixed":
            return self.mode
        if float_only:
            return self.choice(["float64", "float64", "float32"])
        return str(self.rng.choice(["float64", "float32", "int64"], p=[0.45, 0.35, 0.2]))

    def new_shape(self, min_dims=0, max_dims=3) -> tuple:
        ndim = int(self.rng.choice([0, 1, 2, 3], p=[0.1, 0.3, 0.4, 0.2]))
        ndim = min(max(ndim, min_dims), max_dims)
        return tuple(int(self.rng.choice([1, 2, 3, 4], p=[0.15, 0.35, 0.3, 0.2])) for _ in
                     range(ndim))  # fmt: skip

    def add_input(self, shape=None, dtype=None, lo=-2.0, hi=2.0, grad=None) -> Var:
        shape = self.new_shape() if shape is None else tuple(shape)
        dtype = self.new_dtype() if dtype is None else dtype
        name = f"x{len(self.inputs)}"
        if dtype == "int64":
            lo, hi = math.ceil(lo), math.floor(hi)
            values = self.rng.integers(lo, hi + 1, size=shape).astype(np.int64)
            requires_grad = False
        else:
            values = self.rng.uniform(lo, hi, size=shape).astype(dtype)
            requires_grad = self.chance(0.8) if grad is None else grad
        layout, perm = "contiguous", ()
        if len(shape) >= 2 and self.chance(0.3):
            order = tuple(int(i) for i in self.rng.permutation(len(shape)))
            if order != tuple(range(len(shape))):
                layout, perm = "transposed", order
        elif len(shape) >= 1 and self.chance(0.25):
            layout, perm = "strided", (int(self.rng.integers(len(shape))),)
        self.inputs.append(InputSpec(name, values, layout, perm, requires_grad))
        var = Var(name, shape, dtype, float(lo), float(hi), requires_grad, True, name)
        var.contiguous = layout == "contiguous"
        var.distinct = dtype != "int64"
        self.vars[name] = var
        return var

    def define(self, name, shape, dtype, interval, grad, root=None, writable="yes",
               like=()) -> Var:  # fmt: skip
        """A new value; C-contiguous in both libraries when every tensor in ``like`` (the
        operands of an op that makes a new array) is."""
        lo, hi = interval
        var = Var(name, tuple(shape), dtype, float(lo), float(hi), grad, False, root or name,
                  writable)  # fmt: skip
        tensors = [v for v in like if isinstance(v, Var)]
        var.contiguous = bool(tensors) and all(v.contiguous for v in tensors)
        # An op of one value with distinct elements (and numbers) has distinct elements;
        # steps that pick or repeat elements say otherwise after define. Two values may
        # cancel (x - x.log_softmax(0) is constant along dim 0), so their result is not.
        var.distinct = len(tensors) == 1 and tensors[0].distinct and dtype != "int64"
        self.vars[name] = var
        return var

    def emit(self, code, out=None, torch_code=None, known=None) -> None:
        if known is not None:
            STATS[f"generated:{known}"] += 1
        self.steps.append(Step(code, torch_code, known, out))

    def patch_on_write(self, root: str, known: str, change) -> None:
        """A later write into ``root`` makes the last step a known difference, which PyTorch
        then runs as ``change(its code)``."""
        self.on_write.setdefault(root, []).append((len(self.steps) - 1, known, change))

    def index_use(self, index: Var) -> None:
        """The last step keeps ``index`` for backward: PyTorch uses a clone once ``index``
        is written (saved_indices_are_copies)."""
        self.patch_on_write(index.root, "saved_indices_are_copies", _cloning(index.name))

    def pick(self, pred=lambda v: True) -> Var | None:
        """A value satisfying ``pred``, the most recent ones more likely."""
        found = [v for v in self.vars.values() if pred(v)]
        if not found:
            return None
        weights = np.arange(1, len(found) + 1, dtype=float) ** 2
        return found[int(self.rng.choice(len(found), p=weights / weights.sum()))]

    def float_value(self, pred=lambda v: True, **new) -> Var:
        """A float value satisfying ``pred``; a new input when there is none."""
        var = self.pick(lambda v: v.is_float and pred(v))
        if var is None or self.chance(0.1):
            var = self.add_input(dtype=self.new_dtype(float_only=True), **new)
        return var

    def scalar(self, integer=False, positive=False) -> Scalar:
        if integer:
            return Scalar(self.choice([1, 2, 3] if positive else [-1, 1, 2, 3]))
        return Scalar(self.choice([0.5, 1.5, 2.0] if positive else [-0.75, 0.5, 1.5, 2.0]))

    def grads_of(self, *operands) -> bool:
        return any(isinstance(o, Var) and o.grad for o in operands)

    def promote(self, a, b) -> tuple[str, str | None, str | None]:
        """The result dtype (NumPy's), and where PyTorch differs, the known difference and the
        dtype to cast the tensor operands to."""
        ours = _our_result(a, b)
        theirs = _torch_result(self.torch, a, b)
        if ours == theirs:
            return ours, None, None
        return ours, "zero_dim_tensor_promotes", ours

    def cast_text(self, operand, dtype) -> str:
        """``operand`` cast to ``dtype`` in PyTorch's equivalent of a step."""
        if isinstance(operand, Var) and operand.dtype != dtype:
            self.no_write[operand.root] = "cast in PyTorch's equivalent of a step"
            return f"{operand.name}.to(lib.{dtype})"
        return _text(operand)

    def partner(self, a: Var, need=None, int_ok=True) -> Var | Scalar:
        """A second operand for ``a``: a Python number, a value or a new input whose shape
        broadcasts with ``a``'s. ``need``: "positive" for divisors and bases."""
        if self.chance(0.2):
            return self.scalar(integer=a.dtype == "int64" and self.chance(0.5),
                               positive=need == "positive")  # fmt: skip

        def fits(v: Var) -> bool:
            if v is a and self.chance(0.5):
                return False
            if need == "positive" and v.lo < POSITIVE:
                return False
            if v.dtype == "bool" or (v.dtype == "int64" and not int_ok):
                return False
            shape = _broadcast(a.shape, v.shape)
            return shape is not None and math.prod(shape) <= 64

        found = self.pick(fits)
        if found is not None and self.chance(0.6):
            return found
        shape = list(a.shape)
        r = self.rng.random()
        if r < 0.3 and shape:  # some dims 1
            shape = [1 if self.chance(0.5) else n for n in shape]
        elif r < 0.5 and shape:  # a suffix
            shape = shape[int(self.rng.integers(len(shape) + 1)) :]
        elif r < 0.6 and len(shape) < 3:  # one more leading dim
            shape = [int(self.rng.integers(1, 4)), *shape]
        dtype = self.new_dtype(float_only=not int_ok or a.dtype != "int64")
        if need == "positive":
            return self.add_input(shape, dtype, lo=0.5, hi=2.0)
        return self.add_input(shape, dtype)

    def dtype_ok(self, a, b) -> tuple[str, str | None, str | None] | None:
        dtype, known, cast = self.promote(a, b)
        if known is not None and known not in self.allowed:
            return None
        return dtype, known, cast

    # Steps. Each returns False when it does not apply (the caller draws another).

    def unary(self) -> bool:
        name = self.choice(list(UNARY))
        template, limits, interval, int_ok = UNARY[name]

        def fits(v: Var) -> bool:
            if v.dtype == "bool":
                return False
            if v.dtype == "int64" and not int_ok and template.startswith("F."):
                return False  # PyTorch's F.softplus and the like refuse integers
            if name == "clamp_int" and v.dtype != "int64":
                return False
            if name == "sign" and v.is_float and not v.name.startswith("x") and v.lo <= 0 <= v.hi:
                return False  # a computed value may be 0 in one library and 1e-8 in the other
            return limits is None or (limits[0] <= v.lo and v.hi <= limits[1])

        x = self.pick(fits)
        if x is None:
            if limits is not None and limits[0] >= POSITIVE - 0.5:
                x = self.add_input(dtype=self.new_dtype(float_only=True), lo=0.5, hi=2.0)
            elif name == "clamp_int":
                return False
            else:
                x = self.add_input(dtype=self.new_dtype(float_only=True))
        lo, hi = interval(x.lo, x.hi)
        if max(abs(lo), abs(hi)) > LIMIT:
            return False
        out = self.fresh()
        code = f"{out} = " + template.format(x=x.name)
        dtype, known, torch_code = x.dtype, None, None
        if x.dtype == "int64" and not int_ok:
            dtype = "float32"  # a float function of integers: the default float dtype, as PyTorch
        self.emit(code, out, torch_code, known)
        var = self.define(out, x.shape, dtype, (lo, hi), x.grad and x.is_float, like=[x])
        if name in ("relu", "sign", "clamp", "clamp_min", "clamp_max", "clamp_int", "abs",
                    "square", "cosh"):  # fmt: skip
            var.distinct = False
        return True

    def binary(self) -> bool:
        name = self.choice(list(BINARY))
        a = self.pick(lambda v: v.dtype != "bool") or self.add_input()
        if name == "rdiv":  # a Python number or a value divided by a positive value
            a = self.pick(lambda v: v.lo >= POSITIVE and v.dtype != "bool")
            if a is None:
                a = self.add_input(dtype=self.new_dtype(float_only=True), lo=0.5, hi=2.0)
            b = self.partner(a)
            template = "{b} / {a}"
            interval = _product((b.lo, b.hi), (1 / a.hi, 1 / a.lo))
        elif name == "pow":  # a positive base to a bounded exponent
            if not a.is_float or a.bound > 3:
                return False
            b = self.partner(a, need="positive")
            if isinstance(b, Var) and (b.dtype == "int64" or b.hi > 4):
                return False
            template = "{b} ** {a}"
            corners = [b.lo**e for e in (a.lo, a.hi)] + [b.hi**e for e in (a.lo, a.hi)]
            interval = (min(corners), max(corners))
        else:
            template, rule, need = BINARY[name]
            b = self.partner(a, need=need)
            interval = rule((a.lo, a.hi), (b.lo, b.hi))
        if name in ("maximum", "minimum") and isinstance(b, Scalar):
            return False  # PyTorch's maximum takes tensors only
        integers = not (a.is_float or isinstance(b, Var) and b.is_float)
        if integers and name == "pow":
            return False  # a negative integer power of an integer is an error in both
        if max(abs(interval[0]), abs(interval[1])) > LIMIT:
            return False
        promoted = self.dtype_ok(a, b)
        if promoted is None:
            return False
        dtype, known, cast = promoted
        if name in ("div", "rdiv") and _kind(dtype) < 2:
            dtype = "float32"  # true division of integers: the default float dtype, as PyTorch
        shape = a.shape if isinstance(b, Scalar) else _broadcast(a.shape, b.shape)
        out = self.fresh()
        code = f"{out} = " + template.format(a=a.name, b=_text(b))
        torch_code = None
        if known:
            torch_code = f"{out} = " + template.format(a=self.cast_text(a, cast),
                                                       b=self.cast_text(b, cast))  # fmt: skip
        self.emit(code, out, torch_code, known)
        var = self.define(out, shape, dtype, interval, self.grads_of(a, b) and _kind(dtype) == 2,
                          like=[a, b])  # fmt: skip
        if name in ("maximum", "minimum") and (a is b or isinstance(b, Var) and a.shape != b.shape):
            var.distinct = False  # picks elements, some of them repeated
        if name == "pow" and self.grads_of(a, b):
            # PyTorch saves base, exponent and output; chainrule the output only when the
            # exponent needs a gradient, the exponent only when the base does.
            if not a.grad:
                self.patch_on_write(out, "saves_fewer_tensors", _clone_result)
            if not self.grads_of(b):
                self.patch_on_write(a.root, "saves_fewer_tensors", _cloning(a.name))
        return True

    def compare(self) -> bool:
        a = self.pick(lambda v: v.dtype != "bool") or self.add_input()
        op = self.choice([">", "<", ">=", "<="])
        b = self.partner(a) if self.chance(0.5) else Scalar(_threshold(a))
        promoted = self.dtype_ok(a, b)  # the dtype the comparison is made in
        if promoted is None:
            return False
        _, known, cast = promoted
        shape = a.shape if isinstance(b, Scalar) else _broadcast(a.shape, b.shape)
        out = self.fresh()
        template = f"{out} = {{a}} {op} {{b}}"
        torch_code = None
        if known:
            torch_code = template.format(a=self.cast_text(a, cast), b=self.cast_text(b, cast))
        self.emit(template.format(a=a.name, b=_text(b)), None, torch_code, known)
        self.define(out, shape, "bool", (0, 1), False, like=[a, b])
        return True

    def where(self) -> bool:
        a = self.pick(lambda v: v.dtype != "bool") or self.add_input()
        b = self.partner(a)
        if isinstance(b, Scalar) and self.chance(0.5):
            b = self.pick(lambda v: v is not a and v.dtype != "bool"
                          and _fits(a.shape, v.shape)) or b  # fmt: skip
        cond = self.pick(lambda v: v.dtype == "bool" and _fits(a.shape, v.shape))
        if cond is None or self.chance(0.4):
            c = self.pick(lambda v: v.dtype != "bool" and _fits(a.shape, v.shape)) or a
            cond_text, cond_shape = f"{c.name} > {_threshold(c)}", c.shape
        else:
            cond_text, cond_shape = cond.name, cond.shape
        promoted = self.dtype_ok(a, b)
        if promoted is None:
            return False
        dtype, known, cast = promoted
        shape = a.shape if isinstance(b, Scalar) else _broadcast(a.shape, b.shape)
        shape = _broadcast(shape, cond_shape)
        if shape is None or math.prod(shape) > 64:
            return False
        out = self.fresh()
        if self.chance(0.5):
            template = f"{out} = lib.where({cond_text}, {{a}}, {{b}})"
        else:
            template = f"{out} = {{a}}.where({cond_text}, {{b}})"
        torch_code = None
        if known:
            torch_code = template.format(a=self.cast_text(a, cast), b=self.cast_text(b, cast))
        self.emit(template.format(a=a.name, b=_text(b)), out, torch_code, known)
        interval = (min(a.lo, b.lo), max(a.hi, b.hi))
        var = self.define(out, shape, dtype, interval, self.grads_of(a, b) and _kind(dtype) == 2,
                          like=[a, b, *([cond] if cond_text == getattr(cond, "name", None)
                                        else [])])  # fmt: skip
        var.distinct = var.distinct and isinstance(b, Var) and a.shape == b.shape == shape
        return True

    def dims(self, ndim: int, tuples=True):
        """A dim argument: an int (maybe negative), a tuple of ints, or None."""
        if ndim == 0:
            return self.choice([0, -1, None])
        r = self.rng.random()
        if r < 0.2:
            return None
        if r < 0.4 and tuples and ndim >= 2:
            k = int(self.rng.integers(1, ndim + 1))
            picked = self.rng.choice(ndim, size=k, replace=False)
            return tuple(int(d) - ndim * int(self.chance(0.3)) for d in picked)
        return int(self.rng.integers(-ndim, ndim))

    def reduce(self) -> bool:
        op = self.choice(REDUCTIONS)
        x = self.pick(lambda v: v.dtype != "bool") or self.add_input()
        ndim = len(x.shape)
        dim = self.dims(ndim, tuples=op != "prod")
        keepdim = self.chance(0.3) and (ndim > 0 or dim is not None)
        if op == "logsumexp" and dim is None:
            dim = tuple(range(ndim)) or 0
        no_dim = keepdim and dim is None and op in ("sum", "mean", "prod")
        if no_dim and "keepdim_without_dim" not in self.allowed:
            return False
        reduced = _normalise(dim, ndim)
        n = math.prod(x.shape[d] for d in reduced) if ndim else 1
        args = [] if dim is None else [repr(dim)]
        if op == "norm":  # of an integer tensor, p = 1 stays an integer (NumPy's sum)
            p = self.choice([2, 1, 3]) if x.is_float else 2
            args = [repr(p), *(args or ["None"])]
        if keepdim:
            args.append("keepdim=True")
        if op in ("var", "std") and self.chance(0.3):
            args.append("correction=0")
        lo, hi = x.lo, x.hi
        interval = {
            "sum": (min(n * lo, lo), max(n * hi, hi)),
            "mean": (lo, hi),
            "var": (0.0, (hi - lo) ** 2 * max(n, 2)),
            "std": (0.0, (hi - lo) * max(n, 2)),
            "prod": (-(x.bound**n), x.bound**n),
            "amax": (lo, hi),
            "amin": (lo, hi),
            "logsumexp": (lo, hi + math.log(n)),
            "norm": (0.0, x.bound * n),
        }[op]
        if max(abs(interval[0]), abs(interval[1])) > LIMIT:
            return False
        if op in ("var", "std") and n < 2:
            return False  # one element: PyTorch warns and both give nan
        if op == "std" and not x.distinct:
            return False  # a constant slice: std is 0 or 1e-17 as rounding goes, and its gradient
        shape = _reduced_shape(x.shape, reduced, keepdim)
        out = self.fresh()
        code = f"{out} = {x.name}.{op}({', '.join(args)})"
        dtype, known, torch_code = x.dtype, None, None
        if x.dtype == "int64" and op in ("mean", "var", "std", "norm", "logsumexp"):
            dtype = "float32"  # a float reduction of integers: the default float dtype
            if op != "logsumexp":  # PyTorch gives float32 too; it refuses the others
                known = "float_reductions_of_ints"
                if known not in self.allowed:
                    return False
                torch_code = code.replace(f"= {x.name}.", f"= {self.cast_text(x, 'float32')}.", 1)
        if no_dim and not known and (op != "prod" or ndim == 1):
            known = "keepdim_without_dim"  # PyTorch's prod takes one dim
            dims = "0" if op == "prod" else repr(tuple(range(ndim)))
            torch_code = code.replace("keepdim=True", f"{dims}, keepdim=True")
        elif no_dim:
            return False
        self.emit(code, out, torch_code, known)
        self.define(out, shape, dtype, interval, x.grad and _kind(dtype) == 2, like=[x])
        if op == "prod" and x.grad:
            self.patch_on_write(out, "saves_fewer_tensors", _clone_result)
        return True

    def reduce_all(self) -> bool:
        """x.sum(), x.max(), x.min(), x.mean(), and the known-difference spellings."""
        x = self.pick(lambda v: v.dtype != "bool") or self.add_input()
        op = self.choice(["sum", "max", "min", "mean", "max_keepdim", "min_keepdim", "logsumexp"])
        out = self.fresh()
        known = torch_code = None
        shape, dtype = (), x.dtype
        if op in ("max_keepdim", "min_keepdim"):
            known = "keepdim_without_dim"
            name = op[:3]
            code = f"{out} = {x.name}.{name}(keepdim=True)"
            torch_code = f"{out} = {x.name}.a{name}({tuple(range(len(x.shape)))}, keepdim=True)"
            shape = (1,) * len(x.shape)
        elif op == "logsumexp":
            known = "logsumexp_without_dim"
            code = f"{out} = {x.name}.logsumexp()"
            if x.dtype == "int64":
                return False
            # Every dim by name: PyTorch then saves x itself, as chainrule does (a reshape of
            # a strided x would save a copy, which an in-place change to x cannot reach).
            dims = tuple(range(len(x.shape))) or 0
            flat = "" if x.shape else ".reshape(-1)"
            torch_code = f"{out} = {x.name}{flat}.logsumexp({dims})"
        else:
            code = f"{out} = {x.name}.{op}()"
            if op == "mean" and x.dtype == "int64":
                known, dtype = "float_reductions_of_ints", "float32"
                torch_code = f"{out} = {self.cast_text(x, 'float32')}.mean()"
        if known and known not in self.allowed:
            self.n_values -= 1
            return False
        n = x.size
        interval = {
            "sum": (min(n * x.lo, x.lo), max(n * x.hi, x.hi)),
            "logsumexp": (x.lo, x.hi + math.log(max(n, 1))),
        }.get(op, (x.lo, x.hi))
        if max(abs(interval[0]), abs(interval[1])) > LIMIT:
            self.n_values -= 1
            return False
        self.emit(code, out, torch_code, known)
        self.define(out, shape, dtype, interval, x.grad and _kind(dtype) == 2, like=[x])
        return True

    def normalise(self) -> bool:
        op = self.choice(["softmax", "log_softmax"])
        x = self.pick(lambda v: v.dtype != "bool") or self.add_input()
        ndim = len(x.shape)
        dim = int(self.rng.integers(-ndim, ndim)) if ndim else self.choice([0, -1])
        n = x.shape[dim] if ndim else 1
        spread = x.hi - x.lo
        if spread > 30:
            return False
        interval = (math.exp(-spread) / n, 1.0) if op == "softmax" else (-spread - math.log(n), 0.0)
        out = self.fresh()
        code = f"{out} = {x.name}.{op}({dim})"
        dtype, known, torch_code = x.dtype, None, None
        if x.dtype == "int64":
            if "float_reductions_of_ints" not in self.allowed:
                return False
            dtype, known = "float32", "float_reductions_of_ints"
            torch_code = f"{out} = {self.cast_text(x, 'float32')}.{op}({dim})"
        self.emit(code, out, torch_code, known)
        var = self.define(out, x.shape, dtype, interval, x.grad and _kind(dtype) == 2, like=[x])
        var.distinct = False  # its logsumexp is 0 and its sum 1 up to rounding: near-ties
        return True

    def extreme(self) -> bool:
        """values, indices = x.max(dim) (or min), or argmax/argmin, of an input or of values
        with no near-ties (which rounding could order differently in the two libraries)."""
        x = self.pick(lambda v: v.dtype != "bool" and (v.distinct or v.name.startswith("x")))
        x = x or self.add_input()
        ndim = len(x.shape)
        dim = int(self.rng.integers(-ndim, ndim)) if ndim else 0
        keepdim = self.chance(0.3)
        op = self.choice(["max", "min", "argmax", "argmin"])
        shape = _reduced_shape(x.shape, _normalise(dim, ndim), keepdim)
        args = f"{dim}, keepdim=True" if keepdim else f"{dim}"
        if op.startswith("arg"):
            out = self.fresh()
            self.emit(f"{out} = {x.name}.{op}({args})", out)
            var = self.define(out, shape, "int64", (0, x.shape[dim] - 1 if ndim else 0), False,
                              like=[x])  # fmt: skip
            var.gather_for = (x.shape, dim % ndim) if keepdim and ndim else None
            return True
        values, indices = self.fresh(), self.fresh()
        gather_for = (x.shape, dim % ndim) if keepdim and ndim else None
        if self.chance(0.7):
            self.emit(f"{values}, {indices} = {x.name}.{op}({args})", values)
            change = _appending(f"; {indices} = {indices}.clone()")
        else:
            self.emit(f"{values} = {x.name}.{op}({args}).values", values)
            self.emit(f"{indices} = {x.name}.{op}({args}).indices", indices)
            change = _clone_result
        self.define(values, shape, x.dtype, (x.lo, x.hi), x.grad, like=[x])
        var = self.define(indices, shape, "int64", (0, x.shape[dim] - 1 if ndim else 0), False,
                          like=[x])  # fmt: skip
        var.gather_for = gather_for
        self.patch_on_write(var.root, "saved_indices_are_copies", change)
        return True

    def view_op(self, shape: tuple, expand=True) -> tuple[str, tuple, str] | None:
        """One view: (template on {x}, new shape, kind)."""
        ndim = len(shape)
        options = ["unsqueeze", "squeeze", "reshape"]
        if ndim:
            options += ["index"] * 4 + ["view"]
        if ndim > 1:  # PyTorch's flatten of one dim is the tensor itself, not a view of it
            options += ["flatten"]
        if ndim == 2:
            options += ["T", "T"]
        if ndim >= 2:
            options += ["mT", "transpose", "transpose", "permute"]
        if expand:
            options += ["expand"]
        kind = self.choice(options)
        if kind == "index":
            text, new, full = self.basic_index(shape)
            return "{x}[" + text + "]", new, "index_full" if full else kind
        if kind == "T":
            return "{x}.T", shape[::-1], kind
        if kind == "mT":
            return "{x}.mT", (*shape[:-2], shape[-1], shape[-2]), kind
        if kind == "transpose":
            i, j = (int(d) for d in self.rng.choice(ndim, size=2, replace=False))
            new = list(shape)
            new[i], new[j] = new[j], new[i]
            i -= ndim * int(self.chance(0.3))
            return f"{{x}}.transpose({i}, {j})", tuple(new), kind
        if kind == "permute":
            perm = tuple(int(d) for d in self.rng.permutation(ndim))
            return f"{{x}}.permute{perm}", tuple(shape[d] for d in perm), kind
        if kind == "unsqueeze":
            d = int(self.rng.integers(-ndim - 1, ndim + 1))
            new = list(shape)
            new.insert(d if d >= 0 else ndim + 1 + d, 1)
            return f"{{x}}.unsqueeze({d})", tuple(new), kind
        if kind == "squeeze":
            if ndim and self.chance(0.6):
                d = int(self.rng.integers(-ndim, ndim))
                new = tuple(n for i, n in enumerate(shape) if i != d % ndim or n != 1)
                return f"{{x}}.squeeze({d})", new, kind
            return "{x}.squeeze()", tuple(n for n in shape if n != 1), kind
        if kind in ("reshape", "view"):
            new = self.factor(math.prod(shape))
            args = list(new)
            if args and self.chance(0.4):
                args[int(self.rng.integers(len(args)))] = -1
            if not args:
                return f"{{x}}.{kind}(())", (), kind
            return f"{{x}}.{kind}({', '.join(map(str, args))})", new, kind
        if kind == "flatten":
            return "{x}.flatten()", (math.prod(shape),), kind
        # expand: size-1 dims stretched, maybe a new leading dim
        new = [self.choice([2, 3]) if n == 1 and self.chance(0.7) else n for n in shape]
        if len(new) < 3 and self.chance(0.5):
            new.insert(0, self.choice([1, 2, 3]))
        if math.prod(new) > 64:
            return None
        args = [(-1 if i >= len(new) - ndim and n == shape[i - len(new) + ndim]
                 and self.chance(0.3) else n) for i, n in enumerate(new)]  # fmt: skip
        if not args:
            return "{x}.expand(())", (), kind
        return f"{{x}}.expand({', '.join(map(str, args))})", tuple(new), kind

    def factor(self, n: int) -> tuple:
        """A shape of n elements, of 0-3 dims."""
        if n == 1 and self.chance(0.3):
            return ()
        dims = []
        rest = n
        for _ in range(int(self.rng.integers(0, 3))):
            divisors = [d for d in range(1, rest + 1) if rest % d == 0]
            d = self.choice(divisors)
            dims.append(d)
            rest //= d
        dims.append(rest)
        order = self.rng.permutation(len(dims))
        return tuple(int(dims[i]) for i in order)

    def basic_index(self, shape: tuple, empty=False) -> tuple[str, tuple, bool]:
        """A basic index (ints, slices, None, ...), the shape it selects, and whether it
        selects everything with full slices alone (PyTorch then indexes to the tensor
        itself, and a write through it is a write into that object)."""
        parts, objects = [], []
        ndim = len(shape)
        k = int(self.rng.integers(1, ndim + 1))
        dims = list(range(k))
        if ndim >= 2 and self.chance(0.15):
            parts.append("...")
            objects.append(Ellipsis)
            dims = [ndim - 1]
        for d in dims:
            n = shape[d]
            if self.chance(0.08):
                parts.append("None")
                objects.append(None)
            if self.chance(0.3):
                i = int(self.rng.integers(-n, n))
                parts.append(str(i))
                objects.append(i)
                continue
            for _ in range(5):
                start = self.choice([None, None, 0, 1, -1, -2]) if n > 1 else None
                stop = self.choice([None, None, n - 1, -1, 2, 3])
                step = self.choice([None, None, 2, 3])
                if empty or len(range(*slice(start, stop, step).indices(n))):
                    break
            else:
                start = stop = step = None
            text = f"{'' if start is None else start}:{'' if stop is None else stop}"
            text += "" if step is None else f":{step}"
            parts.append(text)
            objects.append(slice(start, stop, step))
        new = np.empty(shape)[tuple(objects)].shape
        return ", ".join(parts), new, _selects_all(objects, shape)

    def view(self) -> bool:
        x = self.pick() or self.add_input()
        op = self.view_op(x.shape)
        if op is None:
            return False
        template, shape, kind = op
        out = self.fresh()
        code = f"{out} = " + template.format(x=x.name)
        writable = x.writable
        reshaping = kind in ("reshape", "view", "flatten")
        if kind == "expand":
            writable = "expanded" if writable == "yes" else "no"
        elif reshaping and (writable != "yes" or not x.contiguous):
            writable = "no"  # a copy or a view: which one depends on the layout
            self.no_write[x.root] = "reshape_view_or_copy"
        known = torch_code = None
        if kind == "view":
            known, torch_code = "view_may_copy", code.replace(".view(", ".reshape(")
        self.emit(code, out, torch_code, known)
        var = self.define(out, shape, x.dtype, (x.lo, x.hi), x.grad, x.root, writable)
        var.contiguous = x.contiguous and kind in ("reshape", "view", "flatten", "unsqueeze",
                                                   "squeeze")  # fmt: skip
        var.expr = (torch_code or code).partition(" = ")[2].replace(x.name, x.expr or x.name, 1)
        var.distinct = x.distinct and kind != "expand"
        var.born_without_grad = x.born_without_grad or not self.vars[x.root].grad
        return True

    def chunks(self) -> bool:
        """a, b = x.split(...) / x.chunk(2, dim): views."""
        x = self.pick(lambda v: len(v.shape) >= 1 and max(v.shape) >= 2)
        if x is None:
            return False
        dims = [d for d, n in enumerate(x.shape) if n >= 2]
        d = self.choice(dims)
        n = x.shape[d]
        first = int(self.rng.integers(1, n))
        a, b = self.fresh(), self.fresh()
        if self.chance(0.5):
            self.emit(f"{a}, {b} = {x.name}.split([{first}, {n - first}], {d})", a)
        else:
            first = (n + 1) // 2
            self.emit(f"{a}, {b} = {x.name}.chunk(2, {d})", a)
        narrow = (f"{a}, {b} = {x.name}.narrow({d}, 0, {first}), "
                  f"{x.name}.narrow({d}, {first}, {n - first})")  # fmt: skip
        self.patch_on_write(x.root, "split_outputs_are_plain_views", lambda code: narrow)
        for name, start, size in ((a, 0, first), (b, first, n - first)):
            shape = (*x.shape[:d], size, *x.shape[d + 1 :])
            var = self.define(name, shape, x.dtype, (x.lo, x.hi), x.grad, x.root,
                              "yes" if x.writable == "yes" else "no")  # fmt: skip
            var.expr = f"{x.expr or x.name}.narrow({d}, {start}, {size})"
            var.distinct = x.distinct
            var.born_without_grad = x.born_without_grad or not self.vars[x.root].grad
        return True

    def copy_shape(self) -> bool:
        """flip, roll, tile, repeat, advanced indexing, cat, stack: copies."""
        x = self.pick(lambda v: len(v.shape) >= 1) or self.add_input(self.new_shape(min_dims=1))
        ndim = len(x.shape)
        kind = self.choice(["flip", "roll", "tile", "repeat", "take", "take", "cat", "stack"])
        out = self.fresh()
        shape = x.shape
        operands = [x]
        known = torch_code = None
        dtype = x.dtype
        if kind == "flip":
            d = int(self.rng.integers(-ndim, ndim))
            code = f"{out} = {x.name}.flip({d if self.chance(0.5) else (d,)})"
        elif kind == "roll":
            shift, dim = self.choice([1, -1, 2]), int(self.rng.integers(ndim))
            code = f"{out} = {x.name}.roll({shift}, {dim})"
        elif kind in ("tile", "repeat"):
            reps = tuple(self.choice([1, 1, 2]) for _ in range(ndim))
            if kind == "repeat" and self.chance(0.3):
                reps = (2, *reps)
            shape = _tiled(x.shape, reps)
            if math.prod(shape) > 64:
                self.n_values -= 1
                return False
            code = f"{out} = {x.name}.{kind}({reps})"
        elif kind == "take":
            d = int(self.rng.integers(ndim))
            n = x.shape[d]
            picks = [int(i) for i in self.rng.integers(-n, n, size=int(self.rng.integers(1, 4)))]
            index = ":, " * d + (f"lib.tensor({picks})" if self.chance(0.4) else str(picks))
            code = f"{out} = {x.name}[{index}]"
            shape = (*x.shape[:d], len(picks), *x.shape[d + 1 :])
            if d:
                operands = []  # NumPy's x[:, idx] is not C-contiguous (and no bounds needed)
        else:
            d = int(self.rng.integers(ndim)) if kind == "cat" else int(self.rng.integers(ndim + 1))
            other_shape = list(x.shape)
            if kind == "cat":
                other_shape[d] = self.choice([1, 2])
            y = self.pick(lambda v: v is not x and v.shape == tuple(other_shape)
                          and v.dtype != "bool")  # fmt: skip
            if y is None:
                y = self.add_input(other_shape, self.new_dtype(float_only=x.dtype != "int64"))
            operands.append(y)
            promoted = self.dtype_ok(x, y)
            if promoted is None:
                self.n_values -= 1
                return False
            dtype, known, cast = promoted
            template = f"{out} = lib.{kind}([{{a}}, {{b}}], {d})"
            code = template.format(a=x.name, b=y.name)
            if known:
                torch_code = template.format(a=self.cast_text(x, cast), b=self.cast_text(y, cast))
            if kind == "cat":
                shape = list(x.shape)
                shape[d] += other_shape[d]
                shape = tuple(shape)
            else:
                shape = (*x.shape[:d], 2, *x.shape[d:])
        self.emit(code, out, torch_code, known)
        lo = min((o.lo for o in operands), default=x.lo)
        hi = max((o.hi for o in operands), default=x.hi)
        var = self.define(
            out,
            shape,
            dtype,
            (lo, hi),
            self.grads_of(x, *operands) and _kind(dtype) == 2,
            like=operands,
        )
        var.distinct = var.distinct and kind in ("flip", "roll")
        return True

    def take(self) -> bool:
        """x[i] or x[:, i] with an int64 value i, or x.gather(dim, i) with indices from
        argmax or max(dim, keepdim=True): the op keeps i for backward."""
        if self.chance(0.5):
            i = self.pick(lambda v: v.gather_for is not None)
            x = i and self.pick(lambda v: v.shape == i.gather_for[0] and v.dtype != "bool")
            if x is None:
                return False
            dim = i.gather_for[1]
            code = f"{{out}} = {x.name}.gather({dim}, {{i}})"
            shape = i.shape
            like = []  # NumPy's result of an index grid need not be C-contiguous
        else:
            i = self.pick(lambda v: v.dtype == "int64" and v.size <= 6)
            if i is None:
                return False
            x = self.pick(lambda v: v.dtype != "bool" and any(
                -n <= i.lo and i.hi < n for n in v.shape))  # fmt: skip
            if x is None:
                return False
            dim = self.choice([d for d, n in enumerate(x.shape) if -n <= i.lo and i.hi < n])
            code = f"{{out}} = {x.name}[{':, ' * dim}{{i}}]"
            shape = (*x.shape[:dim], *i.shape, *x.shape[dim + 1 :])
            like = [x, i] if dim == 0 else []  # NumPy's x[:, i] is not C-contiguous
            if math.prod(shape) > 64:
                return False
        out = self.fresh()
        self.emit(code.format(out=out, i=i.name), out)
        if "gather" in code and x.grad:  # PyTorch's gather saves x; chainrule its shape
            self.patch_on_write(x.root, "saves_fewer_tensors", _cloning(x.name))
        if not i.shape and "gather" not in code:
            # A 0-d integer tensor indexes as an int in both libraries: a view of x.
            var = self.define(out, shape, x.dtype, (x.lo, x.hi), x.grad, x.root, x.writable)
            var.expr = f"{x.expr or x.name}[{':, ' * dim}{i.name}]"
            var.born_without_grad = x.born_without_grad or not self.vars[x.root].grad
            var.distinct = x.distinct
            return True
        self.index_use(i)
        var = self.define(out, shape, x.dtype, (x.lo, x.hi), x.grad, like=like)
        var.distinct = False
        return True

    def matmul(self) -> bool:
        a = self.pick(lambda v: len(v.shape) >= 1 and v.dtype != "bool" and v.bound <= 100)
        if a is None:
            a = self.add_input(self.new_shape(min_dims=1))
        k = a.shape[-1]
        r = self.rng.random()
        if r < 0.2:
            b_shape = (k,)
        elif r < 0.8:
            b_shape = (k, int(self.rng.integers(1, 5)))
        else:
            b_shape = (int(self.rng.integers(1, 3)), k, int(self.rng.integers(1, 4)))
        b = self.pick(lambda v: v.shape == b_shape and v.dtype == a.dtype and v.bound <= 100)
        if b is None or self.chance(0.3):
            b = self.add_input(b_shape, a.dtype if self.chance(0.95) else self.new_dtype())
        shape = _matmul_shape(a.shape, b.shape)
        if shape is None or math.prod(shape) > 64:
            return False
        out = self.fresh()
        template = f"{out} = {{a}} @ {{b}}" if self.chance(0.7) else f"{out} = {{a}}.matmul({{b}})"
        if a.dtype != b.dtype:  # both refuse operands of two dtypes
            self.emit(template.format(a=a.name, b=b.name))
            return True
        dtype = a.dtype
        self.emit(template.format(a=a.name, b=b.name), out)
        bound = k * a.bound * b.bound
        # PyTorch computes a matrix times a batch transposed: its result is not contiguous.
        like = [] if len(a.shape) <= 2 < len(b.shape) else [a, b]
        self.define(out, shape, dtype, (-bound, bound),
                    self.grads_of(a, b) and _kind(dtype) == 2, like=like)  # fmt: skip
        if self.grads_of(a, b):
            for operand in (a, b):
                self.no_write.setdefault(operand.root, "matmul_saved_operands")
        return True

    def cast(self) -> bool:
        x = self.pick(lambda v: v.dtype != "bool") or self.add_input()
        target = self.choice(["float", "double", "to64", "to32"])
        dtype = {"float": "float32", "double": "float64", "to64": "float64", "to32": "float32"}
        dtype = dtype[target]
        out = self.fresh()
        spelling = {"float": ".float()", "double": ".double()", "to64": ".to(lib.float64)",
                    "to32": ".to(lib.float32)"}[target]  # fmt: skip
        self.emit(f"{out} = {x.name}{spelling}", out)
        if dtype == x.dtype:  # the tensor itself, in both libraries: no op runs
            var = self.define(out, x.shape, dtype, (x.lo, x.hi), x.grad, x.root, x.writable)
            var.contiguous = x.contiguous
            var.expr, var.born_without_grad = x.expr, x.born_without_grad
            var.distinct = x.distinct
            return True
        self.define(out, x.shape, dtype, (x.lo, x.hi), x.grad and x.is_float, like=[x])
        return True

    # In place.

    def target(self, expand=False) -> tuple[str, tuple, Var] | None:
        """An expression to write into: a value that may be written, maybe through views."""

        def fits(v: Var) -> bool:
            root = self.vars[v.root]
            if root.leaf and root.grad or v.dtype == "bool":
                return False
            if v.root in self.no_write:
                STATS[f"avoided:{self.no_write[v.root]}"] += 1
                return False
            if any(known not in self.allowed for _, known, _ in self.on_write.get(v.root, ())):
                return False
            return v.writable == "yes" or (expand and v.writable == "expanded")

        var = self.pick(fits)
        if var is None:
            return None
        text, shape, contiguous = var.name, var.shape, var.contiguous
        for _ in range(int(self.rng.choice([0, 1, 2], p=[0.4, 0.4, 0.2]))):
            op = self.view_op(shape, expand=False)
            if op is None or op[2] in ("reshape", "view", "flatten") and not contiguous:
                continue  # a view in one library, a copy in the other
            if op[2] == "index_full":
                continue  # PyTorch's x[:] is x itself, not a new view (see old_view)
            template, shape, kind = op
            contiguous = contiguous and kind in ("reshape", "view", "flatten", "unsqueeze",
                                                 "squeeze")  # fmt: skip
            if kind == "view":  # PyTorch may refuse the view: reshape (see view_may_copy)
                template = template.replace(".view(", ".reshape(")
            text = template.format(x=text)
        return text, shape, var

    def written(self, var: Var, interval: tuple, grad: bool, repeats=True) -> None:
        """After a write into ``var``'s memory: every value sharing it may hold the new
        values, and requires grad if the written value does; steps that keep this memory as
        indices use a clone in PyTorch (saved_indices_are_copies)."""
        for v in self.vars.values():
            if v.root == var.root:
                v.lo, v.hi = min(v.lo, interval[0]), max(v.hi, interval[1])
                if grad and v.is_float and not v.grad:
                    v.grad, v.leaf = True, False  # an input brought into the graph: no leaf
                v.distinct = v.distinct and not repeats
        for step, known, change in self.on_write.pop(var.root, []):
            step = self.steps[step]
            step.torch_code = change(step.torch_code or step.code)
            step.known = known
            STATS[f"generated:{known}"] += 1

    def no_overlap(self, var: Var, operand, code: str, operand_text: str):
        """``code`` as PyTorch runs it and the known difference, when ``operand`` shares
        memory with ``var`` (PyTorch may refuse; chainrule copies first); None if that is
        not allowed here."""
        if not isinstance(operand, Var) or operand.root != var.root:
            return code, None
        if "overlapping_write_source" not in self.allowed:
            return None
        head, _, tail = code.rpartition(operand_text)
        return head + operand_text + ".clone()" + tail, "overlapping_write_source"

    def operand_into(self, shape: tuple, dtype: str, need=None) -> Var | Scalar | None:
        """A value or Python number that broadcasts to ``shape`` and may be written into a
        tensor of ``dtype``."""
        integer = dtype == "int64"
        if self.chance(0.3):
            return self.scalar(integer=integer, positive=need == "positive")

        def fits(v: Var) -> bool:
            if need == "positive" and v.lo < POSITIVE:
                return False
            if integer and v.dtype not in ("int64", "bool"):
                return False
            return v.dtype != "bool" and _broadcast(shape, v.shape) == tuple(shape)

        found = self.pick(fits)
        if found is not None and self.chance(0.6):
            return found
        new_shape = list(shape)
        if new_shape and self.chance(0.4):
            new_shape = new_shape[int(self.rng.integers(len(new_shape) + 1)) :]
        if new_shape and self.chance(0.3):
            new_shape = [1 if self.chance(0.5) else n for n in new_shape]
        new_dtype = "int64" if integer else self.new_dtype(float_only=True)
        lo, hi = (0.5, 2.0) if need == "positive" else (-2.0, 2.0)
        return self.add_input(new_shape, new_dtype, lo=lo, hi=hi)

    def in_place(self) -> bool:
        found = self.target()
        if found is None:
            return False
        text, shape, var = found
        op = self.choice(["add_", "sub_", "mul_", "div_", "add_alpha", "fill_", "zero_", "copy_",
                          "iadd", "imul"])  # fmt: skip
        need = "positive" if op == "div_" else None
        if op == "div_" and var.dtype == "int64":
            return False
        operand = None
        if op not in ("zero_",):
            operand = self.operand_into(shape, var.dtype, need)
            if operand is None:
                return False
            if op == "fill_" and not isinstance(operand, Scalar):
                operand = self.scalar(integer=var.dtype == "int64")
        o = (0.0, 0.0) if operand is None else (operand.lo, operand.hi)
        old = (var.lo, var.hi)
        new = {
            "add_": (old[0] + o[0], old[1] + o[1]),
            "iadd": (old[0] + o[0], old[1] + o[1]),
            "add_alpha": (old[0] + 2 * min(o), old[1] + 2 * max(o)),
            "sub_": (old[0] - o[1], old[1] - o[0]),
            "mul_": _product(old, o),
            "imul": _product(old, o),
            "div_": _product(old, (1 / o[1], 1 / o[0])) if o[0] > 0 else (0, 0),
            "fill_": o,
            "zero_": (0.0, 0.0),
            "copy_": o,
        }[op]
        if max(abs(new[0]), abs(new[1])) > LIMIT:
            return False
        t = _text(operand) if operand is not None else ""
        written = text
        if op in ("iadd", "imul"):
            if not (text.isidentifier() or text.endswith("]")):
                return False  # `v.T += 1` would assign to v.T
            code = f"{text} {'+' if op == 'iadd' else '*'}= {t}"
            if text.endswith("]"):  # Python ends with a setitem on what is left of [...]
                written = text[: text.rindex("[")]
        elif op == "add_alpha":
            code = f"{text}.add_({t}, alpha=2)"
        elif op == "zero_":
            code = f"{text}.zero_()"
        else:
            code = f"{text}.{op}({t})"
        overlap = self.no_overlap(var, operand, code, t)
        if overlap is None or overlap[1] and op in ("mul_", "div_", "imul"):
            return False  # these save the operand, which the write changes: both refuse
        torch_code, known = overlap
        if written == var.name:  # the op runs on the value itself, not on a new view of it
            old = self.old_view(var, torch_code if known else code, operand)
            if old is None:
                return False
            if old[1]:
                if known:
                    return False
                torch_code, known = old
        self.emit(code, None, torch_code if known else None, known)
        repeats = op in ("fill_", "zero_", "copy_") or isinstance(operand, Var) and not (
            operand.distinct and operand.shape == shape)  # fmt: skip
        self.written(var, new, self.grads_of(operand), repeats)
        return True

    def old_view(self, var: Var, code: str, operand):
        """When ``code`` writes into the view ``var`` itself: (PyTorch's spelling, the known
        difference) if PyTorch would refuse (a view taken before its root required grad,
        written once the root does), (code, None) if not, None if that may not be used."""
        root = self.vars[var.root]
        if var.name == var.root or not var.born_without_grad:
            return code, None
        if not root.grad:
            if self.grads_of(operand):  # PyTorch gives the view its own history here
                var.born_without_grad = False
            return code, None
        if "old_views_stay_writable" not in self.allowed:
            return None
        return re.sub(rf"^{var.name}\b", var.expr, code), "old_views_stay_writable"

    def set_item(self) -> bool:
        found = self.target()
        if found is None:
            return False
        text, shape, var = found
        if not shape:
            return False
        r = self.rng.random()
        if r < 0.6:
            index, region, full = self.basic_index(shape)
            if full:
                return False  # PyTorch then writes into the tensor itself, not a view of it
        elif r < 0.8:
            n = shape[0]
            picks = sorted({int(i) for i in self.rng.integers(0, n, size=2)})
            index, region = str(picks), (len(picks), *shape[1:])
        else:
            index, region = f"{var.name} > {_threshold(var)}", None
            if text != var.name:
                return False
        if region is None:
            operand = self.scalar(integer=var.dtype == "int64")
        else:
            operand = self.operand_into(region, var.dtype)
        if operand is None:
            return False
        code = f"{text}[{index}] = {_text(operand)}"
        overlap = self.no_overlap(var, operand, code, _text(operand))
        if overlap is None:
            return False
        torch_code, known = overlap
        advanced = r >= 0.6
        if advanced and isinstance(operand, Var) and operand.dtype != var.dtype:
            if known or "index_put_needs_same_dtype" not in self.allowed:
                return False
            known = "index_put_needs_same_dtype"
            torch_code = f"{text}[{index}] = {self.cast_text(operand, var.dtype)}"
        if advanced and text == var.name:  # index_put_ writes into the value itself
            old = self.old_view(var, torch_code if known else code, operand)
            if old is None or old[1] and known:
                return False
            if old[1]:
                torch_code, known = old
        self.emit(code, None, torch_code if known else None, known)
        self.written(var, (operand.lo, operand.hi), self.grads_of(operand))
        return True

    def expand_write(self) -> bool:
        """A write through an expanded view (chainrule refuses; see expand_read_only)."""
        if "expand_read_only" not in self.allowed:
            return False
        var = self.pick(lambda v: v.writable == "expanded")
        if var is None:  # rare in random programs: take one outright
            x = self.add_input(self.new_shape(max_dims=2), grad=False)
            out = self.fresh()
            self.emit(f"{out} = {x.name}.expand(2, {', '.join(map(str, x.shape))})", out)
            var = self.define(out, (2, *x.shape), x.dtype, (x.lo, x.hi), False, x.name,
                              "expanded")  # fmt: skip
        root = self.vars[var.root]
        if root.leaf and root.grad:
            return False
        code = f"{var.name}.mul_(2)"
        self.emit(code, None, "refuse('expand_read_only')", "expand_read_only")
        return True

    def old_view_write(self) -> bool:
        """A view taken before its base required grad, written once the base does (PyTorch
        refuses; see old_views_stay_writable). Rare in random programs, so drawn outright."""
        if "old_views_stay_writable" not in self.allowed:
            return False
        dtype = self.new_dtype(float_only=True)
        base = self.add_input(self.new_shape(min_dims=1), dtype, grad=False)
        view = self.fresh()
        self.emit(f"{view} = {base.name}[:1]", view)
        var = self.define(view, (1, *base.shape[1:]), dtype, (base.lo, base.hi), False, base.name)
        var.expr, var.born_without_grad = f"{base.name}[:1]", True
        term = self.add_input(base.shape, dtype, grad=True)
        self.emit(f"{base.name}.add_({term.name})")
        self.written(base, (base.lo + term.lo, base.hi + term.hi), True)
        torch_code, known = self.old_view(var, f"{view}.mul_(2)", Scalar(2))
        self.emit(f"{view}.mul_(2)", None, torch_code, known)
        self.written(var, (2 * var.lo, 2 * var.hi), False)
        return True

    # Steps meant to fail in both libraries.

    # Random draws: both libraries are seeded alike before a program (`_run_steps`), and
    # chainrule draws PyTorch's stream, so the numbers (and dropout's masks) are the same.

    def draw(self) -> bool:
        # A contiguous input, or a transposed view of one: a view's strides are the same in
        # both libraries, and the *_like draws and dropout fill a view in its memory order
        # (an op's result is taken as row-major, as PyTorch's results are).
        x = self.pick(lambda v: v.is_float and v.name.startswith("x") and v.contiguous)
        if x is None:
            return False
        kind = self.choice(["dropout", "rand_like", "randn_like", "bernoulli", "randn"])
        p, lo, hi, out = self.choice([0.2, 0.5]), x.lo, x.hi, self.fresh()
        shape, dtype = tuple(x.shape), f"lib.{x.dtype}"
        name = f"{x.name}.mT" if len(shape) >= 2 and self.chance(0.5) else x.name
        if name != x.name:
            shape = shape[:-2] + shape[::-1][:2]
        code, interval = {
            "dropout": (f"F.dropout({name}, {p})", (min(lo / (1 - p), 0), max(hi / (1 - p), 0))),
            "rand_like": (f"{name} * lib.rand_like({name})", (min(lo, 0), max(hi, 0))),
            "randn_like": (f"{name} + lib.randn_like({name})", (lo - 7, hi + 7)),
            "bernoulli": (f"{name} * lib.bernoulli(lib.full({shape}, {p}, dtype={dtype}))",
                          (min(lo, 0), max(hi, 0))),
            "randn": (f"{name} - lib.randn({shape}, dtype={dtype})", (lo - 7, hi + 7)),
        }[kind]  # fmt: skip
        self.emit(f"{out} = {code}", out)
        self.define(out, shape, x.dtype, interval, x.grad, like=[x])
        return True

    def failing(self) -> bool:
        kind = self.choice(["broadcast", "matmul", "dim", "reshape", "index", "leaf", "leaf_view",
                            "grow", "int_write", "permute", "negative_step", "cat", "setitem",
                            "unsqueeze", "softmax_dim", "expand"])  # fmt: skip
        x = self.pick(lambda v: len(v.shape) >= 1 and v.dtype != "bool")
        if x is None:
            x = self.add_input(self.new_shape(min_dims=1))
        ndim = len(x.shape)
        out = self.fresh()
        if kind == "broadcast":
            bad = tuple(n + 1 for n in x.shape)
            y = self.add_input(bad, x.dtype)
            code = f"{out} = {x.name} + {y.name}"
        elif kind == "matmul":
            y = self.add_input((x.shape[-1] + 1, 2), x.dtype)
            code = f"{out} = {x.name} @ {y.name}"
        elif kind == "dim":
            code = f"{out} = {x.name}.sum({ndim + int(self.rng.integers(0, 2))})"
        elif kind == "reshape":
            code = f"{out} = {x.name}.reshape({x.size + 1})"
        elif kind == "index":
            code = f"{out} = {x.name}[{x.shape[0] + int(self.rng.integers(0, 2))}]"
        elif kind in ("leaf", "leaf_view"):
            leaf = self.pick(lambda v: v.leaf and v.grad)
            if leaf is None:
                leaf = self.add_input(self.new_shape(min_dims=1), "float64", grad=True)
            target = leaf.name if kind == "leaf" or not leaf.shape else f"{leaf.name}[:1]"
            code = f"{target}.mul_(2)"
        elif kind == "grow":
            y = self.add_input((2, *x.shape), "float64" if x.is_float else "int64")
            found = self.target()
            if found is None:
                return False
            code = (
                f"{found[0]}.add_({y.name})"
                if found[1] == x.shape
                else (f"{found[0]}.add_(lib.zeros({(3, *found[1])}, dtype=lib.{found[2].dtype}))")
            )
        elif kind == "int_write":
            found = self.target()
            if found is None or found[2].dtype != "int64":
                return False
            code = f"{found[0]}.mul_(1.5)"
        elif kind == "permute":
            code = f"{out} = {x.name}.permute({', '.join(map(str, range(ndim + 1)))})"
        elif kind == "negative_step":
            code = f"{out} = {x.name}[::-1]"
        elif kind == "cat":
            bad = list(x.shape)
            bad[-1] += 1
            if ndim < 2:
                bad = [*bad, 2]
            y = self.add_input(bad, x.dtype)
            code = f"{out} = lib.cat([{x.name}, {y.name}], 0)"
            if ndim >= 2:
                code = f"{out} = lib.cat([{x.name}, {y.name}], {ndim - 2})"
        elif kind == "setitem":
            found = self.target()
            if found is None or not found[1]:
                return False
            y = self.add_input((found[1][-1] + 1,), "float64" if found[2].is_float else "int64")
            code = (
                f"{found[0]}[0] = {y.name}" if len(found[1]) > 1 else (f"{found[0]}[:] = {y.name}")
            )
        elif kind == "unsqueeze":
            code = f"{out} = {x.name}.unsqueeze({ndim + 2})"
        elif kind == "softmax_dim":
            code = f"{out} = {x.name}.softmax({ndim})"
        else:
            code = f"{out} = {x.name}.expand({', '.join(str(n + 1) for n in x.shape)})"
        if x.dtype == "int64" and kind == "softmax_dim":
            return False
        self.emit(code)
        return True

    STEPS = {
        "unary": 18, "binary": 14, "compare": 3, "where": 4, "reduce": 9, "reduce_all": 3,
        "normalise": 5, "extreme": 4, "view": 14, "chunks": 2, "copy_shape": 6, "matmul": 6,
        "cast": 3, "in_place": 14, "set_item": 7, "expand_write": 1, "take": 3,
        "old_view_write": 1,
    }  # fmt: skip

    def build(self, n_steps: int, failing: bool) -> None:
        self.add_input()
        if self.chance(0.5):
            self.add_input()
        kinds = list(self.STEPS)
        weights = np.array([self.STEPS[k] for k in kinds], dtype=float)
        weights /= weights.sum()
        done = 0
        tries = 0
        while done < n_steps and tries < 10 * n_steps:
            tries += 1
            kind = kinds[int(self.rng.choice(len(kinds), p=weights))]
            before = self.n_values
            if getattr(self, kind)():
                done += 1
            else:
                self.n_values = before
                for name in [n for n in self.vars if n.startswith("v")]:
                    if int(name[1:]) >= before:
                        del self.vars[name]
        if failing:
            for _ in range(20):
                if self.failing():
                    break


def _selects_all(index: list, shape: tuple) -> bool:
    """Whether a basic index is full slices alone (``...`` leading, if any)."""
    if any(item is None or isinstance(item, int) for item in index):
        return False
    slices = [item for item in index if item is not Ellipsis]
    sizes = shape[len(shape) - len(slices) :] if Ellipsis in index else shape[: len(slices)]
    return all(item.indices(n) == (0, n, 1) for item, n in zip(slices, sizes))


def _appending(text: str):
    """A change to a step: ``text`` appended."""
    return lambda code: code + text


def _clone_result(code: str) -> str:
    """A change to a step: a clone of what it assigns."""
    target, _, expr = code.partition(" = ")
    return f"{target} = ({expr}).clone()"


def _cloning(name: str):
    """A change to a step: ``name`` replaced by ``name.clone()`` after the ``=``."""

    def change(code: str) -> str:
        target, _, expr = code.partition(" = ")
        return f"{target} = " + re.sub(rf"\b{name}\b(?!\.clone)", f"{name}.clone()", expr)

    return change


def _broadcast(a: tuple, b: tuple) -> tuple | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _fits(a: tuple, b: tuple) -> bool:
    shape = _broadcast(a, b)
    return shape is not None and math.prod(shape) <= 64


def _normalise(dim, ndim: int) -> tuple:
    if ndim == 0:
        return ()
    if dim is None:
        return tuple(range(ndim))
    dims = dim if isinstance(dim, tuple) else (dim,)
    return tuple(sorted(d % ndim for d in dims))


def _reduced_shape(shape: tuple, dims: tuple, keepdim: bool) -> tuple:
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def _tiled(shape: tuple, reps: tuple) -> tuple:
    shape = (1,) * (len(reps) - len(shape)) + tuple(shape)
    return tuple(n * r for n, r in zip(shape, reps))


def _matmul_shape(a: tuple, b: tuple) -> tuple | None:
    try:
        return np.matmul(np.empty(a), np.empty(b)).shape
    except ValueError:
        return None


def build_program(seed: int, index: int, torch=None) -> Program:
    """The program number ``index`` of the batch drawn from ``seed`` (deterministic)."""
    if torch is None:
        import torch
    rng = np.random.default_rng([seed, index])
    allowed = frozenset(KNOWN_DIFFERENCES) if rng.random() < 0.25 else frozenset()
    failing = bool(rng.random() < 0.08)
    builder = Builder(rng, torch, allowed)
    builder.build(int(rng.integers(2, 7)), failing)
    # One program in eight ends in a random draw, decided by a generator of its own so the
    # programs without one stay what they were.
    extra = np.random.default_rng([seed, index, 2])
    if not failing and extra.random() < 0.125:
        builder.rng = extra
        builder.draw()
    names = [spec.name for spec in builder.inputs] + [n for n in builder.vars if n.startswith("v")]
    float32 = any(v.dtype == "float32" for v in builder.vars.values())
    return Program(seed, index, builder.inputs, builder.steps, names, float32, allowed, failing)


# Running a program.


class Refused(RuntimeError):
    """PyTorch's stand-in for a refusal chainrule documents (KNOWN_DIFFERENCES)."""


def _refuse(name: str):
    raise Refused(f"chainrule refuses this step: {KNOWN_DIFFERENCES[name]}")


@lru_cache(maxsize=100_000)
def _compiled(code: str):
    return compile(code, "<program>", "exec")


@dataclass
class Run:
    """What one library did with a program."""

    env: dict
    raised: tuple | None = None  # (step number or "backward", exception class, message)
    known_failures: list = field(default_factory=list)


def _dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


def _run_steps(program: Program, lib, functional, is_torch: bool) -> Run:
    env = {"lib": lib, "F": functional, "refuse": _refuse}
    lib.manual_seed(program.seed * 1000 + program.index)  # the same draws in both (`draw`)
    for spec in program.inputs:
        env[spec.name] = spec.make(lib)
    run = Run(env)
    for i, step in enumerate(program.steps):
        try:
            if is_torch and step.known:
                if not _check_known(step, env, run):
                    exec(_compiled(step.torch_code), env)
                continue
            exec(_compiled(step.code), env)
        except Exception as exc:  # noqa: BLE001 - every exception is an outcome to compare
            run.raised = (i, type(exc), str(exc).split("\n")[0][:200])
            return run
    return run


def _check_known(step: Step, env: dict, run: Run) -> bool:
    """Run PyTorch's own spelling of a known-difference step and check that it still shows
    the documented difference (an entry that stops being true must go). True when that run
    stands (PyTorch agreed), False when PyTorch must run the step's equivalent instead."""
    shows, phrase = _KNOWN_SHOWS[step.known]
    if shows == "equivalent" or shows == "dtype" and step.out is None:
        # a comparison: made in another dtype, its result is bool in both
        STATS[f"checked:{step.known}"] += 1
        return False
    try:
        exec(_compiled(step.code), env)
        outcome = None
    except Exception as exc:  # noqa: BLE001 - the outcome is what is checked
        outcome = exc
    if shows == "may_raise" and outcome is None:
        return True
    STATS[f"checked:{step.known}"] += 1
    if outcome is not None and phrase not in str(outcome):
        run.known_failures.append(f"{step.known}: PyTorch raised {outcome!r}")
    elif shows == "raises" and outcome is None:
        run.known_failures.append(
            f"{step.known}: PyTorch no longer raises on {step.code!r}; remove the entry"
        )
    elif shows == "dtype":
        if outcome is not None:
            run.known_failures.append(f"{step.known}: PyTorch raised {outcome!r}")
        else:
            theirs = _dtype_name(env[step.out])
            exec(_compiled(step.torch_code), env)
            if _dtype_name(env[step.out]) == theirs:
                run.known_failures.append(
                    f"{step.known}: PyTorch gives {theirs} as chainrule does; remove the entry"
                )
            return True
    return False


def _values(env: dict, names: list) -> dict:
    return {name: env[name] for name in names if name in env}


def _as_array(t) -> np.ndarray:
    return t.detach().numpy()


def _close(ours: np.ndarray, theirs: np.ndarray, rtol: float) -> bool:
    if ours.shape != theirs.shape:
        return False
    if ours.dtype.kind in "biu" or theirs.dtype.kind in "biu":
        return bool(np.array_equal(ours, theirs))
    ours, theirs = ours.astype(np.float64), theirs.astype(np.float64)
    if not np.array_equal(np.isnan(ours), np.isnan(theirs)):
        return False
    finite = np.isfinite(theirs)
    if not np.array_equal(ours[~finite & ~np.isnan(theirs)], theirs[~finite & ~np.isnan(theirs)]):
        return False
    if not finite.any():
        return True
    scale = max(1.0, float(np.max(np.abs(theirs[finite]))))
    return bool(np.all(np.abs(ours[finite] - theirs[finite]) <= rtol * scale))


def _show(t) -> str:
    if t is None:
        return "None"
    if not hasattr(t, "shape"):
        return repr(t)
    a = _as_array(t)
    body = np.array2string(a, separator=", ", precision=17, threshold=10**6)
    flag = ", requires_grad" if getattr(t, "requires_grad", False) else ""
    return f"{body} ({a.dtype}{flag})"


def _report(program: Program, what: str, ours: Run, theirs: Run, grads=None) -> str:
    lines = [f"chainrule and PyTorch differ: {what}", program.describe(), ""]
    for label, run in (("chainrule", ours), ("PyTorch", theirs)):
        if run.raised:
            i, cls, message = run.raised
            lines.append(f"{label} raised {cls.__name__} at step {i}: {message}")
        else:
            lines.append(f"{label} ran every step")
    for label, run in (("chainrule", ours), ("PyTorch", theirs)):
        lines.append(f"{label} values:")
        for name, t in _values(run.env, program.names).items():
            lines.append(f"  {name} = {_show(t)}")
    if grads is not None:
        for label, g in zip(("chainrule", "PyTorch"), grads):
            lines.append(f"{label} gradients:")
            for name, t in g.items():
                lines.append(f"  {name}.grad = {_show(t)}")
    return "\n".join(lines)


def _not_an_instance(ours: type, theirs: type) -> str:
    return (
        f"chainrule raised {ours.__name__}, which is no {theirs.__name__} (PyTorch's class): "
        f"a user's `except {theirs.__name__}` misses it"
    )


def run_program(program: Program, torch) -> str | None:
    """Run ``program`` on both libraries; a report of the first difference, or None."""
    ours = _run_steps(program, chainrule, chainrule_functional, False)
    theirs = _run_steps(program, torch, torch.nn.functional, True)
    if theirs.known_failures:
        return _report(program, "; ".join(theirs.known_failures), ours, theirs)
    if ours.raised or theirs.raised:
        STATS["raised"] += 1
        if (ours.raised is None) != (theirs.raised is None):
            return _report(program, "one library raises, the other does not", ours, theirs)
        STATS[f"exceptions:{theirs.raised[1].__name__} / {ours.raised[1].__name__}"] += 1
        if ours.raised[0] != theirs.raised[0]:
            return _report(program, "they raise at different steps", ours, theirs)
        i = ours.raised[0]
        if program.steps[i].known == "expand_read_only":
            if ours.raised[1] is not chainrule.GraphError:
                return _report(program, "expand_read_only: chainrule should refuse", ours, theirs)
        elif not issubclass(ours.raised[1], theirs.raised[1]):
            return _report(program, _not_an_instance(ours.raised[1], theirs.raised[1]), ours,
                           theirs)  # fmt: skip
        return None
    rtol = RTOL_FLOAT32 if program.float32 else RTOL_FLOAT64
    ours_values = _values(ours.env, program.names)
    theirs_values = _values(theirs.env, program.names)
    for name in program.names:
        a, b = ours_values[name], theirs_values[name]
        if tuple(a.shape) != tuple(b.shape):
            return _report(program, f"{name}: shape {a.shape} vs {tuple(b.shape)}", ours, theirs)
        if a.dtype.name != _dtype_name(b):
            return _report(program, f"{name}: dtype {a.dtype} vs {b.dtype}", ours, theirs)
        if a.requires_grad != b.requires_grad:
            return _report(program, f"{name}: requires_grad {a.requires_grad} vs "
                           f"{b.requires_grad}", ours, theirs)  # fmt: skip
        if not _close(_as_array(a), _as_array(b), rtol):
            return _report(program, f"{name}: values", ours, theirs)
    # One backward pass from every value that requires grad, with random cotangents.
    outputs = [name for name in program.names if theirs_values[name].requires_grad]
    if not outputs:
        STATS["no_backward"] += 1
        return None
    rng = np.random.default_rng([program.seed, program.index, 1])
    cotangents = [
        rng.standard_normal(ours_values[n].shape).astype(ours_values[n].dtype) for n in outputs
    ]
    errors = []
    for lib, values in ((chainrule, ours_values), (torch, theirs_values)):
        try:
            lib.autograd.backward(
                [values[n] for n in outputs], [lib.from_numpy(c.copy()) for c in cotangents]
            )
            errors.append(None)
        except Exception as exc:  # noqa: BLE001
            errors.append((type(exc), str(exc).split("\n")[0][:200]))
    grads = [
        {spec.name: run.env[spec.name].grad for spec in program.inputs if spec.requires_grad}
        for run in (ours, theirs)
    ]
    if errors[0] or errors[1]:
        STATS["raised_in_backward"] += 1
        ours.raised = errors[0] and ("backward", *errors[0])
        theirs.raised = errors[1] and ("backward", *errors[1])
        if (errors[0] is None) != (errors[1] is None):
            return _report(program, "backward: one library raises", ours, theirs, grads)
        STATS[f"exceptions:{errors[1][0].__name__} / {errors[0][0].__name__} (backward)"] += 1
        if not issubclass(errors[0][0], errors[1][0]):
            return _report(program, "backward: " + _not_an_instance(errors[0][0], errors[1][0]),
                           ours, theirs, grads)  # fmt: skip
        return None
    STATS["gradients_compared"] += 1
    for spec in program.inputs:
        if not spec.requires_grad:
            continue
        a, b = grads[0][spec.name], grads[1][spec.name]
        if (a is None) != (b is None):
            return _report(program, f"{spec.name}.grad: {a is None=} vs {b is None=}", ours,
                           theirs, grads)  # fmt: skip
        if a is None:
            continue
        if a.dtype.name != _dtype_name(b) or not _close(_as_array(a), _as_array(b), rtol):
            return _report(program, f"{spec.name}.grad", ours, theirs, grads)
    return None


def run_batch(seed: int, count: int, torch) -> int:
    """Run programs 0..count-1 of ``seed``; fail on the first difference. Returns count."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for index in range(count):
            program = build_program(seed, index, torch)
            STATS["programs"] += 1
            STATS["steps"] += len(program.steps)
            report = run_program(program, torch)
            if report is not None:
                pytest.fail(report, pytrace=False)
    return count


def _run_many(n_programs: int, torch) -> int:
    ran = []

    @settings(
        max_examples=n_programs // PER_EXAMPLE,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=not THOROUGH,
        database=None,
    )
    @given(seed=st.integers(0, 2**32 - 1))
    def programs(seed):
        ran.append(run_batch(seed, PER_EXAMPLE, torch))

    programs()
    return sum(ran)


def _check_stats(before: Counter, n: int) -> None:
    stats = STATS - before
    assert stats["programs"] == n
    # The programs must mostly run to a backward pass that compares gradients, and every
    # known difference must have been exercised and checked.
    assert stats["gradients_compared"] >= 0.5 * n, stats
    assert stats["raised"] >= 0.03 * n, stats
    for name in KNOWN_DIFFERENCES:
        seen = "avoided" if _KNOWN_SHOWS[name][0] == "avoided" else "checked"
        assert stats[f"{seen}:{name}"] > 0, f"{name} was never {seen}: {stats}"


def test_programs_match_pytorch(torch):
    before = STATS.copy()
    ran = _run_many(N_PROGRAMS, torch)
    assert ran == N_PROGRAMS
    _check_stats(before, N_PROGRAMS)


#: For each known difference that shows only in backward ("equivalent" in `_KNOWN_SHOWS`): a
#: program PyTorch refuses as written, and PyTorch's spelling of what chainrule computes
#: instead (a clone where chainrule keeps a copy, a view taken again). chainrule running the
#: first must give PyTorch's ``out`` from the second.
_SHOWN_IN_BACKWARD = {
    "overlapping_write_source": (
        "x = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True); y = x * 1; y.add_(y[0]); "
        "y.sum().backward(); out = (y, x.grad)",
        ("y.add_(y[0])", "y.add_(y[0].clone())"),
    ),
    "saved_indices_are_copies": (
        "x = lib.tensor([1., 2., 3.], requires_grad=True); i = lib.tensor([0, 2]); y = x[i]; "
        "i.add_(1); (y * lib.tensor([1., 10.])).sum().backward(); out = (y, x.grad)",
        ("x[i]", "x[i.clone()]"),
    ),
    "split_outputs_are_plain_views": (
        "x = lib.tensor([1., 2., 3., 4.], requires_grad=True); a, b = (x * 1).split(2); "
        "a.mul_(3); (a.sum() + 2 * b.sum()).backward(); out = (a, b, x.grad)",
        ("a, b = (x * 1).split(2)", "h = x * 1; a, b = h[:2], h[2:]"),
    ),
    "saves_fewer_tensors": (
        "x = lib.tensor([1., 2., 3.], requires_grad=True); p = (x * 1).prod(0); p.add_(1); "
        "p.backward(); out = (p, x.grad)",
        ("(x * 1).prod(0)", "(x * 1).prod(0).clone()"),
    ),
    "old_views_stay_writable": (
        "w = lib.tensor([1., 2.], requires_grad=True); base = lib.zeros(2); v = base[:1]; "
        "base.add_(w); v.mul_(2); (base * lib.tensor([1., 10.])).sum().backward(); "
        "out = (base, w.grad)",
        ("v.mul_(2)", "base[:1].mul_(2)"),
    ),
}


def test_known_differences_show(torch):
    """Each difference that shows in backward still shows: PyTorch refuses the program, and
    chainrule's result is PyTorch's for the documented equivalent."""
    equivalent = {name for name, (shows, _) in _KNOWN_SHOWS.items() if shows == "equivalent"}
    assert set(_SHOWN_IN_BACKWARD) == equivalent
    for name, (code, (old, new)) in _SHOWN_IN_BACKWARD.items():
        with pytest.raises(RuntimeError):
            exec(code, {"lib": torch})
        ours, theirs = {"lib": chainrule}, {"lib": torch}
        exec(code, ours)
        exec(code.replace(old, new), theirs)
        for a, b in zip(ours["out"], theirs["out"], strict=True):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), err_msg=name)


def test_known_differences_are_documented():
    assert set(_KNOWN_SHOWS) == set(KNOWN_DIFFERENCES)
    page = pathlib.Path(__file__).parent.parent / "docs" / "guides" / "differences.md"
    text = page.read_text()
    for name in KNOWN_DIFFERENCES:
        assert f"`{name}`" in text, f"docs/guides/differences.md does not explain {name}"


def test_no_bugs_left_unfixed():
    assert BUGS_FOUND == {}
