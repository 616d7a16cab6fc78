"""Per-coordinate step sizes without Adam's bias correction: RMSprop, Adagrad and Adadelta,
with PyTorch's formulas (single-tensor CPU path)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError
from .optimizers import Optimizer, _lerp_, _zeros, implementation_options

Params = Iterable[Tensor] | Iterable[dict] | Iterable[tuple[str, Tensor]]


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

    def _update(self, x: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        if not state:
            state["step"] = 0
            state["square_avg"] = _zeros(x)
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * x
        square_avg = state["square_avg"].data
        square_avg *= alpha
        square_avg += (1 - alpha) * (g * g)
        if group["centered"]:
            grad_avg = state.setdefault("grad_avg", _zeros(x)).data
            _lerp_(grad_avg, g, 1 - alpha)
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += eps
        if momentum > 0:
            buffer = state.setdefault("momentum_buffer", _zeros(x)).data
            buffer *= momentum
            buffer += g / avg
            x -= group["lr"] * buffer
        else:
            x -= group["lr"] * (g / avg)


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

    def _update(self, x: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        if not state:
            state["step"] = 0
            state["sum"] = Tensor._make(np.full_like(x, group["initial_accumulator_value"]))
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * x
        lr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        total = state["sum"].data
        total += g * g
        x -= lr * (g / (np.sqrt(total) + group["eps"]))


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

    def _update(self, x: np.ndarray, g: np.ndarray, state: dict, group: dict) -> None:
        rho, eps = group["rho"], group["eps"]
        if not state:
            state["step"] = 0
            state["square_avg"], state["acc_delta"] = _zeros(x), _zeros(x)
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * x
        square_avg, acc_delta = state["square_avg"].data, state["acc_delta"].data
        square_avg *= rho
        square_avg += (1 - rho) * (g * g)
        delta = np.sqrt(acc_delta + eps) / np.sqrt(square_avg + eps) * g
        acc_delta *= rho
        acc_delta += (1 - rho) * (delta * delta)
        x -= group["lr"] * delta
