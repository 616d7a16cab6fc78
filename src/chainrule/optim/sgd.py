"""`SGD`: stochastic gradient descent with optional momentum, with PyTorch's update formula.
The base class and its state handling are `optim.optimizer`'s."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError
from .arithmetic import Arithmetic
from .optimizer import Optimizer, implementation_options


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum (heavy-ball or Nesterov).

    PyTorch's algorithm: ``g += weight_decay * x``; ``b = momentum * b + (1 - dampening) * g``
    (``b = g`` on the first step); ``g = g + momentum * b`` (Nesterov) or ``g = b``;
    ``x -= lr * g``. With ``maximize`` the gradient's sign is flipped first.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = SGD([x], lr=0.1)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    _update_is_elementwise = True
    records_update = True

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            **implementation_options("SGD", differentiable, foreach=foreach, fused=fused),
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "momentum", "weight_decay")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise DomainError(
                f"SGD: Nesterov momentum needs momentum > 0 and dampening = 0, got momentum="
                f"{group['momentum']} and dampening={group['dampening']}"
            )

    def _packs_pay(self, group: dict) -> bool:
        return group["momentum"] != 0  # plain SGD's two lines: nothing to gain

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        momentum, weight_decay = group["momentum"], group["weight_decay"]
        if weight_decay != 0:
            g = arith.add(g, arith.mul(x, weight_decay))
        if momentum != 0:
            buffer = state.get("momentum_buffer")
            if buffer is None:  # the first step: the gradient itself, as in PyTorch
                buffer = state["momentum_buffer"] = Tensor._make(np.array(g, dtype=x.dtype))
                b = buffer._array
            else:
                b = arith.mul_(buffer._array, momentum)
                arith.add_(b, arith.mul(g, 1 - group["dampening"]))
            g = arith.add(g, arith.mul(b, momentum)) if group["nesterov"] else b
        arith.sub_(x, arith.mul(g, group["lr"]))
