"""`LRScheduler`, the base of the schedulers: it remembers each group's initial lr and counts
epochs; `per_group` spreads a setting over the parameter groups. The schedules themselves are in
the modules beside this one (see `optim.lr_scheduler`)."""

from __future__ import annotations

import warnings
from typing import Any

from ...errors import DomainError, DTypeError
from ...observe import replayed_whole
from ..optimizer import Optimizer


def _check_optimizer(optimizer: Any, name: str) -> Optimizer:
    if not isinstance(optimizer, Optimizer):
        raise DTypeError(f"{name}: expected an Optimizer, got {type(optimizer).__name__}")
    return optimizer


def per_group(name: str, optimizer: Optimizer, value: Any, owner: str) -> list[Any]:
    """``value`` once per parameter group: a list or tuple must have one entry per group."""
    n_groups = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n_groups:
            raise DomainError(
                f"{owner}: got {len(value)} values of {name} for {n_groups} parameter groups"
            )
        return list(value)
    return [value] * n_groups


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
        self._initial_step()

    def _initial_step(self) -> None:
        """Reset the step count and take the first step (epoch 0) in initial mode."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The lrs for the epoch ``last_epoch`` has just become (subclasses define it)."""
        raise NotImplementedError(f"{type(self).__name__}: define get_lr")

    @replayed_whole(python=True)  # numbers only: the optimizer's next step reads them
    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and write the new lr into every parameter group.

        ``epoch`` (deprecated in PyTorch too) jumps to that epoch, by the schedule's closed
        form where it has one.
        """
        self._step_count += 1
        if epoch is not None:
            warnings.warn(
                f"{type(self).__name__}.step(epoch) is deprecated, as in PyTorch; call step() "
                "once per epoch",
                UserWarning,
                stacklevel=2,
            )
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            lrs = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            lrs = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, lrs):
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
