"""``chainrule run``: a PyTorch program runs on chainrule with torch's names resolved for that run
only; missing names stop it with one line; --count-ops and --draw see inside."""

import sys
import textwrap

import numpy as np
import pytest

from chainrule.apps.cli import main

PROGRAM = """
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(64, 3, dtype=torch.float64)
y = (X.sum(1) > 0).long()
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2)).double()
opt = torch.optim.SGD(model.parameters(), lr=0.5)
if torch.cuda.is_available():
    model = model.cuda()
losses = []
for epoch in range(20):
    for xb, yb in DataLoader(TensorDataset(X, y), batch_size=32):
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    losses.append(loss.item())
print("engine", type(loss).__module__.split(".")[0], "args", sys.argv[1:])
print("losses", " ".join(f"{v:.6f}" for v in losses[::5]))
"""


def _script(tmp_path, source, name="program.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def _losses(text):
    line = next(line for line in text.splitlines() if line.startswith("losses"))
    return np.array([float(v) for v in line.split()[1:]])


def test_a_pytorch_program_runs_on_chainrule_with_pytorchs_results(tmp_path, capsys, torch):
    script = _script(tmp_path, PROGRAM)
    assert main(["run", script, "--lr", "x"]) == 0
    ours = capsys.readouterr().out
    assert "engine chainrule args ['--lr', 'x']" in ours
    # The same program on real PyTorch, from the same data and initial weights, is not
    # possible here (the random streams differ), so compare the training curve's shape: it
    # falls, and the run leaves `import torch` meaning PyTorch again.
    losses = _losses(ours)
    assert losses[-1] < losses[0] * 0.5
    assert sys.modules["torch"] is torch and hasattr(torch, "_C")


def test_a_name_chainrule_lacks_stops_the_run_with_one_line(tmp_path, capsys):
    script = _script(tmp_path, "import torch\nx = torch.zeros(2)\ny = torch.no_such_op(x)\n")
    assert main(["run", script]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "chainrule run: chainrule has no torch.no_such_op yet (program.py, line 3)"
    script = _script(tmp_path, "from torch.nn import NoSuchLayer\n", "b.py")
    assert main(["run", script]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "chainrule run: chainrule has no torch.nn.NoSuchLayer yet (b.py, line 1)"
    script = _script(tmp_path, "import torch.nn.utils.prune\n", "c.py")
    assert main(["run", script]) == 1
    assert "chainrule has no torch.nn.utils.prune yet (c.py, line 1)" in capsys.readouterr().err


def test_programs_probing_for_features_see_them_absent(tmp_path, capsys):
    script = _script(tmp_path, """
        import torch
        print(hasattr(torch, "no_such_name"), torch.cuda.is_available(),
              torch.backends.mps.is_available())
        torch.backends.cudnn.benchmark = True
        print(torch.backends.cudnn.benchmark)
        torch.backends.cudnn.benchmark = False  # the flag is process-wide, as PyTorch's
    """)  # fmt: skip
    assert main(["run", script]) == 0
    assert capsys.readouterr().out.split() == ["False", "False", "False", "True"]


def test_torch_compile_in_a_program_is_chainrule_compile(tmp_path, capsys):
    script = _script(tmp_path, """
        import torch
        model = torch.compile(torch.nn.Linear(2, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.ones(4, 2), torch.zeros(4, 1)
        for _ in range(4):
            optimizer.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
        print(type(model).__name__, model.stats["replayed"])
    """)  # fmt: skip
    assert main(["run", script]) == 0
    assert capsys.readouterr().out.strip() == "CompiledFunction 2"


def test_count_ops_and_draw_see_inside_the_run(tmp_path, capsys):
    script = _script(tmp_path, """
        import torch
        w = torch.ones(3, requires_grad=True)
        for step in range(3):
            loss = (w * w).sum()
            loss.backward()
    """)  # fmt: skip
    drawing = tmp_path / "graph.dot"
    assert main(["run", "--count-ops", "--draw", str(drawing), script]) == 0
    out = capsys.readouterr().out
    assert "op counts of step 1 (of 3):" in out
    assert "per step over 3 steps: forward 2-2 ops, backward 6-6 ops" in out
    source = drawing.read_text()
    assert source.startswith("digraph") and "mul" in source and "sum" in source


def test_a_missing_script_is_a_clear_error(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.py")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--help"])
def test_run_is_listed_in_the_command_line_help(flag, capsys):
    with pytest.raises(SystemExit):
        main([flag])
    assert "run a PyTorch program on chainrule" in capsys.readouterr().out
