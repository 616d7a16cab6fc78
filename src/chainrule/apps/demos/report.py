"""What every demo shares besides training: progress (a tqdm bar or loss lines), the loss
curve and decision boundary plot, checkpoints, and the summary line of a compiled step. The
demos themselves live beside it."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence

import numpy as np


class Progress:
    """Where a demo reports while it trains: a tqdm bar when stderr is a terminal, otherwise
    a loss line every ``every`` steps; nothing at all when ``quiet`` or ``log`` is None.

    Final metrics do not go through Progress: demos print them with ``log`` in every mode.
    Without tqdm (``pip install chainrule[demo]``) a terminal gets the loss lines instead.
    """

    def __init__(
        self,
        total: int,
        log: Callable[[str], None] | None = print,
        quiet: bool = False,
        every: int = 50,
        unit: str = "step",
    ) -> None:
        self.total, self.every, self.unit, self.count = total, every, unit, 0
        self.log = None if quiet else log
        self.bar = None
        if self.log is not None and sys.stderr.isatty():
            self.bar = _tqdm_bar(total, unit)

    def update(self, loss: float) -> None:
        """One more step done, whose loss was ``loss``."""
        self.count += 1
        if self.bar is not None:
            self.bar.update()
            self.bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
        elif self.every and (self.count % self.every == 0 or self.count in (1, self.total)):
            self.note(f"{self.unit} {self.count:5d}  loss {loss:.6f}")

    def note(self, line: str) -> None:
        """Print a progress line, unless quiet or a bar already shows the progress."""
        if self.log is not None and self.bar is None:
            self.log(line)

    def close(self) -> None:
        """Finish the bar, if there is one, so that the final metrics print below it."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _tqdm_bar(total: int, unit: str):
    """A tqdm bar on stderr, or None when tqdm is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=unit, dynamic_ncols=True)


def compiled_summary(step) -> str:
    """One line on a `chainrule.compile`'d training step: its calls traced, replayed and run
    eagerly, and the equations of its program (the last one built, if any was)."""
    stats, program = step.stats, step.program
    equations = "no program built" if program is None else f"{len(program.equations)} equations"
    return (
        f"compiled step: {stats['traced']} traced, {stats['replayed']} replayed, "
        f"{stats['eager']} eager; {equations}"
    )


def check_outputs(plot: str | None, save_path: str | None) -> None:
    """Raise now, before training, if ``--plot`` or ``--save`` could not be written later."""
    if plot is not None:
        _matplotlib()
    if save_path is not None and importlib.util.find_spec("safetensors") is None:
        raise ImportError("--save needs safetensors: pip install chainrule[demo]")


def _matplotlib():
    """What `plot_run` needs from matplotlib, loaded on demand."""
    try:
        from matplotlib import colormaps
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.colors import ListedColormap
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install chainrule[demo]") from None
    return Figure, FigureCanvasAgg, ListedColormap, MaxNLocator, colormaps


def plot_run(
    path: str,
    losses: Sequence[float],
    title: str,
    points: np.ndarray | None = None,
    labels: np.ndarray | None = None,
    predict: Callable[[np.ndarray], np.ndarray] | None = None,
    resolution: int = 200,
    accuracies: Sequence[float] | None = None,
) -> None:
    """Write a PNG (any format matplotlib knows, by ``path``'s suffix) of a training run.

    Panels: the loss of every step (log scale); with ``points`` (n, 2), ``labels`` and
    ``predict`` (an (m, 2) array of inputs -> m class numbers), the decision regions on a
    ``resolution`` x ``resolution`` grid around the points, with the points on top; with
    ``accuracies``, the held-out accuracy after each epoch. Drawn with matplotlib's Agg
    canvas, so no window opens and pyplot's global state is left alone.
    """
    Figure, FigureCanvasAgg, ListedColormap, MaxNLocator, colormaps = _matplotlib()
    panels = 1 + (points is not None) + (accuracies is not None)
    figure = Figure(figsize=(4.5 * panels, 4.0), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, panels, squeeze=False)[0]
    figure.suptitle(title)

    curve = axes[0]
    curve.plot(np.arange(1, len(losses) + 1), losses, linewidth=1.0)
    if min(losses) > 0:
        curve.set_yscale("log")
    curve.set(xlabel="step", ylabel="training loss", title="loss")
    curve.grid(alpha=0.3)

    if points is not None:
        boundary = axes[1]
        points, labels = np.asarray(points, dtype=np.float64), np.asarray(labels)
        low, high = points.min(axis=0), points.max(axis=0)
        pad = 0.15 * (high - low)
        xs, ys = np.meshgrid(
            np.linspace(low[0] - pad[0], high[0] + pad[0], resolution),
            np.linspace(low[1] - pad[1], high[1] + pad[1], resolution),
        )
        grid = np.column_stack([xs.ravel(), ys.ravel()])
        regions = np.asarray(predict(grid), dtype=np.int64).reshape(xs.shape)
        classes = int(max(labels.max(), regions.max())) + 1
        cmap = ListedColormap(colormaps["tab10"].colors[:classes])
        levels = np.arange(classes + 1) - 0.5  # one band per class number
        boundary.contourf(xs, ys, regions, levels=levels, cmap=cmap, alpha=0.3)
        boundary.scatter(*points.T, c=labels, cmap=cmap, vmin=-0.5, vmax=classes - 0.5,
                         s=14, edgecolors="black", linewidths=0.4)  # fmt: skip
        boundary.set(title="decision boundary", xticks=[], yticks=[])

    if accuracies is not None:
        held_out = axes[-1]
        held_out.plot(np.arange(1, len(accuracies) + 1), 100 * np.asarray(accuracies), "o-")
        held_out.set(xlabel="epoch", ylabel="%", title="held-out accuracy")
        held_out.xaxis.set_major_locator(MaxNLocator(integer=True))
        held_out.grid(alpha=0.3)
    figure.savefig(path, dpi=100)
