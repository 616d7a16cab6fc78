"""`chainrule.profile`: op counts and times per phase, PyTorch's table, nesting of spans, the
Chrome trace export, ``chainrule run --profile``, and an engine left clean afterwards."""

import json
import re
import textwrap

import numpy as np
import pytest
from conftest import Cube

import chainrule as cr
from chainrule import observe
from chainrule.apps.cli import main
from chainrule.profiler import _open_spans, record_function


def _three_matmuls(record_shapes=False):
    w = cr.tensor(np.eye(3) * 0.5, requires_grad=True)
    x = cr.ones(2, 3, dtype=cr.float64)
    with cr.profile(record_shapes=record_shapes) as prof:
        with record_function("step"):
            loss = (x @ w @ w @ w).sum()
        loss.backward()
    return prof, w


def _rows(prof):
    return {(row.key, row.phase): row for row in prof.key_averages()}


def _cells(line):
    return re.split(r"\s{2,}", line.strip())


def test_counts_per_name_and_phase():
    prof, w = _three_matmuls()
    rows = _rows(prof)
    counts = {key: row.count for key, row in rows.items()}
    assert counts == {
        ("step", "user"): 1,
        ("matmul", "forward"): 3,
        ("sum", "forward"): 1,
        ("backward", "backward"): 1,
        ("SumBackward", "backward"): 1,
        ("MatmulBackward", "backward"): 3,
    }
    # The profile does not change the result: d/dw sum(x w w w) with w = I/2.
    np.testing.assert_allclose(w.grad.numpy(), np.full((3, 3), 2 * 3 * 0.25))


def test_table_has_pytorchs_columns_and_the_counts():
    prof, _ = _three_matmuls()
    lines = prof.table(sort_by="count").splitlines()
    assert _cells(lines[1]) == [
        "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls",
    ]  # fmt: skip
    assert set(lines[0]) == {"-", " "} and lines[0] == lines[2] == lines[-2]
    first, second = _cells(lines[3]), _cells(lines[4])
    assert first[0] in ("matmul", "MatmulBackward") and first[-1] == "3"
    assert second[0] in ("matmul", "MatmulBackward") and second[-1] == "3"
    assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", lines[-1])
    assert len(prof.table(row_limit=2).splitlines()) == 3 + 2 + 2


def test_table_header_matches_pytorchs(torch):
    from torch.profiler import profile

    with profile() as theirs:
        torch.ones(2).sum()
    ours, _ = _three_matmuls()
    assert _cells(theirs.key_averages().table().splitlines()[1]) == _cells(
        ours.table().splitlines()[1]
    )


def test_sort_keys_order_rows_largest_first():
    prof, _ = _three_matmuls()
    averages = prof.key_averages()
    for key, attribute in [("self_time", "self_cpu_time_total"),
                           ("self_cpu_time_total", "self_cpu_time_total"),
                           ("cpu_time_total", "cpu_time_total"), ("cpu_time", "cpu_time"),
                           ("count", "count")]:  # fmt: skip
        names = [_cells(line)[0] for line in averages.table(sort_by=key).splitlines()[3:-2]]
        by_name = {row.key: getattr(row, attribute) for row in averages}
        values = [by_name[name] for name in names]
        assert values == sorted(values, reverse=True), key
    with pytest.raises(ValueError, match=r"table: unknown sort_by 'cuda_time'; use one of"):
        prof.table(sort_by="cuda_time")


def test_self_time_of_a_span_excludes_the_spans_inside_it():
    x = cr.ones(4)
    with cr.profile() as prof, record_function("outer"):
        with record_function("inner"):
            y = x * 2
        y.exp()
    outer, inner, mul, exp = prof.events()
    assert [e.name for e in (outer, inner, mul, exp)] == ["outer", "inner", "mul", "exp"]
    ns = lambda e: e.end_ns - e.start_ns  # noqa: E731
    assert outer.child_ns == ns(inner) + ns(exp)
    assert inner.child_ns == ns(mul) and mul.child_ns == exp.child_ns == 0
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - inner.cpu_time_total
                                                      - exp.cpu_time_total)  # fmt: skip
    rows = {row.key: row for row in prof.key_averages()}
    assert rows["outer"].cpu_time_total == pytest.approx(outer.cpu_time_total)
    # The self times add up to the time of the outermost span.
    total = prof.key_averages().self_cpu_time_total
    assert total == pytest.approx(outer.cpu_time_total)


def test_record_function_is_a_decorator_and_does_nothing_outside_a_profile():
    @record_function("double")
    def double(x):
        return x * 2

    assert double(cr.ones(2)).tolist() == [2.0, 2.0]  # no profile: nothing recorded, no error
    with cr.profile() as prof:
        double(double(cr.ones(2)))
    assert [(e.name, e.phase) for e in prof.events()] == [
        ("double", "user"), ("mul", "forward"), ("double", "user"), ("mul", "forward"),
    ]  # fmt: skip


def test_record_shapes_gives_input_shapes():
    prof, _ = _three_matmuls(record_shapes=True)
    matmuls = [e for e in prof.events() if e.name == "matmul"]
    assert [e.input_shapes for e in matmuls] == [[[2, 3], [3, 3]]] * 3
    backward = [e.input_shapes for e in prof.events() if e.name == "MatmulBackward"]
    assert backward == [[[2, 3]]] * 3
    rows = prof.key_averages(group_by_input_shape=True)
    assert "Input Shapes" in rows.table().splitlines()[1]
    assert {(r.key, r.input_shapes) for r in rows if r.key == "sum"} == {("sum", "[[2, 3]]")}
    plain, _ = _three_matmuls()
    assert all(e.input_shapes is None for e in plain.events())


def test_chrome_trace_is_valid_trace_event_json_with_nested_spans(tmp_path):
    prof, _ = _three_matmuls(record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    trace = json.loads(path.read_text())
    assert isinstance(trace["traceEvents"], list)
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == len(prof.events()) == 10
    for event in complete:
        assert {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"} <= set(event)
        assert isinstance(event["name"], str) and event["cat"] in ("forward", "backward", "user")
        assert isinstance(event["ts"], (int, float)) and event["ts"] >= 0 and event["dur"] >= 0
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
    for meta in (e for e in trace["traceEvents"] if e["ph"] == "M"):
        assert meta["name"] in ("process_name", "thread_name") and "name" in meta["args"]

    def inside(event, span):  # µs with ns precision: allow the float rounding of ts + dur
        end, span_end = event["ts"] + event["dur"], span["ts"] + span["dur"]
        return event["ts"] >= span["ts"] and end <= span_end + 1e-6

    (step,) = [e for e in complete if e["name"] == "step"]
    (backward,) = [e for e in complete if e["name"] == "backward"]
    forward = [e for e in complete if e["cat"] == "forward"]
    nodes = [e for e in complete if e["cat"] == "backward" and e is not backward]
    assert len(forward) == 4 and len(nodes) == 4
    assert all(inside(e, step) and not inside(e, backward) for e in forward)
    assert all(inside(e, backward) and not inside(e, step) for e in nodes)
    assert step["ts"] + step["dur"] <= backward["ts"]
    assert [e["args"]["Input Dims"] for e in forward][:1] == [[[2, 3], [3, 3]]]


def test_grad_and_functions_and_create_graph_ops_are_recorded():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    with cr.profile() as prof:
        y = Cube.apply(x).sum()
        cr.autograd.grad(y, x)
        z = (x * x).sum()
        (g,) = cr.autograd.grad(z, x, create_graph=True)
    names = [(e.name, e.phase) for e in prof.events()]
    assert names[:4] == [("Cube", "forward"), ("sum", "forward"), ("grad", "backward"),
                         ("SumBackward", "backward")]  # fmt: skip
    assert ("CubeBackward", "backward") in names
    np.testing.assert_allclose(g.detach().numpy(), [2.0, 4.0])
    # With create_graph, the ops the mul node's rules run nest inside that node's span.
    (node,) = [e for e in prof.events() if e.name == "MulBackward"]
    inner = [e for e in prof.events() if e.phase == "forward" and node.start_ns <= e.start_ns
             and e.end_ns <= node.end_ns]  # fmt: skip
    assert inner and node.child_ns == sum(e.end_ns - e.start_ns for e in inner)


def test_the_profiler_is_off_after_the_block():
    with cr.profile() as prof:
        cr.ones(2).exp()
    assert observe.current is None
    cr.ones(2).sin()
    assert [e.name for e in prof.events()] == ["exp"]
    assert prof.key_averages()[0].count == 1


def test_an_exception_inside_the_block_leaves_the_engine_clean():
    shapes = r"add: shapes \(2,\) and \(3,\) do not broadcast"
    with (
        pytest.raises(cr.ShapeError, match=shapes),
        cr.profile() as prof,
        record_function("failing"),
    ):
        cr.ones(2) + cr.ones(3)  # noqa: B018
    assert observe.current is None and not any(_open_spans.values())
    assert [e.name for e in prof.events()] == ["failing", "add"]
    w = cr.ones(2, requires_grad=True)
    with pytest.raises(KeyError), cr.profile():
        (w * w).sum().backward()
        {}["missing"]  # noqa: B018
    assert observe.current is None and not any(_open_spans.values())
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 2.0])
    with cr.profile() as again:
        (w * 3).sum()
    assert [e.name for e in again.events()] == ["mul", "sum"]


def test_profiles_nest_and_count_ops_still_counts():
    with cr.profile() as outer:
        cr.ones(2).exp()
        with cr.count_ops() as counts, cr.profile() as inner:
            cr.ones(2).sin()
        cr.ones(2).cos()
    assert [e.name for e in outer.events()] == ["exp", "sin", "cos"]
    assert [e.name for e in inner.events()] == ["sin"]
    assert counts.forward_total == 1


def test_start_stop_step_and_on_trace_ready():
    ready = []
    prof = cr.profiler.profile(
        activities=[cr.profiler.ProfilerActivity.CPU], on_trace_ready=ready.append
    )
    prof.start()
    for _ in range(2):
        cr.ones(2).exp()
        prof.step()
    prof.stop()
    assert ready == [prof] and prof.step_num == 2 and observe.current is None
    with pytest.raises(NotImplementedError, match="profile: schedule= is not supported"):
        cr.profile(schedule=lambda step: None)
    with pytest.warns(UserWarning, match="profile: with_stack not recorded by chainrule"):
        cr.profile(with_stack=True)


def test_chainrule_run_profile_prints_the_table(tmp_path, capsys):
    script = tmp_path / "program.py"
    script.write_text(
        textwrap.dedent("""
        import torch
        from torch.profiler import profile, record_function
        w = torch.ones(3, 3, requires_grad=True)
        for step in range(2):
            loss = (w @ w @ w).sum()
            loss.backward()
        with profile() as prof:
            with record_function("mine"):
                (w * 2).sum()
        print("own rows", len(prof.key_averages()))
    """)
    )
    assert main(["run", "--profile", str(script)]) == 0
    out = capsys.readouterr().out
    assert "own rows 3" in out
    lines = out.splitlines()
    start = lines.index("chainrule run --profile: time per op, most self time first")
    assert _cells(lines[start + 2])[0] == "Name"
    rows = {_cells(line)[0]: _cells(line)[-1] for line in lines[start + 4 : -2]}
    assert rows["matmul"] == "4" and rows["MatmulBackward"] == "4" and rows["mine"] == "1"
    assert lines[-1].startswith("Self CPU time total: ")
    assert observe.current is None
