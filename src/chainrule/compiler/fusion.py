"""Fusion: the pass `fuse` groups chains of elementwise equations of a `Program` into one
"fused" equation each, computed by one loop (a kernel of `chainrule.compiler.backend_numba`)
that never materializes the chain's inner temporaries.
"""

from __future__ import annotations

from typing import Any

from . import backend_numba
from .passes import PASSES, _replaced, _roots, mutated, plan_memory
from .program import RESULT_BACKWARD, Equation, Program, Var


class FusedGroup:
    """The ``fn`` of a "fused" equation: its ``members`` (the op equations it replaces, in
    order), reading ``ins`` and giving ``outs`` (the members' results read elsewhere), all
    of ``shape``. ``kernel`` computes ``outs`` from ``ins``, built at first use."""

    __slots__ = ("members", "ins", "outs", "shape", "_kernel")

    def __init__(self, members: list[Equation], ins: list[Var], outs: list[Var]) -> None:
        self.members, self.ins, self.outs = members, ins, outs
        self.shape = outs[0].shape
        self._kernel = None

    @property
    def name(self) -> str:
        """``fused[mul, erf, add]``: the members' ops."""
        return f"fused[{', '.join(eq.name for eq in self.members)}]"

    def source(self) -> str:
        """The kernel's module source (see `backend_numba.kernel_source`)."""
        return backend_numba.kernel_source(self.members, self.ins, self.outs)

    def arguments(self, names: list[str]) -> list[str]:
        """The kernel's arguments in the replay, given the names of ``ins``: an input that spans
        the last axis (see `backend_numba.spans`) C-ordered (itself when it is, a copy when
        not: the kernel reads rows as contiguous), one taken one element per row without its
        last axis of 1."""
        return [
            f"ascontiguousarray({name})" if backend_numba.spans(v, self.shape)
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


def fusable(eq: Equation) -> bool:
    """Whether ``eq`` may join a group: an elementwise op row's equation (not a view, no
    promotion, no value check) with one output of at least one dimension that a kernel can
    compute."""
    return (
        eq.kind == "op"
        and eq.fn.kind in ("elementwise", "comparison")
        and len(eq.outs) == 1
        and eq.outs[0].shape != ()
        and not (eq.alias or eq.promote or eq.scalar)
        and eq.fn.check is None
        and backend_numba.supports(eq)
    )


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
    (producer to consumer, one output shape) replaced by one "fused" equation, at the place
    of the group's last member.

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
        if fusable(eq) and eq.outs[0] not in changing:
            shape = eq.outs[0].shape
            joining = [g for g in producers if g.open and g.shape == shape and g.later == later]
            read_roots = {roots[v] for v in reads}
            written = set().union(*(g.written for g in joining))
            reading = read_roots.union(*(g.reads for g in joining))
            if written & reading:
                joining = []
            joined = _Group(shape, later) if not joining else joining[0]
            if not joining:
                groups.append(joined)
                open_groups.append(joined)
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
    return _rewrite(program, [g for g in groups if len(g.members) > 1])


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
        if len(positions) > 1:
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
    at = PASSES.index(plan_memory)
    return (*PASSES[:at], fuse, *PASSES[at:])


__all__ = ["FusedGroup", "fusable", "fuse", "passes"]
