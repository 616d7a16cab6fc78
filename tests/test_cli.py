"""The console command runs its demos end to end."""

import subprocess
import sys

import pytest

import chainrule
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
    with pytest.raises(SystemExit) as exit:
        main(["train", "nope"])
    assert exit.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_train_moons_quiet_writes_a_png_and_prints_only_the_accuracy(tmp_path, capsys):
    path = tmp_path / "out.png"
    assert main(["train", "moons", "--plot", str(path), "--quiet"]) == 0
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 0
    out = capsys.readouterr().out
    assert "training accuracy 100.0%" in out and f"wrote {path}" in out
    assert "step" not in out and "parameters" not in out


def test_train_save_writes_the_models_state_dict(tmp_path, capsys):
    path = tmp_path / "moons.safetensors"
    assert main(["train", "moons", "--steps", "20", "--seed", "3", "--save", str(path)]) == 0
    assert f"wrote {path}" in capsys.readouterr().out
    state = chainrule.load(path)
    assert list(state) == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]
    assert state["0.weight"].shape == (16, 2) and state["4.weight"].shape == (2, 16)


def test_digits_counts_epochs_and_the_others_count_steps(capsys):
    assert main(["train", "digits", "--epochs", "1", "--quiet"]) == 0
    assert "held-out accuracy" in capsys.readouterr().out
    for argv, message in [
        (["train", "digits", "--steps", "5"], "--steps does not apply to the digits demo; it "
         "counts --epochs"),
        (["train", "moons", "--epochs", "5"], "--epochs does not apply to the moons demo; it "
         "counts --steps"),
        (["train", "xor", "--distributed"], "--distributed applies to moons, spirals, digits, "
         "not xor"),
    ]:  # fmt: skip
        with pytest.raises(SystemExit) as exit:
            main(argv)
        assert exit.value.code == 2
        assert message in capsys.readouterr().err


def test_a_missing_extra_is_an_error_message_not_a_traceback(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SystemExit) as exit:
        main(["train", "spirals", "--plot", str(tmp_path / "spirals.png")])
    assert exit.value.code == 1
    err = capsys.readouterr().err
    assert "chainrule train: --plot needs matplotlib: pip install chainrule[demo]" in err


def test_bench_runs_the_benchmark_suite_of_the_source_checkout(tmp_path, capfd):
    # A new process: the suite pins BLAS threads before NumPy loads.
    assert main(["bench", "--quick", "--only", "W1", "--out", str(tmp_path)]) == 0
    assert "W1        chainrule" in capfd.readouterr().out
    assert "|  | chainrule |" in (tmp_path / "results.md").read_text()


def test_bench_without_a_source_checkout_says_where_the_suite_lives(monkeypatch, tmp_path, capsys):
    from chainrule.apps import cli

    monkeypatch.setattr(cli, "SOURCE_ROOT", tmp_path)
    assert main(["bench"]) == 1
    assert "runs from a source checkout" in capsys.readouterr().err


def test_version_prints_the_version(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out == f"chainrule {chainrule.__version__}\n"


def test_run_without_a_script_names_only_the_script_as_required(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["run"])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert (
        err.splitlines()[-1] == "chainrule run: error: the following arguments are required: script"
    )


def _description(help_text: str) -> list[str]:
    """The paragraph after the usage lines of an argparse help text."""
    paragraphs = help_text.strip().split("\n\n")
    assert paragraphs[0].startswith("usage: "), paragraphs[0]
    return paragraphs[1].splitlines()


def test_every_command_help_opens_with_a_one_line_description(capfd):
    from chainrule.apps.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    assert set(commands) == {"train", "serve", "bench", "run", "milestones"}
    for name, parser in commands.items():
        if name == "bench":  # the suite's own parser, in a new process
            assert main(["bench", "--help"]) == 0
            text = capfd.readouterr().out
        else:
            text = parser.format_help()
        assert text.startswith(f"usage: chainrule {name} "), text
        (line,) = _description(text)
        assert line[0].isupper() and line.endswith("."), line
