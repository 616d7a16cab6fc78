"""``chainrule.X``: every public function of `chainrule.ops` as a PyTorch program calls it.

The functions also take NumPy's ``axis=``/``keepdims=`` for ``dim=``/``keepdim=`` and refuse
``out=`` clearly (`chainrule.signatures`). Rows pass through unchanged: `apply_op` translates
their arguments itself. The engine's own modules call `chainrule.ops` directly, without the
wrapper's extra call.
"""

from __future__ import annotations

import inspect

from .. import ops
from ..signatures import numpy_names

__all__ = list(ops.__all__)


def _public(name: str):
    fn = getattr(ops, name)
    return numpy_names(fn, name) if inspect.isfunction(fn) else fn


globals().update({name: _public(name) for name in __all__})
# torch.div takes rounding_mode=, which the div row (x / y, on every division) does not.
div = _public("divide")
