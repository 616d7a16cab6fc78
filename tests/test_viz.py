"""draw_graph and trace: DOT text, real SVG rendering, huge graphs, missing Graphviz, tables."""

import math
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import chainrule as cr
from chainrule import ChainruleError, Function, Tensor, Value
from chainrule.viz import Trace, TraceRow, draw_graph, trace_table

#: draw_graph returns graphviz Digraphs: every test here runs with the graphviz package.
pytestmark = pytest.mark.usefixtures("graphviz")


def teaching_example():
    """f = sigmoid(w1*x1 + w2*x2) + 0.5*(w1**2 + w2**2), after backward."""
    w1, w2 = Value(0.2, label="w1"), Value(0.4, label="w2")
    x1, x2 = Value(-0.4, label="x1"), Value(0.5, label="x2")
    f = (w1 * x1 + w2 * x2).sigmoid() + 0.5 * (w1**2 + w2**2)
    f.label = "f"
    f.backward()
    return f


def test_import_chainrule_does_not_import_graphviz():
    code = "import sys, chainrule, chainrule.viz; print('graphviz' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_draw_graph_value_shows_labels_data_grad_and_op_circles(graphviz):
    x, y = Value(2.0, label="x"), Value(-3.0, label="y")
    z = x * y + x
    z.label = "z"
    z.backward()
    dot = draw_graph(z, format=None)
    source = dot.source
    assert isinstance(dot, graphviz.Digraph)
    assert "rankdir=LR" in source
    assert "{ z | data -4.0000 | grad 1.0000 }" in source
    assert "{ x | data 2.0000 | grad -2.0000 }" in source  # x used twice: one box, grads summed
    assert "{ y | data -3.0000 | grad 2.0000 }" in source
    assert source.count("shape=record") == 4  # x, y, x*y, z
    assert source.count("shape=circle") == 2
    assert 'label="*" shape=circle' in source and 'label="+" shape=circle' in source
    # x -> *, y -> *, * -> x*y, x*y -> +, x -> +, + -> z
    assert source.count("->") == 6


def test_draw_graph_teaching_example_shows_sigmoid_box_and_constant_exponent():
    source = draw_graph(teaching_example(), format=None).source
    assert "data 0.5300 | grad 1.0000" in source
    assert "{ f | data 0.6300 | grad 1.0000 }" in source
    assert 'label="σ" shape=circle' in source
    assert 'label="**2" shape=circle' in source
    assert source.count("shape=record") == 14


def test_draw_graph_show_grad_false_and_rankdir():
    x = Value(1.5, label="x")
    source = draw_graph(x.tanh(), format=None, show_grad=False, rankdir="TB").source
    assert "grad" not in source
    assert "rankdir=TB" in source
    assert "{ x | data 1.5000 }" in source


def test_draw_graph_escapes_record_characters_in_labels():
    x = Value(1.0, label="a|b {c}")
    source = draw_graph(x * 2, format=None).source
    assert r"a\|b \{c\}" in source


def test_draw_graph_tensor_shows_shapes_leaf_data_and_retained_grad():
    a = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    hidden = (a * b).sigmoid()
    hidden.retain_grad()
    out = (hidden * 2).sum()
    out.backward()
    source = draw_graph(out, format=None).source
    assert source.count("shape=circle") == 4  # mul, sigmoid, mul, sum
    assert source.count("{ leaf |") == 2
    assert "{ leaf | (3,) float32 | data [1.0000 2.0000 3.0000] | grad [" in source
    assert "{ leaf | (2, 3) float64 | data mean 2.5000 min 0.0000 max 5.0000 | grad mean" in source
    assert "{ mul | (2, 3) float64 }" in source  # an intermediate: shape and dtype only
    assert "{ sigmoid | (2, 3) float64 | data mean" in source  # retain_grad kept it
    assert "grad mean 2.0000 min 2.0000 max 2.0000 }" in source
    assert f"{{ sum | () float64 | data {float(out):.4f} }}" in source
    # a -> mul, b -> mul, then each op -> its output box, output box -> next op
    assert source.count("->") == 2 + 4 + 3


def test_draw_graph_leaf_tensor_root_is_one_box():
    source = draw_graph(Tensor([1.0, 2.0], requires_grad=True), format=None).source
    assert source.count("shape=record") == 1 and "->" not in source


def test_draw_graph_renders_svg_with_dot(tmp_path, dot_program):
    dot = draw_graph(teaching_example())
    svg = dot.pipe(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for text in ("w1", "x2", "data 0.6300", "grad 0.2491", "σ"):
        assert text in svg
    assert "w1" in dot._repr_image_svg_xml()  # what Jupyter shows
    path = dot.render(tmp_path / "graph")
    assert path.endswith(".svg") and "data 0.5300" in Path(path).read_text(encoding="utf-8")


def test_draw_graph_on_a_million_node_chain_draws_max_nodes_quickly():
    x = Value(1.0)
    for _ in range(10**6):
        x = -x
    start = time.perf_counter()
    source = draw_graph(x, format=None).source
    elapsed = time.perf_counter() - start
    assert elapsed < 10
    assert source.count("shape=record") == 200
    # Counting what is left stops at 100,000 so the call stays fast.
    assert "… at least 100,000 more nodes not drawn (max_nodes=200)" in source
    assert "more -> v199op [style=dashed]" in source


def test_draw_graph_notice_gives_the_exact_count_below_the_counting_limit():
    x = Value(1.0)
    for _ in range(12_544):
        x = x.tanh()
    source = draw_graph(x, format=None).source
    assert "… 12,345 more nodes not drawn (max_nodes=200)" in source


def test_draw_graph_notice_counts_shared_nodes_once():
    x = Value(1.0, label="x")
    y = x
    for _ in range(30):
        y = y * y  # each node used twice: a naive walk would visit 2**30 paths
    source = draw_graph(y, format=None, max_nodes=5).source
    assert "… 26 more nodes not drawn (max_nodes=5)" in source


def test_draw_graph_without_dot_falls_back_to_dot_text_with_one_warning(graphviz, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    with pytest.warns(UserWarning) as caught:
        dot = draw_graph(teaching_example())
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "dot program is not on PATH" in message and "\n" not in message
    for hint in ("apt-get install graphviz", "brew install graphviz", ".source"):
        assert hint in message
    assert caught[0].filename == __file__  # points at the caller's line
    assert isinstance(dot, graphviz.Digraph)
    source = dot.source
    assert "{ f | data 0.6300 | grad 1.0000 }" in source
    assert "{ w1 | data 0.2000 | grad 0.1004 }" in source
    assert 'label="σ" shape=circle' in source and 'label="**2" shape=circle' in source
    assert source.count("shape=record") == 14


def test_draw_graph_without_dot_falls_back_for_tensor_roots_too(monkeypatch):
    monkeypatch.setenv("PATH", "")  # no dot anywhere, found through the real shutil.which
    x = Tensor([1.0, -2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="dot program is not on PATH"):
        source = draw_graph((x * x).sum()).source
    assert "data [1.0000 -2.0000]" in source
    assert "label=mul shape=circle" in source and "label=sum shape=circle" in source


def test_draw_graph_format_none_gives_dot_text_without_a_warning(monkeypatch, recwarn):
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    source = draw_graph(Value(1.0, label="x"), format=None).source
    assert "{ x | data 1.0000 | grad 0.0000 }" in source
    assert len(recwarn) == 0


def test_draw_graph_default_is_svg_when_dot_is_installed(dot_program, recwarn):
    assert draw_graph(teaching_example()).format == "svg"
    assert len(recwarn) == 0


def test_draw_graph_explicit_format_without_dot_fails_up_front(graphviz, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    x = Value(1.0, label="x")
    with pytest.raises(RuntimeError, match=r"format='svg' needs Graphviz's dot") as info:
        draw_graph(x * 2, format="svg")
    message = str(info.value)
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda install graphviz"):
        assert hint in message
    assert "format=None" in message
    assert isinstance(info.value, graphviz.ExecutableNotFound)
    assert isinstance(info.value, ChainruleError)
    assert "{ x | data 1.0000 | grad 0.0000 }" in draw_graph(x * 2, format=None).source


def test_rendering_without_dot_says_how_to_install_it(graphviz, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot anywhere
    dot = draw_graph(Value(1.0, label="x") * 2, format=None)
    for render in (
        lambda: dot.pipe(format="svg"),
        lambda: dot._repr_mimebundle_(),
        lambda: dot.render(tmp_path / "graph", format="png"),
    ):
        with pytest.raises(graphviz.ExecutableNotFound, match=r"apt-get install graphviz"):
            render()


def test_draw_graph_without_graphviz_package_writes_the_same_dot_text(monkeypatch):
    x = Value(2.0, label="x")
    y = (x * x + 1).tanh()
    y.backward()
    t = cr.tensor([1.0, -2.0], requires_grad=True)
    (t.exp() * 2).sum().backward()
    expected = [draw_graph(root, format=None).source for root in (y, t)]
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [draw_graph(root, format=None).source for root in (y, t)] == expected
    with pytest.warns(UserWarning, match=r"graphviz Python package is missing.*\.source") as w:
        assert draw_graph(y).source == expected[0]
    assert len(w) == 1
    with pytest.raises(ImportError, match=r"format='svg' needs.*pip install chainrule\[viz\]"):
        draw_graph(y, format="svg")


def test_draw_graph_rejects_bad_arguments():
    with pytest.raises(TypeError, match="draw_graph: expected a Value or Tensor root, got list"):
        draw_graph([1.0], format=None)
    with pytest.raises(ValueError, match="draw_graph: max_nodes must be a positive integer"):
        draw_graph(Value(1.0), format=None, max_nodes=0)
    with pytest.raises(ValueError, match="draw_graph: rankdir must be one of"):
        draw_graph(Value(1.0), format=None, rankdir="up")


def test_trace_teaching_table_matches_hand_calculation():
    rows = trace_table(teaching_example()).rows
    assert all(isinstance(row, TraceRow) for row in rows)
    by_expression = {row.expression: row for row in rows if row.expression != "leaf"}
    leaves = {row.node: row for row in rows if row.expression == "leaf"}
    names = {row.node: row for row in rows}

    s = 1 / (1 + math.exp(-0.12))  # sigmoid(0.12) = 0.52996
    ds = s * (1 - s)  # 0.24911
    # Written out by hand: (value, gradient) of every node.
    expected_leaves = {
        "w1": (0.2, -0.4 * ds + 2 * 0.2 * 0.5),  # 0.1004
        "w2": (0.4, 0.5 * ds + 2 * 0.4 * 0.5),  # 0.5246
        "x1": (-0.4, 0.2 * ds),  # 0.0498
        "x2": (0.5, 0.4 * ds),  # 0.0996
    }
    for name, (value, grad) in expected_leaves.items():
        assert leaves[name].value == pytest.approx(value)
        assert leaves[name].grad == pytest.approx(grad)

    w1x1 = by_expression["w1*x1"]
    assert (f"{w1x1.value:.4f}", f"{w1x1.grad:.4f}") == ("-0.0800", "0.2491")
    w2x2 = by_expression["w2*x2"]
    assert (w2x2.value, w2x2.grad) == pytest.approx((0.2, 0.2491), abs=5e-5)
    total = by_expression[f"{w1x1.node}+{w2x2.node}"]
    assert (total.value, total.grad) == pytest.approx((0.12, 0.2491), abs=5e-5)
    sigmoid = by_expression[f"sigmoid({total.node})"]
    assert (f"{sigmoid.value:.4f}", f"{sigmoid.grad:.4f}") == ("0.5300", "1.0000")
    assert sigmoid.value == pytest.approx(0.52996, abs=5e-6)
    w1_sq, w2_sq = by_expression["w1**2"], by_expression["w2**2"]
    assert (w1_sq.value, w1_sq.grad) == pytest.approx((0.04, 0.5))
    assert (w2_sq.value, w2_sq.grad) == pytest.approx((0.16, 0.5))
    squares = by_expression[f"{w1_sq.node}+{w2_sq.node}"]
    assert (squares.value, squares.grad) == pytest.approx((0.2, 0.5))
    (half,) = [row for row in rows if row.expression == "leaf" and row.node.startswith("v")]
    assert half.grad == pytest.approx(0.2)  # d f / d 0.5 = w1**2 + w2**2
    assert set(leaves) == set(expected_leaves) | {half.node}
    penalty = by_expression[f"{half.node}*{squares.node}"]
    assert (penalty.value, penalty.grad) == pytest.approx((0.1, 1.0))
    f = rows[-1]
    assert f.node == "f" and f.expression == f"{sigmoid.node}+{penalty.node}"
    assert (f"{f.value:.4f}", f"{f.grad:.4f}") == ("0.6300", "1.0000")
    assert len(rows) == len(names) == 14


def test_trace_lists_inputs_before_the_values_computed_from_them():
    rows = trace_table(teaching_example()).rows
    position = {row.node: i for i, row in enumerate(rows)}
    for i, row in enumerate(rows):
        for name in position:
            if name in row.expression.replace("(", " ").replace(")", " ").split():
                assert position[name] < i


def test_trace_text_markdown_and_html():
    x, y = Value(2.0, label="x"), Value(3.0, label="y")
    z = x * y
    z.label = "z"
    z.backward()
    table = trace_table(z)
    assert isinstance(table, Trace)
    lines = str(table).splitlines()
    assert lines[0].split() == ["node", "expression", "value", "gradient"]
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert lines[-1].split() == ["z", "x*y", "6.0000", "1.0000"]
    assert len({len(line) for line in lines}) == 1  # columns aligned (numbers right-aligned)
    assert repr(table) == str(table)

    markdown = table.to_markdown().splitlines()
    assert markdown[0] == "| node | expression | value | gradient |"
    assert markdown[-1] == "| z | `x*y` | 6.0000 | 1.0000 |"

    page = table._repr_html_()
    assert page.startswith("<table>") and page.endswith("</table>")
    assert "<td>z</td><td><code>x*y</code></td>" in page
    assert '<td style="text-align:right">6.0000</td>' in page


def test_trace_names_unlabelled_values_and_escapes_markup():
    x = Value(1.0, label="a<b|c")
    y = (x * 2).leaky_relu(0.1) ** -1.0
    rows = trace_table(y).rows
    assert [row.expression for row in rows] == [
        "leaf",
        "leaf",
        "a<b|c*v0",
        "leaky_relu(v2, 0.1)",
        "v3**-1",
    ]
    assert "a&lt;b|c" in trace_table(y)._repr_html_()
    assert r"a<b\|c" in trace_table(y).to_markdown()


def test_trace_tensor_rows_show_shapes_and_known_values():
    a = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    hidden = a.exp()
    hidden.retain_grad()
    out = (hidden * a).sum()
    out.backward()
    rows = trace_table(out).rows
    assert [(row.node, row.expression) for row in rows] == [
        ("t0", "leaf"),
        ("t1", "exp(t0)"),
        ("t2", "mul(t1, t0)"),
        ("t3", "sum(t2)"),
    ]
    np.testing.assert_allclose(rows[1].value, np.exp(a.detach().numpy()))
    np.testing.assert_allclose(rows[1].grad, a.detach().numpy())
    assert rows[2].value is None and rows[2].shape == (2, 2)
    assert rows[3].value == pytest.approx(float(out))
    text = str(trace_table(out))
    assert "shape (2, 2), mean 2.5000" in text  # the leaf's data
    assert "sum(t2)" in text and f"{float(out):.4f}" in text
    assert trace_table(a).rows[0].expression == "leaf"


class SplitHalves(Function):
    """Two outputs: the first and second half of a vector."""

    def forward(self, x):
        return x[:2], x[2:]

    def backward(self, g_first, g_second):
        return np.concatenate([g_first, g_second])


def test_multi_output_function_gets_one_box_per_output_and_one_trace_row():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    first, second = SplitHalves.apply(x)
    out = (first.sum() * second.sum()).sum()
    out.backward()
    source = draw_graph(out, format=None).source
    assert "{ SplitHalves[0] | (2,) float32 }" in source
    assert "{ SplitHalves[1] | (1,) float32 }" in source
    rows = trace_table(out).rows
    (split,) = [row for row in rows if row.expression.startswith("SplitHalves")]
    assert split.shape == ((2,), (1,))
    assert any(f"{split.node}[1]" in row.expression for row in rows)
    assert "shapes (2,), (1,)" in str(trace_table(out))


def test_trace_rejects_other_roots():
    with pytest.raises(TypeError, match="trace_table: expected a Value or Tensor root, got float"):
        trace_table(1.0)
