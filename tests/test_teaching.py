"""The teaching material's programs on chainrule: its names, the project page's scalar
classifier (and ``chainrule train blobs``), a micrograd-style graph drawing, and the worked
solutions of the chapter's exercises in examples/."""

import importlib.util
import math
import random
from pathlib import Path

import pytest

import chainrule
from chainrule import Dual, DualNumber, Scalar, Value, numerical_gradient_check
from chainrule.apps.cli import main as cli_main
from chainrule.apps.demos import blobs, fit_blobs_tensor, train_blobs
from chainrule.scalar.nn import LinearLayer, accuracy, cross_entropy_loss, softmax, train
from chainrule.scalar.rules import Rule

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXERCISES = [
    "exercise1_sigmoid",
    "exercise2_forward_vs_reverse",
    "exercise3_graph",
    "exercise4_checkpointing",
    "exercise5_mlp_depth",
    "exercise6_op_counts",
]


def example(name):
    """Import examples/<name>.py as a module."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The material's names.


def test_scalar_and_dual_number_are_aliases_not_copies():
    assert Scalar is Value and DualNumber is Dual
    assert chainrule.Scalar is Value and chainrule.DualNumber is Dual
    assert {"Scalar", "DualNumber", "numerical_gradient_check"} <= set(chainrule.__all__)


def test_numerical_gradient_check_answers_true_or_false():
    assert numerical_gradient_check(lambda x, y: x * y + (x / y).tanh(), [0.7, -1.3]) is True
    wrong = Rule("square", "²", lambda x: x * x, lambda x: x)  # derivative missing its 2
    assert numerical_gradient_check(lambda x: Value.apply(wrong, x), [3.0]) is False


def test_numerical_gradient_check_uses_its_step_and_tolerance():
    # x**3 at 1: central differences are off by h², so h = 0.1 fails a tolerance of 1e-5 ...
    assert not numerical_gradient_check(lambda x: x**3, [1.0], h=0.1)
    # ... and passes a tolerance of 0.01.
    assert numerical_gradient_check(lambda x: x**3, [1.0], h=0.1, tolerance=0.01)


def micrograd_trace(root):
    """What code written for micrograd-style Values reads of a graph: every Value that
    ``root`` was computed from (through ``_prev``), and each (input, result) link."""
    seen, links, todo = {root}, set(), [root]
    while todo:
        result = todo.pop()
        links |= {(value, result) for value in result._prev}
        fresh = set(result._prev) - seen
        seen |= fresh
        todo.extend(fresh)
    return seen, links


def micrograd_draw_dot(root):
    """The same graph drawn through graphviz from ``data``, ``grad`` and ``_op`` alone: a
    record per Value, and an oval per op between a result and its inputs."""
    from graphviz import Digraph

    values, links = micrograd_trace(root)
    key = {value: f"v{i}" for i, value in enumerate(values)}
    op_key = {value: key[value] + "_op" for value in values if value._op}
    dot = Digraph(format="svg", graph_attr={"rankdir": "LR"})
    for value in values:
        text = f"{{ data {value.data:.4f} | grad {value.grad:.4f} }}"
        dot.node(name=key[value], label=text, shape="record")
    for value, name in op_key.items():
        dot.node(name=name, label=value._op)
        dot.edge(name, key[value])
    for value, result in links:
        dot.edge(key[value], op_key.get(result, key[result]))
    return dot


def material_graph():
    x, y = Value(2.0), Value(-1.0)
    out = (x * y + x**2).tanh() + (x - y).exp()
    out.backward()
    return out


def test_material_graph_code_walks_chainrule_values(graphviz):
    out = material_graph()
    nodes, edges = micrograd_trace(out)
    assert len(nodes) == 9 and len(edges) == 11
    assert sorted(n._op for n in nodes if n._op) == ["*", "**", "+", "+", "-", "exp", "tanh"]
    source = micrograd_draw_dot(out).source
    for op in ("*", "**", "+", "-", "exp", "tanh"):  # graphviz quotes only what needs it
        assert f'[label="{op}"]' in source or f"[label={op}]" in source
    assert f"grad {out.grad:.4f}" in source


def test_material_graph_code_renders_svg(graphviz, dot_program):
    svg = micrograd_draw_dot(material_graph()).pipe().decode()
    assert svg.lstrip().startswith("<?xml") and ">tanh</text>" in svg


# The project page's classifier.


def test_linear_layer_holds_a_weight_grid_and_zero_biases():
    layer = LinearLayer(3, 4, rng=random.Random(0))
    assert len(layer.w) == 3 and all(len(row) == 4 for row in layer.w)
    assert all(-1 <= w.data <= 1 for row in layer.w for w in row)
    assert [b.data for b in layer.b] == [0.0] * 4
    assert len(layer.parameters()) == 16
    logits = layer([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert [v.data for v in logits[0]] == [w.data for w in layer.w[0]]
    assert [v.data for v in logits[1]] == [0.0] * 4
    with pytest.raises(ValueError, match="expected rows of 3 inputs, got 2"):
        layer([[1.0, 2.0]])


def test_softmax_and_cross_entropy_follow_the_formulas():
    rows = [[Value(1.0), Value(2.0), Value(3.0)], [Value(800.0), Value(0.0), Value(-800.0)]]
    p = softmax(rows)
    e = [math.exp(v) for v in (1.0, 2.0, 3.0)]
    assert [q.data for q in p[0]] == pytest.approx([v / sum(e) for v in e], rel=1e-12)
    assert [q.data for q in p[1]] == pytest.approx([1.0, 0.0, 0.0])  # no overflow at 800
    loss = cross_entropy_loss(rows, [2, 1])  # logits in: softmax is applied inside
    expected = -(math.log(p[0][2].data + 1e-6) + math.log(p[1][1].data + 1e-6)) / 2
    assert loss.data == pytest.approx(expected, rel=1e-12)
    assert numerical_gradient_check(
        lambda a, b, c: cross_entropy_loss([[a, b, c]], [0]), [0.3, -1.0, 2.0]
    )


def test_train_updates_with_plain_gradient_descent():
    model = LinearLayer(1, 2, rng=random.Random(0))
    before = [p.data for p in model.parameters()]
    x, y = [[-1.0], [1.0]], [0, 1]
    loss = cross_entropy_loss(model(x), y)
    loss.backward()
    expected = [d - 0.5 * p.grad for d, p in zip(before, model.parameters())]
    losses = train(x, y, model, lr=0.5, epochs=1)
    assert losses == [pytest.approx(loss.data)]
    assert [p.data for p in model.parameters()] == pytest.approx(expected)


@pytest.fixture(scope="module")
def scalar_blobs():
    return train_blobs(engine="scalar", seed=0, log=None)


def test_scalar_classifier_reaches_99_percent_and_loss_near_0_13(scalar_blobs):
    assert scalar_blobs["accuracy"] >= 0.99
    assert len(scalar_blobs["losses"]) == 500
    assert 0.12 < scalar_blobs["losses"][-1] < 0.15
    assert set(scalar_blobs["seconds"]) == {"scalar", "tensor"}


def test_tensor_run_of_the_same_model_follows_the_scalar_run(scalar_blobs):
    x, y = blobs(seed=0)
    assert len(x) == 100 and sorted(set(y)) == [0, 1, 2, 3]
    assert accuracy(scalar_blobs["model"](x), y) == scalar_blobs["accuracy"]
    tensor_run = fit_blobs_tensor(x, y, seed=0)
    assert tensor_run["accuracy"] == scalar_blobs["accuracy"]
    assert tensor_run["losses"] == pytest.approx(scalar_blobs["losses"], rel=1e-9)


def test_cli_blobs_defaults_to_the_tensor_engine(capsys):
    assert cli_main(["train", "blobs"]) == 0
    out = capsys.readouterr().out
    assert "tensor engine, lr=1.0, 500 epochs" in out and "tensor engine: " in out
    assert "scalar engine" not in out
    assert "final loss 0.14" in out and "training accuracy 99%" in out


def test_cli_blobs_scalar_engine_times_both(capsys):
    assert cli_main(["train", "blobs", "--engine", "scalar", "--steps", "20"]) == 0
    out = capsys.readouterr().out
    assert "scalar engine: " in out and "tensor engine: " in out and "x faster" in out


def test_cli_engine_only_applies_to_blobs(capsys):
    with pytest.raises(SystemExit) as exit:
        cli_main(["train", "xor", "--engine", "scalar"])
    assert exit.value.code == 2
    assert "--engine applies to the blobs demo only" in capsys.readouterr().err


# The exercises' worked solutions.


@pytest.mark.parametrize("name", EXERCISES)
def test_every_exercise_script_prints_its_numbers(name, capsys, tmp_path, monkeypatch, request):
    if name == "exercise3_graph":  # it renders an SVG
        request.getfixturevalue("graphviz")
        request.getfixturevalue("dot_program")
    monkeypatch.chdir(tmp_path)  # exercise 3 saves its SVG in the working directory
    example(name).main()
    assert len(capsys.readouterr().out.splitlines()) >= 3


def test_exercise1_sigmoid_passes_numerical_gradient_checks():
    for row in example("exercise1_sigmoid").run():
        assert row["row_checked"] and row["composed_checked"]
        assert row["grad"] == pytest.approx(row["by_hand"], rel=1e-12)
        assert row["sigmoid"] == pytest.approx(1 / (1 + math.exp(-row["x"])), rel=1e-12)


def test_exercise2_forward_mode_takes_a_pass_per_input():
    r = example("exercise2_forward_vs_reverse").run()
    assert r["forward_gradient"] == pytest.approx(r["by_hand"], rel=1e-12)
    assert r["reverse_gradient"] == pytest.approx(r["by_hand"], rel=1e-12)
    assert r["plain_dual_gradient"] == r["forward_gradient"]
    assert r["forward_ops_per_pass"] == [17, 15]
    assert r["reverse_ops"] == (5, 16)
    assert r["forward_ops"] > sum(r["reverse_ops"])


def test_exercise3_partials_match_the_hand_computation():
    r = example("exercise3_graph").run()
    assert r["f"] == pytest.approx(-3 + math.exp(-1), rel=1e-12)
    assert r["gradient"] == pytest.approx(
        {"x": -1 - math.exp(-1), "y": -1.0, "z": 3 + math.exp(-1)}, rel=1e-12
    )
    assert r["gradient"] == pytest.approx({k: r["by_hand"][k] for k in "xyz"}, rel=1e-12)
    for label in ("exp", "*", "+", "grad -1.3679", "grad 3.3679"):
        assert label in r["dot_source"]


def test_exercise3_saves_the_graph_as_svg(graphviz, dot_program, tmp_path):
    path = tmp_path / "graph.svg"
    example("exercise3_graph").run(path)
    svg = path.read_text()
    assert "<svg" in svg and "grad 3.3679" in svg


def test_exercise4_checkpointing_keeps_less_and_recomputes():
    r = example("exercise4_checkpointing").run(depth=4096, segments=64, repeats=1)
    plain, ckpt = r["plain"], r["checkpointed"]
    assert ckpt["x_grad"] == plain["x_grad"] != 0.0
    assert ckpt["out"] == plain["out"]
    assert ckpt["weight_grads"] == plain["weight_grads"]
    assert plain["nodes_held"] == 3 * 4096 + 1
    assert ckpt["nodes_held"] < plain["nodes_held"] / 20
    assert ckpt["peak_bytes"] < plain["peak_bytes"] / 5
    # Every layer runs twice (forward, then recomputed), plus one surrogate product per segment.
    assert ckpt["forward_ops"] == 2 * plain["forward_ops"] + 64


def test_exercise5_deeper_mlp_reaches_low_xor_loss_in_fewer_steps():
    module = example("exercise5_mlp_depth")
    steps = module.run(seeds=(0, 1, 2))
    assert all(s is not None for s in steps["2-8-1"] + steps["2-8-8-1"])
    assert sum(steps["2-8-8-1"]) < sum(steps["2-8-1"])
    assert module.make_mlp([8, 8, 1], hidden="relu").activations == ["relu", "relu", "sigmoid"]


def test_exercise6_backward_is_within_4x_forward():
    results = example("exercise6_op_counts").run()
    assert results["exercise 2: x²y + sin(xy)"] == (5, 16, 3.2)
    for forward, backward, ratio in results.values():
        assert 0 < forward <= backward <= 4 * forward and ratio == backward / forward
