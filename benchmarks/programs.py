"""W10: the corpus as the benchmark. Every program in tests/programs/ (PyTorch programs written
in the idiom of public code) runs as it is written, on PyTorch and under ``chainrule run``, each
in its own process, for a fixed number of optimizer steps after a first one; a step's time is
the time between two ``optimizer.step()`` returns (data, forward, backward and update).

The two libraries alternate, program by program, ``rounds`` times; the table gives each
program's median step time on each (the smaller median over the rounds), their ratio, the
memory each run added to its process (peak resident memory less the memory after importing
the library), and the geometric mean of the ratios. Rows come at one thread (``torch.set_num_
threads(1)``, NumPy's BLAS at one thread) and at each library's default thread count.

Run: python -m benchmarks --only W10 [--quick] [--profile]
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parents[1] / "tests" / "programs"

#: (program, arguments): the corpus with the arguments its test runs it with, dropout kept.
CORPUS = [
    *[("char_models.py", ("--model", m)) for m in ("mlp", "rnn", "gru", "lstm", "transformer")],
    ("word_lstm.py", ()), ("cnn_digits.py", ()), ("autoencoder.py", ()), ("vae.py", ()),
    ("gan.py", ()), ("reinforce.py", ()), ("actor_critic.py", ()), ("gat.py", ()),
    ("lstm_lbfgs.py", ()), ("seq2seq.py", ()), ("regression.py", ()), ("logreg.py", ()),
    ("digits_mlp.py", ()), ("text_classifier.py", ()), ("resnet.py", ()),
    ("custom_function.py", ()), ("conv_autoencoder.py", ()), ("pretrain.py", ("--out", "p.pt")),
    ("charlm.py", ()), ("gpt.py", ()),
]  # fmt: skip


@dataclass
class ProgramRow:
    """One program at one thread setting: median step seconds and added bytes per library."""

    program: str
    threads: str
    ours: float
    theirs: float
    ours_peak: int
    theirs_peak: int
    steps: int

    @property
    def ratio(self) -> float:
        """chainrule's step time over PyTorch's."""
        return self.ours / self.theirs

    @property
    def memory_ratio(self) -> float:
        """chainrule's added memory over PyTorch's."""
        return self.ours_peak / max(self.theirs_peak, 1)


def _measure(library: str, threads: int, steps: int, program: str, args: tuple, cwd: str):
    out = Path(cwd) / f"{library}.json"
    command = [sys.executable, "-m", "benchmarks.program_run", library, str(threads), str(steps),
               str(out), str(PROGRAMS / program), *args]  # fmt: skip
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900,
                          env=_environment(root))  # fmt: skip
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"{program} on {library}: {done.stderr.strip()[-600:]}")
    result = json.loads(out.read_text())
    return result["steps"], result["peak_bytes"]


def _environment(root: str) -> dict:
    import os

    paths = [root, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def run(quick: bool = False, rounds: int = 2, log=None) -> list[ProgramRow]:
    """Every corpus program at one thread and at the default threads (one round there)."""
    steps = 3 if quick else 20
    corpus = CORPUS[:3] if quick else CORPUS
    rows = []
    for threads, label, repeat in ((1, "1", 1 if quick else rounds), (0, "default", 1)):
        for program, args in corpus:
            name = " ".join((program.removesuffix(".py"), *args))
            if log:
                log(f"W10 {name} ({label} thread{'s' if threads != 1 else ''}) ...")
            medians = {"torch": [], "chainrule": []}
            peaks = {"torch": 0, "chainrule": 0}
            count = 0
            try:
                for _ in range(repeat):
                    for library in ("torch", "chainrule"):
                        with tempfile.TemporaryDirectory() as cwd:
                            times, peak = _measure(library, threads, steps, program, args, cwd)
                        if not times:
                            raise RuntimeError(f"{program} took no optimizer step")
                        medians[library].append(statistics.median(times))
                        peaks[library] = max(peaks[library], peak)
                        count = len(times)
            except RuntimeError as error:
                if log:
                    log(f"W10 {name}: skipped ({error})")
                continue
            rows.append(ProgramRow(name, label, min(medians["chainrule"]),
                                   min(medians["torch"]), peaks["chainrule"], peaks["torch"],
                                   count))  # fmt: skip
    return rows


def geometric_mean(values: list[float]) -> float:
    """The geometric mean of positive ``values``."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


def table(rows: list[ProgramRow]) -> str:
    """W10's table as Markdown: a row per program and thread setting, then the means."""
    lines = [
        "W10 programs: median step time, chainrule / PyTorch, and memory the run added",
        "",
        "| program | threads | chainrule ms | PyTorch ms | ratio | chainrule MB | PyTorch MB |"
        " memory ratio |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.program} | {r.threads} | {r.ours * 1e3:.3f} | {r.theirs * 1e3:.3f} | "
            f"{r.ratio:.2f} | {r.ours_peak / 2**20:.1f} | {r.theirs_peak / 2**20:.1f} | "
            f"{r.memory_ratio:.2f} |"
        )
    for label in ("1", "default"):
        chosen = [r.ratio for r in rows if r.threads == label]
        if chosen:
            worst = max((r for r in rows if r.threads == label), key=lambda r: r.ratio)
            lines.append(
                f"\ngeometric mean at {label} thread(s): {geometric_mean(chosen):.2f}x PyTorch "
                f"over {len(chosen)} programs; slowest {worst.program} at {worst.ratio:.2f}x"
            )
    return "\n".join(lines)


def profile_slowest(rows: list[ProgramRow], count: int = 3) -> str:
    """``chainrule run --profile`` of the ``count`` slowest programs at one thread: where
    their steps spend their time, op by op."""
    slowest = sorted((r for r in rows if r.threads == "1"), key=lambda r: -r.ratio)[:count]
    parts = []
    for row in slowest:
        program, *args = row.program.split(" ")
        command = [sys.executable, "-m", "chainrule", "run", "--profile",
                   str(PROGRAMS / f"{program}.py"), *args]  # fmt: skip
        with tempfile.TemporaryDirectory() as cwd:
            done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)
        text = done.stdout
        start = text.find("chainrule run --profile")
        parts.append(f"W10 profile: {row.program} ({row.ratio:.2f}x PyTorch)\n{text[start:]}")
    return "\n\n".join(parts)


def plot(path: Path, rows: list[ProgramRow]) -> Path:
    """W10's ratios as horizontal bars, a pair per program (one thread, default threads), on
    a log scale with PyTorch (1.0) and the issue's limit for one program (1.5) marked."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install -e .[bench]") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r.program for r in rows))
    ratio = {(r.program, r.threads): r.ratio for r in rows}
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(names) + 1.6))
    height = 0.4
    for k, (label, color) in enumerate((("1", "tab:blue"), ("default", "tab:orange"))):
        found = [(i, ratio[(n, label)]) for i, n in enumerate(names) if (n, label) in ratio]
        if found:
            ax.barh([i + (k - 0.5) * height for i, _ in found], [v for _, v in found], height,
                    color=color, label=f"{label} thread{'s' if label != '1' else ''}")  # fmt: skip
    ax.set_yticks(range(len(names)), names)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.axvline(1.5, color="grey", linewidth=1, linestyle="--")
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("chainrule's step time as a multiple of PyTorch's; lower is better")
    ax.set_title("W10: the corpus's programs on chainrule against PyTorch")
    ax.legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
