"""Passes over a `Program`: each takes a program and returns a new one that computes the same
results with fewer or cheaper equations. `optimize` runs them in order.

A pass never moves an equation: the order of the record is the order of the eager run, so
in-place writes and the effects of "call" and "grad" equations keep their places. What an
in-place write may change (its target and every array sharing memory with it) is never
merged, folded or reused.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..dispatch import promote
from .program import Equation, Program, Var

#: Equations kept whether or not their outputs are read: they change something outside (a
#: "read" hands arrays to the function's Python).
EFFECTS = ("call", "write", "grad", "read")


def mutated(program: Program) -> set[Var]:
    """The Vars an in-place write may change: each write's target and every Var sharing
    memory with it (the outputs of views, and what those are views of)."""
    roots = _roots(program)
    targets = {roots[eq.ins[0]] for eq in program.equations if eq.kind == "write"}
    return {v for v, group in roots.items() if group in targets}


def _replaced(program: Program, equations: list[Equation], rename: dict[Var, Var]) -> Program:
    """``program`` with ``equations`` (already reading the values of ``rename``: a pass
    renames each equation as it reaches it) and its outputs renamed."""
    outputs = [rename.get(v, v) for v in program.outputs]
    read = [v for eq in equations for v in eq.inputs()] + outputs
    consts = list({id(v): v for v in read if v.kind == "const"}.values())  # first use first
    return Program(
        program.name, program.inputs, program.state, consts, equations, outputs,
        program.backward_outputs,
    )  # fmt: skip


def _map_vars(value, fn: Callable[[Var], object]):
    """``value`` with each Var replaced by ``fn(var)``, inside tuples and lists too."""
    if isinstance(value, Var):
        return fn(value)
    if type(value) in (tuple, list):
        mapped = [_map_vars(v, fn) for v in value]
        return tuple(mapped) if type(value) is tuple else mapped
    return value


def _rename(eq: Equation, rename: dict[Var, Var]) -> None:
    """Make ``eq`` read the value of each key of ``rename`` it reads."""
    if rename:
        eq.ins = _map_vars(eq.ins, lambda v: rename.get(v, v))
        eq.params = {k: _map_vars(v, lambda v: rename.get(v, v)) for k, v in eq.params.items()}


def _is_one(value) -> bool:
    """Whether an argument is the number 1 (a literal, or a constant whose values are all 1)."""
    if isinstance(value, Var):
        return value.kind == "const" and value.value is not None and bool(np.all(value.value == 1))
    return type(value) in (int, float) and value == 1


def simplify(program: Program) -> Program:
    """Drop the equations that give back their input: ``x * 1`` (the seed of backward is
    1) and ``x ** 1``, where the result has the input's shape and dtype. Both are exact in
    floating point, so nothing changes but the work; a result written in place is kept."""
    changing = mutated(program)
    rename: dict[Var, Var] = {}
    kept: list[Equation] = []
    for eq in program.equations:
        _rename(eq, rename)
        same = None
        if eq.kind == "op" and not eq.params and len(eq.ins) == 2 and eq.outs[0] not in changing:
            x, y = eq.ins
            if eq.name == "mul" and _is_one(x):
                same = y
            elif eq.name in ("mul", "pow") and _is_one(y):
                same = x
        out = eq.outs[0] if eq.outs else None
        if (
            isinstance(same, Var)
            and (same.shape, same.dtype) == (out.shape, out.dtype)
            and same not in changing
        ):
            rename[out] = same
            continue
        kept.append(eq)
    return _replaced(program, kept, rename)


def eliminate_dead_code(program: Program) -> Program:
    """Drop the op equations whose results nothing reads (effects stay)."""
    live = set(program.outputs)
    kept: list[Equation] = []
    for eq in reversed(program.equations):
        if eq.kind in EFFECTS or any(v in live for v in eq.outs):
            live.update(eq.inputs())
            kept.append(eq)
    kept.reverse()
    return _replaced(program, kept, {})


def _key(value):
    """A hashable stand-in for an equation's argument (None when there is none)."""
    if isinstance(value, Var):
        return ("var", id(value))
    if type(value) in (tuple, list):
        keys = tuple(_key(v) for v in value)
        return None if None in keys else (type(value).__name__, keys)
    if isinstance(value, np.ndarray):
        return None
    try:
        hash(value)
    except TypeError:
        return None
    return (type(value).__name__, value)


def eliminate_common_subexpressions(program: Program) -> Program:
    """Compute each op once per distinct inputs and parameters: a later equal equation reads
    the first one's result (GELU's erf, computed by the forward and again by its backward)."""
    changing = mutated(program)
    seen: dict[tuple, Var] = {}
    rename: dict[Var, Var] = {}
    kept: list[Equation] = []
    for eq in program.equations:
        _rename(eq, rename)
        if eq.kind == "op" and not changing.intersection((*eq.inputs(), *eq.outs)):
            key = _key((id(eq.fn), eq.ins, tuple(sorted(eq.params.items(), key=lambda kv: kv[0]))))
            if key is not None:
                first = seen.get(key)
                if first is not None:
                    rename[eq.outs[0]] = first
                    continue
                seen[key] = eq.outs[0]
        kept.append(eq)
    return _replaced(program, kept, rename)


def fold_constants(program: Program) -> Program:
    """Run once, now, the op equations that read only constants (a causal mask built inside
    the step, ``arange`` positions): their results become constants of the program."""
    changing = mutated(program)
    kept: list[Equation] = []
    for eq in program.equations:
        reads = eq.inputs()
        if (
            (eq.kind == "op" or (eq.kind == "call" and eq.params["pure"]))
            and all(v.kind == "const" for v in reads)
            and not changing.intersection((*reads, *eq.outs))
        ):
            for out, value in zip(eq.outs, evaluate(eq)):
                out.kind, out.value = "const", value
                out.name = "c" + out.name[1:]
            continue
        kept.append(eq)
    return _replaced(program, kept, {})


def evaluate(eq: Equation) -> tuple:
    """An op or pure call equation's results, computed from its constant inputs now."""
    if eq.kind == "call":
        return eq.fn(*_map_vars(eq.ins, _value))
    args = _map_vars(list(eq.ins), _value)
    params = {key: _map_vars(value, _value) for key, value in eq.params.items()}
    if eq.fn.check is not None:
        eq.fn.check(*args, **params)
    out = eq.fn.forward(*args, **params)
    if eq.scalar:
        out = np.asarray(out)
    if eq.promote:
        out = promote(eq.fn, out, args, params)
    return (out,)


def _value(var: Var):
    return var.value


def _roots(program: Program) -> dict[Var, Var]:
    """Each Var's alias group, named by one member: a view and what it views share one."""
    parent: dict[Var, Var] = {}

    def root(v: Var) -> Var:
        while parent.get(v, v) is not v:
            v = parent[v]
        return v

    for eq in program.equations:
        if eq.kind == "op" and eq.alias:
            for v in eq.inputs():
                parent[root(eq.outs[0])] = root(v)
    everything = {v for eq in program.equations for v in (*eq.inputs(), *eq.outs)}
    return {v: root(v) for v in everything | set(program.outputs)}


def plan_memory(program: Program) -> Program:
    """Give elementwise ufunc equations an output array of their own that lives as long as the
    program (``out=``), shared with earlier results that are no longer read: a replay then
    allocates nothing for them, and a chain of elementwise ops writes into one array.

    Only arrays nothing outside the replay can hold are shared: never an output, a gradient
    handed to ``.grad``, what a "call" receives or returns or a "read" hands to the Python,
    an array written in place (or a view of one), nor the inputs, state and constants.
    """
    roots = _roots(program)
    escaping = {roots[v] for v in program.outputs}
    escaping |= {roots[v] for v in mutated(program)}
    escaping |= {roots[v] for v in program.split()[2]}  # kept for the results' backward
    for eq in program.equations:
        if eq.kind in ("grad", "call", "read"):
            escaping |= {roots[v] for v in (*eq.inputs(), *eq.outs)}
    last: dict[Var, int] = {}  # alias group -> the last equation that reads it
    for i, eq in enumerate(program.equations):
        for v in eq.inputs():
            last[roots[v]] = i
    free: dict[tuple, list[int]] = {}  # (shape, dtype) -> buffers no longer read
    holder: dict[Var, int] = {}  # alias group -> the buffer its array is
    dying: dict[int, list[Var]] = {}  # equation -> groups last read there
    for group, i in last.items():
        dying.setdefault(i, []).append(group)
    count = 0

    def release(i: int) -> None:
        for group in dying.get(i, ()):
            if group in holder:
                free.setdefault((group.shape, group.dtype), []).append(holder.pop(group))

    def assign(out: Var) -> int | None:
        """A buffer for ``out``, if nothing outside the replay can hold it."""
        nonlocal count
        group = roots.get(out, out)
        if group in escaping or group.kind != "temp":
            return None
        pool = free.get((out.shape, out.dtype))
        if pool:
            holder[group] = pool.pop()
        else:
            holder[group], count = count, count + 1
        return holder[group]

    for i, eq in enumerate(program.equations):
        # What an elementwise equation reads for the last time it may also write (an input of
        # its own shape); a product (matmul) must not write over its own operands, nor a fused
        # kernel (NumPy copies the inputs of a generalized ufunc that overlap its outputs).
        in_place = eq.kind == "op" and eq.fn.kind in ("elementwise", "comparison")
        if in_place:
            release(i)
        if eq.kind == "fused":
            into = eq.into or (None,) * len(eq.outs)
            planned = [
                assign(v) if _plannable_output(eq, v) and t is None else None
                for v, t in zip(eq.outs, into)
            ]
            eq.buffer = tuple(planned) if any(b is not None for b in planned) else None
        elif _plannable(eq):
            eq.buffer = assign(eq.outs[0])
        for out in eq.outs:  # never read: its buffer is free again at once
            if last.get(out) is None and out in holder:
                free.setdefault((out.shape, out.dtype), []).append(holder.pop(out))
        if not in_place:
            release(i)
    return program


def _plannable_output(eq: Equation, out: Var) -> bool:
    """Whether a fused equation's output ``out`` may go to a buffer: its member's result was
    C-ordered when recorded (see `_plannable`)."""
    member = next(m for m in eq.fn.members if m.outs[0] is out)
    return member.c_order and len(out.shape) > 0


def own_gradients(program: Program) -> Program:
    """Let a leaf keep the array of its gradient as it is, instead of a copy, where nothing
    else in the program or outside it can see that array: backward copies a gradient it did
    not make itself because it might be shared (a broadcast, another leaf's), which the
    program can tell."""
    roots = _roots(program)
    readers: dict[Var, int] = {}  # per alias group, the equations that read it (not its views)
    for eq in program.equations:
        for v in eq.inputs():
            if not (eq.alias and roots[eq.outs[0]] is roots[v]):
                readers[roots[v]] = readers.get(roots[v], 0) + 1
    made = {eq.outs[0] for eq in program.equations if eq.kind == "op" and not eq.alias}
    made -= {roots[v] for v in program.outputs} | {roots[v] for v in mutated(program)}
    for eq in program.equations:
        if eq.kind == "grad" and eq.params["mode"] == "add" and not eq.params["owned"]:
            group = roots[eq.ins[0]]
            if eq.params.get("writeable") and group in made and readers[group] == 1:
                eq.params["owned"] = True
    return program


def deliver_directly(program: Program) -> Program:
    """Where a step clears a leaf's ``.grad`` (``zero_grad``, ``p.grad = None``) and later
    delivers its gradient, with nothing in between that could look (a whole call, another
    equation on that ``.grad``), drop the clearing and let the delivery set ``.grad`` at once:
    the same result, two fewer calls per parameter."""
    kept: list[Equation] = []
    cleared: dict[int, int] = {}  # id(leaf) -> position in ``kept`` of its clearing
    for eq in program.equations:
        if eq.kind in ("call", "read"):  # the Python may look at .grad there
            cleared.clear()
        elif eq.kind == "grad":
            leaf = eq.params["leaf"]
            key = leaf if type(leaf) is int else id(leaf)
            at = cleared.pop(key, None)
            if eq.params["mode"] == "set" and not eq.ins:
                cleared[key] = len(kept)
            elif at is not None and eq.params["mode"] == "add":
                kept[at] = None  # the clearing goes; this delivery sets .grad
                eq.params["fresh"] = True
        kept.append(eq)
    return _replaced(program, [eq for eq in kept if eq is not None], {})


def assemble_slices(program: Program) -> Program:
    """Where the gradients of disjoint basic slices of one array are summed (the backward of
    ``q, k, v = qkv.split(d, dim=-1)``: three getitem_backward equations, each zeros with one
    slice written, and the adds of their results), make the sum one equation that writes
    each slice into one array of zeros: the same numbers (nothing overlaps, so each element
    is one slice's value or 0), one array made instead of five."""
    equations = program.equations
    made = {eq.outs[0]: i for i, eq in enumerate(equations) if eq.kind == "op" and eq.outs}
    reads: dict[Var, int] = {}
    for eq in equations:
        for v in eq.inputs():
            reads[v] = reads.get(v, 0) + 1
    for v in program.outputs + program.split()[2]:
        reads[v] = reads.get(v, 0) + 1
    done: set[int] = set()
    replaced: dict[int, Equation] = {}

    def leaves(var: Var, tree: list[int]) -> list[int] | None:
        """The getitem_backward equations summed into ``var`` (only there), or None."""
        i = made.get(var)
        if i is None or i in done or reads.get(var) != 1:
            return None
        eq = equations[i]
        if eq.name == "getitem_backward" and _basic_ranges(eq) is not None:
            tree.append(i)
            return [i]
        if eq.name != "add" or eq.params or not all(isinstance(v, Var) for v in eq.ins):
            return None
        found = [leaves(v, tree) for v in eq.ins]
        if any(f is None for f in found):
            return None
        tree.append(i)
        return found[0] + found[1]

    for r in range(len(equations) - 1, -1, -1):
        root = equations[r]
        if r in done or root.kind != "op" or root.name != "add" or root.params:
            continue
        tree: list[int] = []
        found = [leaves(v, tree) if isinstance(v, Var) else None for v in root.ins]
        if any(f is None for f in found):
            continue
        parts = [equations[i] for i in found[0] + found[1]]
        out = root.outs[0]
        if any((p.outs[0].shape, p.outs[0].dtype) != (out.shape, out.dtype) for p in parts):
            continue
        ranges = [_basic_ranges(p) for p in parts]
        if not all(_apart(a, b) for k, a in enumerate(ranges) for b in ranges[k + 1 :]):
            continue
        indexes = tuple(p.params["index"] for p in parts)
        fn = functools.partial(_assemble, out.shape, out.dtype, indexes)
        call = Equation("call", fn, "assemble_slices", tuple(p.ins[0] for p in parts),
                        {"fn": _assemble, "pure": True}, (out,), root.phase)  # fmt: skip
        done.update(tree)
        done.add(r)
        replaced[r] = call
    kept = [replaced.get(i, eq) for i, eq in enumerate(equations) if i not in done or i in replaced]
    return _replaced(program, kept, {})


def _assemble(shape: tuple, dtype, indexes: tuple, *grads: np.ndarray) -> tuple:
    """Zeros of ``shape`` with each of ``grads`` written at its basic index."""
    out = np.zeros(shape, dtype)
    for index, g in zip(indexes, grads):
        out[index] = g
    return (out,)


def _basic_ranges(eq: Equation) -> list | None:
    """The [start, stop) of a getitem_backward's index on each axis (a slice of step 1 or an
    int on each), or None for another index."""
    shape, index = eq.params.get("shape"), eq.params.get("index")
    if type(index) is not tuple or type(shape) is not tuple or len(index) > len(shape):
        return None
    ranges = []
    for item, size in zip(index, shape):
        if type(item) is int:
            item = size + item if item < 0 else item
            ranges.append((item, item + 1))
        elif type(item) is slice and item.step in (None, 1):
            start, stop, _ = item.indices(size)
            ranges.append((start, max(start, stop)))
        else:
            return None
    return ranges


def _apart(a: list, b: list) -> bool:
    """Whether two index ranges (`_basic_ranges`) share no element: apart on some axis."""
    return any(x[1] <= y[0] or y[1] <= x[0] for x, y in zip(a, b))


def write_in_place(program: Program) -> Program:
    """Where an elementwise ufunc's result is only written into an array (``T[...] = t``, an
    optimizer's new ``exp_avg``) and nothing reads that array's old values between the two,
    let the ufunc write into the array itself (``out=T``) and drop the copy: the in-place
    line eager mode runs (``exp_avg *= β1``), recovered from the record's functional form."""
    equations = program.equations
    roots = _roots(program)
    made = {v: i for i, eq in enumerate(equations) if eq.kind in ("op", "fused") for v in eq.outs}
    readers: dict[Var, list[int]] = {}
    for i, eq in enumerate(equations):
        for v in eq.inputs():
            readers.setdefault(v, []).append(i)
    outputs = set(program.outputs) | set(program.split()[2])
    dropped: set[int] = set()
    for w, write in enumerate(equations):
        if write.kind != "write":
            continue
        target, value = write.ins
        i = made.get(value)
        if i is None or value in outputs or target.kind not in ("state", "temp"):
            continue
        eq = equations[i]
        if eq.kind == "fused":
            if not _writes_elementwise(eq):
                continue
        elif not (_plannable(eq) and eq.fn.kind in ("elementwise", "comparison")):
            continue
        if (value.shape, value.dtype) != (target.shape, target.dtype):
            continue
        if any(r > w for r in readers.get(value, ())):  # read after the write: T may change
            continue
        group = roots[target]
        between = equations[i + 1 : w]
        if any(
            other.kind in ("call", "grad", "read")
            or any(roots.get(v) is group for v in other.inputs())
            for other in between
        ):
            continue
        if eq.kind == "fused":
            into = list(eq.into or (None,) * len(eq.outs))
            into[eq.outs.index(value)] = target
            eq.into = tuple(into)
        else:
            eq.into = target
        dropped.add(w)
    kept = [eq for i, eq in enumerate(equations) if i not in dropped]
    return _replaced(program, kept, {})


def _writes_elementwise(eq: Equation) -> bool:
    """Whether a fused equation's kernel reads each element's inputs before it writes that
    element's outputs and no other element's (one element at a time: no row reduced), so an
    output may be the array of one of its inputs."""
    group = eq.fn
    return not group.rows and all(
        m.fn.kind in ("elementwise", "comparison") and m.outs[0].shape == group.shape
        for m in group.members
    )


def _plannable(eq: Equation) -> bool:
    out = eq.outs[0] if eq.outs else None
    return (
        eq.kind == "op"
        and eq.into is None
        and eq.fn.writes_out
        and not eq.params
        and not (eq.alias or eq.promote or eq.scalar)
        # NumPy lays a result out as its operands are (a transpose's stays transposed), and a
        # later reduction sums in memory order: only a C-ordered result may go to a buffer.
        and eq.c_order
        and out is not None
        and len(out.shape) > 0
    )


#: The passes `optimize` runs, in order.
PASSES: tuple[Callable[[Program], Program], ...] = (
    fold_constants,
    simplify,
    eliminate_common_subexpressions,
    eliminate_dead_code,
    assemble_slices,
    own_gradients,
    deliver_directly,
    write_in_place,
    plan_memory,
)


def optimize(program: Program, passes: tuple = PASSES) -> Program:
    """``program`` after every pass of ``passes`` (`PASSES`, or `chainrule.compiler.fusion.passes`
    with fusion)."""
    for run in passes:
        program = run(program)
    return program


__all__ = [
    "EFFECTS", "assemble_slices", "PASSES", "deliver_directly", "eliminate_common_subexpressions",
    "eliminate_dead_code", "evaluate", "fold_constants", "mutated", "optimize",
    "own_gradients", "plan_memory", "simplify", "write_in_place",
]  # fmt: skip
