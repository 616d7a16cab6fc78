"""Schedulers made of schedulers: SequentialLR (one after another, switching at milestones) and
ChainedScheduler (all at once, their factors multiplying)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ...errors import DomainError, DTypeError
from ...observe import replayed_whole
from ..optimizer import Optimizer
from .base import LRScheduler, _check_optimizer
from .plateau import ReduceLROnPlateau


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
    >>> from chainrule.optim.lr_scheduler import ExponentialLR, LinearLR
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

    @replayed_whole(python=True)  # numbers only: the optimizer's next step reads them
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
    >>> from chainrule.optim.lr_scheduler import ConstantLR, ExponentialLR
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

    @replayed_whole(python=True)  # numbers only: the optimizer's next step reads them
    def step(self) -> None:  # type: ignore[override]
        """Step each scheduler in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]
