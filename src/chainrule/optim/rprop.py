"""`Rprop` (resilient backpropagation): a per-coordinate step size grown or shrunk by the sign
of successive gradients, with PyTorch's formula (single-tensor CPU path)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError
from .arithmetic import Arithmetic
from .optimizer import Optimizer, Params, _zeros, implementation_options


class Rprop(Optimizer):
    """Resilient backpropagation: moves each coordinate by its own step size, in the direction
    of the gradient's sign only.

    PyTorch's algorithm: where ``g`` and the previous gradient have the same sign the step
    size grows by ``etas[1]``, where they differ it shrinks by ``etas[0]`` and this step skips
    the coordinate (its remembered gradient becomes 0); step sizes stay within ``step_sizes``
    and start at ``lr``; ``x -= sign(g) * step_size``. ``foreach`` and ``capturable`` are
    accepted and change nothing.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Rprop([x], lr=0.1)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x  # each coordinate moves by lr against its gradient's sign
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    _update_is_elementwise = True

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        switches = implementation_options(
            "Rprop", differentiable, foreach=foreach, capturable=capturable
        )
        defaults = dict(
            lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize, **switches
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr")
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise DomainError(
                f"Rprop: invalid etas {group['etas']!r}; need 0 < etaminus < 1 < etaplus"
            )

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        if not state:
            state["step"] = 0
            state["prev"] = _zeros(x)
            state["step_size"] = Tensor._make(np.full_like(x, group["lr"]))
        state["step"] += 1
        prev, step_size = state["prev"]._array, state["step_size"]._array
        sign = np.sign(g * prev)
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0)).astype(x.dtype)
        step_size *= factor
        np.clip(step_size, step_size_min, step_size_max, out=step_size)
        g = np.where(factor == etaminus, 0, g).astype(x.dtype)  # a sign change: skip once
        x -= np.sign(g) * step_size
        prev[...] = g
