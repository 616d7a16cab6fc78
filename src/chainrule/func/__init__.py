"""Composable function transforms in JAX's style: grad, value_and_grad, vjp, jvp, jacrev,
jacfwd, jacobian, hessian (`chainrule.func.transforms`) and vmap (`chainrule.func.mapping`, with
the tracer and dispatch in `chainrule.func.batching`; each op's batching rule is on its row).
"""

from . import batching  # noqa: F401  (chainrule.func.batching, the tracer vmap runs on)
from .mapping import vmap
from .transforms import grad, hessian, jacfwd, jacobian, jacrev, jvp, value_and_grad, vjp

__all__ = [
    "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jvp", "value_and_grad", "vjp", "vmap",
]  # fmt: skip
