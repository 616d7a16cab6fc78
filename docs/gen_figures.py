"""Every figure of the book, drawn by chainrule while the site builds.

mkdocs-gen-files runs this file during ``mkdocs build``; each figure lands in the built site
under ``figures/`` and pages link to it there, so no picture in the book can drift from the
code. ``python docs/gen_figures.py DIR`` writes the same files to DIR for a quick look.
Importing the file does nothing (pytest collects ``docs/``).
"""

from __future__ import annotations

import io
import math
import random
import sys
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

import chainrule as cr
from chainrule import func
from chainrule.apps import demos, milestones

FIGURES: dict[str, Callable[[], bytes]] = {}


def figure(name: str):
    """Register a function returning a figure's bytes under ``figures/<name>``."""

    def register(make: Callable[[], bytes]) -> Callable[[], bytes]:
        FIGURES[name] = make
        return make

    return register


def _panels(columns: int = 1, width: float = 5.0, height: float = 3.4):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * columns, height), layout="constrained")
    return fig, fig.subplots(1, columns, squeeze=False)[0]


def _svg(fig) -> bytes:
    """The figure as SVG, byte-for-byte the same on every build."""
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "chainrule", "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


# Chapter 1: the error of finite differences against the step size.


@figure("step_size_error.svg")
def step_size_error() -> bytes:
    f = lambda x: x**3 * np.log(x) + np.exp(-x)
    exact = 12 * math.log(2) + 4 - math.exp(-2)  # 3x² ln x + x² - e^-x at x = 2
    steps = np.logspace(-15, 0, 121)
    central = np.abs((f(2 + steps) - f(2 - steps)) / (2 * steps) - exact)
    forward = np.abs((f(2 + steps) - f(2)) / steps - exact)
    with cr.count_ops():  # reverse mode, for the level it reaches
        x = cr.Value(2.0)
        (x**3 * x.log() + (-x).exp()).backward()
    fig, (ax,) = _panels(width=6.0, height=3.8)
    ax.loglog(steps, forward, label="forward difference (f(x+h) - f(x)) / h")
    ax.loglog(steps, central, label="central difference (f(x+h) - f(x-h)) / 2h")
    ax.axhline(
        max(abs(x.grad - exact), 1e-16), color="k", ls=":", label="reverse mode (chainrule.Value)"
    )
    ax.set(
        xlabel="step size h",
        ylabel="|error| of df/dx at x = 2",
        title="f(x) = x³ ln x + e⁻ˣ: truncation (right) against round-off (left)",
    )
    ax.title.set_fontsize(10)
    ax.legend(fontsize=8, loc="lower left")
    return _svg(fig)


# Chapter 2: graphs with values and gradients.


@figure("graph_z.svg")
def graph_z() -> bytes:
    x, y = cr.Value(2.0, label="x"), cr.Value(3.0, label="y")
    u = x * y
    u.label = "u"
    z = u + x
    z.label = "z"
    z.backward()
    return cr.draw_graph(z).pipe(format="svg")


@figure("graph_l.svg")
def graph_l() -> bytes:
    a, b = cr.Value(3.0, label="a"), cr.Value(4.0, label="b")
    loss = a * b + a**2
    loss.label = "L"
    loss.backward()
    return cr.draw_graph(loss).pipe(format="svg")


@figure("graph_sigmoid.svg")
def graph_sigmoid() -> bytes:
    w1, w2, x1, x2 = (
        cr.Value(v, label=n) for v, n in zip((0.2, 0.4, -0.4, 0.5), ("w1", "w2", "x1", "x2"))
    )
    f = (w1 * x1 + w2 * x2).sigmoid() + 0.5 * (w1**2 + w2**2)
    f.label = "f"
    f.backward()
    return cr.draw_graph(f).pipe(format="svg")


# Chapter 3: forward against reverse mode, counted.


@figure("forward_vs_reverse.svg")
def forward_vs_reverse() -> bytes:
    sizes = [1, 2, 4, 8, 16, 32, 64]
    totals = {key: [] for key in ("wide jacfwd", "wide jacrev", "tall jacfwd", "tall jacrev")}
    for n in sizes:
        x, c, t = cr.tensor(np.linspace(0, 1, n)), cr.tensor(np.linspace(0, 1, n)), cr.tensor([0.5])
        wide = lambda x: (x.sin() * x).sum()  # n inputs, 1 output
        tall = lambda t, c=c: (t * c).sin() * t  # 1 input, n outputs
        for name, fn, arg in (("wide", wide, x), ("tall", tall, t)):
            for mode in ("jacfwd", "jacrev"):
                # chunk_size=1: one backward pass per row, the algorithm the chapter counts
                options = {"chunk_size": 1} if mode == "jacrev" else {}
                with cr.count_ops() as counts:
                    getattr(func, mode)(fn, **options)(arg)
                totals[f"{name} {mode}"].append(counts.forward_total + counts.backward_total)
    fig, axes = _panels(2, width=4.2, height=3.4)
    for ax, shape, what in zip(
        axes, ("wide", "tall"), ("n inputs, 1 output", "1 input, m outputs")
    ):
        for mode, marker in (("jacfwd", "o"), ("jacrev", "s")):
            ax.loglog(sizes, totals[f"{shape} {mode}"], marker=marker, label=f"{mode} ({mode[3:]})")
        ax.set(
            xlabel="n" if shape == "wide" else "m",
            ylabel="ops counted (forward + backward)",
            title=f"{shape}: {what}",
        )
        ax.legend(fontsize=8)
    return _svg(fig)


# Chapter 4: the scalar MLP on XOR.


@figure("xor_training.svg")
def xor_training() -> bytes:
    result = demos.train_xor(steps=500, seed=0, log=None)
    model = result["model"]
    fig, (left, right) = _panels(2, width=4.2, height=3.4)
    left.semilogy(result["losses"])
    left.set(xlabel="step", ylabel="mean squared error", title="XOR: loss of a 2-8-1 Value MLP")
    grid = np.linspace(-0.25, 1.25, 31)
    surface = np.array([[model([u, v]).data for u in grid] for v in grid])
    filled = right.contourf(grid, grid, surface, levels=np.linspace(0, 1, 11), cmap="RdBu_r")
    fig.colorbar(filled, ax=right, label="prediction")
    corners = np.array(demos.XOR_INPUTS)
    right.scatter(*corners.T, c=demos.XOR_TARGETS, cmap="RdBu_r", edgecolors="k", s=80)
    right.set(xlabel="x1", ylabel="x2", title="decision surface after 500 steps")
    return _svg(fig)


# Chapter 5: the tensor engine.


@figure("tensor_graph.svg")
def tensor_graph() -> bytes:
    x = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = cr.tensor([10.0, 20.0], requires_grad=True)
    y = (x * b).sum()
    y.backward()
    return cr.draw_graph(y).pipe(format="svg")


@figure("blobs_boundary.svg")
def blobs_boundary() -> bytes:
    x, y = demos.blobs(seed=0)
    result = demos.fit_blobs_tensor(x, y, steps=500, lr=1.0, seed=0)
    X, labels = np.array(x), np.array(y)
    u, v = np.meshgrid(np.linspace(-40, 40, 161), np.linspace(-40, 40, 161))
    with cr.no_grad():
        grid = cr.tensor(np.stack([u.ravel(), v.ravel()], 1))
        regions = result["model"](grid).argmax(dim=1).numpy().reshape(u.shape)
    fig, (ax,) = _panels(width=4.6, height=4.0)
    colors = ["tab:red", "tab:blue", "tab:green", "tab:purple"]
    ax.contourf(u, v, regions, levels=np.arange(-0.5, 4), colors=colors, alpha=0.2)
    ax.scatter(*X.T, c=[colors[k] for k in labels], edgecolors="k", s=22)
    ax.set(
        title=f"one Linear layer: {result['accuracy']:.0%} of 100 blobs",
        xlabel="x1",
        ylabel="x2",
        aspect="equal",
    )
    return _svg(fig)


# Chapter 6: why gradcheck wants float64.


@figure("gradcheck_eps.svg")
def gradcheck_eps() -> bytes:
    steps = np.logspace(-12, -0.5, 100)
    fig, (ax,) = _panels(width=6.0, height=3.6)
    for dtype in (np.float32, np.float64):
        x = np.array(1.0, dtype=dtype)
        h = steps.astype(dtype)
        central = (np.sin(x + h) - np.sin(x - h)) / (2 * h)
        error = np.abs(central.astype(np.float64) - math.cos(1.0)) + 1e-17
        ax.loglog(steps, error, label=np.dtype(dtype).name)
        best = (np.finfo(dtype).eps) ** (1 / 3)
        ax.axvline(best, color="C0" if dtype is np.float32 else "C1", ls=":", lw=1)
    ax.axvline(1e-6, color="k", lw=1, label="gradcheck's default eps")
    ax.set(
        xlabel="step size eps",
        ylabel="|central difference - cos(1)|",
        title="d sin(x)/dx at x = 1: dotted lines at machine epsilon^(1/3)",
    )
    ax.title.set_fontsize(10)
    ax.legend(fontsize=8)
    return _svg(fig)


# Chapter 7: vanishing gradients in a deep tanh stack.


def tanh_stack_gradients(depth: int, scale: float, width: int = 64, seed: int = 0) -> list[float]:
    """The gradient norm reaching each layer's input of a ``depth``-layer tanh stack whose
    weights are N(0, scale² / width); index 0 is the input."""
    rng = np.random.default_rng(seed)
    h = x = cr.tensor(rng.standard_normal((32, width)), requires_grad=True)
    inputs = []
    for _ in range(depth):
        h.retain_grad()
        inputs.append(h)
        h = (h @ cr.tensor(rng.standard_normal((width, width)) * scale / math.sqrt(width))).tanh()
    h.sum().backward()
    assert inputs[0] is x
    return [float(np.linalg.norm(t.grad.numpy())) for t in inputs]


@figure("vanishing_gradients.svg")
def vanishing_gradients() -> bytes:
    fig, (ax,) = _panels(width=6.0, height=3.6)
    for scale in (0.5, 1.0, 1.5):
        norms = tanh_stack_gradients(50, scale)
        ax.semilogy(range(len(norms)), norms, label=f"weights N(0, {scale}²/width)")
    ax.set(
        xlabel="layer (0 = input)",
        ylabel="‖gradient‖ at the layer's input",
        title="a 50-layer tanh stack: where the gradient goes",
    )
    ax.legend(fontsize=8)
    return _svg(fig)


# Chapter 8: higher derivatives by differentiating derivatives.


@figure("tanh_derivatives.svg")
def tanh_derivatives() -> bytes:
    x = cr.tensor(np.linspace(-4, 4, 201), requires_grad=True)
    curves = [x.tanh()]
    for _ in range(3):
        (g,) = cr.autograd.grad(curves[-1].sum(), x, create_graph=True)
        curves.append(g)
    fig, (ax,) = _panels(width=6.0, height=3.4)
    for k, curve in enumerate(curves):
        ax.plot(
            x.detach().numpy(),
            curve.detach().numpy(),
            label=["tanh x", "1st derivative", "2nd", "3rd"][k],
        )
    ax.set(xlabel="x", title="tanh and three derivatives, each the gradient of the one before")
    ax.title.set_fontsize(10)
    ax.legend(fontsize=8)
    return _svg(fig)


# Chapter 9: the memory against compute trade-off of checkpointing.


def checkpoint_costs(segments: int, depth: int = 64, width: int = 32, batch: int = 512):
    """Peak traced memory (bytes) and forward ops of forward + backward through a
    ``depth``-layer tanh MLP, in ``segments`` checkpointed segments (0: no checkpointing)."""
    rng = np.random.default_rng(0)
    weights = [
        cr.tensor(rng.standard_normal((width, width)) / math.sqrt(width), requires_grad=True)
        for _ in range(depth)
    ]
    layers = [lambda t, w=w: (t @ w).tanh() for w in weights]
    x = cr.tensor(rng.standard_normal((batch, width)))
    tracemalloc.start()
    try:
        with cr.count_ops() as counts:
            if segments:
                out = cr.checkpoint_sequential(layers, segments, x)
            else:
                out = x
                for layer in layers:
                    out = layer(out)
            out.sum().backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, counts.forward_total


@figure("checkpoint_tradeoff.svg")
def checkpoint_tradeoff() -> bytes:
    choices = [1, 2, 4, 8, 16, 32, 64]
    plain_memory, plain_ops = checkpoint_costs(0)
    costs = [checkpoint_costs(s) for s in choices]
    fig, (ax,) = _panels(width=6.0, height=3.6)
    ax.plot(choices, [m / 1e6 for m, _ in costs], "o-", label="peak memory (MB)")
    ax.axhline(plain_memory / 1e6, color="C0", ls=":", label="no checkpointing")
    ax.set(
        xscale="log",
        xlabel="segments (64 layers)",
        ylabel="peak memory, MB",
        title="checkpoint_sequential on a 64-layer tanh MLP, measured",
    )
    ax.set_xticks(choices, [str(s) for s in choices])
    twin = ax.twinx()
    twin.plot(
        choices,
        [ops / plain_ops for _, ops in costs],
        "s-",
        color="C1",
        label="forward ops / plain run",
    )
    twin.set(ylabel="forward ops, relative", ylim=(0.9, 2.1))
    ax.legend(fontsize=8, loc="upper center")
    twin.legend(fontsize=8, loc="lower right")
    return _svg(fig)


# The milestones: each function draws its own final figure.


def _milestone(name: str, quick: bool) -> Callable[[], bytes]:
    def make() -> bytes:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{name}.png"
            milestones.MILESTONES[name](quick=quick, plot=path, quiet=True)
            return path.read_bytes()

    return make


for _name in milestones.MILESTONES:
    # The transformer's full run takes most of a minute; the build draws the quick run.
    figure(f"milestone_{_name}.png")(_milestone(_name, quick=_name == "attention"))


def main(out_dir: str | None = None) -> None:
    """Write every figure: into the site being built, or into ``out_dir``."""
    random.seed(0)
    for name, make in FIGURES.items():
        data = make()
        if out_dir is None:
            import mkdocs_gen_files

            with mkdocs_gen_files.open(f"figures/{name}", "wb") as file:
                file.write(data)
        else:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            (Path(out_dir) / name).write_bytes(data)


# mkdocs-gen-files runs this file with runpy, whose default module name is "<run_path>".
if __name__ == "<run_path>":
    main()
elif __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "figures")
