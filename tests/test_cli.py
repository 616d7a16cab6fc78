"""The console command runs its demos end to end."""

import subprocess
import sys

from chainrule.apps.cli import main


def test_train_xor_prints_loss_predictions_and_gradients(capsys):
    assert main(["train", "xor", "--steps", "300"]) == 0
    out = capsys.readouterr().out
    assert "step   300  loss" in out
    assert "d(pred)/dx1" in out and "dL/dw1" in out


def test_python_dash_m_runs_the_command():
    result = subprocess.run(
        [sys.executable, "-m", "chainrule", "train", "xor", "--steps", "5"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "step     5  loss" in result.stdout


def test_unknown_demo_is_a_usage_error(capsys):
    try:
        main(["train", "nope"])
    except SystemExit as exit:
        assert exit.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err
