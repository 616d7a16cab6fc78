"""Four milestones of neural-network history, retraced with chainrule's own code.

Each milestone is a function with a fixed seed that trains one model, shows a progress bar
(tqdm, off when ``quiet``), draws a final figure when given a path (matplotlib) and returns
its metrics as a dict. ``chainrule milestones [NAME] [--quick] [--plot-dir DIR]`` runs them;
``--compile`` runs the transformer's training step through `chainrule.compile`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from .. import nn
from .._tensor import Tensor
from ..autograd import no_grad
from ..compiler import compile as compile_step
from ..creation import arange, tensor, zeros
from ..data import DataLoader, TensorDataset, load_digits, make_xor
from ..nn import functional as F
from ..optim import SGD, Adam, AdamW
from ..optim.lr_scheduler import CosineAnnealingLR
from ..random import manual_seed
from .demos.report import compiled_summary


def _progress(iterable: Iterable, total: int, desc: str, quiet: bool) -> Iterable:
    """``iterable`` with a tqdm progress bar, or unchanged when ``quiet``."""
    if quiet:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:
        raise ImportError(
            "milestones: the progress bar needs tqdm; pip install chainrule[demo] "
            "(or pass quiet=True)"
        ) from None
    return tqdm(iterable, total=total, desc=desc, leave=False)


def _figure(columns: int):
    """A matplotlib Figure of ``columns`` panels, made without pyplot (no global state)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "milestones: the final figure needs matplotlib; pip install chainrule[demo]"
        ) from None
    figure = Figure(figsize=(4.2 * columns, 3.6), layout="constrained")
    return figure, figure.subplots(1, columns, squeeze=False)[0]


def _save(figure, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=96)


def _grid(X: np.ndarray, steps: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A grid covering the points of X (2 columns), for drawing decision regions."""
    low, high = X.min(0) - 0.5, X.max(0) + 0.5
    u, v = np.meshgrid(np.linspace(low[0], high[0], steps), np.linspace(low[1], high[1], steps))
    return u, v, np.stack([u.ravel(), v.ravel()], axis=1)


# 1958: Rosenblatt's perceptron.


def separable_points(n: int = 200, margin: float = 0.1, seed: int = 0):
    """``n`` points in [-1, 1]² labelled ±1 by a random line, none closer to it than
    ``margin``: linearly separable, so the perceptron must reach 100% (Novikoff, 1962)."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, 2 * np.pi)
    normal, offset = np.array([np.cos(angle), np.sin(angle)]), rng.uniform(-0.3, 0.3)
    X = np.empty((0, 2))
    while len(X) < n:
        candidates = rng.uniform(-1, 1, (2 * n, 2))
        far = np.abs(candidates @ normal + offset) > margin
        X = np.concatenate([X, candidates[far]])[:n]
    y = np.where(X @ normal + offset > 0, 1.0, -1.0)
    return X, y


def perceptron_1958(
    quick: bool = False, seed: int = 0, plot: str | Path | None = None, quiet: bool = False
) -> dict:
    """Rosenblatt's perceptron on 200 linearly separable 2-D points: 100% training accuracy.

    The perceptron rule (on a mistake, w += y·x and b += y) is stochastic gradient descent
    with step 1 on the perceptron criterion max(0, -y·(w·x + b)); chainrule's backward
    computes that gradient. Training stops after the first epoch without a mistake.
    ``quick`` changes nothing: the full run takes well under a second.
    """
    start = time.perf_counter()
    X, y = separable_points(seed=seed)
    w, b = zeros(2, requires_grad=True), zeros((), requires_grad=True)
    optimizer = SGD([w, b], lr=1.0)
    rng = np.random.default_rng(seed)
    mistakes_per_epoch = []
    for _ in _progress(range(100), 100, "perceptron epochs", quiet):
        mistakes = 0
        for i in rng.permutation(len(X)):
            score = (w * tensor(X[i])).sum() + b
            if y[i] * score.item() <= 0:  # a mistake (or on the line): one update
                mistakes += 1
                optimizer.zero_grad()
                (-y[i] * score).backward()  # d/dw of the criterion is -y·x
                optimizer.step()
        mistakes_per_epoch.append(mistakes)
        if mistakes == 0:
            break
    weights, bias = w._array.astype(np.float64), float(b.item())
    accuracy = float(np.mean(np.sign(X @ weights + bias) == y))
    if plot is not None:
        figure, (left, right) = _figure(2)
        left.scatter(*X[y > 0].T, s=12, marker="o", label="+1")
        left.scatter(*X[y < 0].T, s=12, marker="x", label="-1")
        line = np.linspace(-1, 1, 2)
        left.plot(line, -(weights[0] * line + bias) / weights[1], "k-", label="learned line")
        left.set(xlim=(-1, 1), ylim=(-1, 1), title=f"perceptron: {accuracy:.0%} correct")
        left.legend(loc="lower right", fontsize=8)
        right.bar(range(1, len(mistakes_per_epoch) + 1), mistakes_per_epoch)
        right.set(xlabel="epoch", ylabel="mistakes (= updates)", title="mistakes per epoch")
        _save(figure, plot)
    return {
        "train_accuracy": accuracy,
        "epochs": len(mistakes_per_epoch),
        "updates": sum(mistakes_per_epoch),
        "mistakes_per_epoch": mistakes_per_epoch,
        "weights": weights.tolist(),
        "bias": bias,
        "seconds": time.perf_counter() - start,
    }


# 1986: backpropagation (Rumelhart, Hinton and Williams).


def backprop_1986(
    quick: bool = False, seed: int = 0, plot: str | Path | None = None, quiet: bool = False
) -> dict:
    """A 2-4-1 sigmoid network learns XOR by backpropagation: squared error, gradient descent
    with momentum, as in Rumelhart, Hinton and Williams (1986).

    No single line separates XOR; the hidden layer learns features that make it separable.
    ``quick`` changes nothing: the full run takes about a second.
    """
    start = time.perf_counter()
    manual_seed(seed)
    X, y = make_xor()
    X, target = X.double(), y.double().reshape(4, 1)
    model = nn.Sequential(nn.Linear(2, 4), nn.Sigmoid(), nn.Linear(4, 1), nn.Sigmoid()).double()
    optimizer = SGD(model.parameters(), lr=2.0, momentum=0.9)
    losses = []
    for _ in _progress(range(1000), 1000, "backprop steps", quiet):
        loss = F.mse_loss(model(X), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with no_grad():
        outputs = model(X)._array.ravel()
    accuracy = float(np.mean((outputs > 0.5) == (y._array == 1)))
    if plot is not None:
        figure, (left, right) = _figure(2)
        u, v, points = _grid(X._array, 150)
        with no_grad():
            surface = model(tensor(points).double())._array.reshape(u.shape)
        filled = left.contourf(u, v, surface, levels=20, cmap="RdBu_r", vmin=0, vmax=1)
        figure.colorbar(filled, ax=left, label="network output")
        left.scatter(*X._array.T, c=y._array, cmap="RdBu_r", edgecolors="k", s=80, vmin=0, vmax=1)
        left.set(title="XOR: output of the trained network", xlabel="x1", ylabel="x2")
        right.semilogy(losses)
        right.set(xlabel="step", ylabel="mean squared error", title="loss")
        _save(figure, plot)
    return {
        "train_accuracy": accuracy,
        "final_loss": losses[-1],
        "outputs": outputs.tolist(),
        "losses": losses,
        "seconds": time.perf_counter() - start,
    }


# 1998: convolution (LeCun, Bottou, Bengio and Haffner).


def lenet(channels: tuple[int, int] = (16, 32)) -> nn.Sequential:
    """A LeNet-style CNN for 8x8 images: two conv-relu-pool stages, then a 2-layer MLP."""
    c1, c2 = channels
    return nn.Sequential(
        nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # c1 x 4 x 4
        nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # c2 x 2 x 2
        nn.Flatten(), nn.Linear(4 * c2, 64), nn.ReLU(), nn.Linear(64, 10),
    )  # fmt: skip


def convolution_1998(
    quick: bool = False, seed: int = 0, plot: str | Path | None = None, quiet: bool = False
) -> dict:
    """A LeNet-style CNN on scikit-learn's 8x8 digits: at least 97% held-out accuracy.

    1437 digits train it (Adam, cosine learning rate, 20 epochs, mini-batches of 32); 360
    held out, chosen by ``seed``, measure it. ``quick`` trains 5 epochs.
    """
    start = time.perf_counter()
    manual_seed(seed)
    X, y = load_digits()
    order = np.random.default_rng(seed).permutation(len(y))
    test, train = tensor(order[:360]), tensor(order[360:])
    X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]
    epochs = 5 if quick else 20
    model = lenet()
    optimizer = Adam(model.parameters(), lr=3e-3)
    schedule = CosineAnnealingLR(optimizer, T_max=epochs)
    loader = DataLoader(TensorDataset(X_train, y_train), batch_size=32, shuffle=True, seed=seed)
    losses, accuracies = [], []
    for _ in _progress(range(epochs), epochs, "LeNet epochs", quiet):
        model.train()
        total = 0.0
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(labels)
        schedule.step()
        losses.append(total / len(y_train))
        model.eval()
        with no_grad():
            predictions = model(X_test).argmax(dim=1)._array
        accuracies.append(float(np.mean(predictions == y_test._array)))
    if plot is not None:
        figure, (left, right) = _figure(2)
        epochs_axis = range(1, epochs + 1)
        left.plot(epochs_axis, losses, "o-", label="training loss")
        left.set(xlabel="epoch", ylabel="cross entropy", title="LeNet on 8x8 digits")
        twin = left.twinx()
        twin.plot(epochs_axis, accuracies, "s-", color="C1", label="held-out accuracy")
        twin.set(ylabel="held-out accuracy", ylim=(0.5, 1.0))
        left.legend(loc="center right", fontsize=8)
        twin.legend(loc="right", fontsize=8, bbox_to_anchor=(1.0, 0.35))
        wrong = np.flatnonzero(predictions != y_test._array)[:8]
        right.set_axis_off()
        right.set_title(
            f"{len(np.flatnonzero(predictions != y_test._array))} held-out mistakes "
            "(true → predicted)",
            fontsize=10,
        )
        for k, i in enumerate(wrong):
            inset = right.inset_axes((0.25 * (k % 4), 0.5 - 0.5 * (k // 4), 0.23, 0.45))
            inset.imshow(X_test._array[i, 0], cmap="gray_r")
            inset.set_title(f"{y_test._array[i]} → {predictions[i]}", fontsize=9)
            inset.set_axis_off()
        _save(figure, plot)
    return {
        "test_accuracy": accuracies[-1],
        "accuracies": accuracies,
        "losses": losses,
        "epochs": epochs,
        "parameters": sum(p.numel() for p in model.parameters()),
        "seconds": time.perf_counter() - start,
    }


# 2017: attention (Vaswani et al.).

DIGITS, LENGTH, SEP = 10, 5, 10  # tokens 0-9 are digits, 10 separates input from output


class Block(nn.Module):
    """A pre-norm transformer block: causal self-attention, then an MLP, each residual."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.ReLU(), nn.Linear(4 * dim, dim))
        self.last_weights = None

    def forward(self, x):
        h = self.norm1(x)
        # is_causal builds the mask: position i attends to positions 0..i only.
        out, weights = self.attention(h, h, h, is_causal=True, average_attn_weights=False)
        self.last_weights = weights
        x = x + out
        return x + self.mlp(self.norm2(x))


class SortingTransformer(nn.Module):
    """A decoder-only transformer reading ``x1..x5 SEP y1..y4`` and predicting y1..y5."""

    def __init__(self, dim: int = 64, heads: int = 4, layers: int = 2) -> None:
        super().__init__()
        self.token = nn.Embedding(DIGITS + 1, dim)
        self.position = nn.Embedding(2 * LENGTH, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, DIGITS)

    def forward(self, tokens):
        x = self.token(tokens) + self.position(arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))  # (N, T, 10) logits of the next digit

    def generate(self, inputs: np.ndarray) -> np.ndarray:
        """Greedy decoding: the 5 output digits for each row of ``inputs`` (N, 5)."""
        sequence = np.concatenate([inputs, np.full((len(inputs), 1), SEP)], axis=1)
        with no_grad():
            for _ in range(LENGTH):
                logits = self(tensor(sequence))._array[:, -1]
                sequence = np.concatenate([sequence, logits.argmax(-1)[:, None]], axis=1)
        return sequence[:, LENGTH + 1 :]


def _digits(ids: np.ndarray) -> np.ndarray:
    """Sequence number k in 0..99999 as its 5 decimal digits."""
    return ids[:, None] // 10 ** np.arange(LENGTH - 1, -1, -1) % 10


def attention_2017(
    quick: bool = False,
    seed: int = 0,
    plot: str | Path | None = None,
    quiet: bool = False,
    *,
    compile: bool = False,
    steps: int | None = None,
) -> dict:
    """A small causal transformer learns to sort 5 digits: at least 99% exact match on 2000
    held-out sequences, in under a minute on 2 cores.

    Of the 10⁵ possible sequences, 2000 (chosen by ``seed``) are held out and never trained
    on. Each step trains on 128 sequences ``x1..x5 SEP y1..y5`` with cross entropy on the
    five predicted digits (teacher forcing); evaluation decodes greedily, digit by digit.
    The full run is 2 blocks of width 64 for 1500 steps; ``quick`` is 1 block of width 32 for
    400 steps; ``steps`` sets another number. ``compile`` runs the training step through
    `chainrule.compile`, with the same losses and weights; the metrics' ``compiled`` is that
    step (None without it), ``model`` the trained transformer.
    """
    start = time.perf_counter()
    manual_seed(seed)
    rng = np.random.default_rng(seed)
    order = rng.permutation(10**LENGTH)
    held_out, train_ids = _digits(order[:2000]), order[2000:]
    dim, layers, default_steps = (32, 1, 400) if quick else (64, 2, 1500)
    steps = default_steps if steps is None else steps
    model = SortingTransformer(dim, heads=4, layers=layers)
    optimizer = AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    schedule = CosineAnnealingLR(optimizer, T_max=steps)

    def step(tokens: Tensor, targets: Tensor) -> Tensor:
        optimizer.zero_grad()
        logits = model(tokens)[:, LENGTH:]  # positions SEP..y4 predict y1..y5
        loss = F.cross_entropy(logits.reshape(-1, DIGITS), targets)
        loss.backward()
        optimizer.step()
        return loss.detach()

    if compile:
        step = compile_step(step)
    losses = []
    for _ in _progress(range(steps), steps, "transformer steps", quiet):
        x = _digits(rng.choice(train_ids, 128))
        y = np.sort(x, axis=1)
        tokens = np.concatenate([x, np.full((len(x), 1), SEP), y[:, :-1]], axis=1)
        losses.append(step(tensor(tokens), tensor(y.reshape(-1))).item())
        schedule.step()
    model.eval()
    predicted = model.generate(held_out)
    correct = np.all(predicted == np.sort(held_out, axis=1), axis=1)
    exact_match = float(np.mean(correct))
    if plot is not None:
        figure, (left, right) = _figure(2)
        left.semilogy(losses, lw=0.8)
        left.set(
            xlabel="step",
            ylabel="cross entropy",
            title=f"sorting: {exact_match:.1%} exact match held out",
        )
        example = held_out[:1]
        tokens = np.concatenate([example, [[SEP]], np.sort(example)[:, :-1]], axis=1)
        with no_grad():
            model(tensor(tokens))
        weights = model.blocks[-1].last_weights._array[0].mean(axis=0)  # average over heads
        right.imshow(weights, cmap="viridis")
        names = [str(t) if t != SEP else "|" for t in tokens[0]]
        right.set_xticks(range(len(names)), names)
        right.set_yticks(range(len(names)), names)
        right.set(xlabel="attends to", ylabel="position", title="last block's attention")
        _save(figure, plot)
    return {
        "exact_match": exact_match,
        "held_out": len(held_out),
        "steps": steps,
        "final_loss": losses[-1],
        "losses": losses,
        "parameters": sum(p.numel() for p in model.parameters()),
        "seconds": time.perf_counter() - start,
        "model": model,
        "compiled": step if compile else None,
    }


MILESTONES: dict[str, Callable[..., dict]] = {
    "perceptron": perceptron_1958,
    "backprop": backprop_1986,
    "convolution": convolution_1998,
    "attention": attention_2017,
}

#: The milestones whose training step ``compile=True`` compiles (the perceptron's update is
#: taken only on a mistake, which Python decides from the score's value).
COMPILED = ("attention",)

#: The number each milestone is judged by, and the bar its full run must reach.
TARGETS = {
    "perceptron": ("train_accuracy", 1.0),
    "backprop": ("train_accuracy", 1.0),
    "convolution": ("test_accuracy", 0.97),
    "attention": ("exact_match", 0.99),
}


def run(
    names: Iterable[str] | None = None,
    quick: bool = False,
    plot_dir: str | Path | None = None,
    log: Callable[[str], None] | None = print,
    compile: bool = False,
) -> dict[str, dict]:
    """Run the named milestones (all by default) in order; returns each one's metrics.

    With ``plot_dir``, milestone NAME draws its figure to ``plot_dir/NAME.png``. With
    ``compile``, those in `COMPILED` compile their training step and log its summary; the
    others run as without it.
    """
    quiet = log is None
    log = log or (lambda _line: None)
    results = {}
    for name in names or MILESTONES:
        if name not in MILESTONES:
            raise ValueError(f"milestones: unknown milestone {name!r}; one of {list(MILESTONES)}")
        fn = MILESTONES[name]
        plot = None if plot_dir is None else Path(plot_dir) / f"{name}.png"
        options = {"compile": True} if compile and name in COMPILED else {}
        results[name] = metrics = fn(quick=quick, plot=plot, quiet=quiet, **options)
        key, target = TARGETS[name]
        log(
            f"{fn.__name__}: {key} {metrics[key]:.2%} (full-run target {target:.0%}), "
            f"{metrics['seconds']:.1f} s" + (f", figure {plot}" if plot else "")
        )
        if options:
            log(compiled_summary(metrics["compiled"]))
    return results
