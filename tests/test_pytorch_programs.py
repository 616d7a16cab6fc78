"""Programs written for PyTorch (tests/programs/) train on chainrule through `chainrule run`
as on PyTorch itself: the same starting weights give the same losses, step by step."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parent / "programs"


def _run(tmp_path, command: list[str]) -> dict[str, float]:
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    numbers = dict(re.findall(r"^(step \d+ loss|test loss) (\S+)$", done.stdout, re.M))
    assert numbers, done.stdout[-2000:]
    return {key: float(value) for key, value in numbers.items()} | {"out": done.stdout}


@pytest.mark.parametrize(("model", "steps"), [("mlp", 20), ("rnn", 20), ("rnn", 200)])
def test_the_character_language_model_trains_as_on_pytorch(model, steps, tmp_path, torch):
    args = [str(PROGRAMS / "charlm.py"), "--model", model, "--steps", str(steps)]
    args += ["--checkpoint", "checkpoint"]
    theirs = _run(tmp_path, [sys.executable, *args])
    ours = _run(tmp_path, [sys.executable, "-m", "chainrule", "run", *args])
    losses = [f"step {i} loss" for i in range(steps)] + ["test loss"]
    for key in losses:
        # float64 throughout, the same NumPy-drawn weights and batches: rounding apart, equal.
        assert ours[key] == pytest.approx(theirs[key], rel=1e-8, abs=1e-10), key
    assert ours[f"step {steps - 1} loss"] < ours["step 0 loss"] - 0.3  # it learns
    for line in (f"resumed at step {steps}", "sample 8 characters"):
        assert line in ours["out"] and line in theirs["out"]


@pytest.mark.parametrize("attention", [[], ["--manual-attention"]])
def test_the_gpt_trains_as_on_pytorch(attention, tmp_path, torch):
    args = [str(PROGRAMS / "gpt.py"), "--steps", "20", *attention]
    theirs = _run(tmp_path, [sys.executable, *args])
    ours = _run(tmp_path, [sys.executable, "-m", "chainrule", "run", *args])
    for i in range(20):
        key = f"step {i} loss"
        assert ours[key] == pytest.approx(theirs[key], rel=1e-8, abs=1e-10), key
    assert "generated 20 tokens; parameters 26848" in ours["out"]  # weight tying: counted once


def test_the_gpt_under_torch_compile_trains_as_on_pytorch(tmp_path, torch):
    # nanoGPT's `model = torch.compile(model)`: under chainrule run it is chainrule.compile,
    # replayed from the third step (a graph break or an eager fallback warns "compile(...",
    # made an error here); PyTorch runs the program without it (no C++ compiler needed),
    # and the losses agree as the eager run's do.
    args = [str(PROGRAMS / "gpt.py"), "--steps", "20"]
    theirs = _run(tmp_path, [sys.executable, *args])
    strict = [sys.executable, "-W", "error:compile(", "-m", "chainrule", "run"]
    ours = _run(tmp_path, [*strict, *args, "--compile"])
    for i in range(20):
        key = f"step {i} loss"
        assert ours[key] == pytest.approx(theirs[key], rel=1e-8, abs=1e-10), key
    assert "generated 20 tokens; parameters 26848" in ours["out"]


def test_the_gpt_with_dropout_reaches_pytorchs_loss_band(tmp_path, torch):
    # Dropout masks come from each library's own random numbers: compare where training ends.
    args = [str(PROGRAMS / "gpt.py"), "--steps", "300", "--dropout", "0.1"]
    ends = []
    for command in ([sys.executable, *args], [sys.executable, "-m", "chainrule", "run", *args]):
        losses = _run(tmp_path, command)
        ends.append(sum(losses[f"step {i} loss"] for i in range(280, 300)) / 20)
    theirs, ours = ends
    assert theirs < 1.6 and ours < 1.6  # from 3.3 at the start
    assert abs(ours - theirs) < 0.15
