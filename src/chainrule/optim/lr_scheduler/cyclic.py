"""Schedules that go up and down: CyclicLR, OneCycleLR (both can cycle the momentum, or Adam's
β1, against the lr) and CosineAnnealingWarmRestarts, with PyTorch's formulas.

Unlike the schedules in `optim.lr_scheduler.formulas`, these set the lr from the epoch directly
(PyTorch's own form for them), so another scheduler on the same optimizer is overwritten, as in
PyTorch.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

from ...errors import DomainError
from ...observe import replayed_whole
from ..optimizer import Optimizer
from .base import LRScheduler, _check_optimizer, per_group


class _CyclesMomentum:
    """Writes a momentum into each group: ``betas[0]`` for Adam-like optimizers, else
    ``momentum``; starts every group at its ``max_momentum``."""

    optimizer: Optimizer
    use_beta1: bool

    def _setup_momentum(
        self, owner: str, base_momentum: Any, max_momentum: Any, last_epoch: int
    ) -> tuple[list[float], list[float]]:
        defaults = self.optimizer.defaults
        if "momentum" not in defaults and "betas" not in defaults:
            raise DomainError(
                f"{owner}: cycle_momentum needs an optimizer with momentum or betas "
                f"({type(self.optimizer).__name__} has neither); pass cycle_momentum=False"
            )
        self.use_beta1 = "betas" in defaults
        base = per_group("base_momentum", self.optimizer, base_momentum, owner)
        top = per_group("max_momentum", self.optimizer, max_momentum, owner)
        if last_epoch == -1:
            for high, low, group in zip(top, base, self.optimizer.param_groups):
                self._set_momentum(group, high)
                group["max_momentum"], group["base_momentum"] = high, low
        return base, top

    def _set_momentum(self, group: dict[str, Any], momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum


class CyclicLR(_CyclesMomentum, LRScheduler):
    """Cycle the lr between ``base_lr`` and ``max_lr``: up over ``step_size_up`` steps, down
    over ``step_size_down`` (default the same), with the momentum going the other way.

    ``mode``: ``"triangular"`` (the same cycle each time), ``"triangular2"`` (the amplitude
    halves each cycle) or ``"exp_range"`` (it shrinks by ``gamma`` each step); or pass
    ``scale_fn`` (of the cycle number, or of the step with ``scale_mode="iterations"``). Call
    ``step()`` after every batch.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
    >>> scheduler = CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> lrs = scheduler.get_last_lr()
    >>> for _ in range(4):
    ...     scheduler.step()
    ...     lrs += scheduler.get_last_lr()
    >>> [round(lr, 3) for lr in lrs]
    [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = _check_optimizer(optimizer, "CyclicLR")
        base_lrs = per_group("base_lr", optimizer, base_lr, "CyclicLR")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = per_group("max_lr", optimizer, max_lr, "CyclicLR")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise DomainError(
                f"CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range' (or pass "
                f"scale_fn), got {mode!r}"
            )
        if scale_mode not in ("cycle", "iterations"):
            raise DomainError(
                f"CyclicLR: scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}"
            )
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_mode()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = self._setup_momentum(
                "CyclicLR", base_momentum, max_momentum, last_epoch
            )
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_mode(self) -> None:
        if self._scale_fn_custom is None:
            self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # position in the cycle, 0 to 1
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            base + (top - base) * scale_factor * scale
            for base, top in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for group, base, top in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                self._set_momentum(group, top - (top - base) * scale_factor * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The counters and settings; a custom ``scale_fn`` is kept only as its attributes
        (None for a plain function), as in PyTorch."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = dict(fn.__dict__)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the counters and settings (and a custom ``scale_fn``'s attributes)."""
        state = dict(state_dict)
        attributes = state.pop("_scale_fn_custom", None)
        super().load_state_dict(state)
        if attributes is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(attributes)
        self._init_scale_mode()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial lr to ``eta_min`` over ``T_0`` epochs, then a restart;
    each period is ``T_mult`` times the last. ``step(epoch)`` may take a fractional epoch.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = scheduler.get_last_lr()
    >>> for _ in range(3):
    ...     scheduler.step()
    ...     lrs += scheduler.get_last_lr()
    >>> [round(lr, 3) for lr in lrs]
    [1.0, 0.5, 1.0, 0.5]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise DomainError(
                f"CosineAnnealingWarmRestarts: T_0 must be a positive int, got {T_0!r}"
            )
        if not isinstance(T_mult, int) or T_mult < 1:
            raise DomainError(
                f"CosineAnnealingWarmRestarts: T_mult must be an int >= 1, got {T_mult!r}"
            )
        self.T_0, self.T_i, self.T_mult = T_0, T_0, T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        cosine = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base - self.eta_min) * cosine / 2 for base in self.base_lrs]

    @replayed_whole(python=True)  # numbers only: the optimizer's next step reads them
    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to ``epoch`` (fractional allowed: ``epoch + i / iters``)."""
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise DomainError(f"CosineAnnealingWarmRestarts: epoch must be >= 0, got {epoch!r}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # which period holds `epoch`: the periods' lengths form a geometric series
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._current_lrs()


class OneCycleLR(_CyclesMomentum, LRScheduler):
    """The 1cycle policy: the lr rises from ``max_lr / div_factor`` to ``max_lr`` over the first
    ``pct_start`` of ``total_steps`` (or ``epochs * steps_per_epoch``), then anneals to
    ``initial_lr / final_div_factor``; the momentum moves the other way.

    ``anneal_strategy`` is ``"cos"`` or ``"linear"``; ``three_phase`` comes back down to the
    initial lr symmetrically before the final anneal. Call ``step()`` after every batch;
    stepping past ``total_steps`` is an error.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
    >>> scheduler = OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="linear")
    >>> # the peak is at step pct_start * 5 - 1 = 0.5, so no step lands on it
    >>> lrs = scheduler.get_last_lr()
    >>> for _ in range(4):
    ...     scheduler.step()
    ...     lrs += scheduler.get_last_lr()
    >>> [round(lr, 4) for lr in lrs]
    [0.04, 0.8571, 0.5714, 0.2857, 0.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = _check_optimizer(optimizer, "OneCycleLR")
        self.total_steps = self._count_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise DomainError(f"OneCycleLR: pct_start must be a float in [0, 1], got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise DomainError(
                f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        self._anneal_func_type = anneal_strategy
        up = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if three_phase:
            down = float(2 * pct_start * self.total_steps) - 2
            phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (down, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (last, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (last, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases = [dict(zip(keys, phase)) for phase in phases]
        max_lrs = per_group("max_lr", optimizer, max_lr, "OneCycleLR")
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._setup_momentum("OneCycleLR", base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _count_steps(total_steps: Any, epochs: Any, steps_per_epoch: Any) -> int:
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise DomainError(
                    f"OneCycleLR: total_steps must be a positive int, got {total_steps!r}"
                )
            return total_steps
        if epochs is None or steps_per_epoch is None:
            raise DomainError("OneCycleLR: pass total_steps, or both epochs and steps_per_epoch")
        for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
            if not isinstance(value, int) or value <= 0:
                raise DomainError(f"OneCycleLR: {name} must be a positive int, got {value!r}")
        return epochs * steps_per_epoch

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise DomainError(
                f"OneCycleLR: stepped {step} times, past total_steps={self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                        self._set_momentum(group, momentum)
                    break
                start_step = phase["end_step"]
        return lrs
