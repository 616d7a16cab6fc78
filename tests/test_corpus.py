"""The corpus (tests/programs/): PyTorch programs written in the idiom of public PyTorch code run
unchanged under `chainrule run` and end as they end on PyTorch, printing the same numbers step
by step to a stated tolerance. That holds for the programs that draw from torch's own random
numbers too (initial weights, dropout, shuffled batches, sampled actions and latents): under
the program's seed chainrule draws PyTorch's stream."""

import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parent / "programs"
NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?|nan|inf")
PRECISE = re.compile(r"^(.*\D) (-?\d+\.\d{6,})$", re.M)  # the lines printed to be compared


@dataclass(frozen=True)
class Case:
    """One run of a program: its arguments; ``rel`` compares every precisely printed number with
    PyTorch's (None: only a finished run with the same lines counts);
    ``final`` names the line of the final metric, ``learned`` what that metric must satisfy."""

    program: str
    args: tuple[str, ...] = ()
    rel: float | None = 1e-8
    final: str = ""
    learned: tuple[str, float] | None = None  # ("<", bound) or (">", bound)

    @property
    def id(self) -> str:
        return " ".join((self.program.removesuffix(".py"), *self.args))


F32 = 1e-4  # float32 programs: the two libraries round differently; a few steps apart stay close
# Policy-gradient losses are sums of terms of order 1 that cancel to about 1e-3: float32
# rounding of the terms is then 1e-3 of the loss (the episodes, and so the rewards, are equal).
F32_CANCELLING = 1e-3
CASES = [
    *[
        Case("char_models.py", ("--model", m), final="val loss")
        for m in ("mlp", "rnn", "gru", "lstm", "transformer")
    ],  # fmt: skip
    Case("word_lstm.py", final="best val loss"),
    Case("cnn_digits.py", rel=F32, final="test loss"),
    Case("autoencoder.py", rel=F32, final="final mse", learned=("<", 0.09)),
    Case("vae.py", rel=F32, final="final loss", learned=("<", 35.0)),
    Case("gan.py", rel=F32, final="final loss"),
    Case("reinforce.py", rel=F32_CANCELLING, final="running reward"),
    Case("actor_critic.py", rel=F32_CANCELLING, final="final length", learned=("<", 15.0)),
    Case("gat.py", final="test loss", learned=("<", 1.0)),  # with dropout 0.6, as PyTorch
    Case("gat.py", ("--sparse",), final="test loss", learned=("<", 1.0)),
    Case("lstm_lbfgs.py", final="test loss", learned=("<", 0.3)),
    Case("seq2seq.py", final="test loss"),
    Case("regression.py", final="final loss"),
    Case("logreg.py", rel=F32, final="accuracy", learned=(">", 0.9)),
    Case("digits_mlp.py", rel=F32, final="test accuracy", learned=(">", 0.8)),
    Case("text_classifier.py", rel=F32, final="test accuracy", learned=(">", 0.9)),
    Case("resnet.py", final="best accuracy", learned=(">", 50.0)),
    Case("custom_function.py", final="final mse", learned=("<", 0.1)),
    Case("conv_autoencoder.py", final="reconstruction mse", learned=("<", 0.1)),
]


def _run(cwd: Path, command: list[str]) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # two small processes on a shared CI machine
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _shape(out: str) -> list[str]:
    """The printed lines with every number blanked: what both runs must print alike."""
    return [NUMBER.sub("#", line) for line in out.splitlines()]


def _final(out: str, name: str) -> float:
    values = re.findall(rf"^{re.escape(name)} (\S+)$", out, re.M)
    assert values, f"no '{name} <number>' line in:\n{out[-1000:]}"
    return float(values[-1])


def _compare(ours: str, theirs: str, case: Case) -> None:
    if case.rel is not None:  # the same numbers take the same branches: line for line
        assert _shape(ours) == _shape(theirs)
    else:  # other numbers may print a conditional line (a new best) a different number of times
        assert set(_shape(ours)) == set(_shape(theirs))
        assert re.findall(r"^step \d+ loss", ours, re.M) == re.findall(
            r"^step \d+ loss", theirs, re.M
        )
    final = _final(ours, case.final)
    assert math.isfinite(final)
    if case.rel is not None:
        pairs, their_pairs = PRECISE.findall(ours), PRECISE.findall(theirs)
        assert [k for k, _ in pairs] == [k for k, _ in their_pairs]
        assert len(pairs) >= 5
        for (key, a), (_, b) in zip(pairs, their_pairs, strict=True):
            assert float(a) == pytest.approx(float(b), rel=case.rel, abs=case.rel * 1e-2), key
    if case.learned is not None:
        how, bound = case.learned
        assert final < bound if how == "<" else final > bound, (case.final, final)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_program_runs_as_on_pytorch(case, tmp_path, torch):
    args = [str(PROGRAMS / case.program), *case.args]
    theirs = _run(tmp_path, [sys.executable, *args])
    ours = _run(tmp_path, [sys.executable, "-m", "chainrule", "run", *args])
    _compare(ours, theirs, case)


def test_fine_tuning_starts_from_a_checkpoint_that_pytorch_wrote(tmp_path, torch):
    pretrain = Case("pretrain.py", ("--out", "pretrained.pt"), final="train accuracy",
                    learned=(">", 0.9))  # fmt: skip
    args = [str(PROGRAMS / pretrain.program), *pretrain.args]
    theirs = _run(tmp_path, [sys.executable, *args])  # PyTorch writes pretrained.pt
    ours = _run(tmp_path, [sys.executable, "-m", "chainrule", "run", *args[:-1], "ours.pt"])
    _compare(ours.replace("ours.pt", "pretrained.pt"), theirs, pretrain)
    # Both libraries fine-tune from the file PyTorch wrote (torch.save's zip format).
    fine_tune = Case("fine_tune.py", ("--pretrained", "pretrained.pt"), final="test loss")
    args = [str(PROGRAMS / fine_tune.program), *fine_tune.args]
    theirs = _run(tmp_path, [sys.executable, *args])
    ours = _run(tmp_path, [sys.executable, "-m", "chainrule", "run", *args])
    _compare(ours, theirs, fine_tune)
