"""The ``chainrule`` console command: ``chainrule train NAME`` runs a training demo,
``chainrule milestones`` retraces the history of neural networks, ``chainrule serve`` opens the
live web page, ``chainrule bench`` runs the benchmark suite of a source checkout, and
``chainrule run SCRIPT.py`` runs a PyTorch program on chainrule."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from . import demos

DEMOS = {
    "xor": demos.train_xor,
    "blobs": demos.train_blobs,
    "moons": demos.train_moons,
    "spirals": demos.train_spirals,
    "digits": demos.train_digits,
}
EPOCH_DEMOS = ("digits",)  # minibatch demos count epochs; the others count full-batch steps
DISTRIBUTED_DEMOS = ("moons", "spirals", "digits")
COMPILED_DEMOS = ("moons", "spirals", "digits")  # the demos on Tensors


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``chainrule`` command."""
    parser = argparse.ArgumentParser(
        prog="chainrule", description="Automatic differentiation from scratch, shown working."
    )
    parser.add_argument("--version", action="version", version=f"chainrule {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, summary: str, **options) -> argparse.ArgumentParser:
        """A subcommand whose help opens with ``summary``, as the list of commands shows it."""
        return commands.add_parser(
            name, help=summary, description=summary[0].upper() + summary[1:] + ".", **options
        )

    train = command("train", "train a demo model and show its gradients")
    train.add_argument("name", choices=sorted(DEMOS), help="which demo to train")
    train.add_argument("--steps", type=int, default=None, help="training steps (not digits)")
    train.add_argument("--epochs", type=int, default=None, help="training epochs (digits)")
    train.add_argument("--seed", type=int, default=0, help="random seed")
    train.add_argument(
        "--quiet", action="store_true", help="no progress bar or loss lines, only final metrics"
    )
    train.add_argument("--plot", metavar="FILE.png", help="write the loss curve (and boundary)")
    train.add_argument("--save", metavar="FILE.safetensors", help="write the trained weights")
    train.add_argument(
        "--distributed", action="store_true",
        help="moons, spirals, digits: split each batch over MPI ranks (mpirun -n N chainrule ...)",
    )  # fmt: skip
    train.add_argument(
        "--engine", choices=("tensor", "scalar"), default=None,
        help="blobs only: train on Tensors (default) or on scalar Values, timed against Tensors",
    )  # fmt: skip
    train.add_argument(
        "--compile", action="store_true",
        help="moons, spirals, digits: record the training step once and replay it "
        "(chainrule.compile); prints the compiled step's counts at the end",
    )  # fmt: skip
    serve = command("serve", "open the live web page: graphs, gradients, training")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    serve.add_argument("--port", type=int, default=8000, help="port (0 picks a free one)")
    command(
        "bench", "run the benchmark suite of a source checkout (python -m benchmarks)",
        add_help=False,  # its --help is the suite's own, named chainrule bench
    )  # fmt: skip
    program = command(
        "run", "run a PyTorch program on chainrule: import torch gives chainrule's names"
    )
    program.add_argument("--count-ops", action="store_true", help="print op counts per step")
    program.add_argument("--profile", action="store_true", help="print where the time went, per op")
    program.add_argument("--draw", metavar="FILE", help="draw the first loss's graph (.svg/.dot)")
    program.add_argument(
        "--traceback", action="store_true", help="show the whole stack where a missing name stops"
    )
    program.add_argument("script", help="the program (a .py file)")
    # Not required (argparse counts a REMAINDER as required): without a script, the error
    # names only the script.
    program.add_argument("args", nargs=argparse.REMAINDER, help="its arguments").required = False
    from .milestones import MILESTONES

    history = command("milestones", "retrace 1958-2017, perceptron to attention")
    history.add_argument("name", nargs="?", choices=list(MILESTONES), help="one (default: all)")
    history.add_argument("--quick", action="store_true", help="shorter runs, lower bars")
    history.add_argument("--plot-dir", metavar="DIR", help="write each figure to DIR/NAME.png")
    history.add_argument(
        "--compile", action="store_true",
        help="attention: record the training step once and replay it (chainrule.compile)",
    )  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        return bench(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "milestones":
        from .milestones import COMPILED, run

        if args.compile and args.name not in (None, *COMPILED):
            parser.error(f"--compile applies to {', '.join(COMPILED)}, not {args.name}")

        try:
            run(
                [args.name] if args.name else None,
                quick=args.quick,
                plot_dir=args.plot_dir,
                compile=args.compile,
            )
        except ImportError as error:  # tqdm or matplotlib; the message names the extra
            parser.exit(1, f"chainrule milestones: {error}\n")
        return 0
    if args.command == "run":
        from .run import run

        return run(
            args.script, args.args, count_ops=args.count_ops, draw=args.draw,
            profile=args.profile, show_traceback=args.traceback,
        )  # fmt: skip
    if args.command == "serve":
        from .web.server import serve  # the standard library's http.server, loaded on demand

        return serve(args.host, args.port)
    options = {"seed": args.seed, "quiet": args.quiet, "plot": args.plot, "save": args.save}
    unit, other = ("epochs", "steps") if args.name in EPOCH_DEMOS else ("steps", "epochs")
    if getattr(args, other) is not None:
        parser.error(f"--{other} does not apply to the {args.name} demo; it counts --{unit}")
    if getattr(args, unit) is not None:
        options[unit] = getattr(args, unit)
    if args.distributed:
        if args.name not in DISTRIBUTED_DEMOS:
            parser.error(
                f"--distributed applies to {', '.join(DISTRIBUTED_DEMOS)}, not {args.name}"
            )
        options["distributed"] = True
    if args.engine is not None:
        if args.name != "blobs":
            parser.error(f"--engine applies to the blobs demo only, not {args.name}")
        options["engine"] = args.engine
    if args.compile:
        if args.name not in COMPILED_DEMOS:
            parser.error(f"--compile applies to {', '.join(COMPILED_DEMOS)}, not {args.name}")
        if args.distributed:
            parser.error("--compile does not apply with --distributed (its gradient hooks)")
        options["compile"] = True
    try:
        DEMOS[args.name](**options)
    except ImportError as error:  # a missing optional library; the message names the extra
        if args.distributed:
            raise  # chainrule.distributed's excepthook then stops every rank, not just this one
        parser.exit(1, f"chainrule train: {error}\n")
    return 0


#: The repository a source checkout of chainrule lives in (src/chainrule/apps/cli.py).
SOURCE_ROOT = Path(__file__).resolve().parents[3]


def bench(args: list[str]) -> int:
    """``python -m benchmarks ARGS`` from the source checkout, in a new process: the suite
    pins BLAS threads before NumPy loads, which this process has already done."""
    if not (SOURCE_ROOT / "benchmarks" / "__main__.py").is_file():
        print(
            "chainrule bench: the benchmark suite is not installed with the package; it runs "
            'from a source checkout: git clone the repository, pip install -e ".[bench]", '
            "then chainrule bench (or python -m benchmarks) there",
            file=sys.stderr,
        )
        return 1
    path = os.pathsep.join(filter(None, [str(SOURCE_ROOT), os.environ.get("PYTHONPATH")]))
    command = [sys.executable, "-c", _BENCH, *args]
    return subprocess.call(command, env={**os.environ, "PYTHONPATH": path})


#: ``python -m benchmarks``, named chainrule bench in its usage lines and help.
_BENCH = (
    "import sys; from benchmarks.__main__ import start; "
    "sys.exit(start(sys.argv[1:], 'chainrule bench'))"
)
