"""The Adam family: Adam, AdamW, NAdam, RAdam, Adamax and SparseAdam, each stepping along a
running mean of the gradient scaled by a running size of it, with PyTorch's formulas
(single-tensor CPU path).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DomainError
from .arithmetic import Arithmetic
from .optimizer import Optimizer, Params, _zeros, implementation_options


def _decay(x: np.ndarray, g: np.ndarray, group: dict, decoupled: bool, arith: Arithmetic):
    """Apply weight decay: shrink ``x`` in place (decoupled) or return ``g + wd * x`` (L2)."""
    weight_decay = group["weight_decay"]
    if weight_decay == 0:
        return g
    if decoupled:
        arith.mul_(x, 1 - group["lr"] * weight_decay)
        return g
    return arith.add(g, arith.mul(x, weight_decay))


def _moments(x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic) -> tuple:
    """Start the state if new, count the step and update the two running means in place."""
    if not state:
        state["step"] = 0
        state["exp_avg"], state["exp_avg_sq"] = _zeros(x), _zeros(x)
    state["step"] += 1
    exp_avg, exp_avg_sq = state["exp_avg"]._array, state["exp_avg_sq"]._array
    beta1, beta2 = group["betas"]
    arith.lerp_(exp_avg, g, 1 - beta1)  # m = lerp(m, g, 1 - β1)
    arith.mul_(exp_avg_sq, beta2)  # v = β2 v + (1 - β2) g²
    square = arith.mul(g, g)
    arith.mul_(square, 1 - beta2)
    arith.add_(exp_avg_sq, square)
    return state["step"], exp_avg, exp_avg_sq


def _adam_step(exp_avg, exp_avg_sq, step: int, group: dict, arith: Arithmetic):
    """What Adam subtracts from the parameter at ``step``: ``lr / (1 - β1^t) * m /
    (sqrt(v) / sqrt(1 - β2^t) + eps)``, in PyTorch's order of operations."""
    beta1, beta2 = group["betas"]
    update = arith.sqrt(exp_avg_sq)
    arith.div_(update, (1 - beta2**step) ** 0.5)
    arith.add_(update, group["eps"])
    update = arith.div(exp_avg, update)
    return arith.mul_(update, group["lr"] / (1 - beta1**step))


class Adam(Optimizer):
    """Adam: steps along bias-corrected running means of the gradient and its square.

    PyTorch's algorithm: ``m = lerp(m, g, 1 - β1)``; ``v = β2 v + (1 - β2) g²``;
    ``x -= lr / (1 - β1^t) * m / (sqrt(v) / sqrt(1 - β2^t) + eps)``, with ``v`` replaced by its
    running maximum when ``amsgrad``. ``weight_decay`` adds ``weight_decay * x`` to the gradient
    (L2), or with ``decoupled_weight_decay`` (as `AdamW`) shrinks the weights directly.
    ``foreach``, ``capturable`` and ``fused`` are accepted and change nothing.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adam([x], lr=0.1)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x  # the first Adam step moves each coordinate by about lr
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    _update_is_elementwise = True
    records_update = True

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        switches = implementation_options(
            self._name, differentiable, foreach=foreach, capturable=capturable, fused=fused
        )
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            decoupled_weight_decay=decoupled_weight_decay,
            **switches,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "eps", "weight_decay")
        self._check_betas(group)

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        g = _decay(x, g, group, group["decoupled_weight_decay"], arith)
        step, exp_avg, exp_avg_sq = _moments(x, g, state, group, arith)
        if group["amsgrad"]:
            if "max_exp_avg_sq" not in state:
                state["max_exp_avg_sq"] = _zeros(x)
            exp_avg_sq = arith.maximum_(state["max_exp_avg_sq"]._array, exp_avg_sq)
        arith.sub_(x, _adam_step(exp_avg, exp_avg_sq, step, group, arith))


class AdamW(Adam):
    """Adam with decoupled weight decay: ``x *= 1 - lr * weight_decay`` before the Adam step.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = AdamW([x], lr=0.1, weight_decay=0.5)
    >>> x.grad = chainrule.tensor([0.0])
    >>> _ = opt.step()
    >>> x  # a zero gradient: only the decay acts
    tensor([0.9500], requires_grad=True)
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable, fused=fused,
            decoupled_weight_decay=True,
        )  # fmt: skip


class NAdam(Optimizer):
    """Adam with Nesterov momentum: the step looks ahead with next step's momentum factor.

    PyTorch's algorithm (Dozat's with momentum decay): ``μ_t = β1 (1 - 0.96^(t ψ) / 2)`` with
    ``ψ = momentum_decay``; ``Π = μ_1 ... μ_t`` (``mu_product``, kept in float32 as
    PyTorch keeps it); moments as in `Adam`; ``d = sqrt(v / (1 - β2^t)) + eps``;
    ``x -= lr (1 - μ_t) / (1 - Π) g / d + lr μ_{t+1} / (1 - Π μ_{t+1}) m / d``.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = NAdam([x], lr=0.1)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x  # the gradient term and the look-ahead momentum term together: more than lr
    tensor([0.8944], requires_grad=True)
    """

    _update_is_elementwise = True
    records_update = True

    _scalar_state = ("mu_product",)

    def __init__(
        self,
        params: Params,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        switches = implementation_options(
            "NAdam", differentiable, foreach=foreach, capturable=capturable
        )
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            **switches,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "eps", "weight_decay", "momentum_decay")
        self._check_betas(group)

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        lr, eps, psi = group["lr"], group["eps"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        if not state:
            state["step"], state["mu_product"] = 0, 1.0
            state["exp_avg"], state["exp_avg_sq"] = _zeros(x), _zeros(x)
        g = _decay(x, g, group, group["decoupled_weight_decay"], arith)
        step, exp_avg, exp_avg_sq = _moments(x, g, state, group, arith)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        # PyTorch holds the product in a float32 tensor and multiplies in float32.
        mu_product = float(np.float32(state["mu_product"]) * np.float32(mu))
        state["mu_product"] = mu_product
        denom = arith.sqrt(arith.div(exp_avg_sq, 1 - beta2**step))
        arith.add_(denom, eps)
        arith.add_(x, arith.mul(arith.div(g, denom), -lr * (1.0 - mu) / (1.0 - mu_product)))
        step_size = -lr * mu_next / (1.0 - mu_product * mu_next)
        arith.add_(x, arith.mul(arith.div(exp_avg, denom), step_size))


class RAdam(Optimizer):
    """Rectified Adam: plain momentum SGD until the variance estimate is trustworthy.

    PyTorch's algorithm: moments as in `Adam`; ``ρ∞ = 2 / (1 - β2) - 1``,
    ``ρ_t = ρ∞ - 2 t β2^t / (1 - β2^t)``; when ``ρ_t > 5`` the step is
    ``lr m / (1 - β1^t) * r_t sqrt(1 - β2^t) / (sqrt(v) + eps)`` with the rectification
    ``r_t = sqrt((ρ_t - 4)(ρ_t - 2) ρ∞ / ((ρ∞ - 4)(ρ∞ - 2) ρ_t))``, else ``lr m / (1 - β1^t)``.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = RAdam([x], lr=0.1)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x  # the first steps are momentum SGD: 1 - 0.1 * 2
    tensor([0.8000], requires_grad=True)
    """

    _update_is_elementwise = True
    records_update = True

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        switches = implementation_options(
            "RAdam", differentiable, foreach=foreach, capturable=capturable
        )
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            **switches,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "eps", "weight_decay")
        self._check_betas(group)

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        g = _decay(x, g, group, group["decoupled_weight_decay"], arith)
        step, exp_avg, exp_avg_sq = _moments(x, g, state, group, arith)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = arith.div(exp_avg, bias_correction1)
        rho_inf, rho_t = _rho(step, beta2)
        if rho_t > 5.0:
            rect = (
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            ) ** 0.5
            adaptive = arith.div(bias_correction2**0.5, arith.add(arith.sqrt(exp_avg_sq), eps))
            arith.sub_(x, arith.mul(arith.mul(arith.mul(corrected, lr), adaptive), rect))
        else:
            arith.sub_(x, arith.mul(corrected, lr))

    def _state_branches(self, group: dict) -> tuple:
        # whether the next step rectifies (rho_t > 5), per parameter: the sixth step does
        beta2 = group["betas"][1]
        return tuple(
            _rho(self.state[p].get("step", 0) + 1, beta2)[1] > 5.0 for p in group["params"]
        )


def _rho(step: int, beta2: float) -> tuple[float, float]:
    """RAdam's ``ρ∞`` and ``ρ_t`` at ``step``."""
    rho_inf = 2 / (1 - beta2) - 1
    return rho_inf, rho_inf - 2 * step * (beta2**step) / (1 - beta2**step)


class Adamax(Optimizer):
    """Adam with the infinity norm: divides by a decaying running maximum of ``|g|``.

    PyTorch's algorithm: ``m = lerp(m, g, 1 - β1)``; ``u = max(β2 u, |g| + eps)``;
    ``x -= lr / (1 - β1^t) * m / u``.

    >>> import chainrule
    >>> x = chainrule.tensor([1.0], requires_grad=True)
    >>> opt = Adamax([x], lr=0.1)
    >>> (x * x).sum().backward()
    >>> _ = opt.step()
    >>> x
    tensor([0.9000], requires_grad=True)
    """

    _update_is_elementwise = True
    records_update = True

    def __init__(
        self,
        params: Params,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        switches = implementation_options(
            "Adamax", differentiable, foreach=foreach, capturable=capturable
        )
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            **switches,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "eps", "weight_decay")
        self._check_betas(group)

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"], state["exp_inf"] = _zeros(x), _zeros(x)
        state["step"] += 1
        g = _decay(x, g, group, False, arith)
        exp_avg, exp_inf = state["exp_avg"]._array, state["exp_inf"]._array
        arith.lerp_(exp_avg, g, 1 - beta1)
        arith.mul_(exp_inf, beta2)
        arith.maximum_(exp_inf, arith.add(arith.abs(g), group["eps"]))
        step_size = group["lr"] / (1 - beta1 ** state["step"])
        arith.sub_(x, arith.mul(arith.div(exp_avg, exp_inf), step_size))


class SparseAdam(Optimizer):
    """Adam that updates only the rows a step touched (the "lazy Adam" for embeddings): rows
    whose gradient is all zero keep their parameters and running means unchanged.

    PyTorch's SparseAdam needs sparse gradients (``nn.Embedding(sparse=True)``); chainrule has
    no sparse tensors, so this takes the dense gradient and treats a row (an index of the
    first dimension; an element for a 0-d parameter) as touched when any entry of its gradient
    is nonzero. For an embedding that is exactly the set of looked-up rows, so the numbers are
    PyTorch's. On touched rows: ``m += (1 - β1)(g - m)``; ``v += (1 - β2)(g² - v)``;
    ``x -= lr sqrt(1 - β2^t) / (1 - β1^t) * m / (sqrt(v) + eps)``, with ``t`` counting every
    step that had a gradient.

    >>> import chainrule
    >>> table = chainrule.ones(3, 2, requires_grad=True)
    >>> opt = SparseAdam([table], lr=0.1)
    >>> table[chainrule.tensor([0, 2])].sum().backward()
    >>> _ = opt.step()
    >>> table  # row 1 was not looked up, so it stays
    tensor([[0.9000, 0.9000],
            [1.0000, 1.0000],
            [0.9000, 0.9000]], requires_grad=True)
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        for name in ("lr", "eps"):
            if not group[name] > 0:
                raise DomainError(f"SparseAdam: invalid {name} {group[name]!r}; it must be > 0")
        self._check_betas(group)

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        if not state:
            state["step"] = 0
            state["exp_avg"], state["exp_avg_sq"] = _zeros(x), _zeros(x)
        state["step"] += 1
        rows = g != 0 if g.ndim == 0 else np.any(g.reshape(len(g), -1) != 0, axis=1)
        if not rows.any():
            return
        beta1, beta2 = group["betas"]
        step = state["step"]
        exp_avg, exp_avg_sq = state["exp_avg"]._array, state["exp_avg_sq"]._array
        g = g[rows]
        old_avg, old_sq = exp_avg[rows], exp_avg_sq[rows]
        avg_update = (g - old_avg) * (1 - beta1)
        sq_update = (g * g - old_sq) * (1 - beta2)
        exp_avg[rows] = old_avg + avg_update
        exp_avg_sq[rows] = old_sq + sq_update
        step_size = group["lr"] * math.sqrt(1 - beta2**step) / (1 - beta1**step)
        denom = np.sqrt(sq_update + old_sq) + group["eps"]
        x[rows] = x[rows] + -step_size * ((avg_update + old_avg) / denom)
