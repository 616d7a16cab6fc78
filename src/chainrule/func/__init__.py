"""Composable function transforms in JAX's style: grad, value_and_grad, vjp, jvp, jacrev,
jacfwd, jacobian, hessian (`chainrule.func.transforms`), modules as functions of their
parameters (`chainrule.func.stateless`: functional_call, stack_module_state) and vmap
(`chainrule.func.mapping`, with the tracer and dispatch in `chainrule.func.batching`; each
op's batching rule is on its row).
"""

from . import batching  # noqa: F401  (chainrule.func.batching, the tracer vmap runs on)
from .mapping import vmap
from .stateless import functional_call, replace_all_batch_norm_modules_, stack_module_state
from .transforms import (
    debug_unwrap,
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linearize,
    value_and_grad,
    vjp,
)

__all__ = [
    "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jvp", "value_and_grad", "vjp", "vmap",
    "debug_unwrap", "functional_call", "functionalize", "grad_and_value", "linearize",
    "replace_all_batch_norm_modules_", "stack_module_state",
]  # fmt: skip
