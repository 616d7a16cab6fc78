"""`Adadelta`: a unit-free step, the ratio of running RMS sizes of past steps and of past
gradients, with PyTorch's formula (single-tensor CPU path)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DomainError
from .arithmetic import Arithmetic
from .optimizer import Optimizer, Params, _zeros, implementation_options


class Adadelta(Optimizer):
    """Adadelta: each coordinate's step is the ratio of running RMS sizes of past steps and
    of past gradients, so ``lr`` (default 1) only scales a unit-free update.

    PyTorch's algorithm: ``v = ρ v + (1 - ρ) g²``; ``δ = sqrt(u + eps) / sqrt(v + eps) * g``;
    ``u = ρ u + (1 - ρ) δ²``; ``x -= lr δ``.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = Adadelta([x])
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> round(x.item(), 6)  # sqrt(1e-6) / sqrt(0.4 + 1e-6) * 2
    0.996838
    """

    _update_is_elementwise = True
    records_update = True

    def __init__(
        self,
        params: Params,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        switches = implementation_options(
            "Adadelta", differentiable, foreach=foreach, capturable=capturable
        )
        defaults = dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, **switches
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "eps", "weight_decay")
        if not 0.0 <= group["rho"] <= 1.0:
            raise DomainError(f"Adadelta: invalid rho {group['rho']!r}; it must be in [0, 1]")

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        rho, eps = group["rho"], group["eps"]
        if not state:
            state["step"] = 0
            state["square_avg"], state["acc_delta"] = _zeros(x), _zeros(x)
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = arith.add(g, arith.mul(x, group["weight_decay"]))
        square_avg, acc_delta = state["square_avg"]._array, state["acc_delta"]._array
        arith.mul_(square_avg, rho)
        arith.add_(square_avg, arith.mul(arith.mul(g, g), 1 - rho))
        scale = arith.sqrt(arith.add(acc_delta, eps))
        delta = arith.mul(arith.div(scale, arith.sqrt(arith.add(square_avg, eps))), g)
        arith.mul_(acc_delta, rho)
        arith.add_(acc_delta, arith.mul(arith.mul(delta, delta), 1 - rho))
        arith.sub_(x, arith.mul(delta, group["lr"]))
