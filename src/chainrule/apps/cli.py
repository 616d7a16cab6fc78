"""The ``chainrule`` console command: ``chainrule train NAME`` runs a training demo."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from . import demos

DEMOS = {"xor": demos.train_xor}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``chainrule`` command."""
    parser = argparse.ArgumentParser(
        prog="chainrule", description="Automatic differentiation from scratch, shown working."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    train = commands.add_parser("train", help="train a demo model and show its gradients")
    train.add_argument("name", choices=sorted(DEMOS), help="which demo to train")
    train.add_argument("--steps", type=int, default=None, help="training steps")
    train.add_argument("--seed", type=int, default=0, help="random seed")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    options = {"seed": args.seed}
    if args.steps is not None:
        options["steps"] = args.steps
    DEMOS[args.name](**options)
    return 0
