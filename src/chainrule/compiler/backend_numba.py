"""Numba kernels for fused groups (`chainrule.compiler.fusion`): a group's equations become one
generalized ufunc (``numba.guvectorize``). Where it reduces rows or its arrays are large
(`row_core`), its core is the last axis: a few loops over a row, one element of each input at a
time, while NumPy loops over the other axes; else its core is one element. Broadcasting,
strides and ``out=`` are NumPy's own. An input that does not span the last axis (0-d, or 1
there) is taken as one element per row. Numba is imported when the first kernel is built.

Each kernel's source is written to a file named by its hash under `cache_dir` and imported from
there with ``cache=True``, so Numba keeps the machine code beside it, the gufunc's loop wrapper
included (a ``vectorize`` ufunc's wrapper is not cached: it would be compiled again in every
process): a second process loads a kernel in a few milliseconds instead of compiling it.
Identical groups (same source: same ops, literals, dtypes and core layout) share one kernel in
a process.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import inspect
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .program import Equation, Var

#: The dtypes a kernel takes and makes, by the name Numba's signatures give them.
NUMBA_TYPES = {"bool": "boolean", "int8": "int8", "int16": "int16", "int32": "int32",
               "int64": "int64", "uint8": "uint8", "float32": "float32",
               "float64": "float64"}  # fmt: skip

#: Kernels made in this process: ``built`` sources imported, ``compiled`` of them compiled by
#: Numba (the others came from its disk cache).
COUNTS = {"built": 0, "compiled": 0}

_KERNELS: dict[str, Any] = {}  # source hash -> kernel, for this process


def available() -> bool:
    """Whether Numba can be imported (it is imported, once, to tell)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def cache_dir() -> Path:
    """Where kernel sources and Numba's cache of them live: ``$CHAINRULE_CACHE``, else
    ``~/.cache/chainrule/kernels``."""
    folder = os.environ.get("CHAINRULE_CACHE")
    return Path(folder) if folder else Path.home() / ".cache" / "chainrule" / "kernels"


def _weak(value: Any) -> Any:
    """What NumPy's type resolution takes for an argument: a Var's dtype, a Python number's
    type (a "weak" scalar that takes the array's dtype), else None (not a kernel argument)."""
    if isinstance(value, Var):
        if (
            type(value.source) is str and value.source == "number"
        ):  # a Python number at each call (an optimizer's lr)
            return float
        return value.dtype if value.dtype.name in NUMBA_TYPES and value.shape != () else None
    if type(value) in (bool, int, float):
        return type(value) if type(value) is not bool else np.dtype(bool)
    return None


def _ufunc_dtypes(eq: Equation) -> tuple | None:
    """The dtypes NumPy's loop for a ufunc row's equation takes, or None if it has no loop
    that gives the recorded dtype."""
    ufunc = eq.fn.forward
    weak = [_weak(a) for a in eq.ins]
    if eq.params or any(w is None for w in weak) or getattr(np, ufunc.__name__, None) is not ufunc:
        return None
    if ufunc.nout != 1 or ufunc.nin != len(weak):
        return None
    try:
        dtypes = ufunc.resolve_dtypes((*weak, None))
    except (TypeError, ValueError):
        return None
    return dtypes if dtypes[-1] == eq.outs[0].dtype else None


def supports(eq: Equation) -> bool:
    """Whether a kernel can compute ``eq`` (an elementwise "op" equation): a ufunc row with
    a NumPy loop for its dtypes, or a row with a ``scalar`` whose arguments are arrays,
    numbers, strings or None."""
    out = eq.outs[0]
    if out.dtype.name not in NUMBA_TYPES:
        return False
    if isinstance(eq.fn.forward, np.ufunc):
        return _ufunc_dtypes(eq) is not None
    if eq.fn.scalar is None:
        return False
    for value in (*eq.ins, *eq.params.values()):
        if isinstance(value, Var):
            if _weak(value) is None:
                return False
        elif not (value is None or type(value) in (bool, int, float, str)):
            return False
    return True


def _literal(value: Any, dtype: np.dtype | None = None) -> str:
    """Source for a literal argument, as a ``dtype`` scalar when one is given."""
    if type(value) is float and not math.isfinite(value):
        text = "math.nan" if value != value else ("math.inf" if value > 0 else "-math.inf")
    else:
        text = repr(value)
    return f"np.{_np_name(dtype)}({text})" if dtype is not None else text


def _np_name(dtype: np.dtype) -> str:
    return "bool_" if dtype == np.bool_ else dtype.name


#: The fewest elements for which a kernel of one shape only (no row's value) loops over rows
#: rather than takes one element at a time. A kernel over rows runs its loop over contiguous
#: elements (0.12 ns an element on W9's float32 arrays against 0.35) but NumPy's gufunc
#: machinery costs about 0.3 µs more per operand and call (24 µs against 7 for a kernel of 3
#: inputs and 21 outputs of 4 elements).
ROWS_FROM = 4096


#: The reductions over the last axis a kernel computes row by row (see
#: `chainrule.compiler.fusion.reduces_rows`).
ROW_OPS = ("sum", "layer_norm", "softmax", "log_softmax")


def row_core(members: list[Equation], shape: tuple) -> bool:
    """Whether a kernel of ``members`` (widest shape ``shape``) loops over rows: where it
    reduces rows, reads a row's value, or is large (`ROWS_FROM`); else its core is one
    element (scalar core dims: inputs broadcast as NumPy's, strides any)."""
    if any(m.name in ROW_OPS or m.outs[0].shape != shape for m in members):
        return True
    return len(shape) > 0 and shape[-1] >= 8 and math.prod(shape) >= ROWS_FROM


def spans(var: Var, shape: tuple) -> bool:
    """Whether a kernel of output ``shape`` reads ``var`` along its last axis (core dimension
    ``(n)``), rather than one element per row (``()``: a 0-d array, or one whose last axis is
    1 where ``shape``'s is not; the replay hands it over as ``var[..., 0]``)."""
    return len(var.shape) > 0 and var.shape[-1] == shape[-1]


def summed(members: list[Equation]) -> list[np.dtype]:
    """The dtypes of the rows ``members`` sum (a kernel's scratch rows), in a fixed order."""
    found = {m.ins[0].dtype for m in members if m.name in ROW_OPS}
    return sorted(found, key=lambda dtype: dtype.name)


def block_sum(w: Any, start: int, n: int) -> Any:
    """The sum of ``w[start:start + n]`` (n at most 128) in NumPy's order for a row: eight
    running sums, each of every eighth element, added pairwise, then the rest one by one."""
    if n < 8:
        total = w[start] - w[start]  # a zero of w's dtype
        for i in range(n):
            total += w[start + i]
        return total
    r0, r1, r2, r3 = w[start], w[start + 1], w[start + 2], w[start + 3]
    r4, r5, r6, r7 = w[start + 4], w[start + 5], w[start + 6], w[start + 7]
    i = 8
    while i < n - n % 8:
        r0 += w[start + i]
        r1 += w[start + i + 1]
        r2 += w[start + i + 2]
        r3 += w[start + i + 3]
        r4 += w[start + i + 4]
        r5 += w[start + i + 5]
        r6 += w[start + i + 6]
        r7 += w[start + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += w[start + i]
        i += 1
    return total


@functools.cache
def _source_hash(fn: Any) -> str:
    return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:12]


def _pairwise(row: str, start: int, n: int) -> str:
    """Source for the sum of ``row[start:start + n]`` in NumPy's pairwise order: blocks of
    at most 128 (`block_sum`), halves (a multiple of 8 first) added."""
    if n <= 128:
        return f"_block({row}, {start}, {n})"
    half = n // 2
    half -= half % 8
    return f"({_pairwise(row, start, half)} + {_pairwise(row, start + half, n - half)})"


#: A float32 exp a kernel's loop vectorizes (the C library's ``expf`` is one call per element:
#: 2.3 ns an element against NumPy's 0.46; this one 0.9): computed in float64, x = k ln 2 + r
#: with |r| <= ln 2 / 2, exp(r) by its Taylor series to r**10 (error under 3e-13), times 2**k
#: made from its bits, then rounded once: correctly rounded on 2.1 million float32 inputs
#: checked (NumPy's own float32 exp is within 2 ulp of that).
#: The largest element of a row (a softmax's shift), as a loop the compiler vectorizes: with
#: no nan assumed (``nnan``), the reduction may take any order. A row holding a nan gets some
#: value here, but its softmax is all nan whatever the shift (its sum is nan), as eager's.
ROWMAX = """
@numba.njit(fastmath={"nnan", "nsz"}, inline="never")
def _rowmax(w, n):
    m = w[0]
    for i in range(1, n):
        m = max(m, w[i])
    return m
"""

EXP32 = """
from numba.core import types as _types
from numba.extending import intrinsic as _intrinsic


@_intrinsic
def _f64_of_bits(typingctx, bits):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(_types.float64))

    return _types.float64(_types.int64), codegen


@numba.njit(inline="always")
def _exp32(x):
    d = min(max(np.float64(x), -110.0), 100.0)  # beyond: 0 and inf in float32
    k = np.rint(d * 1.4426950408889634)
    r = d - k * 0.6931471805599453
    p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (
        1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r / 3628800)))))))))
    scale = _f64_of_bits((np.int64(k) + 1023) << 52)
    return np.float32(p * scale) if x == x else x
"""


def erf32_source() -> str:
    """Source of a float32 erf a kernel's loop vectorizes: eager mode's own for float32
    (`chainrule.special.erf`: one rational function of x**2 fitted on |x| <= 4, in float64,
    rounded once), by Horner's rule where eager takes a matrix product (within an ulp or two
    in float64, far below float32's rounding)."""
    from .. import special

    def horner(coefficients: list) -> str:
        text = repr(float(coefficients[-1]))
        for c in reversed(coefficients[:-1]):
            text = f"{float(c)!r} + t * ({text})"
        return text

    return f"""
@numba.njit(inline="always")
def _erf32(x):
    y = min(max(np.float64(x), -4.0), 4.0)  # erf rounds to +-1 in float32 beyond
    t = y * y
    num = {horner(special._SINGLE_P)}
    return np.float32(num / ({horner(special._SINGLE_Q)}) * y) if x == x else x
"""


def _element(eq: Equation, names: dict, helpers: dict) -> str:
    """Source for one element of an elementwise equation's result, its Vars read by name."""
    out = eq.outs[0]
    if isinstance(eq.fn.forward, np.ufunc):
        dtypes = _ufunc_dtypes(eq)
        args = []
        for value, dtype in zip(eq.ins, dtypes):
            if not isinstance(value, Var):
                args.append(_literal(value, dtype))
            elif value.dtype != dtype:
                args.append(f"np.{_np_name(dtype)}({names[value]})")
            else:
                args.append(names[value])
        if eq.fn.forward is np.exp and dtypes[-1] == np.float32:
            helpers["<exp32>"] = "_exp32"  # see EXP32 (not a row name)
            return f"_exp32({args[0]})"
        return f"np.{eq.fn.forward.__name__}({', '.join(args)})"
    if eq.fn.name == "erf" and out.dtype == np.float32 and isinstance(eq.ins[0], Var):
        helpers["<erf32>"] = "_erf32"  # see `erf32_source` (not a row name)
        return f"_erf32({names[eq.ins[0]]})"
    helper = helpers.setdefault(eq.fn.name, f"_s{len(helpers)}")
    # a Python float argument is taken in the result's dtype, as NumPy takes it
    floating = out.dtype if out.dtype.kind == "f" else None
    args = []
    for value in eq.ins:
        if isinstance(value, Var):
            args.append(names[value])
        else:
            args.append(_literal(value, floating if type(value) is float else None))
    for key, value in eq.params.items():
        if isinstance(value, Var):
            args.append(f"{key}={names[value]}")
        else:
            shown = _literal(value, floating if type(value) is float else None)
            args.append(f"{key}={shown}")
    return f"np.{_np_name(out.dtype)}({helper}({', '.join(args)}))"


class _Rows:
    """The body of a kernel being written: statements per row (``lines``), the elements'
    statements (``elements``: Var -> (source, the element Vars it reads)), written into
    each loop over the row that needs them, and the outputs already stored in a loop. With
    ``shape`` None, the core is one element: every value is a row's."""

    def __init__(self, ins: list[Var], outs: list[Var], shape: tuple | None) -> None:
        self.shape, self.outs = shape, outs
        self.names: dict[Var, str] = {}
        self.elements: dict[Var, tuple[str, list[Var]]] = {}
        self.order: list[Var] = []  # element Vars, inputs first, then members in order
        self.stored: dict[Var, str] = {}  # element output -> where a loop stored it
        self.lines: list[str] = []
        for k, v in enumerate(ins):
            if shape is not None and spans(v, shape):
                self.names[v] = f"x{k}"
                self.elements[v] = (f"a{k}[i]", [])
                self.order.append(v)
            else:
                self.names[v] = f"a{k}"  # one value per row

    def element(self, var: Var, name: str, source: str, reads: list[Var]) -> None:
        self.names[var] = name
        self.elements[var] = (source, [v for v in reads if v in self.elements])
        self.order.append(var)

    def loop(self, wanted: list[Var], tail: list[str]) -> None:
        """A loop over the row computing ``wanted`` (element Vars) and then ``tail``; the
        outputs it computes on the way are stored."""
        needed: set[Var] = set()
        todo = list(wanted)
        while todo:
            v = todo.pop()
            if v not in needed:
                needed.add(v)
                if v not in self.stored:
                    todo += self.elements[v][1]
        body = []
        for v in self.order:
            if v not in needed:
                continue
            if v in self.stored:
                body.append(f"{self.names[v]} = {self.stored[v]}")
                continue
            body.append(f"{self.names[v]} = {self.elements[v][0]}")
            if v in self.outs:
                k = self.outs.index(v)
                body.append(f"o{k}[i] = {self.names[v]}")
                self.stored[v] = f"o{k}[i]"
        self.lines.append("for i in range(n):")
        self.lines += [f"    {line}" for line in body + tail]


def _row_maximum(rows: _Rows, helpers: dict, x: Var, w: str, j: int) -> str:
    """A loop that puts each row's ``x`` into the scratch row ``w``, then its maximum as
    ``m{j}`` (`ROWMAX`); the name of the exp for ``x``'s dtype (`EXP32` in float32)."""
    rows.loop([x], [f"{w}[i] = {rows.names[x]}"])
    helpers["<rowmax>"] = "_rowmax"
    rows.lines.append(f"m{j} = _rowmax({w}, n)")
    if x.dtype == np.float32:
        helpers["<exp32>"] = "_exp32"
        return "_exp32"
    return "np.exp"


def kernel_source(members: list[Equation], ins: list[Var], outs: list[Var],
                  shape: tuple | None = None) -> str:  # fmt: skip
    """The source of the module whose ``kernel`` computes ``outs`` from ``ins`` through
    ``members``, in order: a generalized ufunc whose core is the last axis of ``shape`` (the
    group's, by default the first output's), NumPy looping over the others, or, where
    `row_core` says no, one element of each (NumPy looping over all axes). Each row is a
    few loops over its elements: one per reduction (its values go to a scratch row, summed
    in NumPy's pairwise order), and a last one for the outputs; between them, each row's
    values (a sum, what is computed from sums) are computed once. An element an output holds
    is read from there by later loops, others are computed again. Names are by position
    (``a0``, ``v3``), so equal groups give equal sources."""
    shape = shape if shape is not None else outs[0].shape
    looping = row_core(members, shape)
    rows = _Rows(ins, outs, shape if looping else None)
    helpers: dict[str, str] = {}  # row name -> the helper's name in the module
    scratch = {dtype: f"w{k}" for k, dtype in enumerate(summed(members))}
    for j, eq in enumerate(members):
        out = eq.outs[0]
        if eq.name == "softmax":
            # as eager's: e = exp(x - max), e / sum(e); x goes to the scratch row, whose
            # maximum a vectorized loop finds (`ROWMAX`), and e replaces it there
            x, w = eq.ins[0], scratch[eq.ins[0].dtype]
            dtype, n = _np_name(x.dtype), shape[-1]
            exp = _row_maximum(rows, helpers, x, w, j)
            shifted = f"{exp}(np.{dtype}({w}[i] - m{j}))"
            if out in outs:  # e goes to the output, divided there by the last loop
                k = outs.index(out)
                rows.loop([], [f"e = {shifted}", f"o{k}[i] = e", f"{w}[i] = e"])
                source = f"np.{dtype}(o{k}[i] / s{j})"
                reads = []
            else:  # computed again from x
                rows.loop([], [f"{w}[i] = {shifted}"])
                again = f"{exp}(np.{dtype}({rows.names[x]} - m{j}))"
                source, reads = f"np.{dtype}({again} / s{j})", [x]
            rows.lines.append(f"s{j} = {_pairwise(w, 0, n)}")
            rows.element(out, f"v{j}", source, reads)
            continue
        if eq.name == "log_softmax":
            # as eager's: (x - max) - log(sum(exp(x - max))); a row whose maximum is not
            # finite is shifted by 0 instead (eager shifts every row so when one is not)
            x, w = eq.ins[0], scratch[eq.ins[0].dtype]
            dtype, n = _np_name(x.dtype), shape[-1]
            exp = _row_maximum(rows, helpers, x, w, j)
            rows.lines.append(f"m{j} = m{j} if math.isfinite(m{j}) else np.{dtype}(0)")
            if out in outs:  # x - max goes to the output, less the log by the last loop
                k = outs.index(out)
                rows.loop([], [f"d = np.{dtype}({w}[i] - m{j})", f"o{k}[i] = d",
                               f"{w}[i] = {exp}(d)"])  # fmt: skip
                source, reads = f"np.{dtype}(o{k}[i] - l{j})", []
            else:  # computed again from x
                rows.loop([], [f"{w}[i] = {exp}(np.{dtype}({w}[i] - m{j}))"])
                source = f"np.{dtype}(np.{dtype}({rows.names[x]} - m{j}) - l{j})"
                reads = [x]
            rows.lines.append(f"l{j} = np.log(np.{dtype}({_pairwise(w, 0, n)}))")
            rows.element(out, f"v{j}", source, reads)
            continue
        if eq.name == "sum" or eq.name == "layer_norm":
            x, w = eq.ins[0], scratch[eq.ins[0].dtype]
            dtype, n = _np_name(x.dtype), shape[-1]
            total = _pairwise(w, 0, n)
            rows.loop([x], [f"{w}[i] = {rows.names[x]}"])
            if eq.name == "sum":
                rows.names[out] = f"v{j}"
                rows.lines.append(f"v{j} = {total}")
                continue
            # layer norm, as eager's: the mean, then sqrt(mean of squares + eps), then
            # (x - mean) / std * weight + bias, each step rounded to the dtype.
            rows.lines.append(f"m{j} = np.{dtype}({total} / np.{dtype}({n}))")
            rows.loop([x], [f"c = np.{dtype}({rows.names[x]} - m{j})", f"{w}[i] = c * c"])
            rows.lines.append(f"d{j} = np.{dtype}({total} / np.{dtype}({n}))")
            eps = _literal(eq.params["eps"], x.dtype)
            rows.lines.append(f"d{j} = np.sqrt(np.{dtype}(d{j} + {eps}))")
            value = f"np.{dtype}({rows.names[x]} - m{j}) / d{j}"
            weight, bias = eq.ins[1], eq.ins[2]
            if weight is not None:
                value = f"np.{dtype}({value}) * {rows.names[weight]}"
            if bias is not None:
                value = f"np.{dtype}({value}) + {rows.names[bias]}"
            reads = [x, *(v for v in (weight, bias) if v is not None)]
            rows.element(out, f"v{j}", f"np.{dtype}({value})", reads)
        elif looping and out.shape[-1] == shape[-1]:
            rows.element(out, f"v{j}", _element(eq, rows.names, helpers), eq.inputs())
        else:  # one value per row
            rows.names[out] = f"v{j}"
            rows.lines.append(f"v{j} = {_element(eq, rows.names, helpers)}")
    elements = [v for v in outs if v in rows.elements and v not in rows.stored]
    if elements:
        rows.loop(elements, [])
    for k, v in enumerate(outs):
        if v not in rows.elements:  # one value per row
            rows.lines.append(f"o{k}[0] = {rows.names[v]}")

    lines = ["import math", "", "import numba", "import numpy as np", ""]
    if "<exp32>" in helpers:
        lines += [EXP32.strip(), "", ""]
    if "<rowmax>" in helpers:
        lines += [ROWMAX.strip(), "", ""]
    if "<erf32>" in helpers:
        lines += [erf32_source().strip(), "", ""]
    rows_helpers = {row: helper for row, helper in helpers.items() if not row.startswith("<")}
    if rows_helpers:
        lines += ["from chainrule.ops import REGISTRY", ""]
        scalars = {m.fn.name: m.fn.scalar for m in members if m.fn.name in rows_helpers}
        for row, helper in rows_helpers.items():
            # the row's own source hash: the kernel's file (Numba's cache key) changes with it
            try:
                known = f"  # {_source_hash(scalars[row])}"
            except (KeyError, OSError, TypeError):  # no Python source to hash (a builtin)
                known = ""
            lines.append(f"{helper} = numba.njit(REGISTRY[{row!r}].scalar){known}")
        lines.append("")
    if scratch:
        # block_sum's own source hash: the kernel's file (Numba's cache key) changes with it
        lines += ["from chainrule.compiler.backend_numba import block_sum", "",
                  f"_block = numba.njit(block_sum)  # {_source_hash(block_sum)}", ""]  # fmt: skip
    arguments = [f"a{i}" for i in range(len(ins))] + list(scratch.values())
    arguments += [f"o{k}" for k in range(len(outs))]
    # A row is C-contiguous (``[::1]``: LLVM vectorizes the loop, three times as fast as over
    # strided rows): the replay hands inputs over through ``ascontiguousarray``, and NumPy
    # makes a gufunc's outputs C-ordered (the memory plan's buffers are too).
    types = [NUMBA_TYPES[v.dtype.name] + ("[::1]" if v in rows.elements else "") for v in ins]
    types += [f"{NUMBA_TYPES[dtype.name]}[::1]" for dtype in scratch]
    types += [f"{NUMBA_TYPES[v.dtype.name]}[{'::1' if v in rows.elements else ':'}]" for v in outs]
    layout = ",".join(["(n)" if v in rows.elements else "()" for v in ins] + ["(n)"] * len(scratch))
    layout += "->" + ",".join("(n)" if v in rows.elements else "()" for v in outs)
    signature = f"void({', '.join(types)})"
    spanning = [f"a{k}" for k, v in enumerate(ins) if v in rows.elements]
    spanning += [f"o{k}" for k, v in enumerate(outs) if v in rows.elements]
    lines += [f"@numba.guvectorize([{signature!r}], {layout!r}, cache=True)",
              f"def kernel({', '.join(arguments)}):",
              *([f"    n = {spanning[0]}.shape[0]"] if spanning else []),
              *(f"    {line}" for line in rows.lines)]  # fmt: skip
    return "\n".join(lines) + "\n"


def kernel(source: str) -> Any:
    """The ``kernel`` of ``source`` (from `kernel_source`): this process's if it built it
    already, else imported from its file in `cache_dir` (written first if missing)."""
    import numba

    key = hashlib.sha256(f"{source}{numba.__version__}{sys.version}".encode()).hexdigest()[:20]
    found = _KERNELS.get(key)
    if found is not None:
        return found
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"k{key}.py"
    if not path.exists() or path.read_text() != source:
        scratch = folder / f".k{key}.{os.getpid()}.tmp"
        scratch.write_text(source)
        os.replace(scratch, path)  # whole, even with another process writing it too
    name = f"chainrule_kernel_{key}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Numba's cache finds the kernel's globals by module name
    cached = any((folder / "__pycache__").glob(f"*k{key}.kernel-*.nbi"))  # Numba's index
    try:
        spec.loader.exec_module(module)
    except Exception:  # a cache entry Numba cannot load (written by another version): anew
        for stale in (folder / "__pycache__").glob(f"*k{key}.kernel-*.nb*"):
            stale.unlink(missing_ok=True)
        cached = False
        spec.loader.exec_module(module)
    # The NumPy ufunc itself: called without Numba's wrapper, a call costs a third of a
    # microsecond instead of two.
    found = _KERNELS[key] = getattr(module.kernel, "ufunc", module.kernel)
    COUNTS["built"] += 1
    COUNTS["compiled"] += not cached
    return found


__all__ = ["COUNTS", "EXP32", "NUMBA_TYPES", "ROWMAX", "ROWS_FROM", "available", "block_sum",
           "cache_dir", "ROW_OPS", "erf32_source", "kernel", "kernel_source", "row_core", "spans",
           "summed", "supports"]  # fmt: skip
