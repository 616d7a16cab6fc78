"""`RMSprop`: the gradient divided by a running root mean square of past gradients, with
PyTorch's formula (single-tensor CPU path)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .arithmetic import Arithmetic
from .optimizer import Optimizer, Params, _zeros, implementation_options


class RMSprop(Optimizer):
    """RMSprop: divides the gradient by a running root mean square of past gradients.

    PyTorch's algorithm: ``v = α v + (1 - α) g²``; ``avg = sqrt(v - ḡ²) + eps`` when
    ``centered`` (``ḡ`` a running mean of g), else ``sqrt(v) + eps``; with momentum
    ``b = momentum * b + g / avg`` and ``x -= lr * b``, else ``x -= lr * g / avg``.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = RMSprop([x], lr=0.01)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x  # g / sqrt(0.01 g²) = 10: the first step is lr * 10
    tensor([0.9000], requires_grad=True)
    """

    _update_is_elementwise = True
    records_update = True

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        switches = implementation_options(
            "RMSprop", differentiable, foreach=foreach, capturable=capturable
        )
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            maximize=maximize,
            **switches,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "alpha", "eps", "weight_decay", "momentum")

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        if not state:
            state["step"] = 0
            state["square_avg"] = _zeros(x)
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = arith.add(g, arith.mul(x, group["weight_decay"]))
        square_avg = arith.mul_(state["square_avg"]._array, alpha)
        arith.add_(square_avg, arith.mul(arith.mul(g, g), 1 - alpha))
        if group["centered"]:
            grad_avg = state.setdefault("grad_avg", _zeros(x))._array
            arith.lerp_(grad_avg, g, 1 - alpha)
            avg = arith.sqrt(arith.sub(square_avg, arith.mul(grad_avg, grad_avg)))
        else:
            avg = arith.sqrt(square_avg)
        arith.add_(avg, eps)
        if momentum > 0:
            buffer = arith.mul_(state.setdefault("momentum_buffer", _zeros(x))._array, momentum)
            arith.add_(buffer, arith.div(g, avg))
            arith.sub_(x, arith.mul(buffer, group["lr"]))
        else:
            arith.sub_(x, arith.mul(arith.div(g, avg), group["lr"]))
