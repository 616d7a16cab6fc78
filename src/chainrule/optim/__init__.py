"""Optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) and learning-rate schedulers
(`optim.lr_scheduler`), with PyTorch's names, defaults and update formulas."""

from . import lr_scheduler
from .optimizers import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
