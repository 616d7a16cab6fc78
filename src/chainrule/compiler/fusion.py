"""Fusion: the pass `fuse` groups chains of elementwise equations of a `Program`, with the
reductions over the last axis that end them (a sum kept as a dim, layer norm) and the
elementwise ops that read those row results back, into one "fused" equation each, computed by
one loop over rows (a kernel of `chainrule.compiler.backend_numba`) that never materializes
the chain's inner temporaries.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import backend_numba
from .passes import PASSES, _replaced, _roots, mutated, write_in_place
from .program import RESULT_BACKWARD, Equation, Program, Var


class FusedGroup:
    """The ``fn`` of a "fused" equation: its ``members`` (the op equations it replaces, in
    order), reading ``ins`` and giving ``outs`` (the members' results read elsewhere).
    ``shape`` is the widest of the members' shapes: each member's result has it, or it
    with a last axis of 1 (a row's value: a sum over the last axis, or what is computed from
    such values). ``kernel`` computes ``outs`` from ``ins``, built at first use."""

    __slots__ = ("members", "ins", "outs", "shape", "rows", "_kernel", "_scratch")

    def __init__(self, members: list[Equation], ins: list[Var], outs: list[Var]) -> None:
        self.members, self.ins, self.outs = members, ins, outs
        self.shape = _widest([_shape(m) for m in members])
        self.rows = backend_numba.row_core(members, self.shape)  # loops over rows
        self._kernel = None
        self._scratch: list | None = None

    def is_row(self, var: Var) -> bool:
        """Whether ``var`` (an output) holds one value per row: the kernel gives it without
        its last axis of 1."""
        return self.rows and var.shape[-1] != self.shape[-1]

    @property
    def scratch(self) -> list:
        """The kernel's scratch rows (one per dtype it sums), its last arguments: a row's
        values are written there before they are summed."""
        if self._scratch is None:
            self._scratch = [
                np.empty(self.shape[-1], dtype) for dtype in backend_numba.summed(self.members)
            ]
        return self._scratch

    @property
    def name(self) -> str:
        """``fused[mul, erf, add]``: the members' ops."""
        return f"fused[{', '.join(eq.name for eq in self.members)}]"

    def source(self) -> str:
        """The kernel's module source (see `backend_numba.kernel_source`)."""
        return backend_numba.kernel_source(self.members, self.ins, self.outs, self.shape)

    def arguments(self, names: list[str], ordered: set = frozenset()) -> list[str]:
        """The kernel's arguments in the replay, given the names of ``ins``. Where the kernel
        loops over rows: an input that spans the last axis (see `backend_numba.spans`)
        C-ordered (itself when it is, a copy when not: the kernel reads rows as contiguous)
        unless it is among ``ordered`` (known to be), one taken one element per row without
        its last axis of 1. Else the arrays themselves."""
        if not self.rows:
            return list(names)
        return [
            (name if v in ordered else f"ascontiguousarray({name})")
            if backend_numba.spans(v, self.shape)
            else name if v.shape == () else f"{name}[..., 0]"
            for v, name in zip(self.ins, names)
        ]  # fmt: skip

    @property
    def kernel(self) -> Any:
        """The compiled kernel: ``kernel(*ins)`` gives the output array, or a tuple of them."""
        if self._kernel is None:
            self._kernel = backend_numba.kernel(self.source())
        return self._kernel

    def __repr__(self) -> str:
        return self.name


#: How much longer a kernel takes per element than NumPy's own loop, in nanoseconds, by the
#: result's dtype, for the rows whose NumPy loop is vectorized (SIMD: tanh, sin...) while a
#: kernel calls the C library once per element; rows not listed (arithmetic, comparisons,
#: sqrt, where, relu, clamp, softplus; in float32 exp, sigmoid, erf and GELU, whose kernels
#: are formulas in a loop the compiler vectorizes; in float64 sigmoid, erf and GELU) are no
#: slower in a kernel. Measured on a 2-core AMD EPYC (AVX-512), 131,072 elements, Numba
#: 0.68: float32 tanh 0.38 ns in NumPy against 14.0 ns in a kernel (exp, its own vectorized
#: kernel: 0.9 ns against 0.46, what a fused chain saves in passes over memory).
SLOWER_NS = {
    "float32": {"tanh": 14, "sin": 6, "cos": 6, "tan": 6, "sinh": 6, "cosh": 6, "pow": 3,
                "expm1": 2, "log": 2, "log1p": 2},
    "float64": {"tanh": 12, "pow": 9, "sinh": 6, "cosh": 6, "tan": 6, "exp": 4, "expm1": 4,
                "log": 3, "log1p": 3, "sin": 1, "cos": 1},
}  # fmt: skip

#: What fusing an equation saves: one NumPy call's fixed cost, in nanoseconds.
CALL_NS = 1000


def slower_ns(eq: Equation) -> float:
    """How much longer ``eq`` takes in a kernel than as its own NumPy call, per element (0 for
    a row no slower; `SLOWER_NS`)."""
    name, table = eq.fn.name, SLOWER_NS.get(eq.outs[0].dtype.name, SLOWER_NS["float32"])
    if name == "pow" and len(eq.ins) == 2 and eq.ins[1] == 2:
        return 0  # x * x in a kernel
    if name == "gelu" and eq.params.get("approximate") == "tanh":
        return table.get("tanh", 0)
    return table.get(name, 0)


def fusable(eq: Equation) -> bool:
    """Whether ``eq`` may join a group: an elementwise op row's equation (not a view, no
    promotion, no value check) with one output of at least one dimension that a kernel can
    compute, no slower in all than the NumPy call it replaces (a tanh of a few elements fuses,
    a tanh of many does not: `SLOWER_NS`)."""
    return (
        eq.kind == "op"
        and eq.fn.kind in ("elementwise", "comparison")
        and len(eq.outs) == 1
        and eq.outs[0].shape != ()
        and not (eq.alias or eq.promote or eq.scalar or eq.into)
        and eq.fn.check is None
        and slower_ns(eq) * math.prod(eq.outs[0].shape) <= CALL_NS
        and backend_numba.supports(eq)
    )


def reduces_rows(eq: Equation) -> bool:
    """Whether ``eq`` is a reduction over the last axis that a kernel computes row by row: a
    float sum over the last dim with ``keepdim=True``, softmax or log_softmax over the last
    dim, or layer norm over the last dim (its weight and bias, if any, of that dim's size)."""
    if eq.kind != "op" or len(eq.outs) != 1 or eq.alias or eq.promote or eq.scalar or not eq.ins:
        return False
    x, out = eq.ins[0], eq.outs[0]
    if not isinstance(x, Var) or len(x.shape) == 0 or x.shape[-1] < 2:
        return False
    if x.dtype.name not in ("float32", "float64") or out.dtype != x.dtype:
        return False
    last = (len(x.shape) - 1,), (-1,)
    if eq.name == "sum" and len(eq.ins) == 1:
        return _dims(eq.params.get("dim")) in last and eq.params.get("keepdim") is True
    if eq.name in ("softmax", "log_softmax") and len(eq.ins) == 1:
        return _dims(eq.params.get("dim")) in last
    if eq.name == "layer_norm" and len(eq.ins) == 3:
        affine = all(
            w is None or (isinstance(w, Var) and w.shape == x.shape[-1:] and w.dtype == x.dtype)
            for w in eq.ins[1:]
        )
        dims, eps = _dims(eq.params.get("dims")), eq.params.get("eps")
        return affine and dims in last and type(eps) is float
    return False


def _dims(dim) -> tuple:
    """A ``dim`` parameter as a tuple (an int, a tuple or list of them, or None)."""
    return (dim,) if type(dim) is int else tuple(dim or ())


def _shape(eq: Equation) -> tuple:
    """The shape ``eq`` works in: its input's for a reduction over rows, else its result's."""
    return eq.ins[0].shape if reduces_rows(eq) else eq.outs[0].shape


def _fits(a: tuple, b: tuple) -> bool:
    """Whether equations of shapes ``a`` and ``b`` may share a kernel: equal, or equal but for
    a last axis of 1 in one (a row's value, read by the other's elements)."""
    return a == b or (len(a) == len(b) > 0 and a[:-1] == b[:-1] and 1 in (a[-1], b[-1]))


def _widest(shapes: list[tuple]) -> tuple:
    return max(shapes, key=lambda shape: shape[-1] if shape else 1)


class _Group:
    """A group being gathered: its members (positions), what it reads, and whether it may
    still grow (``open``)."""

    __slots__ = ("members", "reads", "written", "open", "shape", "later")

    def __init__(self, shape: tuple, later: bool) -> None:
        self.members: list[int] = []
        self.reads: set[Var] = set()  # the alias groups (roots) of what members read
        self.written: set[Var] = set()  # roots written in place since its first member
        self.open, self.shape, self.later = True, shape, later


def fuse(program: Program) -> Program:
    """``program`` with each maximal group of two or more connected elementwise equations
    (producer to consumer, one output shape), with the reductions over the last axis among
    them (`reduces_rows`) and what reads their results (of that shape with a last axis of 1),
    replaced by one "fused" equation, at the place of the group's last member.

    Equations never move past effects: a group ends at a "call", "grad" or "read" equation
    and at the boundary of the results' backward; it reads nothing that an in-place write
    between its first and last member changes; an equation outside the group that reads a member's
    result ends the group before it (that result is then an output of the fused equation,
    as are the program's outputs and what the results' backward reads).
    """
    equations = program.equations
    roots = _roots(program)
    changing = mutated(program)
    owner: dict[Var, _Group] = {}  # a member's result -> its group
    groups: list[_Group] = []
    open_groups: list[_Group] = []
    for i, eq in enumerate(equations):
        later = eq.phase == RESULT_BACKWARD
        if eq.kind in ("call", "grad", "read") or any(g.later != later for g in open_groups):
            for g in open_groups:
                g.open = False
        if eq.kind == "write":
            root = roots[eq.ins[0]]
            for g in open_groups:
                g.written.add(root)
                if root in g.reads:
                    g.open = False
        open_groups = [g for g in open_groups if g.open]
        reads = eq.inputs()
        producers = list({id(owner[v]): owner[v] for v in reads if v in owner}.values())
        joined = None
        if (fusable(eq) or reduces_rows(eq)) and eq.outs[0] not in changing:
            shape = _shape(eq)
            joining = [
                g for g in producers if g.open and _fits(g.shape, shape) and g.later == later
            ]
            read_roots = {roots[v] for v in reads}
            written = set().union(*(g.written for g in joining))
            reading = read_roots.union(*(g.reads for g in joining))
            if written & reading:
                joining = []
            joined = _Group(shape, later) if not joining else joining[0]
            if not joining:
                groups.append(joined)
                open_groups.append(joined)
            joined.shape = _widest([shape, *(g.shape for g in joining)])
            for g in joining[1:]:  # merge the others into the first
                joined.members += g.members
                joined.reads |= g.reads
                joined.written |= g.written
                g.open = False
                for position in g.members:
                    owner[equations[position].outs[0]] = joined
                g.members = []
            joined.members.append(i)
            joined.reads |= read_roots
            owner[eq.outs[0]] = joined
        for g in producers:
            if g is not joined:
                g.open = False  # its result is read here: the group must be done by now
        open_groups = [g for g in open_groups if g.open]
    return _rewrite(program, groups)


#: The most arrays a kernel reads and writes (NumPy's ufuncs take at most 64 operands).
MAX_OPERANDS = 32


def _rewrite(program: Program, groups: list[_Group]) -> Program:
    """``program`` with each of ``groups`` replaced by its fused equation; a group with too many
    inputs and outputs for one ufunc is cut in two, in program order, until each fits."""
    equations = program.equations
    wanted = set(program.outputs) | set(program.split()[2])
    reads: dict[Var, list[int]] = {}  # who reads each Var, by position
    for i, eq in enumerate(equations):
        for v in eq.inputs():
            reads.setdefault(v, []).append(i)
    fused: dict[int, Equation] = {}  # the last member's position -> the fused equation
    dropped: set[int] = set()
    pending = [sorted(g.members) for g in groups]
    while pending:
        positions = pending.pop()
        inside = set(positions)
        members = [equations[p] for p in positions]
        made = {m.outs[0] for m in members}
        ins = list({id(v): v for m in members for v in m.inputs() if v not in made}.values())
        outs = [
            m.outs[0] for m in members
            if m.outs[0] in wanted or any(r not in inside for r in reads.get(m.outs[0], ()))
        ]  # fmt: skip
        if len(ins) + len(outs) > MAX_OPERANDS and len(positions) > 1:
            half = len(positions) // 2
            pending += [positions[:half], positions[half:]]
            continue
        # One op is a kernel of its own only where it reduces rows (layer norm: one pass
        # where NumPy makes several).
        if len(positions) > 1 or any(
            m.name in ("layer_norm", "softmax", "log_softmax") for m in members
        ):
            group = FusedGroup(members, ins, outs)
            fused[positions[-1]] = Equation(
                "fused", group, group.name, tuple(ins), {}, tuple(outs), members[-1].phase
            )
            dropped |= inside
    kept = [fused.get(i, eq) for i, eq in enumerate(equations) if i in fused or i not in dropped]
    return _replaced(program, kept, {})


def passes(enabled: bool = True) -> tuple:
    """The passes for `chainrule.compiler.passes.optimize`: `PASSES`, and when ``enabled``
    and Numba can be imported, `fuse` before the memory plan (which plans what is left)."""
    if not (enabled and backend_numba.available()):
        return PASSES
    at = PASSES.index(write_in_place)  # what stays a NumPy call may then write in place
    return (*PASSES[:at], fuse, *PASSES[at:])


__all__ = [
    "CALL_NS", "SLOWER_NS", "FusedGroup", "fusable", "fuse", "passes", "reduces_rows",
    "slower_ns",
]  # fmt: skip
