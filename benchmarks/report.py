"""The suite's outputs: the printed table, the same as Markdown and JSON, and the ratio chart."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .suite import Row


def number(value: float | None) -> str:
    """Three significant digits, without exponents for the sizes a table shows."""
    if value is None:
        return "–"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value >= 0.001 else f"{value:.2e}"


def _cells(row: Row) -> list[str]:
    threads = f"{row.torch_threads}" if row.torch_threads else ""
    return [
        row.workload,
        row.impl,
        number(row.value),
        row.unit,
        "–" if row.ratio is None else f"{row.ratio:.2f}×",
        "" if row.compile_s is None else f"{number(row.compile_s * 1e3)} ms",
        row.dtype,
        threads,
        row.status,
    ]


HEADER = [
    "workload",
    "implementation",
    "per unit",
    "unit",
    "× floor",
    "compile",
    "dtype",
    "torch thr.",
    "status",
]


def header_lines(meta: dict) -> list[str]:
    """The machine, versions and thread counts, one fact per line."""
    versions = ", ".join(
        f"{k} {meta[k]}"
        for k in ("python", "numpy", "chainrule", "torch", "autograd", "mygrad", "micrograd", "jax")
        if k in meta
    )
    quick = " (--quick: sizes too small for the numbers to mean much)" if meta["quick"] else ""
    return [
        f"date: {meta['date']}{quick}",
        f"machine: {meta['machine']}, {meta['cpus']} CPUs",
        f"versions: {versions}",
        f"threads: BLAS {meta['blas']}; PyTorch {meta['torch_threads']}",
        f"command: {meta['command']}",
    ]


def text(rows: list[Row], targets: list[dict], meta: dict) -> str:
    """The table as printed: aligned columns, titles between workloads, then the targets."""
    lines = header_lines(meta) + [""]
    widths = [max(len(c) for c in column) for column in zip(HEADER, *map(_cells, rows))]
    lines.append("  ".join(h.ljust(w) for h, w in zip(HEADER, widths)).rstrip())
    previous = None
    for k, row in enumerate(rows):
        if row.workload != previous:
            lines.append(f"-- {row.workload}: {row.title}")
            previous = row.workload
        cells = _cells(row)
        aligned = [
            c.rjust(w) if i in (2, 4, 5) else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths))
        ]
        lines.append("  ".join(aligned).rstrip())
        if k + 1 == len(rows) or rows[k + 1].workload != row.workload:
            lines += [f"   note: {line}" for line in notes(rows, row.workload)]
    if any(row.compile_s is not None for row in rows):
        lines += ["", COMPILE_NOTE]
    lines += ["", "targets (from the issue; measured in this run):"]
    width = max([44, *(len(t["target"]) for t in targets)])
    for t in targets:
        measured = "" if t["measured"] is None else f"{number(t['measured'])}"
        lines.append(f"  {t['workload']:<4} {t['target']:<{width}} {measured:>8}  {t['verdict']}")
    lines += [f"  {t['workload']:<4} {t['detail']}" for t in targets if t.get("detail")]
    return "\n".join(lines)


#: What the compile column measures, printed under a table that has one.
COMPILE_NOTE = (
    "compile: the first calls of a compiled row (chainrule.compile: 2, trace and verify; "
    "jax.jit and torch.compile: 1), timed once, not in the step time"
)


def notes(rows: list[Row], workload: str) -> list[str]:
    """``impl: note`` for each row of ``workload`` that has one (a compiled step that did
    not replay says why)."""
    return [f"{r.impl}: {r.note}" for r in rows if r.workload == workload and r.note]


def markdown(rows: list[Row], targets: list[dict], meta: dict) -> str:
    """The table and the targets as Markdown."""
    lines = [f"- {line}" for line in header_lines(meta)]
    lines += ["", "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    previous = None
    for row in rows:
        cells = _cells(row)
        cells[0] = f"{row.workload} {row.title}" if row.workload != previous else ""
        previous = row.workload
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    noted = [f"- {r.workload} {r.impl}: {r.note}" for r in rows if r.note]
    if noted:
        lines += ["", *noted]
    if any(row.compile_s is not None for row in rows):
        lines += ["", COMPILE_NOTE]
    lines += ["", "| workload | target | measured | verdict |", "|---|---|---|---|"]
    for t in targets:
        lines.append(
            f"| {t['workload']} | {t['target']} | {number(t['measured'])} | {t['verdict']} |"
        )
    details = [f"- {t['workload']} {t['detail']}" for t in targets if t.get("detail")]
    if details:
        lines += ["", *details]
    return "\n".join(lines) + "\n"


def as_json(rows: list[Row], targets: list[dict], meta: dict) -> str:
    """Everything measured, for tools: {"meta", "rows", "targets"}."""
    return json.dumps(
        {"meta": meta, "rows": [asdict(r) for r in rows], "targets": targets},
        indent=2,
        ensure_ascii=False,
    )


def write(out: Path, rows: list[Row], targets: list[dict], meta: dict) -> list[Path]:
    """Write results.md and results.json into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.md", out / "results.json"]
    paths[0].write_text(markdown(rows, targets, meta), encoding="utf-8")
    paths[1].write_text(as_json(rows, targets, meta), encoding="utf-8")
    return paths


def plot(path: Path, rows: list[Row]) -> Path:
    """A horizontal bar chart of every measured ratio to the floor (log scale)."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install -e .[bench]") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = [r for r in rows if r.ratio is not None and r.impl != _floor(rows, r.workload)]
    names = sorted({r.impl for r in measured})
    colors = {name: plt.cm.tab10(i % 10) for i, name in enumerate(names)}
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(measured) + 1.5))
    labels = [f"{r.workload} {r.impl}" for r in measured]
    ax.barh(labels, [r.ratio for r in measured], color=[colors[r.impl] for r in measured])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("time (W8: peak memory) as a multiple of the floor; lower is better")
    ax.set_title("chainrule and its peers against the hand-written floor")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _floor(rows: list[Row], workload: str) -> str:
    return next(r.impl for r in rows if r.workload == workload)
