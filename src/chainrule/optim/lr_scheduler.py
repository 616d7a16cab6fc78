"""Learning-rate schedulers: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR
and ReduceLROnPlateau, each changing ``group["lr"]`` of an optimizer the way PyTorch does.

Schedules update the current lr step by step (PyTorch's "chainable" form), so the sequences
match PyTorch's to the last bit. Call ``scheduler.step()`` after ``optimizer.step()``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import DomainError, DTypeError
from .optimizers import Optimizer


def _check_optimizer(optimizer: Any, name: str) -> Optimizer:
    if not isinstance(optimizer, Optimizer):
        raise DTypeError(f"{name}: expected an Optimizer, got {type(optimizer).__name__}")
    return optimizer


class LRScheduler:
    """Base class: remembers each group's initial lr (``base_lrs``) and the epoch count.

    Construction performs the first step (epoch 0), which keeps the current lrs.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        self.optimizer = _check_optimizer(optimizer, type(self).__name__)
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise DomainError(
                        f"{type(self).__name__}: param_groups[{i}] has no 'initial_lr', needed "
                        f"to resume at last_epoch={last_epoch}; load the optimizer's state first"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list[float]:
        """The lrs for the epoch ``last_epoch`` has just become (subclasses define it)."""
        raise NotImplementedError(f"{type(self).__name__}: define get_lr")

    def step(self) -> None:
        """Advance one epoch and write the new lr into every parameter group."""
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The lrs set by the last step, one per parameter group."""
        return list(self._last_lr)

    def _current_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (and functions), as a dict."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the counters and settings saved by `state_dict`."""
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     scheduler.step()
    ...     lrs += scheduler.get_last_lr()
    >>> lrs
    [1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        if not isinstance(step_size, int) or step_size <= 0:
            raise DomainError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each epoch listed in ``milestones``.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = MultiStepLR(opt, milestones=[1, 3], gamma=0.1)
    >>> for _ in range(3):
    ...     scheduler.step()
    >>> scheduler.get_last_lr()
    [0.010000000000000002]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [lr * factor for lr in self._current_lrs()]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]


class CosineAnnealingLR(LRScheduler):
    """Follow half a cosine from the initial lr down to ``eta_min`` over ``T_max`` epochs
    (then back up, periodically, as PyTorch's does without restarts)."""

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        if T_max <= 0:
            raise DomainError(f"CosineAnnealingLR: T_max must be positive, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        epoch, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and epoch > 0:  # resumed: closed form
            return [
                eta_min + (base - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                for base in self.base_lrs
            ]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:  # at the bottom the ratio below is 0/0
            return [
                lr + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                for lr, base in zip(self._current_lrs(), self.base_lrs)
            ]
        ratio = (1 + math.cos(math.pi * epoch / t_max)) / (
            1 + math.cos(math.pi * (epoch - 1) / t_max)
        )
        return [ratio * (lr - eta_min) + eta_min for lr in self._current_lrs()]


class LambdaLR(LRScheduler):
    """Set the lr to the initial lr times ``lr_lambda(epoch)`` (one function, or one per group).

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=0.5)
    >>> scheduler = LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    >>> scheduler.step()
    >>> scheduler.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        groups = _check_optimizer(optimizer, "LambdaLR").param_groups
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(groups):
                raise DomainError(
                    f"LambdaLR: got {len(lr_lambda)} lr_lambdas for {len(groups)} parameter groups"
                )
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(groups)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """The counters and settings; the functions themselves are not saved."""
        state = super().state_dict()
        del state["lr_lambdas"]
        return state


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

    def step(self, metrics: float) -> None:
        """Record this epoch's metric (a number or a one-element Tensor) and maybe reduce."""
        current = float(metrics)
        self.last_epoch += 1
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
