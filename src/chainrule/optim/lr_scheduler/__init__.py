"""Learning-rate schedulers, as ``torch.optim.lr_scheduler``: `LRScheduler` in `base`, schedules
by a formula of the epoch in `formulas`, cyclic ones in `cyclic`, `ReduceLROnPlateau` in
`plateau`, and SequentialLR and ChainedScheduler, which combine others, in `combined`.

Each changes ``group["lr"]`` of an optimizer the way PyTorch does; call ``scheduler.step()``
after ``optimizer.step()``.
"""

from bisect import bisect_right  # noqa: F401 - torch.optim.lr_scheduler has the name too

from ..optimizer import Optimizer  # noqa: F401 - as torch.optim.lr_scheduler.Optimizer
from .base import LRScheduler
from .combined import ChainedScheduler, SequentialLR
from .cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .formulas import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from .plateau import ReduceLROnPlateau

__all__ = [
    "ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
    "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
    "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau", "SequentialLR",
    "StepLR",
]  # fmt: skip
