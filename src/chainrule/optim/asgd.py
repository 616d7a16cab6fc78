"""`ASGD`: SGD with a decaying step and a running average of the iterates, with PyTorch's
formula (single-tensor CPU path)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .arithmetic import Arithmetic
from .optimizer import Optimizer, Params, _zeros, implementation_options


class ASGD(Optimizer):
    """Averaged stochastic gradient descent: SGD whose step size ``eta`` decays with the step
    count, keeping in ``state["ax"]`` a running average of the iterates (the averaged solution).

    PyTorch's algorithm: ``x *= 1 - lambd * eta``; ``x -= eta * g``; ``ax += mu * (x - ax)``
    (``ax = x`` while ``mu == 1``); then ``eta = lr / (1 + lambd * lr * t) ** alpha`` and
    ``mu = 1 / max(1, t - t0)``. As in PyTorch, ``eta`` and ``mu`` are kept as float32
    numbers. ``foreach`` and ``capturable`` are accepted and change nothing.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = ASGD([x], lr=0.1, lambd=0.0)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x
    tensor([0.8000], requires_grad=True)
    """

    _update_is_elementwise = True
    records_update = True

    _scalar_state = ("eta", "mu")

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        switches = implementation_options(
            "ASGD", differentiable, foreach=foreach, capturable=capturable
        )
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            maximize=maximize,
            **switches,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "weight_decay")

    def _state_branches(self, group: dict) -> tuple:
        # whether the average moves (mu != 1, from step t0 on) or copies the parameter
        return tuple(self.state[p].get("mu", 1.0) != 1 for p in group["params"])

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state["step"] = 0
            state["eta"] = float(np.float32(lr))
            state["mu"] = 1.0
            state["ax"] = _zeros(x)
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = arith.add(g, arith.mul(x, group["weight_decay"]))
        eta, ax = state["eta"], state["ax"]._array
        arith.mul_(x, 1 - lambd * eta)
        arith.add_(x, arith.mul(g, -eta))
        if state["mu"] != 1:
            arith.add_(ax, arith.mul(arith.sub(x, ax), state["mu"]))
        else:
            arith.assign_(ax, x)
        step = state["step"]
        state["eta"] = float(np.float32(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        state["mu"] = float(np.float32(1 / max(1, step - group["t0"])))
