"""The schedules that scale the lr by a formula of the epoch: StepLR, MultiStepLR, ExponentialLR,
CosineAnnealingLR, LambdaLR, MultiplicativeLR, ConstantLR, LinearLR and PolynomialLR.

Schedules update the current lr step by step (PyTorch's "chainable" form: each multiplies the
lr it finds, so two schedulers on one optimizer compose), so the sequences match PyTorch's to
the last bit. Call ``scheduler.step()`` after ``optimizer.step()``.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ...errors import DomainError, DTypeError
from ..optimizer import Optimizer
from .base import LRScheduler, _check_optimizer


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
        # A float period works as in PyTorch (the text-classification tutorial passes 1.0).
        if isinstance(step_size, bool) or not isinstance(step_size, (int, float)) or step_size <= 0:
            raise DomainError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


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

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(epoch for epoch, n in self.milestones.items() for _ in range(n))
        passed = bisect_right(milestones, self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the counters and settings (milestones read back from a file included)."""
        super().load_state_dict(state_dict)
        self.milestones = Counter({int(k): n for k, n in dict(self.milestones).items()})


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


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

    def _get_closed_form_lr(self) -> list[float]:
        cosine = 1 + math.cos(math.pi * self.last_epoch / self.T_max)
        return [self.eta_min + (base - self.eta_min) * cosine / 2 for base in self.base_lrs]


def _lambdas(optimizer: Optimizer, lr_lambda: Any, owner: str) -> list[Callable[[int], float]]:
    groups = _check_optimizer(optimizer, owner).param_groups
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(groups):
            raise DomainError(
                f"{owner}: got {len(lr_lambda)} lr_lambdas for {len(groups)} parameter groups"
            )
        lambdas = list(lr_lambda)
    else:
        lambdas = [lr_lambda] * len(groups)
    for fn in lambdas:
        if not callable(fn):
            raise DTypeError(f"{owner}: lr_lambda must be callable, got {type(fn).__name__}")
    return lambdas


class _LambdaState:
    """State dicts that keep the attributes of callable objects but not functions, as PyTorch."""

    lr_lambdas: list[Callable[[int], float]]

    def state_dict(self) -> dict[str, Any]:
        """The counters and settings; for each lr_lambda None (a function) or its attributes
        (a callable object)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the counters and settings, and the attributes of callable lr_lambdas."""
        state = dict(state_dict)
        saved = state.pop("lr_lambdas", None) or []
        self.__dict__.update(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class LambdaLR(_LambdaState, LRScheduler):
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
        self.lr_lambdas = _lambdas(optimizer, lr_lambda, "LambdaLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """Multiply the lr by ``lr_lambda(epoch)`` every epoch after the first.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> scheduler.step(); scheduler.step()
    >>> scheduler.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.lr_lambdas = _lambdas(optimizer, lr_lambda, "MultiplicativeLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._current_lrs()
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, self._current_lrs())]


class ConstantLR(LRScheduler):
    """Scale the lr by ``factor`` for the first ``total_iters`` epochs, then restore it.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = scheduler.get_last_lr()
    >>> for _ in range(3):
    ...     scheduler.step()
    ...     lrs += scheduler.get_last_lr()
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 <= factor <= 1.0:
            raise DomainError(f"ConstantLR: factor must be in [0, 1], got {factor!r}")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current_lrs()]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [lr * (1.0 / self.factor) for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        factor = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base * factor for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr by a factor going linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs (a warm-up, with the defaults), then hold it.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = scheduler.get_last_lr()
    >>> for _ in range(4):
    ...     scheduler.step()
    ...     lrs += scheduler.get_last_lr()
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 < start_factor <= 1.0:
            raise DomainError(f"LinearLR: start_factor must be in (0, 1], got {start_factor!r}")
        if not 0 <= end_factor <= 1.0:
            raise DomainError(f"LinearLR: end_factor must be in [0, 1], got {end_factor!r}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._current_lrs()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        change = self.end_factor - self.start_factor
        # The ratio of this epoch's factor to the last one's.
        ratio = 1.0 + change / (
            self.total_iters * self.start_factor + (self.last_epoch - 1) * change
        )
        return [lr * ratio for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        change = self.end_factor - self.start_factor
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + change * done) for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr as ``(1 - epoch / total_iters) ** power`` down to 0 at ``total_iters``.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = PolynomialLR(opt, total_iters=4, power=2.0)
    >>> scheduler.step(); scheduler.step()
    >>> scheduler.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        epoch, total = self.last_epoch, self.total_iters
        factor = ((1.0 - epoch / total) / (1.0 - (epoch - 1) / total)) ** self.power
        return [lr * factor for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * left**self.power for base in self.base_lrs]
