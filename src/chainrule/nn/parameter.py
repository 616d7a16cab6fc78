"""`Parameter`, the tensor a `Module` registers as a weight when it is assigned as an attribute
(PyTorch's ``torch.nn.parameter``). Module itself is in `chainrule.nn.modules.module`."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A Tensor that a `Module` registers as a trainable weight when assigned as an attribute.

    Requires grad by default. Made from a Tensor it shares that tensor's memory, as in PyTorch.

    >>> import chainrule
    >>> Parameter(chainrule.zeros(2))
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        if data is None:
            data = np.empty((0,), np.float32)
        super().__init__(data, requires_grad=requires_grad)
        if isinstance(data, Tensor):
            self._array = data._array
            self._version_counter = data._version_counter

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def detach(self) -> Tensor:
        """The same data without history, as a plain Tensor (as PyTorch's): assigned to a
        module attribute, it is not registered as a parameter again."""
        plain = Tensor._make(self._array)
        plain._version_counter = self._version_counter
        return plain
