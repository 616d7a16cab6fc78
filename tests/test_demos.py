"""The training demos reach their accuracies with fixed seeds, plot and save their runs, show
a progress bar only on a terminal, and train data-parallel on 2 MPI ranks."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest

import chainrule
from chainrule.apps import demos

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 1000


# Accuracy, each with the demo's default settings and seed 0.


def test_xor_mlp_separates_the_four_points(tmp_path):
    result = demos.train_xor(log=None, plot=str(tmp_path / "xor.png"))
    assert [p > 0.5 for p in result["predictions"]] == [False, True, True, False]
    assert_png(tmp_path / "xor.png")


def test_blobs_linear_classifier_reaches_99_percent(tmp_path):
    result = demos.train_blobs(log=None, plot=str(tmp_path / "blobs.png"))
    assert result["accuracy"] >= 0.99 and len(result["losses"]) == 500
    assert_png(tmp_path / "blobs.png")


def test_moons_mlp_reaches_99_percent_in_a_few_seconds():
    result = demos.train_moons(log=None)
    assert result["accuracy"] >= 0.99
    assert result["losses"][-1] < 0.01 and result["seconds"] < 10
    assert result["inputs"].shape == (200, 2)


def test_spirals_mlp_reaches_97_percent_on_three_arms():
    result = demos.train_spirals(log=None)
    assert result["accuracy"] >= 0.97
    assert set(result["labels"].tolist()) == {0, 1, 2}


def test_digits_cnn_reaches_97_percent_on_held_out_digits():
    result = demos.train_digits(log=None)
    assert result["accuracy"] >= 0.97
    assert len(result["accuracies"]) == 20 and result["train_accuracy"] >= 0.97
    assert result["seconds"] < 120
    assert result["model"](chainrule.zeros(3, 1, 8, 8)).shape == (3, 10)


def test_seed_changes_the_initial_weights_but_not_the_data_split():
    first, second = (demos.train_digits(epochs=1, seed=s, log=None) for s in (0, 1))
    assert first["losses"][0] != second["losses"][0]
    a, b = first["model"].state_dict(), second["model"].state_dict()
    assert not np.array_equal(a["0.weight"].data, b["0.weight"].data)


# What the demos print.


def test_progress_lines_when_not_a_terminal_and_none_when_quiet(capsys):
    demos.train_moons(steps=100)
    out = capsys.readouterr()
    assert "step    50  loss" in out.out and "training accuracy" in out.out
    assert out.err == ""  # no bar: stderr is not a terminal
    demos.train_moons(steps=100, quiet=True)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("final loss")


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_a_tqdm_bar_instead_of_lines(tqdm, monkeypatch, capsys):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    demos.train_moons(steps=20)
    assert "20/20" in terminal.getvalue() and "loss=" in terminal.getvalue()
    assert "step     1  loss" not in capsys.readouterr().out


def test_digits_prints_held_out_accuracy_each_epoch(capsys):
    demos.train_digits(epochs=2)
    out = capsys.readouterr().out
    assert "epoch   2  loss" in out and "held-out accuracy" in out
    assert "1438 training and 359 held-out images" in out


# Plots and checkpoints.


def test_plot_without_matplotlib_names_the_demo_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(
        ImportError, match=r"--plot needs matplotlib: pip install chainrule\[demo\]"
    ):
        demos.train_moons(log=None, plot=str(tmp_path / "moons.png"))
    assert not (tmp_path / "moons.png").exists()


def test_saved_weights_load_into_a_fresh_model(tmp_path):
    path = tmp_path / "spirals.safetensors"
    result = demos.train_spirals(steps=50, log=None, save=str(path))
    model = demos.mlp([2, 32, 32, 3], chainrule.nn.ReLU)
    model.load_state_dict(chainrule.load(path))
    x = chainrule.tensor(result["inputs"])
    assert np.array_equal(model(x).data, result["model"](x).data)


def test_scalar_weights_are_saved_in_linear_layout(tmp_path):
    result = demos.train_xor(steps=5, log=None, save=str(tmp_path / "xor.safetensors"))
    state = chainrule.load(tmp_path / "xor.safetensors")
    assert {k: v.shape for k, v in state.items()} == {
        "layers.0.weight": (8, 2), "layers.0.bias": (8,),
        "layers.1.weight": (1, 8), "layers.1.bias": (1,),
    }  # fmt: skip
    neuron = result["model"].layers[1].neurons[0]
    assert state["layers.1.weight"].tolist() == [[w.data for w in neuron.w]]


# Data-parallel: 2 ranks through mpirun.


def test_moons_on_two_ranks_matches_one_process_and_only_rank_0_writes(mpirun, tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    command = [mpirun, "-n", "2"]
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    if "Open MPI" in version:  # MPICH oversubscribes and runs as root without being asked
        command.append("--oversubscribe")
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    argv = ["train", "moons", "--distributed", "--steps", "200", "--plot", "moons.png"]
    result = subprocess.run(
        [*command, sys.executable, "-m", "chainrule", *argv],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert out.count("training accuracy 100.0%") == 1 and out.count("wrote moons.png") == 1
    assert "200 steps, on 2 ranks" in out and out.count("step   200  loss") == 1
    assert_png(tmp_path / "moons.png")
    # A full batch split in two halves takes the same steps as one process, up to rounding.
    single = demos.train_moons(steps=200, log=None)
    final = float(out.split("step   200  loss ")[1].split()[0])
    assert final == pytest.approx(single["losses"][-1], rel=1e-3)
