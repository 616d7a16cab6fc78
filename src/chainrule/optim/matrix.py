"""Optimizers that treat a parameter as a matrix: Adafactor (the second moment kept as a row and
a column factor) and Muon (momentum orthogonalised by a Newton–Schulz iteration), with the
formulas of PyTorch 2.13's own versions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, ShapeError, fmt_shape
from .arithmetic import Arithmetic
from .optimizer import Optimizer, Params, _lerp_, _zeros


def _norm(x: np.ndarray) -> float:
    return float(np.sqrt(np.sum(x * x)))


class Adafactor(Optimizer):
    """Adafactor: an Adam-like second moment that, for a parameter of two or more dimensions,
    stores only its row and column means (memory ``R + C`` instead of ``R * C``).

    PyTorch's algorithm at step ``t``: ``β̂ = t ** beta2_decay`` (the lerp weight);
    ``ρ = min(lr, 1/sqrt(t))``; ``α = max(eps[1], rms(x)) * ρ``; ``x *= 1 - lr * weight_decay``;
    rows ``r = lerp(r, mean(g², -1), β̂)``, columns ``c = lerp(c, mean(g², -2), β̂)`` and
    ``v = r c / mean(r)`` (a vector keeps the full ``v = lerp(v, g², β̂)``);
    ``u = g / sqrt(max(v, eps[0]²))``; ``x -= α / max(1, rms(u) / d) * u``. ``eps[0]=None``
    means the parameter dtype's machine epsilon. ``foreach`` is accepted and changes nothing.

    >>> import chainrule
    >>> w = chainrule.ones(2, 3, requires_grad=True)
    >>> opt = Adafactor([w], lr=0.01)
    >>> (w * w).sum().backward()
    >>> _ = opt.step()
    >>> w  # the first step moves every entry by lr * rms(w)
    tensor([[0.9900, 0.9900, 0.9900],
            [0.9900, 0.9900, 0.9900]], requires_grad=True)
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            beta2_decay=beta2_decay,
            eps=tuple(eps),
            d=d,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "weight_decay")
        if not group["beta2_decay"] <= 0:
            raise DomainError(
                f"Adafactor: invalid beta2_decay {group['beta2_decay']!r}; it must be <= 0"
            )
        eps1, eps2 = group["eps"]
        if (eps1 is not None and not eps1 >= 0) or not eps2 >= 0:
            raise DomainError(f"Adafactor: invalid eps {group['eps']!r}; each must be >= 0")
        if not group["d"] >= 1:
            raise DomainError(f"Adafactor: invalid d {group['d']!r}; it must be >= 1")

    def _load_value(self, value: Any, param: Tensor, name: str, key: Any) -> Any:
        if name not in ("row_var", "col_var"):
            return super()._load_value(value, param, name, key)
        array = np.array(value._array if isinstance(value, Tensor) else value, param.dtype)
        shape = list(param.shape)
        shape[-1 if name == "row_var" else -2] = 1
        if list(array.shape) != shape:
            raise ShapeError(
                f"Adafactor.load_state_dict: state {name!r} of parameter {key} has shape "
                f"{fmt_shape(array.shape)}, expected {fmt_shape(tuple(shape))}"
            )
        return Tensor._make(array)

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        lr, eps1, eps2 = group["lr"], *group["eps"]
        if eps1 is None:
            eps1 = float(np.finfo(x.dtype).eps)
        if not state:
            state["step"] = 0
            if g.ndim > 1:
                state["row_var"] = Tensor._make(np.zeros(g.shape[:-1] + (1,), x.dtype))
                state["col_var"] = Tensor._make(np.zeros(g.shape[:-2] + (1, g.shape[-1]), x.dtype))
            else:
                state["variance"] = _zeros(x)
        state["step"] += 1
        step = float(state["step"])
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / step**0.5)
        alpha = max(eps2, _norm(x) / x.size**0.5) * rho
        if group["weight_decay"] != 0:
            x *= 1 - lr * group["weight_decay"]
        if g.ndim > 1:
            row_var, col_var = state["row_var"]._array, state["col_var"]._array
            square = g * g
            row_mean = np.sqrt(np.sum(square, axis=-1, keepdims=True)) ** 2 / g.shape[-1]
            _lerp_(row_var, row_mean, one_minus_beta2)
            col_mean = np.sqrt(np.sum(square, axis=-2, keepdims=True)) ** 2 / g.shape[-2]
            _lerp_(col_var, col_mean, one_minus_beta2)
            estimate = row_var @ col_var
            estimate /= np.maximum(np.mean(row_var, axis=-2, keepdims=True), eps1)
        else:
            variance = state["variance"]._array
            _lerp_(variance, g * g, one_minus_beta2)
            estimate = variance.copy()
        update = g / np.sqrt(np.maximum(estimate, eps1 * eps1))
        denom = max(1.0, _norm(update) / (update.size**0.5 * group["d"]))
        x += (-alpha / denom) * update


def _orthogonalize(m: np.ndarray, coefficients: tuple, steps: int, eps: float) -> np.ndarray:
    """A quintic Newton–Schulz iteration taking ``m`` towards ``U Vᵀ`` (its SVD ``U S Vᵀ``
    with the singular values pushed near 1), as Muon does."""
    a, b, c = coefficients
    tall = m.shape[0] > m.shape[1]
    x = m.T if tall else m  # iterate on the wide form: the Gram matrix is the smaller one
    x = x / max(_norm(x), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.T if tall else x


class Muon(Optimizer):
    """Muon: momentum SGD for 2-D weights whose update is orthogonalised (all its singular
    values brought near 1) by ``ns_steps`` Newton–Schulz iterations.

    PyTorch's algorithm: ``b = lerp(b, g, 1 - momentum)``; ``u = lerp(g, b, momentum)``
    (Nesterov) or ``b``; ``O = NS(u)``; ``x *= 1 - lr * weight_decay``;
    ``x -= lr * s * O`` with ``s = sqrt(max(1, rows / cols))`` (``adjust_lr_fn="original"`` or
    None) or ``0.2 * sqrt(max(rows, cols))`` (``"match_rms_adamw"``). Unlike PyTorch, which runs
    the iteration in bfloat16, it runs in the parameter's dtype (NumPy has no bfloat16), so
    updates differ from PyTorch's by bfloat16 rounding (about 1%).

    >>> import chainrule
    >>> w = chainrule.tensor([[3.0, 0.0], [0.0, 1.0]], requires_grad=True)
    >>> opt = Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward()
    >>> _ = opt.step()
    >>> w  # both directions move about lr, though one gradient is 3 times the other
    tensor([[2.9247, 0.0000],
            [0.0000, 0.8866]], requires_grad=True)
    """

    def __init__(
        self,
        params: Params,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (3.4445, -4.7750, 2.0315),
        eps: float = 1e-7,
        ns_steps: int = 5,
        adjust_lr_fn: str | None = None,
    ) -> None:
        defaults = dict(
            lr=lr,
            weight_decay=weight_decay,
            momentum=momentum,
            nesterov=nesterov,
            ns_coefficients=tuple(ns_coefficients),
            eps=eps,
            ns_steps=ns_steps,
            adjust_lr_fn=adjust_lr_fn,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        self._check_non_negative(group, "lr", "momentum", "weight_decay")
        if group["adjust_lr_fn"] not in (None, "original", "match_rms_adamw"):
            raise DomainError(
                f"Muon: unknown adjust_lr_fn {group['adjust_lr_fn']!r}; use None, 'original' or "
                "'match_rms_adamw'"
            )
        if len(group["ns_coefficients"]) != 3:
            raise DomainError(
                f"Muon: ns_coefficients must be three numbers (a, b, c), got "
                f"{group['ns_coefficients']!r}"
            )
        if not 0 <= group["ns_steps"] < 100:
            raise DomainError(f"Muon: ns_steps must be in [0, 100), got {group['ns_steps']!r}")
        for i, param in enumerate(group["params"]):
            if param.ndim != 2:
                raise ShapeError(
                    f"Muon: parameter {i} of a group has shape {fmt_shape(param.shape)}; Muon "
                    "only updates 2-D weights (give biases and embeddings to AdamW)"
                )

    def _update(
        self, x: np.ndarray, g: np.ndarray, state: dict, group: dict, arith: Arithmetic
    ) -> None:
        momentum = group["momentum"]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = _zeros(x)
        buffer = state["momentum_buffer"]._array
        _lerp_(buffer, g, 1 - momentum)
        if group["nesterov"]:
            update = g.copy()
            _lerp_(update, buffer, momentum)
        else:
            update = buffer
        update = _orthogonalize(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        rows, cols = x.shape
        if group["adjust_lr_fn"] == "match_rms_adamw":
            ratio = 0.2 * math.sqrt(max(rows, cols))
        else:
            ratio = math.sqrt(max(1, rows / cols))
        x *= 1 - group["lr"] * group["weight_decay"]
        x += (-group["lr"] * ratio) * update.astype(x.dtype, copy=False)
