"""`Function`, the user-facing way to add an op whose forward and backward see NumPy arrays
(PyTorch's ``torch.autograd.Function``). Rows declared with `chainrule.op` are the other way,
and the one the op table uses.
"""

from __future__ import annotations

import numpy as np

from . import dispatch, observe
from ._tensor import Tensor
from .errors import GraphError
from .graph import Node, edge_of, state


class Function(Node):
    """Base class for user-defined ops whose forward and backward work on NumPy arrays.

    Subclass it, write ``forward(self, *arrays, **kwargs)`` returning an array (or a tuple
    of arrays) and ``backward(self, *grads)`` returning one gradient per input (None for an
    input without one), then call ``MyOp.apply(*tensors, **kwargs)``. Save arrays for
    backward with ``self.save_for_backward(...)`` and read them from ``self.saved_tensors``.
    Backward sees arrays, so a Function cannot be differentiated twice (create_graph=True
    raises); build the op from tensor ops or an `Op` row when you need that.

    >>> class Cube(Function):
    ...     def forward(self, x):
    ...         self.save_for_backward(x)
    ...         return x**3
    ...     def backward(self, g):
    ...         (x,) = self.saved_tensors
    ...         return 3 * x**2 * g
    >>> x = Tensor([1.0, 2.0], requires_grad=True)
    >>> Cube.apply(x).sum().backward()
    >>> x.grad
    tensor([ 3., 12.])
    """

    def __init__(self) -> None:
        super().__init__((), (), ())
        self._saved: tuple | None = ()
        self._inputs: tuple = ()

    def forward(self, *args, **kwargs):
        """Compute the output array(s) from input arrays."""
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def backward(self, *grads):
        """Return one gradient array per forward input, given one per output."""
        raise NotImplementedError(f"{type(self).__name__} must define backward()")

    def save_for_backward(self, *arrays) -> None:
        """Keep arrays for ``backward``; an input modified in place later is detected."""
        self._saved = arrays

    @property
    def saved_tensors(self) -> tuple:
        """The arrays given to ``save_for_backward``."""
        if self._saved is None:
            raise GraphError(
                f"{type(self).__name__}: its saved arrays were freed by an earlier backward; "
                "pass retain_graph=True to the first backward()"
            )
        return self._saved

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__}Backward>"

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the op on Tensors and record it in the graph; returns a Tensor (or a tuple)."""
        if observe.current is not None:
            result = observe.current.run_function(cls, args, kwargs)
            if result is not observe.PLAIN:
                return result
        if dispatch.batch_hook is not None:
            dispatch.batch_hook(cls, args, kwargs)  # no batching rule: vmap loops over examples
        node = cls()
        arrays = [arg._array if isinstance(arg, Tensor) else arg for arg in args]
        outputs = node.forward(*arrays, **kwargs)
        is_tuple = isinstance(outputs, tuple)
        outs = [np.asarray(o) for o in (outputs if is_tuple else (outputs,))]
        needs_grad = state.grad_enabled and any(
            isinstance(a, Tensor) and a.requires_grad for a in args
        )
        # Results are of the first input Tensor's class, so a Tensor subclass (a teaching
        # text's) keeps its kind through the Functions it defines.
        kind = next((type(a) for a in args if isinstance(a, Tensor)), Tensor)
        results = [kind._make(o) for o in outs]
        if needs_grad:
            node.edges = tuple(
                edge_of(a) if isinstance(a, Tensor) and a.requires_grad else None for a in args
            )
            node.out_meta = tuple((o.shape, o.dtype) for o in outs)
            # Saved inputs and outputs alike: an output changed in place breaks backward too.
            # Outputs by their counters (`Node.watched` says why).
            saved = node._saved or ()
            node.watched = tuple(
                a for a in args if isinstance(a, Tensor) and any(a._array is s for s in saved)
            ) + tuple(r._version_counter for r in results if any(r._array is s for s in saved))
            for i, result in enumerate(results):
                result._requires_grad = True
                result._grad_fn = node
                result._output_nr = i
        return tuple(results) if is_tuple else results[0]

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
        if create_graph:
            raise GraphError(
                f"{self.name}: a Function's backward works on arrays, so it cannot be "
                "differentiated twice (create_graph=True); write it with tensor ops instead"
            )
        out = self.backward(*grads)
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(out) != len(self.edges):
            raise GraphError(
                f"{self.name}: backward returned {len(out)} gradients for {len(self.edges)} inputs"
            )
        if release:
            self.release()
        return out

    def release(self) -> None:
        if self._saved:
            self._saved, self.watched = None, ()
