"""`Adagrad`: the gradient divided by the root of the sum of all past squared gradients, with
PyTorch's formula (single-tensor CPU path)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from .arithmetic import Arithmetic
from .optimizer import Optimizer, Params, implementation_options


class Adagrad(Optimizer):
    """Adagrad: divides the gradient by the root of the sum of all past squared gradients.

    PyTorch's algorithm: ``lr_t = lr / (1 + (t - 1) * lr_decay)``; ``s += g²``;
    ``x -= lr_t * g / (sqrt(s) + eps)``, with ``s`` starting at ``initial_accumulator_value``.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = Adagrad([x], lr=0.5)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x
    tensor([0.5000], requires_grad=True)
    """

    _update_is_elementwise = True
    records_update = True

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        switches = implementation_options("Adagrad", differentiable, foreach=foreach, fused=fused)
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
            maximize=maximize,
            **switches,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(
            group, "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"
        )

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        if not state:
            state["step"] = 0
            state["sum"] = Tensor._make(np.full_like(x, group["initial_accumulator_value"]))
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = arith.add(g, arith.mul(x, group["weight_decay"]))
        lr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        total = arith.add_(state["sum"]._array, arith.mul(g, g))
        arith.sub_(x, arith.mul(arith.div(g, arith.add(arith.sqrt(total), group["eps"])), lr))
