"""Learning-rate schedulers, as ``torch.optim.lr_scheduler``: each changes ``group["lr"]`` of an
optimizer the way PyTorch does. Here live the schedulers that combine others (SequentialLR,
ChainedScheduler) and ReduceLROnPlateau; the rest come from `optim.scheduler` (schedules of the
epoch) and `optim.cyclic` (cyclic ones).

Call ``scheduler.step()`` after ``optimizer.step()``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ..errors import DomainError, DTypeError
from ..observe import replayed_whole
from .cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .optimizers import Optimizer
from .scheduler import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    LRScheduler,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
    _check_optimizer,
)

__all__ = [
    "ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
    "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
    "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau", "SequentialLR",
    "StepLR",
]  # fmt: skip


def _check_schedulers(owner: str, schedulers: Sequence[Any], optimizer: Any) -> None:
    if len(schedulers) < 1:
        raise DomainError(f"{owner}: needs at least one scheduler, got none")
    for i, scheduler in enumerate(schedulers):
        if isinstance(scheduler, ReduceLROnPlateau):
            raise DTypeError(
                f"{owner}: scheduler {i} is a ReduceLROnPlateau, whose step needs a metric; "
                "step it yourself"
            )
        if not isinstance(scheduler, LRScheduler):
            raise DTypeError(
                f"{owner}: scheduler {i} is a {type(scheduler).__name__}, not an LRScheduler"
            )
        if scheduler.optimizer is not optimizer:
            raise DomainError(
                f"{owner}: scheduler {i} ({type(scheduler).__name__}) drives another optimizer; "
                "all must drive the same one"
            )


class _Composite(LRScheduler):
    """A scheduler made of schedulers (it builds itself, without `LRScheduler.__init__`), whose
    state dict holds the state dict of each scheduler inside."""

    _schedulers: list[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """The counters, with each inner scheduler's state dict under ``_schedulers``."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the counters and every inner scheduler's state."""
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, saved in zip(self._schedulers, inner):
            scheduler.load_state_dict(saved)

    def get_last_lr(self) -> list[float]:
        """The lrs set by the last step, one per parameter group."""
        return list(self._last_lr)


class SequentialLR(_Composite):
    """Run ``schedulers`` one after another, switching at each epoch in ``milestones``.

    Each scheduler starts from its own epoch 0 when its turn comes (its closed form at 0).

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = ExponentialLR(opt, gamma=0.5)
    >>> scheduler = SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> lrs = scheduler.get_last_lr()
    >>> for _ in range(4):
    ...     scheduler.step()
    ...     lrs += scheduler.get_last_lr()
    >>> lrs
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer, "SequentialLR")
        _check_schedulers("SequentialLR", schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise DomainError(
                f"SequentialLR: got {len(schedulers)} schedulers and {len(milestones)} "
                "milestones; there must be one milestone fewer than schedulers"
            )
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Undo the steps the schedulers took when they were built, then start the first.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in self._all(self):
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    @staticmethod
    def _all(scheduler: Any) -> list[Any]:
        """The innermost schedulers below ``scheduler`` (through nested combinations)."""
        if hasattr(scheduler, "_schedulers"):
            return [leaf for inner in scheduler._schedulers for leaf in SequentialLR._all(inner)]
        return [scheduler] if hasattr(scheduler, "last_epoch") else []

    @replayed_whole
    def step(self) -> None:  # type: ignore[override]
        """Advance one epoch with the scheduler whose turn it is."""
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every scheduler in ``schedulers`` each epoch, so their factors multiply.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = ConstantLR(opt, factor=0.5, total_iters=2)
    >>> decay = ExponentialLR(opt, gamma=0.5)
    >>> scheduler = ChainedScheduler([warmup, decay])
    >>> lrs = scheduler.get_last_lr()
    >>> for _ in range(3):
    ...     scheduler.step()
    ...     lrs += scheduler.get_last_lr()
    >>> lrs
    [0.5, 0.25, 0.25, 0.125]
    """

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        if len(schedulers) < 1:
            raise DomainError("ChainedScheduler: needs at least one scheduler, got none")
        optimizer = optimizer or getattr(schedulers[0], "optimizer", None)
        _check_schedulers("ChainedScheduler", schedulers, optimizer)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    @replayed_whole
    def step(self) -> None:  # type: ignore[override]
        """Step each scheduler in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


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

    @replayed_whole
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
