"""``chainrule train ... --compile`` and ``chainrule milestones attention --compile``: the demos'
training steps, recorded and replayed by chainrule.compile, give the eager steps' losses and
weights (bit for bit with the NumPy replay; within float32's rounding where Numba's fused kernels
run, see docs/guides/compile.md), and no step runs eagerly."""

import numpy as np
import pytest

from chainrule.apps import cli, milestones
from chainrule.apps.demos import train_digits, train_moons


def assert_same_training(eager: dict, compiled: dict) -> None:
    # fused kernels (exp, tanh from libm) may differ from NumPy's loops by an ulp or two
    np.testing.assert_allclose(compiled["losses"], eager["losses"], rtol=1e-5)
    pairs = zip(eager["model"].state_dict().items(), compiled["model"].state_dict().items())
    for (name, p), (other, q) in pairs:
        assert name == other and p.data.dtype == q.data.dtype, name
        # Adam's steps are about lr each whatever a gradient's size, and attention's key bias
        # has a gradient of rounding noise alone (softmax ignores a shift of the keys): there
        # those ulps become differences of up to 1e-4
        np.testing.assert_allclose(q.data, p.data, rtol=1e-4, atol=2e-4, err_msg=name)
    assert eager["compiled"] is None


@pytest.mark.filterwarnings("error::UserWarning")  # a step that could not be replayed warns
def test_moons_compiled_trains_as_eager():
    options = {"steps": 40, "seed": 3, "log": None, "quiet": True}
    eager, compiled = train_moons(**options), train_moons(compile=True, **options)
    assert_same_training(eager, compiled)
    assert compiled["compiled"].stats == {"traced": 2, "replayed": 38, "eager": 0}
    assert len(eager["losses"]) == 40 and eager["losses"][-1] < eager["losses"][0]


@pytest.mark.filterwarnings("error::UserWarning")
def test_digits_cnn_compiled_trains_as_eager():
    # One epoch: 22 full batches of 64 and a last one of 29, a second signature (traced once).
    options = {"epochs": 1, "seed": 1, "log": None, "quiet": True}
    eager, compiled = train_digits(**options), train_digits(compile=True, **options)
    assert_same_training(eager, compiled)
    assert compiled["accuracies"] == eager["accuracies"]
    assert compiled["compiled"].stats == {"traced": 3, "replayed": 20, "eager": 0}
    assert len(eager["losses"]) == 23


@pytest.mark.filterwarnings("error::UserWarning")
def test_transformer_milestone_compiled_trains_as_eager():
    options = {"quick": True, "steps": 30, "quiet": True}
    eager = milestones.attention_2017(**options)
    compiled = milestones.attention_2017(compile=True, **options)
    assert_same_training(eager, compiled)
    assert compiled["exact_match"] == eager["exact_match"]
    assert compiled["compiled"].stats == {"traced": 2, "replayed": 28, "eager": 0}
    assert len(eager["losses"]) == 30 and eager["losses"][-1] < eager["losses"][0]


def test_train_compile_prints_the_compiled_steps_counts_once(capsys):
    assert cli.main(["train", "moons", "--steps", "30", "--quiet", "--compile"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("final loss ")
    assert lines[1].startswith("compiled step: 2 traced, 28 replayed, 0 eager; ")
    assert lines[1].endswith(" equations") and len(lines) == 2


def test_train_without_compile_prints_no_compiled_line(capsys):
    assert cli.main(["train", "moons", "--steps", "5", "--quiet"]) == 0
    assert "compiled" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "xor", "--compile"], "--compile applies to moons, spirals, digits, not xor"),
        (["train", "moons", "--compile", "--distributed"], "--compile does not apply with"),
        (["milestones", "perceptron", "--compile"], "--compile applies to attention, not"),
    ],
)
def test_compile_where_it_does_not_apply_is_a_usage_error(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_milestones_compile_logs_the_attention_steps_counts(monkeypatch):
    def short_attention(quick, plot, quiet, compile=False):
        return milestones.attention_2017(quick, 0, plot, quiet, compile=compile, steps=12)

    monkeypatch.setitem(milestones.MILESTONES, "attention", short_attention)
    lines = []
    milestones.run(["attention"], quick=True, log=lines.append, compile=True)
    assert lines[0].startswith("short_attention: exact_match ")
    assert lines[1].startswith("compiled step: 2 traced, 10 replayed, 0 eager; ")


def test_fit_refuses_compile_with_distributed():
    with pytest.raises(ValueError, match="compile and distributed"):
        train_moons(steps=1, log=None, compile=True, distributed=True)
