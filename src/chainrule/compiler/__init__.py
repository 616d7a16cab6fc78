"""``chainrule.compile``: record a function's call (forward, backward, updates) as a `Program`
of NumPy calls, check it, and replay it; `make_program` shows the record.

- `chainrule.compiler.program`: the IR (`Var`, `Equation`, `Program`) and its replay;
- `chainrule.compiler.tracer`: recording a call as the engine's observer (`chainrule.observe`);
- `chainrule.compiler.pieces`: replaying a record around graph breaks, the Python run again;
- `chainrule.compiler.passes`: dead code, common subexpressions, constant folding;
- `chainrule.compiler.backend_numba`: Numba kernels for fused groups, cached on disk;
- `chainrule.compiler.fusion`: grouping chains of elementwise equations into fused ones;
- `chainrule.compiler.compiled`: `compile`, its cache and guards, `make_program`.
"""

from .compiled import CACHE_SIZE, CompiledFunction, compile, jit, make_program
from .program import Equation, Program, Var

__all__ = [
    "CACHE_SIZE", "CompiledFunction", "Equation", "Program", "Var", "compile", "jit",
    "make_program",
]  # fmt: skip
