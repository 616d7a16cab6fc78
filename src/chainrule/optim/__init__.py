"""Optimizers (SGD; Adam, AdamW, NAdam, RAdam, Adamax; RMSprop, Adagrad, Adadelta; LBFGS) and
learning-rate schedulers (`optim.lr_scheduler`), with PyTorch's names, defaults and update
formulas."""

from . import lr_scheduler
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .lbfgs import LBFGS
from .optimizers import SGD, Optimizer

__all__ = [
    "LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "Optimizer",
    "RAdam", "RMSprop", "lr_scheduler",
]  # fmt: skip
