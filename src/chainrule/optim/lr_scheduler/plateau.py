"""`ReduceLROnPlateau`: the lr cut by a factor when a watched metric stops improving (its
``step`` takes the metric, so it is no `LRScheduler`)."""

from __future__ import annotations

import math
from typing import Any

from ...errors import DomainError
from ...observe import replayed_whole
from ..optimizer import Optimizer
from .base import _check_optimizer


class ReduceLROnPlateau:
    """Multiply the lr by ``factor`` when a metric has not improved for ``patience`` epochs.

    ``step(metric)`` takes the value to watch: ``mode="min"`` for a loss, ``"max"`` for an
    accuracy. An improvement must beat the best by ``threshold`` (relative or absolute, per
    ``threshold_mode``); after a reduction, ``cooldown`` epochs pass before counting again; the
    lr never goes below ``min_lr``, and changes smaller than ``eps`` are skipped.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [3.0, 2.0, 2.0, 2.0]:
    ...     scheduler.step(loss)
    >>> scheduler.get_last_lr()
    [0.5]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | list[float] = 0.0,
        eps: float = 1e-8,
    ) -> None:
        self.optimizer = _check_optimizer(optimizer, "ReduceLROnPlateau")
        if factor >= 1.0:
            raise DomainError(f"ReduceLROnPlateau: factor must be < 1, got {factor}")
        if mode not in ("min", "max"):
            raise DomainError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise DomainError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}"
            )
        n_groups = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n_groups:
                raise DomainError(
                    f"ReduceLROnPlateau: got {len(min_lr)} min_lrs for {n_groups} parameter groups"
                )
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * n_groups
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.last_epoch = 0
        self.best = math.inf if mode == "min" else -math.inf
        self.cooldown_counter = 0
        self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _is_better(self, value: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return value < self.best * (1.0 - self.threshold)
        if self.mode == "min":
            return value < self.best - self.threshold
        if self.threshold_mode == "rel":
            return value > self.best * (self.threshold + 1.0)
        return value > self.best + self.threshold

    @replayed_whole(python=True)  # numbers only: the optimizer's next step reads them
    def step(self, metrics: float, epoch: int | None = None) -> None:
        """Record this epoch's metric (a number or a one-element Tensor) and maybe reduce."""
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during cooldown do not count
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                old_lr = float(group["lr"])
                new_lr = max(old_lr * self.factor, min_lr)
                if old_lr - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The lrs after the last step, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer, as a dict."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the counters and settings saved by `state_dict`."""
        self.__dict__.update(state_dict)
