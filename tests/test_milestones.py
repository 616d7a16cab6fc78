"""The milestones reach their results (the transformer in its quick run, with a lower bar)
and ``chainrule milestones`` runs them and draws their figures."""

import pytest

from chainrule.apps import milestones
from chainrule.apps.cli import main


def test_perceptron_separates_its_training_data():
    result = milestones.perceptron_1958(quiet=True)
    assert result["train_accuracy"] == 1.0
    assert result["mistakes_per_epoch"][-1] == 0  # it stopped on an epoch without mistakes


def test_separable_points_keep_their_margin_from_the_line():
    X, y = milestones.separable_points(300, margin=0.2, seed=3)
    assert X.shape == (300, 2) and set(y.tolist()) == {-1.0, 1.0}
    assert abs(X).max() <= 1


def test_backprop_learns_xor():
    result = milestones.backprop_1986(quiet=True)
    assert result["train_accuracy"] == 1.0
    assert result["final_loss"] < 0.01


def test_lenet_reaches_97_percent_on_held_out_digits():
    result = milestones.convolution_1998(quiet=True)  # the full run: 20 epochs, a few seconds
    assert result["test_accuracy"] >= 0.97


def test_transformer_quick_run_sorts_held_out_sequences():
    result = milestones.attention_2017(quick=True, quiet=True)  # the full run reaches 100%
    assert result["held_out"] == 2000
    assert result["exact_match"] >= 0.95


def test_milestone_draws_its_figure(tmp_path):
    path = tmp_path / "figures" / "perceptron.png"
    milestones.perceptron_1958(plot=path, quiet=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_runs_a_milestone_and_writes_its_figure(tmp_path, capsys):
    assert main(["milestones", "backprop", "--quick", "--plot-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "backprop_1986: train_accuracy 100.00%" in out
    assert (tmp_path / "backprop.png").exists()


def test_unknown_milestone_names_the_choices():
    with pytest.raises(ValueError, match=r"unknown milestone 'lstm'; one of \['perceptron'"):
        milestones.run(["lstm"], log=None)
