"""Training demos that the console command runs (``chainrule train NAME``): each is a
function that returns its results as a dict, prints through ``log`` (print by default; None
keeps a test quiet), and can plot its run (``plot=``) and save its weights (``save=``).

`scalar` holds the demos on Values (xor, blobs), `tensor` those on Tensors (moons, spirals,
digits), `report` the progress bar, plots and checkpoints they share.
"""

from .report import Progress, plot_run
from .scalar import (
    BLOB_CENTERS,
    BLOB_STD,
    XOR_INPUTS,
    XOR_TARGETS,
    blobs,
    fit_blobs_scalar,
    fit_blobs_tensor,
    scalar_state_dict,
    train_blobs,
    train_xor,
)
from .tensor import (
    digits_cnn,
    fit,
    mlp,
    train_digits,
    train_moons,
    train_spirals,
    training_step,
)

__all__ = [
    "BLOB_CENTERS", "BLOB_STD", "Progress", "XOR_INPUTS", "XOR_TARGETS", "blobs", "digits_cnn",
    "fit", "fit_blobs_scalar", "fit_blobs_tensor", "mlp", "plot_run", "scalar_state_dict",
    "train_blobs", "train_digits", "train_moons", "train_spirals", "train_xor", "training_step",
]  # fmt: skip
