"""Optimizers with PyTorch's names, defaults and update formulas, each in the module of its name
(`optim.sgd`, `optim.rmsprop`, ... on the base `optim.optimizer`; the Adam family shares
`optim.adam`, Adafactor and Muon `optim.matrix`), learning-rate schedulers (`lr_scheduler`) and
weight averaging (`swa_utils`)."""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, Adamax, AdamW, NAdam, RAdam, SparseAdam
from .asgd import ASGD
from .lbfgs import LBFGS
from .matrix import Adafactor, Muon
from .optimizer import Optimizer, swap_in_optimizer_params_and_state
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = [
    "LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "Optimizer",
    "RAdam", "RMSprop", "lr_scheduler", "swa_utils",
    "ASGD", "Adafactor", "Muon", "Rprop", "SparseAdam", "swap_in_optimizer_params_and_state",
]  # fmt: skip
