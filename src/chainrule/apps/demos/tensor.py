"""The demos on Tensors: MLPs on moons and spirals, a small CNN on the 8x8 digits. One
minibatch loop, `fit`, trains them all, in one process or data-parallel on MPI ranks, its
step eager or recorded once and replayed (``compile``, `chainrule.compile`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from ... import distributed as dist
from ..._tensor import Tensor
from ...autograd import no_grad
from ...compiler import compile as compile_step
from ...creation import tensor
from ...data import DataLoader, TensorDataset, load_digits, make_moons, make_spirals, random_split
from ...io import save as save_file
from ...nn import Conv2d, Flatten, Linear, MaxPool2d, Module, ReLU, Sequential, Tanh
from ...nn import functional as F
from ...optim import Adam, Optimizer
from ...random import manual_seed
from .report import Progress, check_outputs, compiled_summary, plot_run

#: The seed of the digits' 80/20 split: fixed, so that every --seed is scored on the same
#: held-out digits.
SPLIT_SEED = 0


def join(distributed: bool) -> tuple[int, int]:
    """(rank, world size) of this process: from MPI for a distributed run, else (0, 1)."""
    if not distributed:
        return 0, 1
    if not dist.is_initialized():
        dist.init()
    return dist.rank(), dist.world_size()


def training_step(
    model: Callable[[Tensor], Tensor], optimizer: Optimizer
) -> Callable[[Tensor, Tensor], Tensor]:
    """One training step of a classifier as a function of a batch ``(x, y)``: zero the
    gradients, forward, cross-entropy, backward, the optimizer's step; returns the loss,
    detached. Nothing in it reads a value into Python, so `chainrule.compile` replays it whole.
    """

    def step(x: Tensor, y: Tensor) -> Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    return step


def _check_compile(compile: bool, distributed: bool) -> None:
    if compile and distributed:
        raise ValueError(
            "fit: compile and distributed do not go together: DistributedDataParallel "
            "averages gradients in hooks, which the compiler does not record"
        )


def fit(
    model: Module,
    train_set: TensorDataset,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int = 0,
    distributed: bool = False,
    log: Callable[[str], None] | None = None,
    quiet: bool = False,
    every: int = 50,
    after_epoch: Callable[[int, float, Callable[[str], None]], None] | None = None,
    compile: bool = False,
) -> tuple[list[float], Callable[[Tensor, Tensor], Tensor]]:
    """Train a classifier with Adam on cross-entropy, in shuffled minibatches of
    ``batch_size``; returns the loss of every step and the `training_step` that took them.

    With ``distributed``, ``batch_size`` is the global batch: a DistributedSampler deals each
    rank ``batch_size / world_size`` samples of it and DistributedDataParallel averages the
    gradients, so every rank takes the step one process would take on the whole batch. The
    losses are averaged over the ranks as well. ``after_epoch(epoch, loss, note)`` runs after
    each epoch with the epoch's mean loss; ``note`` prints a progress line (see `Progress`).

    With ``compile`` the step runs through `chainrule.compile` (its ``stats`` count the calls
    traced, replayed and run eagerly); the losses and weights equal those of eager steps.
    """
    _check_compile(compile, distributed)
    sampler, network = None, model
    if distributed:
        world = dist.world_size()
        if batch_size % world:
            raise ValueError(
                f"fit: the global batch of {batch_size} samples does not split evenly over "
                f"{world} ranks; run on a number of ranks that divides {batch_size}"
            )
        sampler = dist.DistributedSampler(train_set, seed=seed)
        loader = DataLoader(train_set, batch_size // world, sampler=sampler)
        network = dist.DistributedDataParallel(model)
    else:
        loader = DataLoader(train_set, batch_size, shuffle=True, seed=seed)
    optimizer = Adam(model.parameters(), lr=lr)
    step = training_step(network, optimizer)
    if compile:
        step = compile_step(step)
    progress = Progress(epochs * len(loader), log, quiet, every)
    losses = []
    for epoch in range(1, epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)  # a new order each epoch, the same on every rank
        for x, y in loader:
            value = step(x, y).item()  # outside the step: in it, .item() would end the record
            if distributed:
                total = tensor(np.array([value]))
                dist.all_reduce(total, "mean")
                value = total.item()
            losses.append(value)
            progress.update(value)
        if after_epoch is not None:
            after_epoch(epoch, float(np.mean(losses[-len(loader) :])), progress.note)
    progress.close()
    return losses, step


def accuracy(model: Module, x: Tensor, y: Tensor) -> float:
    """The fraction of rows of ``x`` whose highest score is at the label in ``y``."""
    with no_grad():
        return float(np.mean(model(x).argmax(dim=1)._array == y._array))


def mlp(sizes: Sequence[int], activation: type[Module]) -> Sequential:
    """Linear layers of the given sizes with ``activation`` between them (none at the end).

    >>> mlp([2, 16, 2], Tanh)
    Sequential(
      (0): Linear(in_features=2, out_features=16, bias=True)
      (1): Tanh()
      (2): Linear(in_features=16, out_features=2, bias=True)
    )
    """
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [Linear(n_in, n_out), activation()]
    return Sequential(*layers[:-1])


def train_2d(
    title: str,
    inputs: Tensor,
    labels: Tensor,
    model: Module,
    steps: int,
    lr: float,
    seed: int,
    log: Callable[[str], None] | None,
    quiet: bool,
    plot: str | None,
    save: str | None,
    distributed: bool,
    compile: bool = False,
) -> dict:
    """Train ``model`` on all of a 2-D data set at once, one Adam step per epoch; report,
    plot and save on rank 0. Returns model, losses, (training) accuracy, seconds, data, and
    the ``compiled`` step (None unless ``compile``)."""
    _check_compile(compile, distributed)  # before join() starts MPI
    rank, world = join(distributed)
    if rank != 0:
        log, plot, save = None, None, None
    check_outputs(plot, save)
    say = log or (lambda _line: None)
    n, parameters = len(labels), sum(p.numel() for p in model.parameters())
    if not quiet:
        on = f", on {world} ranks" if distributed else ""
        say(f"{title}: {n} points, {parameters} parameters, Adam lr={lr}, {steps} steps{on}")
    start = time.perf_counter()
    losses, step = fit(model, TensorDataset(inputs, labels), steps, n, lr, seed, distributed,
                       log, quiet, compile=compile)  # fmt: skip
    seconds = time.perf_counter() - start
    score = accuracy(model, inputs, labels)
    say(f"final loss {losses[-1]:.4f}, training accuracy {score:.1%}, trained in {seconds:.2f} s")
    if compile:
        say(compiled_summary(step))
    if plot is not None:

        def predict(grid: np.ndarray) -> np.ndarray:
            with no_grad():
                return model(tensor(grid, dtype=inputs.dtype)).argmax(dim=1)._array

        plot_run(plot, losses, f"{title}: training accuracy {score:.1%}",
                 points=inputs._array, labels=labels._array, predict=predict)  # fmt: skip
        say(f"wrote {plot}")
    if save is not None:
        save_file(model.state_dict(), save)
        say(f"wrote {save}")
    return {"model": model, "losses": losses, "accuracy": score, "seconds": seconds,
            "inputs": inputs._array, "labels": labels._array,
            "compiled": step if compile else None}  # fmt: skip


def train_moons(
    steps: int = 500,
    lr: float = 0.01,
    hidden: int = 16,
    seed: int = 0,
    log: Callable[[str], None] | None = print,
    *,
    quiet: bool = False,
    plot: str | None = None,
    save: str | None = None,
    distributed: bool = False,
    compile: bool = False,
) -> dict:
    """Train an MLP 2-16-16-2 (tanh) with Adam on 200 points of two moons (noise 0.1).

    Full-batch steps; about 0.5 s for the default 500, which reach 100% training accuracy.
    ``distributed`` splits each batch over the MPI ranks, ``compile`` compiles the training
    step (see `fit`). Returns the model, losses, accuracy, seconds, the data (``inputs``,
    ``labels``) and the ``compiled`` step (None unless ``compile``).
    """
    inputs, labels = make_moons(seed=seed)
    manual_seed(seed)
    model = mlp([2, hidden, hidden, 2], Tanh)
    title = f"moons: MLP 2-{hidden}-{hidden}-2 (tanh)"
    return train_2d(title, inputs, labels, model, steps, lr, seed, log, quiet, plot, save,
                    distributed, compile)  # fmt: skip


def train_spirals(
    steps: int = 500,
    lr: float = 0.02,
    hidden: int = 32,
    arms: int = 3,
    seed: int = 0,
    log: Callable[[str], None] | None = print,
    *,
    quiet: bool = False,
    plot: str | None = None,
    save: str | None = None,
    distributed: bool = False,
    compile: bool = False,
) -> dict:
    """Train an MLP 2-32-32-3 (ReLU) with Adam on 300 points of 3 spiral arms (noise 0.2).

    Full-batch steps; about 0.5 s for the default 500, which reach 99% training accuracy
    (the noise puts a couple of points on a neighbouring arm). Returns as `train_moons`.
    """
    inputs, labels = make_spirals(n_arms=arms, seed=seed)
    manual_seed(seed)
    model = mlp([2, hidden, hidden, arms], ReLU)
    title = f"{arms} spirals: MLP 2-{hidden}-{hidden}-{arms} (ReLU)"
    return train_2d(title, inputs, labels, model, steps, lr, seed, log, quiet, plot, save,
                    distributed, compile)  # fmt: skip


def digits_cnn() -> Sequential:
    """Two 3x3 convolutions, each followed by ReLU and 2x2 max pooling, then a linear layer:
    (n, 1, 8, 8) images to (n, 10) class scores. 6,090 parameters."""
    return Sequential(
        Conv2d(1, 16, 3, padding=1), ReLU(), MaxPool2d(2),  # (n, 16, 4, 4)
        Conv2d(16, 32, 3, padding=1), ReLU(), MaxPool2d(2),  # (n, 32, 2, 2)
        Flatten(), Linear(32 * 2 * 2, 10),
    )  # fmt: skip


def train_digits(
    epochs: int = 20,
    lr: float = 0.005,
    batch_size: int = 64,
    seed: int = 0,
    log: Callable[[str], None] | None = print,
    *,
    quiet: bool = False,
    plot: str | None = None,
    save: str | None = None,
    distributed: bool = False,
    compile: bool = False,
) -> dict:
    """Train `digits_cnn` with Adam on 80% of the 1797 8x8 digits, scored on the other 20%.

    The split is fixed (`SPLIT_SEED`); ``seed`` sets the initial weights and the batch order.
    ``batch_size`` is the global batch, which ``distributed`` splits over the MPI ranks.
    ``compile`` compiles the training step (see `fit`). Returns the model, losses,
    ``accuracy`` (held out), ``train_accuracy``, ``accuracies`` (held out, after each epoch),
    seconds and the ``compiled`` step (None unless ``compile``).
    """
    rank, world = join(distributed)
    if rank != 0:
        log, plot, save = None, None, None
    check_outputs(plot, save)
    say = log or (lambda _line: None)
    images, digits = load_digits()
    train_set, test_set = random_split(TensorDataset(images, digits), [0.8, 0.2], seed=SPLIT_SEED)
    train_x, train_y = images[train_set.indices], digits[train_set.indices]
    test_x, test_y = images[test_set.indices], digits[test_set.indices]
    manual_seed(seed)
    model = digits_cnn()
    if not quiet:
        on = f", {batch_size // world} per rank on {world} ranks" if distributed else ""
        say(f"8x8 digits: CNN of {sum(p.numel() for p in model.parameters())} parameters, "
            f"{len(train_set)} training and {len(test_set)} held-out images, Adam lr={lr}, "
            f"batches of {batch_size}{on}, {epochs} epochs")  # fmt: skip
    epoch_losses, accuracies = [], []

    def score(epoch: int, loss: float, note: Callable[[str], None]) -> None:
        epoch_losses.append(loss)
        accuracies.append(accuracy(model, test_x, test_y))
        note(f"epoch {epoch:3d}  loss {loss:.4f}  held-out accuracy {accuracies[-1]:.1%}")

    start = time.perf_counter()
    losses, step = fit(model, train_set, epochs, batch_size, lr, seed, distributed, log, quiet,
                       every=0, after_epoch=score, compile=compile)  # fmt: skip
    seconds = time.perf_counter() - start
    train_accuracy = accuracy(model, train_x, train_y)
    say(f"last epoch's loss {epoch_losses[-1]:.4f}, training accuracy {train_accuracy:.1%}, "
        f"held-out accuracy {accuracies[-1]:.1%} ({len(test_set)} images), "
        f"trained in {seconds:.1f} s")  # fmt: skip
    if compile:
        say(compiled_summary(step))
    if plot is not None:
        plot_run(plot, losses, f"8x8 digits: CNN, held-out accuracy {accuracies[-1]:.1%}",
                 accuracies=accuracies)  # fmt: skip
        say(f"wrote {plot}")
    if save is not None:
        save_file(model.state_dict(), save)
        say(f"wrote {save}")
    return {"model": model, "losses": losses, "accuracy": accuracies[-1], "seconds": seconds,
            "train_accuracy": train_accuracy, "accuracies": accuracies,
            "compiled": step if compile else None}  # fmt: skip
