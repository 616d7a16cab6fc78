"""Weight averaging, as ``torch.optim.swa_utils``: `AveragedModel` keeps a running average (SWA,
equal weights) or an exponential moving average (EMA) of a model's weights, `SWALR` anneals the
lr to a constant for the averaging phase, and `update_bn` recomputes BatchNorm statistics."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

from .._tensor import Tensor
from ..creation import tensor
from ..dtypes import int64
from ..errors import DomainError
from ..graph import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler.base import LRScheduler, per_group
from .optimizer import Optimizer

__all__ = [
    "SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
    "get_swa_multi_avg_fn", "update_bn",
]  # fmt: skip

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[list[Tensor], list[Tensor], Any], None]


def _check_decay(decay: float, owner: str) -> None:
    if not 0.0 <= decay <= 1.0:
        raise DomainError(f"{owner}: decay must be in [0, 1], got {decay}")


def _is_float(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """An `AveragedModel` ``avg_fn`` for the exponential moving average of one tensor:
    ``decay * averaged + (1 - decay) * current``.

    >>> import chainrule
    >>> ema = get_ema_avg_fn(0.9)
    >>> ema(chainrule.tensor([1.0]), chainrule.tensor([2.0]), 1)
    tensor([1.1000])
    """
    _check_decay(decay, "get_ema_avg_fn")

    def ema_update(averaged: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * averaged + (1 - decay) * current

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """An `AveragedModel` ``avg_fn`` for the equal-weight average of one tensor: with ``n``
    models averaged so far, ``averaged + (current - averaged) / (n + 1)``.

    >>> import chainrule
    >>> swa = get_swa_avg_fn()
    >>> swa(chainrule.tensor([1.0]), chainrule.tensor([4.0]), 2)
    tensor([2.])
    """

    def swa_update(averaged: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return averaged + (current - averaged) / (num_averaged + 1)

    return swa_update


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """An `AveragedModel` ``multi_avg_fn``: the EMA of `get_ema_avg_fn`, written in place into
    every tensor of the averaged list (floating tensors by ``lerp_``)."""
    _check_decay(decay, "get_ema_multi_avg_fn")

    def ema_update(averaged: list[Tensor], current: list[Tensor], num_averaged: Any) -> None:
        with no_grad():
            for p_avg, p_now in zip(averaged, current, strict=True):
                if _is_float(p_avg):
                    p_avg.lerp_(p_now, 1 - decay)
                else:  # integer buffers: the weighted sum, truncated by the copy
                    p_avg.copy_(p_avg * decay + p_now * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """An `AveragedModel` ``multi_avg_fn``: the equal-weight average of `get_swa_avg_fn`,
    written in place into every tensor of the averaged list."""
    swa = get_swa_avg_fn()

    def swa_update(averaged: list[Tensor], current: list[Tensor], num_averaged: Any) -> None:
        # As PyTorch, the weight 1 / (n + 1) is computed in the default dtype when n is a Tensor
        # (AveragedModel passes its int64 buffer), so float64 averages carry a float32 weight.
        weight = float(1 / (num_averaged + 1))
        with no_grad():
            for p_avg, p_now in zip(averaged, current, strict=True):
                if _is_float(p_avg):
                    p_avg.lerp_(p_now, weight)
                else:
                    p_avg.copy_(swa(p_avg, p_now, num_averaged))

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose weights are a running average of ``model``'s, for Stochastic
    Weight Averaging (equal weights, the default) or an EMA (``avg_fn``/``multi_avg_fn``).

    Call `update_parameters(model)` after optimizer steps: the first call copies the weights,
    later ones average them in. Calling the AveragedModel runs the averaged copy (its
    ``module``). ``n_averaged`` (an int64 buffer) counts the models averaged; the state_dict
    holds it and ``module.<name>`` for the copy's entries, as PyTorch's. With
    ``use_buffers=True`` buffers (BatchNorm's running statistics) are averaged too; otherwise
    they are copied from ``model`` at each update.

    >>> import chainrule
    >>> from chainrule import nn
    >>> net = nn.Linear(1, 1, bias=False)
    >>> swa = AveragedModel(net)
    >>> for w in (1.0, 2.0, 6.0):
    ...     with chainrule.no_grad():
    ...         _ = net.weight.fill_(w)
    ...     swa.update_parameters(net)
    >>> swa.module.weight.item(), swa.n_averaged.item()
    (3.0, 3)
    """

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: AvgFn | None = None,
        multi_avg_fn: MultiAvgFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise DomainError("AveragedModel: give avg_fn or multi_avg_fn, not both")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged copy."""
        return self.module(*args, **kwargs)

    def _averaged_pairs(self, model: Module) -> list[tuple[Tensor, Tensor]]:
        """(this copy's tensor, ``model``'s) for everything that is averaged."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.module.parameters(), model.parameters()
        return [(a.detach(), b.detach()) for a, b in zip(mine, theirs)]

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current weights into this copy (the first call copies them)."""
        with no_grad():
            pairs = self._averaged_pairs(model)
            n_averaged = self.n_averaged
            if int(n_averaged.item()) == 0:
                for averaged, current in pairs:
                    averaged.copy_(current)
            elif self.multi_avg_fn is not None:
                for group in _by_dtype(pairs):
                    self.multi_avg_fn([a for a, _ in group], [c for _, c in group], n_averaged)
            else:  # PyTorch on the CPU averages tensor by tensor too
                avg_fn = self.avg_fn or get_swa_avg_fn()
                for averaged, current in pairs:
                    averaged.copy_(avg_fn(averaged, current, n_averaged))
            if not self.use_buffers:
                for mine, theirs in zip(self.module.buffers(), model.buffers(), strict=True):
                    mine.detach().copy_(theirs.detach())
            self.n_averaged.add_(1)


def _by_dtype(pairs: list[tuple[Tensor, Tensor]]) -> list[list[tuple[Tensor, Tensor]]]:
    """The pairs grouped by the averaged tensor's dtype, in first-seen order (as PyTorch hands
    a multi_avg_fn one list per device and dtype)."""
    groups: dict[Any, list[tuple[Tensor, Tensor]]] = {}
    for pair in pairs:
        groups.setdefault(pair[0].dtype, []).append(pair)
    return list(groups.values())


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running mean and variance of every BatchNorm in ``model`` by one pass over
    ``loader`` (batches are tensors, or lists/tuples whose first item is the input).

    The statistics are reset and then averaged over all batches with equal weight (momentum
    None for the pass); momenta and the train/eval mode are restored afterwards.
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` epochs, by a half cosine
    (``'cos'``) or a straight line (``'linear'``), then hold it there: the lr schedule of the
    averaging phase of SWA. ``swa_lr`` may be a list, one per parameter group.

    >>> import chainrule
    >>> from chainrule.optim import SGD
    >>> opt = SGD([chainrule.zeros(1, requires_grad=True)], lr=1.0)
    >>> scheduler = SWALR(opt, swa_lr=0.2, anneal_epochs=4, anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(5):
    ...     scheduler.step()
    ...     lrs += [round(lr, 6) for lr in scheduler.get_last_lr()]
    >>> lrs
    [0.8, 0.6, 0.4, 0.2, 0.2]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        for lr, group in zip(
            per_group("swa_lr", optimizer, swa_lr, "SWALR"), optimizer.param_groups
        ):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise DomainError(
                f"SWALR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise DomainError(f"SWALR: anneal_epochs must be an int >= 0, got {anneal_epochs!r}")
        self._anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        """How far along the anneal is at fraction ``t`` of it (0 to 1)."""
        if self._anneal_strategy == "cos":
            return (1 - math.cos(math.pi * t)) / 2
        return t

    def _fraction(self, step: int) -> float:
        return max(0.0, min(1.0, step / max(1, self.anneal_epochs)))

    def get_lr(self) -> list[float]:
        # The lr found in each group is taken as the previous step's point on the anneal from
        # some starting lr; solve for that start, then move to this step's point.
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(self._fraction(step - 1))
        alpha = self.anneal_func(self._fraction(step))
        lrs = []
        for group in self.optimizer.param_groups:
            swa_lr = group["swa_lr"]
            if prev_alpha == 1:
                start = swa_lr
            else:
                start = (group["lr"] - prev_alpha * swa_lr) / (1 - prev_alpha)
            lrs.append(swa_lr * alpha + start * (1 - alpha))
        return lrs
