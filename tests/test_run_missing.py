"""``chainrule run`` stops with ONE line for anything chainrule lacks (a module, an attribute of
a torch module, a Tensor or a Module, a keyword argument, a feature such as ONNX export),
naming the PyTorch name and the innermost line of the program's own files, exit code 1;
``--traceback`` shows the whole stack; the program's own mistakes keep their traceback."""

import builtins
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from chainrule.apps.cli import main

SRC = str(Path(__file__).resolve().parents[1] / "src")

#: (program after ``import torch``, the one line chainrule run prints, its line number)
MISSING = [
    ("y = torch.zeros(2).no_such_method()", "chainrule has no torch.Tensor.no_such_method yet"),
    ("y = torch.no_such_op(1)", "chainrule has no torch.no_such_op yet"),
    ("from torch.nn import NoSuchLayer", "chainrule has no torch.nn.NoSuchLayer yet"),
    ("import torch.nn.utils.prune", "chainrule has no torch.nn.utils.prune yet"),
    ("torch.nn.Linear(2, 3).no_such_method()",
     "chainrule has no torch.nn.Linear.no_such_method yet"),
    ("torch.nn.Linear(2, 3, no_such=1)",
     "chainrule has no keyword argument no_such= of torch.nn.Linear yet"),
    ("torch.nn.functional.relu(torch.zeros(2), no_such=1)",
     "chainrule has no keyword argument no_such= of torch.relu yet"),
    ("torch.zeros(2).sum(no_such=1)",
     "chainrule has no keyword argument no_such= of torch.Tensor.sum yet"),
    ("torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1, no_such=1)",
     "chainrule has no keyword argument no_such= of torch.optim.SGD yet"),
    ("class Net(torch.nn.Module):\n    pass\nNet().register_full_backward_pre_hook(print)",
     "chainrule has no torch.nn.Module.register_full_backward_pre_hook yet"),
    ("torch.onnx.export(torch.nn.Linear(1, 1), torch.zeros(1), 'model.onnx')",
     "torch.onnx.export: chainrule does not export models to ONNX; save the state_dict with "
     "torch.save and export from PyTorch"),
    ("torch.save(torch.nn.Linear(1, 1), 'model.pt')",
     "save: 'the object' has type Linear; only tensors, arrays, numbers, strings, None and "
     "dicts, lists or tuples of them can be saved (nothing is pickled: save an object's "
     "state_dict() instead)"),
]  # fmt: skip

#: Mistakes about the program's own objects: a normal traceback, whatever chainrule has.
OWN = [
    ("class Net(torch.nn.Module):\n    pass\nNet().fc", "AttributeError: 'Net' object has no"),
    ("def f(a):\n    pass\nf(b=1)", "TypeError: f() got an unexpected keyword argument 'b'"),
    ("def relu(x):\n    pass\nrelu(1, inplace=True)", "TypeError: relu() got an unexpected"),
    ("x = None\nx.zero_()", "AttributeError: 'NoneType' object has no attribute 'zero_'"),
]  # fmt: skip


def _program(tmp_path, body: str) -> Path:
    path = tmp_path / "prog.py"
    path.write_text("import torch\n" + textwrap.dedent(body) + "\n")
    return path


@pytest.mark.parametrize(("body", "line"), MISSING, ids=[m[1][:50] for m in MISSING])
def test_a_missing_name_stops_the_run_with_one_line(body, line, tmp_path, capsys):
    path = _program(tmp_path, body)
    assert main(["run", str(path)]) == 1
    where = body.count("\n") + 2
    assert capsys.readouterr().err == f"chainrule run: {line} (prog.py, line {where})\n"


@pytest.mark.parametrize(("body", "error"), OWN, ids=[o[1][:40] for o in OWN])
def test_the_programs_own_mistakes_keep_their_traceback(body, error, tmp_path):
    path = _program(tmp_path, body)
    kind, message = error.split(": ", 1)
    with pytest.raises(getattr(builtins, kind), match=re.escape(message)):
        main(["run", str(path)])


def test_the_line_is_the_innermost_of_the_programs_own_files(tmp_path, capsys):
    (tmp_path / "helpers.py").write_text("def build(torch):\n    return torch.no_such_layer()\n")
    path = _program(tmp_path, "import helpers\nhelpers.build(torch)")
    assert main(["run", str(path)]) == 1
    assert capsys.readouterr().err.strip() == (
        "chainrule run: chainrule has no torch.no_such_layer yet (helpers.py, line 2)"
    )


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "chainrule", "run", *args], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_python_m_chainrule_run_exits_1_with_one_line_or_the_stack_on_request(tmp_path):
    path = _program(tmp_path, "x = torch.ones(2)\nprint('ran')\ny = x.no_such_method()")
    done = _run(str(path))
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "ran\n", "chainrule run: chainrule has no torch.Tensor.no_such_method yet "
        "(prog.py, line 4)\n")  # fmt: skip
    done = _run("--traceback", str(path))
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert 'prog.py", line 4' in done.stderr
    assert done.stderr.strip().endswith("'Tensor' object has no attribute 'no_such_method'")
