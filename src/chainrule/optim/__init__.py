"""Optimizers (SGD, ASGD, Rprop; Adam, AdamW, NAdam, RAdam, Adamax, SparseAdam; RMSprop,
Adagrad, Adadelta; Adafactor, Muon; LBFGS) and learning-rate schedulers (`optim.lr_scheduler`),
with PyTorch's names, defaults and update formulas."""

from . import lr_scheduler
from .adam import Adam, Adamax, AdamW, NAdam, RAdam, SparseAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .classic import ASGD, Rprop
from .lbfgs import LBFGS
from .matrix import Adafactor, Muon
from .optimizers import SGD, Optimizer, swap_in_optimizer_params_and_state

__all__ = [
    "LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "Optimizer",
    "RAdam", "RMSprop", "lr_scheduler",
    "ASGD", "Adafactor", "Muon", "Rprop", "SparseAdam", "swap_in_optimizer_params_and_state",
]  # fmt: skip
