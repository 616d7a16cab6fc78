"""Numba kernels for fused groups (`chainrule.compiler.fusion`): a group's equations become one
generalized ufunc (``numba.guvectorize``) whose core is the last axis: a loop over a row, one
element of each input at a time, while NumPy loops over the other axes, so that broadcasting,
strides and ``out=`` are NumPy's own. An input that does not span the last axis (0-d, or 1
there) is taken as one element per row. Numba is imported when the first kernel is built.

Each kernel's source is written to a file named by its hash under `cache_dir` and imported from
there with ``cache=True``, so Numba keeps the machine code beside it, the gufunc's loop wrapper
included (a ``vectorize`` ufunc's wrapper is not cached: it would be compiled again in every
process): a second process loads a kernel in about 10 ms instead of compiling it. Identical
groups (same source: same ops, literals, dtypes and core layout) share one kernel in a process.
"""

from __future__ import annotations

import hashlib
import importlib.util
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


def spans(var: Var, shape: tuple) -> bool:
    """Whether a kernel of output ``shape`` reads ``var`` along its last axis (core dimension
    ``(n)``), rather than one element per row (``()``: a 0-d array, or one whose last axis is
    1 where ``shape``'s is not; the replay hands it over as ``var[..., 0]``)."""
    return len(var.shape) > 0 and var.shape[-1] == shape[-1]


def kernel_source(members: list[Equation], ins: list[Var], outs: list[Var]) -> str:
    """The source of the module whose ``kernel`` computes ``outs`` from ``ins`` through
    ``members``, in order: a generalized ufunc whose core is the last axis (a loop over it,
    one element of each input at a time), NumPy looping over the others. Names are by
    position (``a0``, ``v3``), so equal groups give equal sources."""
    shape = outs[0].shape
    names = {}
    loads = []
    for i, v in enumerate(ins):
        if spans(v, shape):
            names[v] = f"x{i}"
            loads.append(f"        x{i} = a{i}[i]")
        else:
            names[v] = f"a{i}"
    helpers: dict[str, str] = {}  # row name -> the helper's name in the module
    body = []
    for j, eq in enumerate(members):
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
            call = f"np.{eq.fn.forward.__name__}({', '.join(args)})"
        else:
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
            call = f"np.{_np_name(out.dtype)}({helper}({', '.join(args)}))"
        names[out] = f"v{j}"
        body.append(f"        v{j} = {call}")
    lines = ["import math", "", "import numba", "import numpy as np", ""]
    if helpers:
        lines += ["from chainrule.ops import REGISTRY", ""]
        for row, helper in helpers.items():
            lines.append(f"{helper} = numba.njit(REGISTRY[{row!r}].scalar)")
        lines.append("")
    arguments = ", ".join([f"a{i}" for i in range(len(ins))] + [f"o{k}" for k in range(len(outs))])
    # A row is C-contiguous (``[::1]``: LLVM vectorizes the loop, three times as fast as over
    # strided rows): the replay hands inputs over through ``ascontiguousarray``, and NumPy
    # makes a gufunc's outputs C-ordered (the memory plan's buffers are too).
    types = [NUMBA_TYPES[v.dtype.name] + ("[::1]" if spans(v, shape) else "") for v in ins]
    types += [f"{NUMBA_TYPES[v.dtype.name]}[::1]" for v in outs]
    layout = ",".join("(n)" if spans(v, shape) else "()" for v in ins)
    layout += "->" + ",".join("(n)" for _ in outs)
    signature = f"void({', '.join(types)})"
    lines += [f"@numba.guvectorize([{signature!r}], {layout!r}, cache=True)",
              f"def kernel({arguments}):", "    for i in range(o0.shape[0]):",
              *loads, *body]  # fmt: skip
    lines += [f"        o{k}[i] = {names[v]}" for k, v in enumerate(outs)]
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


__all__ = ["COUNTS", "NUMBA_TYPES", "available", "cache_dir", "kernel", "kernel_source",
           "spans", "supports"]  # fmt: skip
